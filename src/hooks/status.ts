/**
 * Whether an agent harness will really run git-scalpel's hooks here: what is installed (project
 * and user files, the command and whether it resolves to a binary), whether the harness trusts
 * the project and the hooks (read from the harness's own records, never written), whether its
 * MCP server is configured, and the newest hook event of that harness in this worktree's log.
 * `git-scalpel status`, the trust lines of `install`, and `turns`' warning all read it here. Only
 * reads: no process is started, nothing is written.
 *
 * What each harness records, and what it does with an untrusted project (read for this module):
 *
 * - Claude Code keeps a workspace's trust in `~/.claude.json` (`$CLAUDE_CONFIG_DIR/.claude.json`)
 *   as `projects["<dir>"].hasTrustDialogAccepted`, written when a person answers "Yes, I trust
 *   this folder" at the first interactive start in the folder. An interactive session of a folder
 *   not trusted runs no hook at all ("Skipping ... hook execution - workspace trust not accepted",
 *   anthropics/claude-code#10409: --dangerously-skip-permissions skips the question and the hooks);
 *   `claude -p` does not check. The record is not a reliable "no": hooks have been seen running
 *   with it false (anthropics/claude-code#90220), and the VS Code extension never asks
 *   (anthropics/claude-code#67319). So: a true record is "yes", anything else "unknown". Project
 *   settings are read only from the directory a session starts in (anthropics/claude-code#86187).
 *   `disableAllHooks: true` in any settings file turns every hook off.
 * - Codex CLI (openai/codex, codex-rs/config/src/loader/mod.rs): a project's `.codex/` layers
 *   (config.toml, hooks.json) are loaded disabled — "To load project-local config, hooks, and
 *   exec policies, add <dir> as a trusted project in <config.toml>" — unless `$CODEX_HOME/config.toml`
 *   has `[projects."<dir>"] trust_level = "trusted"` for the directory holding `.codex`, the
 *   project root (nearest `.git` ancestor) or the main checkout of a linked worktree; Codex
 *   writes that entry when a person trusts the directory at its first start there. On top of
 *   that, every hook not managed by an administrator, the user's own included, runs only once
 *   trusted (codex-rs/hooks/src/engine/discovery.rs): `[hooks.state."<hooks.json path>:<event
 *   label>:<group>:<handler>"] trusted_hash = "sha256:..."` in the user config.toml
 *   (codex-rs/hooks/src/config_rules.rs reads it only from user layers; codex-rs/hooks/src/lib.rs
 *   `hook_key`), the hash of the hook's normalized definition. A hook with no record, or whose
 *   definition changed since, is skipped without a word; the TUI asks at start-up ("Hooks need
 *   review": "Trust all and continue", codex-rs/tui/src/startup_hooks_review.rs) or in `/hooks`;
 *   `codex exec` never asks (only `--dangerously-bypass-hook-trust` runs them). The hash is not
 *   recomputed here: its normalization changes between versions (openai/codex#21615), so a record
 *   present is read as "trusted" and said so. `[features] hooks = false` turns hooks off, and so
 *   does a hook's `enabled = false`.
 * - Gemini CLI (google-gemini/gemini-cli): folder trust is on unless `security.folderTrust.enabled`
 *   is false (packages/cli/src/config/settingsSchema.ts, default true); a folder is trusted by
 *   `GEMINI_CLI_TRUST_WORKSPACE=true`, the IDE, or the longest matching rule of
 *   `~/.gemini/trustedFolders.json` (`$GEMINI_CLI_TRUSTED_FOLDERS_PATH`; `{"<dir>": "TRUST_FOLDER" |
 *   "TRUST_PARENT" | "DO_NOT_TRUST"}`, paths compared after realpath; packages/core/src/utils/trust.ts).
 *   In an untrusted folder no configured hook runs, the user's included
 *   (packages/core/src/hooks/hookRegistry.ts `processHooksFromConfig`), and the project's
 *   settings.json is not even read; an interactive start asks, a headless one exits
 *   (docs/cli/trusted-folders.md). `trusted_hooks.json` only silences a warning. `hooksConfig.enabled:
 *   false` turns hooks off; a name in `hooksConfig.disabled` (ours is `git-scalpel`) turns that one off.
 */
import { ScalpelError } from '../errors/index.js';
import { utf8Decode } from '../bytes/text.js';
import type { Fs, FileStat } from '../fs/types.js';
import { basename, dirname, joinPath } from '../fs/path.js';
import { discoverRepository } from '../repo/discover.js';
import {
  HARNESS_SPECS,
  INSTALLABLE,
  envDir,
  harnessDir,
  ourHookEntries,
  userConfigFile,
  within,
  type Env,
  type InstallableHarness,
  type OurHookEntry,
} from './install.js';
import { parseJsonTree, parseToml, valueOf, where, type TomlDocument } from './config-files.js';
import { MCP_SPECS, claudeStateFile, mcpUserConfigFile, planMcpInstall } from './install-mcp.js';

export type Tri = 'yes' | 'no' | 'unknown';

export interface CommandCheck {
  /** Whether the command finds an existing binary (unknown: a command git-scalpel did not write). */
  resolves: Tri;
  /** The binary it runs, when found. */
  binary?: string;
  how: string;
  /** Routed through npx: seconds per event. */
  slow?: boolean;
  /** Looked up on this process's PATH, which may not be the harness's (so events arriving outweigh a miss). */
  viaPath?: boolean;
}

export interface HookFileStatus {
  scope: 'project' | 'user';
  file: string;
  exists: boolean;
  /** Whether the file holds hook entries of ours. */
  installed: boolean;
  /** The events with an entry of ours, in the order install writes them. */
  events: string[];
  /** Events install writes that have no entry of ours here. */
  missing: string[];
  /** The commands of our entries (normally one). */
  commands: string[];
  binary: CommandCheck | null;
  /** The file's modification time (ISO): when the hooks were last installed, or the file last edited. */
  modifiedAt: string | null;
  entries: OurHookEntry[];
  /** The file could not be read as the harness reads it. */
  error?: string;
}

export interface TrustStatus {
  /** Whether the harness will run the installed hooks, as far as its records say. */
  trusted: Tri;
  /** Where that was read, or why it cannot be: `reasons` in one line. */
  how: string;
  reasons: string[];
  /** What a person does to trust them (empty when trusted). */
  fix: string[];
}

function trust(trusted: Tri, reasons: string | string[], fix: string[] = []): TrustStatus {
  const list = typeof reasons === 'string' ? [reasons] : reasons;
  return { trusted, how: list.join('; '), reasons: list, fix };
}

export interface McpStatus {
  scope: 'project' | 'user';
  file: string;
  configured: boolean;
  error?: string;
}

export interface LastEvent {
  at: string;
  event: string;
  session: string;
  /** The tool and phase of a tool event, the label of a turn. */
  detail?: string;
}

export interface HarnessStatus {
  harness: InstallableHarness;
  title: string;
  hooks: HookFileStatus[];
  trust: TrustStatus;
  /** Settings that turn the hooks off, each naming its file. */
  disabled: string[];
  mcp: McpStatus[];
  lastEvent: LastEvent | null;
  /**
   * Whether protection is live: `yes` when an event arrived since the hooks were installed, or
   * they are installed, resolve and are trusted; `no` when they are not installed, do not resolve,
   * are turned off or untrusted; `unknown` otherwise.
   */
  live: Tri;
  /** Why, in one line. */
  summary: string;
  notes: string[];
}

export interface WorktreeStatus {
  /** The worktree's root; null outside a repository (user-level files only). */
  worktree: string | null;
  harnesses: HarnessStatus[];
}

export interface StatusOptions {
  /** The directory the command runs in. */
  cwd: string;
  env: Env;
  /** Clock, for tests (the age of the last event). */
  now?: () => Date;
  /** How the person runs git-scalpel, in the commands the status names ('npx git-scalpel' after a project install; default 'git-scalpel'). */
  bin?: string;
}

// ---------------------------------------------------------------------------------------------
// Reading

/** Everything `git-scalpel status` shows, for every harness. */
export async function readStatus(fs: Fs, opts: StatusOptions): Promise<WorktreeStatus> {
  const loc = await locate(fs, opts.cwd);
  const events = loc ? await lastEvents(fs, loc.gitDir) : emptyEvents();
  const out: HarnessStatus[] = [];
  for (const harness of INSTALLABLE) out.push(await harnessStatus(fs, harness, loc, opts.env, events[harness], opts.bin ?? 'git-scalpel'));
  return { worktree: loc?.worktree ?? null, harnesses: out };
}

interface Located {
  worktree: string;
  gitDir: string;
  /** The main checkout's root, for a linked worktree (Codex trusts and reads hooks there too). */
  mainRoot: string | null;
}

async function locate(fs: Fs, cwd: string): Promise<Located | null> {
  try {
    const loc = await discoverRepository(fs, cwd);
    const linked = loc.gitDir !== loc.commonDir;
    return {
      worktree: loc.worktree,
      gitDir: loc.gitDir,
      mainRoot: linked && basename(loc.commonDir) === '.git' ? dirname(loc.commonDir) : null,
    };
  } catch (e) {
    if (e instanceof ScalpelError && e.code === 'NOT_A_REPOSITORY') return null;
    throw e;
  }
}

async function harnessStatus(
  fs: Fs,
  harness: InstallableHarness,
  loc: Located | null,
  env: Env,
  lastEvent: LastEvent | null,
  bin: string,
): Promise<HarnessStatus> {
  const spec = HARNESS_SPECS[harness];
  const hooks: HookFileStatus[] = [];
  if (loc) hooks.push(await readHookFile(fs, harness, 'project', joinPath(loc.worktree, spec.projectFile), loc.worktree, env));
  const user = safe(() => userConfigFile(harness, env));
  if (user) hooks.push(await readHookFile(fs, harness, 'user', user, loc?.worktree ?? null, env));
  const trust = await readTrust(fs, harness, { env, root: loc?.worktree ?? null, mainRoot: loc?.mainRoot ?? null, hooks });
  const disabled = await readDisabled(fs, harness, loc?.worktree ?? null, env, hooks);
  const mcp = await readMcp(fs, harness, loc?.worktree ?? null, env);
  const notes: string[] = [];
  if (harness === 'codex' && loc?.mainRoot && hooks.some((h) => h.scope === 'project' && h.installed)) {
    notes.push(
      `this is a linked worktree: recent Codex versions read its hooks from the main checkout's ${joinPath(loc.mainRoot, spec.projectFile)} (codex-rs/config/src/loader/mod.rs, root_checkout_hooks_folder_for_dir); install them there too`,
    );
  }
  for (const h of hooks)
    if (h.binary?.slow)
      notes.push(
        `${h.file} runs git-scalpel through npx, which costs seconds per event: run \`${bin} install ${harness}${h.scope === 'user' ? ' --user' : ''}\` again`,
      );
  const { live, summary } = liveness(harness, hooks, trust, disabled, lastEvent, bin);
  return { harness, title: spec.title, hooks, trust, disabled, mcp, lastEvent, live, summary, notes };
}

function liveness(
  harness: InstallableHarness,
  hooks: HookFileStatus[],
  trust: TrustStatus,
  disabled: string[],
  lastEvent: LastEvent | null,
  bin: string,
): { live: Tri; summary: string } {
  const installed = hooks.filter((h) => h.installed);
  if (installed.length === 0) {
    const broken = hooks.find((h) => h.error);
    return { live: 'no', summary: broken ? `hooks not readable: ${broken.error}` : `hooks not installed (${bin} install ${harness})` };
  }
  // what holds now first (turned off, a binary gone), then the evidence of events, then the records
  if (disabled.length) return { live: 'no', summary: `hooks turned off: ${disabled[0]}` };
  const gone = installed.find((h) => h.binary?.resolves === 'no' && !h.binary.viaPath);
  if (gone) return { live: 'no', summary: `the hook command does not resolve: ${gone.binary!.how}` };
  const since = Math.max(...installed.map((h) => (h.modifiedAt ? Date.parse(h.modifiedAt) : 0)));
  if (lastEvent && Date.parse(lastEvent.at) >= since)
    return { live: 'yes', summary: `hooks run: an event arrived since they were installed` };
  const unresolved = installed.find((h) => h.binary?.resolves === 'no');
  if (unresolved) return { live: 'no', summary: `the hook command does not resolve: ${unresolved.binary!.how}` };
  if (trust.trusted === 'no')
    return { live: 'no', summary: `not trusted: ${HARNESS_SPECS[harness].title} will not run these hooks until you trust them` };
  if (trust.trusted === 'yes' && installed.every((h) => h.binary?.resolves === 'yes'))
    return { live: 'yes', summary: 'hooks installed, found and trusted; no event yet since they were installed' };
  return {
    live: 'unknown',
    summary:
      trust.trusted === 'unknown'
        ? `installed; whether ${HARNESS_SPECS[harness].title} trusts them cannot be read here`
        : 'installed; whether the command resolves cannot be read here',
  };
}

function safe<T>(f: () => T): T | null {
  try {
    return f();
  } catch {
    return null;
  }
}

/** A file's text and modification time, links followed; null when there is none (or it is no file). */
async function readText(fs: Fs, path: string): Promise<{ text: string; mtimeMs: number } | null> {
  const st = await fs.stat(path).catch(() => null);
  if (!st || st.type !== 'file') return null;
  const bytes = await fs.readFile(path);
  return { text: utf8Decode(bytes), mtimeMs: mtimeMs(st) };
}

function mtimeMs(st: FileStat): number {
  return st.mtimeSeconds * 1000 + Math.floor(st.mtimeNanoseconds / 1e6);
}

/** A harness's hook file: our entries, their command, whether it resolves, and when the file changed. */
export async function readHookFile(
  fs: Fs,
  harness: InstallableHarness,
  scope: 'project' | 'user',
  file: string,
  root: string | null,
  env: Env,
  opts: { checkCommand?: boolean } = {},
): Promise<HookFileStatus> {
  const spec = HARNESS_SPECS[harness];
  const base: HookFileStatus = {
    scope,
    file,
    exists: false,
    installed: false,
    events: [],
    missing: spec.events.map((e) => e.event),
    commands: [],
    binary: null,
    modifiedAt: null,
    entries: [],
  };
  let read: { text: string; mtimeMs: number } | null;
  try {
    read = await readText(fs, file);
  } catch (e) {
    return { ...base, exists: true, error: (e as Error).message };
  }
  if (!read) return base;
  const modifiedAt = new Date(read.mtimeMs).toISOString();
  let entries: OurHookEntry[];
  try {
    entries = ourHookEntries(read.text, harness, file);
  } catch (e) {
    return { ...base, exists: true, modifiedAt, error: (e as Error).message.replace(/; nothing was changed$/, '') };
  }
  const present = new Set(entries.map((e) => e.event));
  const commands = [...new Set(entries.map((e) => e.command))];
  const binary = commands.length && opts.checkCommand !== false ? await checkCommand(fs, commands[0], { root, env, harness }) : null;
  return {
    ...base,
    exists: true,
    installed: entries.length > 0,
    events: spec.events.map((e) => e.event).filter((e) => present.has(e)),
    missing: entries.length ? spec.events.map((e) => e.event).filter((e) => !present.has(e)) : base.missing,
    commands,
    binary,
    modifiedAt,
    entries,
  };
}

// ---------------------------------------------------------------------------------------------
// The command: does it find a binary?

/** POSIX shell words of `command`, quotes removed, `$VAR`/`${VAR}` expanded from `vars` (an unknown one is left as `\0VAR`). */
export function shellWords(command: string, vars: Readonly<Record<string, string>>): string[] | null {
  const words: string[] = [];
  let cur: string | null = null;
  let i = 0;
  const n = command.length;
  const variable = (): string => {
    let name: string;
    if (command[i] === '{') {
      const e = command.indexOf('}', i);
      if (e < 0) return '$';
      name = command.slice(i + 1, e);
      i = e + 1;
    } else {
      const m = /^[A-Za-z_][A-Za-z0-9_]*/.exec(command.slice(i));
      if (!m) return '$';
      name = m[0];
      i += name.length;
    }
    return Object.prototype.hasOwnProperty.call(vars, name) ? vars[name] : `\0${name}`;
  };
  while (i < n) {
    const c = command[i];
    if (c === ' ' || c === '\t') {
      if (cur !== null) words.push(cur);
      cur = null;
      i++;
    } else if (c === "'") {
      const e = command.indexOf("'", i + 1);
      if (e < 0) return null;
      cur = (cur ?? '') + command.slice(i + 1, e);
      i = e + 1;
    } else if (c === '"') {
      i++;
      cur = cur ?? '';
      while (i < n && command[i] !== '"') {
        if (command[i] === '\\' && i + 1 < n && '$`"\\\n'.includes(command[i + 1])) {
          cur += command[i + 1];
          i += 2;
        } else if (command[i] === '$') {
          i++;
          cur += variable();
        } else cur += command[i++];
      }
      if (i >= n) return null;
      i++;
    } else if (c === '\\' && i + 1 < n) {
      cur = (cur ?? '') + command[i + 1];
      i += 2;
    } else if (c === '$') {
      i++;
      cur = (cur ?? '') + variable();
    } else if (';&|<>()`'.includes(c)) {
      return null;
    } else {
      cur = (cur ?? '') + c;
      i++;
    }
  }
  if (cur !== null) words.push(cur);
  return words;
}

async function isExecutable(fs: Fs, path: string): Promise<boolean> {
  const st = await fs.stat(path).catch(() => null);
  return !!st && st.type === 'file' && (st.mode & 0o111) !== 0;
}

async function isFile(fs: Fs, path: string): Promise<boolean> {
  const st = await fs.stat(path).catch(() => null);
  return !!st && st.type === 'file';
}

/**
 * The first `name` a shell finds on PATH, skipping `node_modules/.bin` directories: npm run and
 * npx put them on PATH for their child only, and a harness's shell will not have them.
 */
export async function findOnPath(fs: Fs, path: string | undefined, name: string): Promise<string | null> {
  for (const dir of (path ?? '').split(':')) {
    if (!dir.startsWith('/') || /\/node_modules\/\.bin\/?$/.test(dir)) continue;
    const p = joinPath(dir, name);
    if (await isExecutable(fs, p)) return p;
  }
  return null;
}

/** The nearest `<dir>/<rel>` from `start` up to `/` that `test` accepts. */
async function walkUp(start: string, rel: string, test: (p: string) => Promise<boolean>): Promise<string | null> {
  let dir = start;
  for (;;) {
    const p = joinPath(dir, rel);
    if (await test(p)) return p;
    if (dir === '/') return null;
    dir = dirname(dir);
  }
}

/**
 * Whether a hook command of ours finds its binary, run as the harness runs it: the forms
 * `install` writes (bare `git-scalpel` on PATH, `node <path>`, the hook client `sh <path>`, the
 * harnesses' project-directory variables, the `sh -c` walk up from the session's directory, the
 * old `npx --no-install`),
 * checked from the worktree root; any other form is `unknown`. The harness's PATH may differ from
 * this one (Codex runs hooks in a login shell): a bare name is looked up on this process's PATH.
 */
export async function checkCommand(
  fs: Fs,
  command: string,
  ctx: { root: string | null; env: Env; harness: InstallableHarness },
): Promise<CommandCheck> {
  const tail = ` hook ${ctx.harness}`;
  if (!command.endsWith(tail)) return { resolves: 'unknown', how: 'not a command git-scalpel writes' };
  const vars: Record<string, string> = {};
  if (ctx.root !== null) {
    if (ctx.harness === 'claude-code') vars.CLAUDE_PROJECT_DIR = ctx.root;
    if (ctx.harness === 'gemini') vars.GEMINI_PROJECT_DIR = ctx.root;
  }
  const words = shellWords(command.slice(0, -tail.length), vars);
  if (!words || words.length === 0) return { resolves: 'unknown', how: 'a command this check cannot read' };
  const unknownVar = words.find((w) => w.includes('\0'));
  if (unknownVar !== undefined) {
    return {
      resolves: 'unknown',
      how: `depends on $${unknownVar.slice(unknownVar.indexOf('\0') + 1).split('/')[0]}, which the harness sets when it runs the hook${ctx.root === null ? ' (outside a repository)' : ''}`,
    };
  }
  const found = (binary: string, how: string, extra: Partial<CommandCheck> = {}): CommandCheck => ({
    resolves: 'yes',
    binary,
    how,
    ...extra,
  });
  const missing = (how: string, extra: Partial<CommandCheck> = {}): CommandCheck => ({ resolves: 'no', how, ...extra });
  if (words.length === 1 && words[0] === 'git-scalpel') {
    const p = await findOnPath(fs, ctx.env.PATH, 'git-scalpel');
    return p
      ? found(p, `git-scalpel on PATH: ${p}`, { viaPath: true })
      : missing('no git-scalpel on PATH (install it globally: npm install -g git-scalpel, or run install again from the project)', {
          viaPath: true,
        });
  }
  if (words.length === 2 && words[0] === 'node') {
    const script = words[1];
    if (!script.startsWith('/')) return { resolves: 'unknown', how: `node runs ${script}, relative to the hook's directory` };
    if (!(await isFile(fs, script))) return missing(`${script} does not exist (moved or deleted: run install again)`);
    const node = await findOnPath(fs, ctx.env.PATH, 'node');
    return node
      ? found(script, `node ${script}`)
      : { resolves: 'unknown', binary: script, how: `${script} exists, but node is not on this PATH` };
  }
  if (words.length === 1 && words[0].startsWith('/')) {
    return (await isExecutable(fs, words[0]))
      ? found(words[0], words[0])
      : missing(`${words[0]} is not an executable file (not installed? run npm install)`);
  }
  if (words.length === 2 && words[0] === 'sh' && words[1].endsWith('/git-scalpel-hook.sh')) {
    // the warm server's client (src/server/hook-client.sh): it runs `node git-scalpel.cjs` beside it when no server answers
    const client = words[1];
    if (!client.startsWith('/')) return { resolves: 'unknown', how: `sh runs ${client}, relative to the hook's directory` };
    if (!(await isFile(fs, client))) return missing(`${client} does not exist (moved or deleted: run install again)`);
    return found(client, `sh ${client} (the warm server's client)`);
  }
  if (words.length === 4 && words[0] === 'sh' && words[1] === '-c' && words[3] === 'git-scalpel') {
    const m = /exec (node |sh )?"\$r"\/(.+) "\$@"$/.exec(words[2]);
    const rel = m ? shellWords(m[2], {}) : null;
    if (!m || !rel || rel.length !== 1) return { resolves: 'unknown', how: 'an sh -c command this check cannot read' };
    if (ctx.root === null) return { resolves: 'unknown', how: `finds ${rel[0]} above the session's directory` };
    const p = await walkUp(ctx.root, rel[0], (q) => (m[1] ? isFile(fs, q) : isExecutable(fs, q)));
    return p ? found(p, `${rel[0]} found from ${ctx.root}: ${p}`) : missing(`no ${rel[0]} in ${ctx.root} or above (run npm install)`);
  }
  if (words.length === 3 && words[0] === 'npx' && words[1] === '--no-install' && words[2] === 'git-scalpel') {
    if (ctx.root === null) return { resolves: 'unknown', how: 'npx --no-install git-scalpel', slow: true };
    const p = await walkUp(ctx.root, 'node_modules/.bin/git-scalpel', (q) => isExecutable(fs, q));
    return p
      ? found(p, `npx --no-install: ${p} (npx costs seconds per event)`, { slow: true })
      : missing(`npx --no-install finds no node_modules/.bin/git-scalpel from ${ctx.root}`, { slow: true });
  }
  return { resolves: 'unknown', how: 'a command form this check does not know' };
}

// ---------------------------------------------------------------------------------------------
// Trust

export interface TrustContext {
  env: Env;
  /** The worktree root (where the harness must start for project settings); null outside a repository. */
  root: string | null;
  /** A linked worktree's main checkout. */
  mainRoot: string | null;
  /** The hook files as read (readHookFile). */
  hooks: HookFileStatus[];
}

/** Whether `harness` will run the installed hooks, from its own records (see the module comment). */
export async function readTrust(fs: Fs, harness: InstallableHarness, ctx: TrustContext): Promise<TrustStatus> {
  if (!ctx.hooks.some((h) => h.installed)) return trust('unknown', 'no hooks installed', []);
  try {
    if (harness === 'claude-code') return await claudeTrust(fs, ctx);
    if (harness === 'codex') return await codexTrust(fs, ctx);
    return await geminiTrust(fs, ctx);
  } catch (e) {
    return trust('unknown', `could not read the trust records: ${(e as Error).message}`, []);
  }
}

/** `path` with every symlink resolved (components that do not exist are kept as they are). */
export async function realPath(fs: Fs, path: string): Promise<string> {
  let done = '/';
  let rest = path.split('/').filter((s) => s && s !== '.');
  for (let hops = 0; rest.length;) {
    const seg = rest.shift()!;
    if (seg === '..') {
      done = dirname(done);
      continue;
    }
    const next = joinPath(done, seg);
    const st = await fs.lstat(next).catch(() => null);
    if (!st) return joinPath(next, ...rest);
    if (st.type === 'symlink') {
      if (++hops > 40) return joinPath(next, ...rest);
      const target = await fs.readlink(next);
      rest = [...target.split('/').filter((s) => s && s !== '.'), ...rest];
      if (target.startsWith('/')) done = '/';
      continue;
    }
    done = next;
  }
  return done;
}

async function readJsonObject(fs: Fs, file: string, comments: boolean): Promise<Record<string, unknown> | null> {
  const r = await readText(fs, file);
  if (!r) return null;
  const parsed = parseJsonTree(r.text.charCodeAt(0) === 0xfeff ? r.text.slice(1) : r.text, { comments });
  if (parsed.problem) throw new Error(`${file} is not valid JSON: ${parsed.problem.message} at ${where(parsed.problem)}`);
  if (parsed.root.type !== 'object') throw new Error(`${file} is not a JSON object`);
  return valueOf(parsed.root) as Record<string, unknown>;
}

function get(o: unknown, ...keys: string[]): unknown {
  let v = o;
  for (const k of keys) {
    if (!v || typeof v !== 'object' || Array.isArray(v) || !Object.prototype.hasOwnProperty.call(v, k)) return undefined;
    v = (v as Record<string, unknown>)[k];
  }
  return v;
}

async function claudeTrust(fs: Fs, ctx: TrustContext): Promise<TrustStatus> {
  const file = claudeStateFile(ctx.env);
  if (ctx.root === null)
    return trust('unknown', `Claude Code asks for each folder it starts in (recorded in ${file})`, [
      'start claude in each project and answer "Yes, I trust this folder"',
    ]);
  const fix = [
    `start \`claude\` in ${ctx.root} and answer "Yes, I trust this folder": an interactive Claude Code session runs no hook in a folder not trusted (\`claude -p\` does not ask; --dangerously-skip-permissions skips the question and the hooks)`,
  ];
  const state = await readJsonObject(fs, file, false);
  if (!state) return trust('unknown', `${file} does not exist: Claude Code has not recorded trust for any folder`, fix);
  const keys = [...new Set([ctx.root, await realPath(fs, ctx.root)])];
  for (const k of keys) {
    if (get(state, 'projects', k, 'hasTrustDialogAccepted') === true)
      return trust('yes', `${file}: projects[${JSON.stringify(k)}].hasTrustDialogAccepted is true`, []);
  }
  return trust(
    'unknown',
    `${file} records no accepted trust for ${ctx.root} (Claude Code does not always record it: anthropics/claude-code#90220)`,
    fix,
  );
}

/** Codex's config.toml (smol-toml), or an empty document when there is none. */
async function readCodexConfig(fs: Fs, file: string): Promise<{ doc: TomlDocument; exists: boolean }> {
  const r = await readText(fs, file);
  if (!r) return { doc: {}, exists: false };
  const parsed = parseToml(r.text);
  if (parsed.problem) throw new Error(`${file} is not valid TOML: ${parsed.problem.message} at ${where(parsed.problem)}`);
  return { doc: parsed.doc, exists: true };
}

/** Codex's label of an event in hook-state keys (codex-rs/hooks/src/lib.rs `hook_event_key_label`): PreToolUse → pre_tool_use. */
export function codexEventLabel(event: string): string {
  return event.replace(/([a-z])([A-Z])/g, '$1_$2').toLowerCase();
}

/** The keys Codex stores a hook's trust under (codex-rs/hooks/src/lib.rs `hook_key`), for the file's path as given and resolved. */
export async function codexHookKeys(fs: Fs, file: string, e: OurHookEntry): Promise<string[]> {
  return [...new Set([file, await realPath(fs, file)])].map(
    (src) => `${src}:${codexEventLabel(e.event)}:${e.groupIndex}:${e.handlerIndex}`,
  );
}

const tomlKey = (s: string) => JSON.stringify(s);

async function codexTrust(fs: Fs, ctx: TrustContext): Promise<TrustStatus> {
  const home = harnessDir('codex', ctx.env).dir;
  const config = within(home, 'config.toml');
  const read = await readCodexConfig(fs, config);
  const val = (...path: string[]) => get(read.doc, ...path);
  const fix: string[] = [];
  const how: string[] = [];
  let trusted: Tri = 'yes';

  const project = ctx.hooks.find((h) => h.scope === 'project' && h.installed);
  if (project && ctx.root !== null) {
    const roots = [ctx.root, ...(ctx.mainRoot ? [ctx.mainRoot] : [])];
    const candidates = [...new Set((await Promise.all(roots.map(async (r) => [await realPath(fs, r), r]))).flat())];
    const found = candidates.map((k) => ({ k, level: val('projects', k, 'trust_level') })).find((c) => c.level !== undefined);
    if (found?.level === 'trusted') how.push(`${config}: [projects.${tomlKey(found.k)}] trust_level = "trusted"`);
    else {
      trusted = 'no';
      const root = candidates[0];
      const why = found
        ? `${config} marks it ${JSON.stringify(found.level)}`
        : read.exists
          ? `${config} does not list it as a trusted project`
          : `${config} does not exist`;
      how.push(`Codex loads no project-local config or hooks in ${ctx.root}: ${why}`);
      fix.push(
        `trust the project: start \`codex\` in ${ctx.root} and answer yes to "Do you trust the contents of this directory?", or add to ${config}:\n[projects.${tomlKey(root)}]\ntrust_level = "trusted"`,
      );
    }
  }

  let untrusted = 0;
  let total = 0;
  let off = 0;
  for (const h of ctx.hooks) {
    if (!h.installed) continue;
    for (const e of h.entries) {
      total++;
      const ks = await codexHookKeys(fs, h.file, e);
      const hash = ks.map((k) => val('hooks', 'state', k, 'trusted_hash')).find((v) => typeof v === 'string');
      if (ks.some((k) => val('hooks', 'state', k, 'enabled') === false)) off++;
      if (hash === undefined) untrusted++;
    }
  }
  if (untrusted > 0) {
    trusted = 'no';
    how.push(
      `${untrusted} of the ${total} hooks have no trust record in ${config} ([hooks.state."<hooks.json>:<event>:<group>:<handler>"] trusted_hash): Codex skips them without a word`,
    );
    fix.push(
      `trust the hooks: start \`codex\`${ctx.root ? ` in ${ctx.root}` : ''} and at "Hooks need review" choose "Trust all and continue" (or review them in /hooks); \`codex exec\` never asks, and runs hooks not trusted only with --dangerously-bypass-hook-trust`,
    );
  } else {
    how.push(
      `${config} has a trust record for each of the ${total} hooks (Codex asks again if a hook changed since: its hash is not recomputed here)`,
    );
  }
  if (off > 0) {
    trusted = 'no';
    how.push(`${off} of the ${total} hooks are turned off in ${config} (enabled = false)`);
    fix.push('turn them back on in /hooks');
  }
  return trust(trusted, how, fix);
}

/** Gemini CLI's `isSubpath` on paths already made absolute and real. */
function isSubpath(parent: string, child: string): boolean {
  return child === parent || child.startsWith(parent === '/' ? '/' : `${parent}/`);
}

async function geminiTrust(fs: Fs, ctx: TrustContext): Promise<TrustStatus> {
  const env = ctx.env;
  const trustFile = envDir(env.GEMINI_CLI_TRUSTED_FOLDERS_PATH) ?? within(harnessDir('gemini', env).dir, 'trustedFolders.json');
  if (env.GEMINI_CLI_TRUST_WORKSPACE === 'true')
    return trust('yes', 'GEMINI_CLI_TRUST_WORKSPACE=true in this environment (if Gemini CLI runs with it too)', []);
  const root = ctx.root;
  const fix = root
    ? [
        `trust the folder: start \`gemini\` in ${root} and choose "Trust folder" (or /permissions in a session), or add ${JSON.stringify(root)}: "TRUST_FOLDER" to ${trustFile}; Gemini CLI runs no hook in a folder not trusted`,
      ]
    : ['trust each project folder in Gemini CLI ("Trust folder" when it asks, or /permissions)'];
  if (env.GEMINI_CLI_TRUST_WORKSPACE === 'false') return trust('no', 'GEMINI_CLI_TRUST_WORKSPACE=false in this environment', fix);
  const userSettings = userConfigFile('gemini', env);
  const systemSettings = envDir(env.GEMINI_CLI_SYSTEM_SETTINGS_PATH) ?? '/etc/gemini-cli/settings.json';
  let enabled: unknown;
  let where = '';
  for (const f of [systemSettings, userSettings]) {
    const v = get(await readJsonObject(fs, f, true).catch(() => null), 'security', 'folderTrust', 'enabled');
    if (typeof v === 'boolean') {
      enabled = v;
      where = f;
      break;
    }
  }
  if (enabled === false) return trust('yes', `folder trust is turned off (security.folderTrust.enabled is false in ${where})`, []);
  if (root === null) return trust('unknown', `Gemini CLI trusts folder by folder (${trustFile})`, fix);
  const rules = await readJsonObject(fs, trustFile, true);
  if (!rules)
    return trust(
      'no',
      `${trustFile} does not exist: no folder is trusted yet (Gemini CLI asks when started interactively in ${root}; a headless run exits)`,
      fix,
    );
  const location = await realPath(fs, root);
  let best: { rule: string; level: string } | null = null;
  for (const [rule, level] of Object.entries(rules)) {
    if (typeof level !== 'string' || !rule.startsWith('/')) continue;
    const effective = await realPath(fs, level === 'TRUST_PARENT' ? dirname(rule) : rule);
    if (isSubpath(effective.replace(/\/+$/, '') || '/', location) && (!best || rule.length > best.rule.length)) best = { rule, level };
  }
  if (best?.level === 'TRUST_FOLDER' || best?.level === 'TRUST_PARENT')
    return trust('yes', `${trustFile}: ${JSON.stringify(best.rule)} is ${best.level} (an IDE's answer, when connected, comes first)`, []);
  if (best?.level === 'DO_NOT_TRUST') return trust('no', `${trustFile}: ${JSON.stringify(best.rule)} is DO_NOT_TRUST`, fix);
  return trust(
    'no',
    `${trustFile} has no rule for ${root}: Gemini CLI asks when started interactively there, and a headless run exits`,
    fix,
  );
}

/** Settings that turn our hooks off, each as "<setting> in <file>". */
async function readDisabled(
  fs: Fs,
  harness: InstallableHarness,
  root: string | null,
  env: Env,
  hooks: HookFileStatus[],
): Promise<string[]> {
  if (!hooks.some((h) => h.installed)) return [];
  const out: string[] = [];
  try {
    if (harness === 'claude-code') {
      const files = [
        ...(root ? [joinPath(root, '.claude/settings.json'), joinPath(root, '.claude/settings.local.json')] : []),
        ...[safe(() => userConfigFile('claude-code', env))].filter((f): f is string => !!f),
      ];
      for (const f of files)
        if (get(await readJsonObject(fs, f, false).catch(() => null), 'disableAllHooks') === true)
          out.push(`disableAllHooks is true in ${f}`);
    } else if (harness === 'gemini') {
      const files = [
        ...(root ? [joinPath(root, '.gemini/settings.json')] : []),
        ...[safe(() => userConfigFile('gemini', env))].filter((f): f is string => !!f),
      ];
      for (const f of files) {
        const s = await readJsonObject(fs, f, true).catch(() => null);
        if (get(s, 'hooksConfig', 'enabled') === false) out.push(`hooksConfig.enabled is false in ${f}`);
        for (const list of [get(s, 'hooksConfig', 'disabled'), get(s, 'hooks', 'disabled')]) {
          if (Array.isArray(list) && list.includes('git-scalpel'))
            out.push(`"git-scalpel" is in the disabled hooks of ${f} (/hooks enable git-scalpel)`);
        }
      }
    } else {
      const config = within(harnessDir('codex', env).dir, 'config.toml');
      const { doc } = await readCodexConfig(fs, config);
      if (get(doc, 'features', 'hooks') === false || get(doc, 'features', 'codex_hooks') === false)
        out.push(`[features] hooks = false in ${config}`);
    }
  } catch {
    // a settings file the harness itself would reject is reported where it is read for hooks
  }
  return out;
}

async function readMcp(fs: Fs, harness: InstallableHarness, root: string | null, env: Env): Promise<McpStatus[]> {
  const spec = MCP_SPECS[harness];
  const files: Array<{ scope: 'project' | 'user'; file: string }> = [];
  if (root) files.push({ scope: 'project', file: joinPath(root, spec.projectFile) });
  const user = safe(() => mcpUserConfigFile(harness, env));
  if (user) files.push({ scope: 'user', file: user });
  const out: McpStatus[] = [];
  for (const f of files) {
    try {
      const r = await readText(fs, f.file);
      const plan = planMcpInstall(r?.text ?? null, {
        harness,
        server: { command: 'git-scalpel', args: ['mcp'] },
        uninstall: true,
        file: f.file,
      });
      out.push({ ...f, configured: plan.action === 'uninstalled' });
    } catch (e) {
      out.push({ ...f, configured: false, error: (e as Error).message.replace(/; nothing was changed$/, '') });
    }
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// The last event: the newest record in the worktree's event log (src/store/log.ts: one file per
// event under `<git dir>/scalpel/log/<session>/`, named by time) of a session of the harness
// (`claude-…`, `codex-…`, `gemini-…`: src/hooks/fields.ts harnessSession).

const SESSION_PREFIX: Readonly<Record<InstallableHarness, string>> = { 'claude-code': 'claude-', codex: 'codex-', gemini: 'gemini-' };

function emptyEvents(): Record<InstallableHarness, LastEvent | null> {
  return { 'claude-code': null, codex: null, gemini: null };
}

/**
 * The newest logged hook event of each harness in this worktree. A session's directory changes
 * (mtime) when a record is added to it, so only the directories modified last are listed.
 */
export async function lastEvents(fs: Fs, gitDir: string): Promise<Record<InstallableHarness, LastEvent | null>> {
  const out = emptyEvents();
  const logDir = joinPath(gitDir, 'scalpel', 'log');
  let sessions: string[];
  try {
    sessions = await fs.readdir(logDir);
  } catch {
    return out;
  }
  for (const harness of INSTALLABLE) {
    const dirs: Array<{ session: string; mtime: number }> = [];
    for (const session of sessions) {
      if (!session.startsWith(SESSION_PREFIX[harness])) continue;
      const st = await fs.lstat(joinPath(logDir, session)).catch(() => null);
      if (st?.type === 'directory') dirs.push({ session, mtime: mtimeMs(st) });
    }
    if (dirs.length === 0) continue;
    const newest = Math.max(...dirs.map((d) => d.mtime));
    let best: { session: string; name: string } | null = null;
    for (const d of dirs) {
      if (d.mtime < newest - 2000) continue;
      const names = (await fs.readdir(joinPath(logDir, d.session)).catch(() => [] as string[])).filter((n) => n.endsWith('.json'));
      for (const name of names) if (!best || name > best.name) best = { session: d.session, name };
    }
    if (!best) continue;
    out[harness] = await readEvent(fs, joinPath(logDir, best.session, best.name), best.session, best.name);
  }
  return out;
}

async function readEvent(fs: Fs, file: string, session: string, name: string): Promise<LastEvent | null> {
  try {
    const rec = JSON.parse(utf8Decode(await fs.readFile(file))) as { at?: unknown; event?: unknown; detail?: Record<string, unknown> };
    if (typeof rec.at !== 'string' || typeof rec.event !== 'string') throw new Error('not a record');
    const d = rec.detail ?? {};
    const detail =
      rec.event === 'tool' && typeof d.tool === 'string'
        ? `${d.tool}${typeof d.phase === 'string' ? ` (${d.phase})` : ''}`
        : rec.event === 'turn-start' && typeof d.label === 'string'
          ? JSON.stringify(d.label.length > 60 ? `${d.label.slice(0, 57)}...` : d.label)
          : undefined;
    return { at: rec.at, event: rec.event, session, ...(detail !== undefined ? { detail } : {}) };
  } catch {
    // a record cut short by a crash: its name still tells the time (2026-01-02T03-04-05-678Z-…)
    const m = /^(\d{4}-\d{2}-\d{2}T\d{2})-(\d{2})-(\d{2})-(\d{3})Z/.exec(name);
    return m ? { at: `${m[1]}:${m[2]}:${m[3]}.${m[4]}Z`, event: 'unreadable record', session } : null;
  }
}

// ---------------------------------------------------------------------------------------------
// `turns`' warning

/**
 * One warning per harness whose hooks are installed here and from which no event has reached
 * this worktree's log since the hook file last changed (its mtime: the install wrote it, and any
 * later edit of the file may have changed what the harness trusts; no state of git-scalpel's
 * own to keep in step). A user-level file is not warned about while another harness's events
 * arrive here (that person uses another agent in this project). Never throws: `turns` must work
 * whatever the harnesses' files hold.
 */
export async function hookSilenceWarnings(fs: Fs, opts: StatusOptions): Promise<string[]> {
  try {
    const loc = await locate(fs, opts.cwd);
    if (!loc) return [];
    const events = await lastEvents(fs, loc.gitDir);
    const installs: Array<{ harness: InstallableHarness; file: HookFileStatus }> = [];
    for (const harness of INSTALLABLE) {
      const quick = { checkCommand: false };
      const files = [
        await readHookFile(
          fs,
          harness,
          'project',
          joinPath(loc.worktree, HARNESS_SPECS[harness].projectFile),
          loc.worktree,
          opts.env,
          quick,
        ),
      ];
      const user = safe(() => userConfigFile(harness, opts.env));
      if (user) files.push(await readHookFile(fs, harness, 'user', user, loc.worktree, opts.env, quick));
      for (const f of files) if (f.installed && f.modifiedAt) installs.push({ harness, file: f });
    }
    const out: string[] = [];
    const warned = new Set<InstallableHarness>();
    for (const { harness, file } of installs) {
      if (warned.has(harness)) continue;
      const since = Date.parse(file.modifiedAt!);
      const last = events[harness];
      if (last && Date.parse(last.at) >= since) continue;
      if (file.scope === 'user' && INSTALLABLE.some((h) => h !== harness && events[h] && Date.parse(events[h]!.at) >= since)) continue;
      warned.add(harness);
      const title = HARNESS_SPECS[harness].title;
      out.push(
        `${title} hooks are installed in ${file.file} but no ${title} event has reached this worktree since ${file.modifiedAt}: is the project trusted? run ${opts.bin ?? 'git-scalpel'} status`,
      );
    }
    return out;
  } catch {
    return [];
  }
}

// ---------------------------------------------------------------------------------------------
// Formatting

function age(at: string, now: Date): string {
  const s = Math.round((now.getTime() - Date.parse(at)) / 1000);
  if (!Number.isFinite(s)) return '';
  if (s < 0) return 'just now';
  if (s < 90) return `${s} s ago`;
  if (s < 90 * 60) return `${Math.round(s / 60)} min ago`;
  if (s < 36 * 3600) return `${Math.round(s / 3600)} h ago`;
  return `${Math.round(s / 86400)} days ago`;
}

/** `status`' human output. */
export function formatStatus(st: WorktreeStatus, now: Date = new Date()): string {
  const lines: string[] = [
    st.worktree ? `git-scalpel status of ${st.worktree}` : 'git-scalpel status (outside a repository: user-level files only)',
  ];
  for (const h of st.harnesses) {
    lines.push('');
    const word = h.live === 'yes' ? 'protected' : h.live === 'no' ? 'NOT protected' : 'not known to be protected';
    lines.push(`${h.title}: ${word}: ${h.summary}`);
    for (const f of h.hooks) {
      const where = `${f.scope === 'project' ? 'project' : 'user   '} ${f.file}`;
      if (f.error) lines.push(`  hooks:   ${where}: unreadable: ${f.error}`);
      else if (!f.installed) lines.push(`  hooks:   ${where}: ${f.exists ? 'none of ours' : 'no file'}`);
      else {
        lines.push(
          `  hooks:   ${where}: ${f.events.join(', ')}${f.missing.length ? ` (missing: ${f.missing.join(', ')})` : ''}; installed or changed ${f.modifiedAt}`,
        );
        for (const c of f.commands) lines.push(`           command: ${c}`);
        if (f.binary)
          lines.push(
            `           binary:  ${f.binary.resolves === 'yes' ? 'found' : f.binary.resolves === 'no' ? 'NOT FOUND' : 'unknown'}: ${f.binary.how}`,
          );
      }
    }
    if (h.hooks.some((f) => f.installed)) {
      lines.push(`  trusted: ${h.trust.trusted}`, ...h.trust.reasons.map((r) => `           ${r}`));
      for (const d of h.disabled) lines.push(`  turned off: ${d}`);
    }
    lines.push(
      `  mcp:     ${h.mcp.map((m) => `${m.file}: ${m.error ? `unreadable (${m.error})` : m.configured ? 'configured' : 'no'}`).join('; ') || 'no file'}`,
    );
    lines.push(
      h.lastEvent
        ? `  last event: ${h.lastEvent.at} (${age(h.lastEvent.at, now)}) ${h.lastEvent.event}${h.lastEvent.detail ? ` ${h.lastEvent.detail}` : ''}, session ${h.lastEvent.session}`
        : '  last event: none in this worktree',
    );
    if (h.trust.fix.length && h.live !== 'yes') {
      lines.push('  to trust:');
      h.trust.fix.forEach((f, i) => lines.push(...`${i + 1}. ${f}`.split('\n').map((l, k) => `    ${k ? '   ' : ''}${l}`)));
    }
    for (const n of h.notes) lines.push(`  note: ${n}`);
  }
  return lines.join('\n') + '\n';
}

/** `install`'s lines on whether the harness will run what it just wrote, and how to make it. */
export function formatTrust(title: string, t: TrustStatus): string[] {
  const head =
    t.trusted === 'yes'
      ? `${title} will run these hooks`
      : t.trusted === 'no'
        ? `${title} will NOT run these hooks until you trust them`
        : `whether ${title} runs these hooks cannot be read here`;
  const lines = [`trust:   ${head}`, ...t.reasons.map((r) => `         ${r}`)];
  if (t.fix.length) lines.push('  to trust:');
  t.fix.forEach((f, i) => lines.push(...`${i + 1}. ${f}`.split('\n').map((l, k) => `    ${k ? '   ' : ''}${l}`)));
  return lines;
}
