import { ScalpelError } from '../errors/index.js';
import { utf8Encode } from '../bytes/text.js';
import { writeFileAtomic } from '../fs/atomic.js';
import { basename, dirname, joinPath, resolvePath } from '../fs/path.js';
import type { Fs } from '../fs/types.js';
import { discoverRepository } from '../repo/discover.js';
import {
  CLIENT_FILE,
  INSTALLABLE,
  HARNESS_SPECS,
  clientCommand,
  harnessDir,
  hookCommand,
  isInstallable,
  planInstall,
  projectBin,
  resolveBin,
  shellQuote,
  userConfigFile,
  type InstallableHarness,
  type InstallPlan,
} from '../hooks/install.js';
import { formatTrust, readHookFile, readTrust, type CommandCheck, type TrustStatus } from '../hooks/status.js';
import {
  MCP_SERVER_NAME,
  MCP_SPECS,
  mcpServerCommand,
  mcpUserConfigFile,
  planMcpInstall,
  type McpInstallPlan,
} from '../hooks/install-mcp.js';
import { parseArgs, UsageError } from './args.js';
import type { CliIo } from './io.js';
import { ok, printWarnings } from './output.js';
import { firstOnPathIs, personCommand } from './invocation.js';

/** What `install` reads of the process beyond CliIo; main() leaves it to the defaults. */
export interface InstallIo {
  /** The running CLI's path as invoked. Default: process.argv[1]. */
  script?: string;
  /** HOME, PATH and the harnesses' variables (CLAUDE_CONFIG_DIR, CODEX_HOME, GEMINI_CLI_HOME, ...: main.ts CLI_ENV). Default: process.env. */
  env?: Readonly<Record<string, string | undefined>>;
  /** The operating system (process.platform by default): on Windows the process command is written (README "The warm server"). */
  platform?: string;
}

const UTF8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/**
 * `git-scalpel install <harness> [--user] [--uninstall] [--json]`: write (or remove) the
 * harness's hook configuration so every prompt, file write and stop reaches `git-scalpel hook
 * <harness>`. The project file sits at the worktree root (`.claude/settings.json`,
 * `.codex/hooks.json`, `.gemini/settings.json`); `--user` writes the user-level one instead.
 * A symlinked file is written through (the link stays). The planning — merge, idempotence,
 * exact removal, the command — is src/hooks/install.ts.
 */
export async function cmdInstall(args: string[], io: CliIo & InstallIo): Promise<number> {
  const { flags, positionals } = parseArgs(args, { switches: ['json', 'user', 'uninstall', 'mcp'] });
  if (positionals.length !== 1) throw new UsageError(`install takes one harness: ${INSTALLABLE.join(', ')}`);
  const harness = positionals[0];
  if (!isInstallable(harness)) throw new UsageError(`unknown harness '${harness}' (one of ${INSTALLABLE.join(', ')})`);
  const env = io.env ?? process.env;
  const script = io.script ?? process.argv[1] ?? '';
  const user = flags.has('user');
  const uninstall = flags.has('uninstall');
  if (flags.has('mcp')) return installMcp(harness, { user, uninstall, json: flags.has('json') }, io, env, script);

  const loc = user ? await discoverRepository(io.fs, io.cwd).catch(() => null) : await discoverRepository(io.fs, io.cwd);
  const projectRoot = user ? null : loc!.worktree;
  const ownFile = HARNESS_SPECS[harness].projectFile;
  const file = projectRoot === null ? userConfigFile(harness, env) : joinPath(projectRoot, ownFile);
  // `.claude/`, `.codex/`, `.gemini/` of the project or a home, never a $CODEX_HOME or $CLAUDE_CONFIG_DIR
  const ownDir = projectRoot !== null || harnessDir(harness, env).own;
  const target = await followLinks(io.fs, file);
  const current = await readText(io.fs, target, file);

  const absScript = script === '' ? '' : resolvePath(io.cwd, script);
  const onPath = script !== '' && (await firstOnPathIs(io.fs, env.PATH, absScript));
  // the warm server's client where it can run, else (and on Windows) the process itself
  const client = await clientBeside(io.fs, absScript, projectRoot, io.platform ?? process.platform);
  const command =
    clientCommand(harness, { script: absScript, projectRoot, onPath, client }) ??
    hookCommand(harness, resolveBin(harness, { script: absScript, projectRoot, onPath }));
  const plan = planInstall(current, { harness, command, uninstall, file });

  let removed = false;
  if (plan.changed) {
    if (plan.text === null && target === file) {
      await io.fs.unlink(target);
      removed = ownDir && (await removeIfEmpty(io.fs, dirname(file)));
    } else {
      // a link is kept, emptied rather than left dangling
      await ensureDir(io.fs, dirname(target));
      await writeFileAtomic(io.fs, target, utf8Encode(plan.text ?? '{}\n'));
    }
  }

  const warnings = uninstall ? [] : installWarnings(absScript, projectRoot, onPath);
  printWarnings(io, warnings);
  if (uninstall) {
    const text = describe(harness, file, plan, removed, user);
    if (flags.has('json')) return ok(io, text.split('\n')[0], { file, action: plan.action, events: plan.events, command: plan.command });
    io.out(text);
    return 0;
  }

  // what the harness will do with them: the command found, the project and hooks trusted
  const root = loc?.worktree ?? null;
  const hooks = [await readHookFile(io.fs, harness, user ? 'user' : 'project', file, root, env)];
  const mainRoot = loc && loc.gitDir !== loc.commonDir && basename(loc.commonDir) === '.git' ? dirname(loc.commonDir) : null;
  const trust = await readTrust(io.fs, harness, { env, root: user ? null : root, mainRoot, hooks });
  const binary = hooks[0].binary;
  if (harness === 'codex' && mainRoot && !user) {
    warnings.push(
      `this is a linked worktree: recent Codex versions read its hooks from the main checkout's ${joinPath(mainRoot, ownFile)} (codex-rs/config/src/loader/mod.rs), so install them there too`,
    );
    io.err(`git-scalpel: warning: ${warnings[warnings.length - 1]}\n`);
  }
  const bin = personCommand({ script: absScript, onPath });
  const text = describe(harness, file, plan, removed, user, { binary, trust, bin });
  if (flags.has('json'))
    return ok(io, text.split('\n')[0], { file, action: plan.action, events: plan.events, command: plan.command, binary, trust, warnings });
  io.out(text);
  return 0;
}

/**
 * What may keep the written command from working later: a copy in npx's cache (npm removes
 * it whenever it likes) that is neither the project's devDependency nor on PATH.
 */
function installWarnings(script: string, projectRoot: string | null, onPath: boolean): string[] {
  if (onPath || projectBin({ script, projectRoot, onPath }) !== null) return [];
  if (/\/_npx\//.test(script)) {
    return [
      `this git-scalpel runs from npx's cache (${script}), which npm may clear at any time, and the hooks would then fail: install it (npm install -D git-scalpel, or npm install -g git-scalpel) and run install again`,
    ];
  }
  return [];
}

/**
 * `git-scalpel install <harness> --mcp [--user] [--uninstall] [--json]`: add (or remove) the
 * `git-scalpel` MCP server (`git-scalpel mcp`) in the harness's MCP configuration — `.mcp.json`
 * (user: `~/.claude.json`), `.codex/config.toml` (user: `~/.codex/config.toml`),
 * `.gemini/settings.json` (user: `~/.gemini/settings.json`). Planning: src/hooks/install-mcp.ts.
 */
async function installMcp(
  harness: InstallableHarness,
  o: { user: boolean; uninstall: boolean; json: boolean },
  io: CliIo & InstallIo,
  env: Readonly<Record<string, string | undefined>>,
  script: string,
): Promise<number> {
  const spec = MCP_SPECS[harness];
  const projectRoot = o.user ? null : (await discoverRepository(io.fs, io.cwd)).worktree;
  const file = projectRoot === null ? mcpUserConfigFile(harness, env) : joinPath(projectRoot, spec.projectFile);
  // only `.codex/` and `.gemini/` of the project or a home may be removed when emptied; never the
  // worktree root (.mcp.json), HOME (~/.claude.json), $CODEX_HOME or $CLAUDE_CONFIG_DIR
  const ownDir = spec.projectFile.includes('/') && (projectRoot !== null || (harness !== 'claude-code' && harnessDir(harness, env).own));
  const target = await followLinks(io.fs, file);
  const current = await readText(io.fs, target, file);
  const onPath = script !== '' && (await firstOnPathIs(io.fs, env.PATH, script));
  const server = mcpServerCommand({ script: resolvePath(io.cwd, script), projectRoot, onPath });
  const plan = planMcpInstall(current, { harness, server, uninstall: o.uninstall, file });

  let removedDir = false;
  if (plan.changed) {
    if (plan.text === null && target === file) {
      await io.fs.unlink(target);
      removedDir = ownDir && (await removeIfEmpty(io.fs, dirname(file)));
    } else {
      await ensureDir(io.fs, dirname(target));
      await writeFileAtomic(io.fs, target, utf8Encode(plan.text ?? (spec.format === 'json' ? '{}\n' : '')));
    }
  }
  const text = describeMcp(harness, file, plan, removedDir, o.user);
  if (o.json)
    return ok(io, text.split('\n')[0], { file, action: plan.action, name: MCP_SERVER_NAME, server: plan.server, replaced: plan.replaced });
  io.out(text);
  return 0;
}

function describeMcp(harness: InstallableHarness, file: string, plan: McpInstallPlan, removedDir: boolean, user: boolean): string {
  const spec = MCP_SPECS[harness];
  const where = spec.format === 'toml' ? `[mcp_servers.${MCP_SERVER_NAME}]` : `"mcpServers"."${MCP_SERVER_NAME}"`;
  const argv = (s: { command: string; args: string[] }) => [s.command, ...s.args].map(shellQuote).join(' ');
  const lines: string[] = [];
  switch (plan.action) {
    case 'installed':
      lines.push(
        `${plan.replaced ? 'replaced' : 'added'} git-scalpel's MCP server for ${spec.title} in ${file}`,
        `  entry:   ${where}`,
        `  command: ${argv(plan.server!)}`,
      );
      break;
    case 'already-installed':
      lines.push(`git-scalpel's MCP server is already in ${file} (${where}); nothing changed`, `  command: ${argv(plan.server!)}`);
      break;
    case 'uninstalled':
      lines.push(`removed git-scalpel's MCP server (${where}) from ${file}`);
      if (plan.server) lines.push(`  command: ${argv(plan.server)}`);
      if (plan.text === null) lines.push(`  the file held nothing else and was removed${removedDir ? ', with its empty directory' : ''}`);
      break;
    case 'not-installed':
      lines.push(`git-scalpel's MCP server is not in ${file}; nothing changed`);
      break;
  }
  if (plan.action === 'installed' || plan.action === 'already-installed') {
    lines.push(`check:   ${spec.check}`);
    if (user && harness === 'claude-code')
      lines.push('  Claude Code rewrites ~/.claude.json while it runs: if a session was open, check the entry is still there.');
    lines.push(`  ${spec.title} starts MCP servers when a session starts: restart sessions already running.`);
  }
  return lines.join('\n') + '\n';
}

function describe(
  harness: InstallableHarness,
  file: string,
  plan: InstallPlan,
  removedDir: boolean,
  user: boolean,
  after?: { binary: CommandCheck | null; trust: TrustStatus; bin: string },
): string {
  const spec = HARNESS_SPECS[harness];
  const lines: string[] = [];
  const matched = spec.events.filter((e) => e.matcher !== undefined && plan.events.includes(e.event));
  const eventLines = [`  events:  ${plan.events.join(', ')}`];
  if (matched.length) eventLines.push(`  tools:   ${matched[0].matcher} (${matched.map((e) => e.event).join(', ')})`);
  switch (plan.action) {
    case 'installed':
      lines.push(`installed git-scalpel's ${spec.title} hooks in ${file}`);
      lines.push(...eventLines, `  command: ${plan.command}`);
      if (after?.binary) lines.push(binaryLine(after.binary));
      lines.push(...notes(harness, user));
      break;
    case 'already-installed':
      lines.push(`git-scalpel's ${spec.title} hooks are already installed in ${file}; nothing changed`, `  command: ${plan.command}`);
      if (after?.binary) lines.push(binaryLine(after.binary));
      break;
    case 'uninstalled':
      lines.push(`removed git-scalpel's ${spec.title} hooks from ${file}`, eventLines[0]);
      if (plan.text === null) lines.push(`  the file held nothing else and was removed${removedDir ? ', with its empty directory' : ''}`);
      break;
    case 'not-installed':
      lines.push(`git-scalpel's ${spec.title} hooks are not installed in ${file}; nothing changed`);
      break;
  }
  if (after && (plan.action === 'installed' || plan.action === 'already-installed')) {
    lines.push(...formatTrust(spec.title, after.trust));
    // as this person runs the command line: `npx git-scalpel` after a project install, which puts no git-scalpel on PATH
    const next = (cmd: string) => `${after.bin} ${cmd}`.padEnd(after.bin.length + 10);
    lines.push(
      'next:',
      `  ${next('status')}  whether each harness runs the hooks, and the last event it sent`,
      `  ${next('turns')}  the agent's turns, newest first, and what a rewind would do`,
      `  ${next('rewind')}  undo the newest turn (every file it wrote, and the index)`,
    );
  }
  return lines.join('\n') + '\n';
}

function binaryLine(b: CommandCheck): string {
  return `  binary:  ${b.resolves === 'yes' ? 'found' : b.resolves === 'no' ? 'NOT FOUND' : 'not checked'}: ${b.how}`;
}

function notes(harness: InstallableHarness, user: boolean): string[] {
  if (harness === 'claude-code') {
    return [
      '  Claude Code reads hooks when a session starts: restart sessions already running (/hooks lists them).',
      ...(user ? [] : ['  It reads .claude/settings.json only in a session started at the project root, not in a subdirectory.']),
    ];
  }
  if (harness === 'codex') return ['  Codex reads hooks when a session starts: restart sessions already running (/hooks lists them).'];
  return [
    '  Gemini CLI reads hooks when a session starts: restart sessions already running (/hooks lists them).',
    ...(user ? [] : ['  It reads .gemini/settings.json only in a session started at the project root, not in a subdirectory.']),
  ];
}

/** `path`, or the file its symlink chain ends at (relative links resolve from the link's directory). */
/**
 * The hook client (dist/git-scalpel-hook.sh) that comes with the running CLI: beside it, its
 * links followed (a global install's bin link), or for a devDependency in the project's
 * `node_modules/git-scalpel/dist/`. Null where there is none (an unbundled run, an older layout)
 * and on Windows, where the client's POSIX sh, curl and Unix socket are not to be relied on.
 */
async function clientBeside(fs: Fs, script: string, projectRoot: string | null, platform: string): Promise<string | null> {
  if (platform === 'win32' || script === '') return null;
  const isFile = async (p: string) => (await fs.stat(p))?.type === 'file';
  const rel = projectBin({ script, projectRoot, onPath: false });
  if (rel !== null && projectRoot !== null) {
    const p = joinPath(projectRoot, `${rel.slice(0, rel.lastIndexOf('node_modules/'))}node_modules/git-scalpel/dist/${CLIENT_FILE}`);
    return (await isFile(p)) ? p : null;
  }
  const real = await followLinks(fs, script).catch(() => null);
  if (real === null) return null;
  const p = joinPath(dirname(real), CLIENT_FILE);
  return (await isFile(p)) ? p : null;
}

async function followLinks(fs: Fs, path: string): Promise<string> {
  let p = path;
  for (let hops = 0; hops < 40; hops++) {
    const st = await fs.lstat(p);
    if (!st || st.type !== 'symlink') return p;
    p = resolvePath(dirname(p), await fs.readlink(p));
  }
  throw new ScalpelError('UNSUPPORTED', `${path}: too many levels of symbolic links; nothing was changed`, {
    path,
    capability: 'hook-config',
    reason: 'symlink-loop',
  });
}

async function readText(fs: Fs, target: string, file: string): Promise<string | null> {
  const st = await fs.lstat(target);
  if (!st) return null;
  if (st.type !== 'file')
    throw new ScalpelError('UNSUPPORTED', `${file}: not a regular file (a ${st.type}); nothing was changed`, {
      path: file,
      capability: 'hook-config',
      reason: 'not-a-file',
    });
  const bytes = await fs.readFile(target);
  try {
    return UTF8.decode(bytes);
  } catch {
    throw new ScalpelError('UNSUPPORTED', `${file}: not UTF-8 text; nothing was changed`, {
      path: file,
      capability: 'hook-config',
      reason: 'not-utf8',
    });
  }
}

async function ensureDir(fs: Fs, dir: string): Promise<void> {
  const st = await fs.stat(dir);
  if (st) return;
  await ensureDir(fs, dirname(dir));
  await fs.mkdir(dir);
}

async function removeIfEmpty(fs: Fs, dir: string): Promise<boolean> {
  if ((await fs.readdir(dir)).length) return false;
  await fs.rmdir(dir);
  return true;
}
