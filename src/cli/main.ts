import { nodeFs } from '../fs/node.js';
import { dirname, joinPath, resolvePath } from '../fs/path.js';
import { ScalpelError } from '../errors/index.js';
import type { Fs } from '../fs/types.js';
import { utf8Decode } from '../bytes/text.js';
import { UsageError } from './args.js';
import { cmdIndex } from './cmd-index.js';
import type { CliIo } from './io.js';
import { withCliHint } from './hints.js';
import { cmdSnapshot, cmdSeal, cmdRestore, cmdList, cmdShow, cmdDrop, cmdPrune, cmdLog } from './cmd-stack.js';
import { cmdDiff } from './cmd-diff.js';
import { useColour } from './colour.js';
import { cmdHook, cmdRewind, cmdTurns } from './cmd-turns.js';
import { HARNESS_ENV } from '../hooks/install-words.js';
import { loadMcp, loadServer, loadTools } from './lazy.js';
import { serverPlace } from '../server/place.js';
import { startInBackground } from '../server/start.js';
import { cmdApply } from './cmd-apply.js';
import { USAGE, commandHelp, isCommand } from './usage.js';
import { errorOutcome, ok, printOutcome, wantsJson } from './output.js';
import { firstOnPathIs, personCommand } from './invocation.js';

/** What run() reads beyond a command's CliIo. */
export interface RunIo extends CliIo {
  /** The running CLI's path (process.argv[1]) and the whole process environment: what `server start` starts a server with. */
  script?: string;
  processEnv?: NodeJS.ProcessEnv;
}

/** The commands that speak someone else's protocol on stdout: `--json` is not theirs. */
const PROTOCOL_COMMANDS = new Set(['hook', 'mcp']);

/** The words before the command: `-C DIR` (or `-CDIR`), any number of times. */
function leading(argv: readonly string[]): { dirs: string[]; at: number } {
  const dirs: string[] = [];
  let i = 0;
  while (i < argv.length) {
    const a = argv[i];
    if (a === '-C') {
      const d = argv[i + 1];
      if (d === undefined) throw new UsageError('-C needs a directory');
      dirs.push(d);
      i += 2;
    } else if (a.startsWith('-C') && a.length > 2) {
      dirs.push(a.slice(2));
      i += 1;
    } else break;
  }
  return { dirs, at: i };
}

/** The command word of `argv` (after any -C), when there is one. */
export function commandOf(argv: readonly string[]): string | undefined {
  try {
    return argv[leading(argv).at];
  } catch {
    return undefined;
  }
}

/**
 * One run of the command line: the exit code, or the error it ended in (thrown, with its
 * command-line hint, for runCli to print). Tests call it to see the error itself.
 */
export async function run(argv: string[], io: RunIo): Promise<number> {
  const { dirs, at } = leading(argv);
  let cwd = io.cwd;
  for (const d of dirs) {
    cwd = resolvePath(cwd, d);
    await checkDirectory(io.fs, cwd, d);
  }
  const cmd = argv[at];
  const rest = argv.slice(at + 1);
  const json = wantsJson(argv);
  if (cmd === '--version') {
    const version = io.version ?? 'unknown';
    if (json) return ok(io, `git-scalpel version ${version}`, { version });
    io.out(`git-scalpel version ${version}\n`);
    return 0;
  }
  if (cmd === undefined || cmd === 'help' || cmd === '-h' || cmd === '--help') {
    // `help restore`, `--help restore`: that command's page
    const topic = rest.find((a) => a !== '--json');
    if (topic !== undefined && !isCommand(topic)) throw new UsageError(`no help for '${topic}': not a git-scalpel command`);
    const text = topic !== undefined ? commandHelp(topic) : USAGE;
    if (cmd === undefined) {
      // a bare `git-scalpel`: the reference, and the usage exit code (as before: git prints usage too)
      io.out(USAGE);
      return 2;
    }
    if (json) return ok(io, topic ? `git-scalpel ${topic}` : 'git-scalpel', { command: topic ?? null, help: text });
    io.out(text);
    return 0;
  }
  if (!isCommand(cmd)) throw new UsageError(cmd.startsWith('-') ? `unknown option ${cmd}` : `'${cmd}' is not a git-scalpel command`);
  if (asksHelp(rest)) {
    if (json && !PROTOCOL_COMMANDS.has(cmd)) return ok(io, `git-scalpel ${cmd}`, { command: cmd, help: commandHelp(cmd) });
    io.out(commandHelp(cmd));
    return 0;
  }
  try {
    if (cmd === 'server') return await cmdServerOf(rest, { ...io, cwd, argv });
    return await dispatch(cmd, rest, { ...io, cwd, argv });
  } catch (e) {
    // a usage error shows its command's usage; the library's errors get their command-line words
    // (the command that helps, as this person runs it) on the way out
    if (e instanceof UsageError && e.command === undefined) throw new UsageError(e.message, cmd);
    throw withCliHint(e, { command: cmd, argv, bin: io.bin ?? 'git-scalpel' });
  }
}

/** `-h` or `--help` among a command's options (before a `--`, after which words are paths). */
function asksHelp(rest: readonly string[]): boolean {
  for (const a of rest) {
    if (a === '--') return false;
    if (a === '-h' || a === '--help') return true;
  }
  return false;
}

/** `-C DIR` must name a directory, as git's `-C` does ("cannot change to ..."). */
async function checkDirectory(fs: Fs, dir: string, given: string): Promise<void> {
  const st = await fs.stat(dir);
  if (st && st.type === 'directory') return;
  const reason = st ? 'not-a-directory' : 'not-found';
  throw new ScalpelError('BAD_ARGUMENT', `cannot change to '${given}': ${st ? 'not a directory' : 'no such directory'}`, {
    name: '-C',
    path: dir,
    reason,
  });
}

/**
 * `server`: from its own bundle (dist/server.cjs), given what it cannot import without loading
 * the command line twice: the command line that answers hook events (runCli), this build.
 */
async function cmdServerOf(rest: string[], io: RunIo): Promise<number> {
  return (await loadServer()).cmdServer(rest, io, {
    runHook: (argv, hookIo) => runCli(argv, hookIo),
    version: builtVersion() ?? io.version ?? 'unknown',
    build: buildId(),
    script: io.script ?? process.argv[1] ?? '',
    processEnv: io.processEnv ?? process.env,
  });
}

/** One command, its arguments after `-C DIR`. */
async function dispatch(cmd: string, rest: string[], ctx: CliIo): Promise<number> {
  switch (cmd) {
    case 'index':
      return cmdIndex(rest, ctx);
    case 'snapshot':
      return cmdSnapshot(rest, ctx);
    case 'seal':
      return cmdSeal(rest, ctx);
    case 'restore':
      return cmdRestore(rest, ctx);
    case 'list':
      return cmdList(rest, ctx);
    case 'show':
      return cmdShow(rest, ctx);
    case 'drop':
      return cmdDrop(rest, ctx);
    case 'prune':
      return cmdPrune(rest, ctx);
    case 'log':
      return cmdLog(rest, ctx);
    case 'hook':
      return cmdHook(rest, ctx);
    case 'turns':
      return cmdTurns(rest, ctx);
    case 'rewind':
      return cmdRewind(rest, ctx);
    case 'diff':
      return cmdDiff(rest, ctx);
    case 'install':
      return (await loadTools()).cmdInstall(rest, ctx);
    case 'status':
      return (await loadTools()).cmdStatus(rest, ctx);
    case 'apply':
      return cmdApply(rest, ctx);
    case 'conformance':
      return (await loadTools()).cmdConformance(rest, ctx);
    case 'mcp':
      // the MCP SDK is large: only this command loads it, from its own bundle (lazy.ts)
      return (await loadMcp()).cmdMcp(rest, ctx);
    default:
      throw new UsageError(`'${cmd}' is not a git-scalpel command`);
  }
}

/**
 * The command line as the binary runs it: never throws. An error is printed for a person on
 * stderr and, with `--json` (but for hook and mcp), as the run's one JSON object on stdout
 * (output.ts); the exit code is returned.
 */
export async function runCli(argv: string[], io: RunIo): Promise<number> {
  const command = commandOf(argv);
  const json = wantsJson(argv) && !(command !== undefined && PROTOCOL_COMMANDS.has(command));
  try {
    return await run(argv, io);
  } catch (e) {
    const { outcome, text } = errorOutcome(e, command, io.bin);
    io.err(text);
    if (json) printOutcome(io, outcome);
    return outcome.exit;
  }
}

/**
 * The variables the command line reads: HOME and XDG_CONFIG_HOME (ignore rules), XDG_RUNTIME_DIR
 * (where the warm server's socket is, src/server/place.ts), PATH (is this
 * git-scalpel the one a shell finds?) and the harnesses' own (HARNESS_ENV: CLAUDE_CONFIG_DIR,
 * CODEX_HOME, GEMINI_CLI_HOME, ...). Nothing else of the environment reaches a command.
 */
export const CLI_ENV = ['XDG_CONFIG_HOME', 'XDG_RUNTIME_DIR', 'PATH', ...HARNESS_ENV] as const;

export function cliEnv(env: Readonly<Record<string, string | undefined>>): Record<string, string | undefined> {
  const out: Record<string, string | undefined> = {};
  for (const k of CLI_ENV) if (env[k] !== undefined) out[k] = env[k];
  return out;
}

/** The version the bundle was built with (scripts/bundle-cli.mjs defines it); unbundled, package.json's. */
declare const __GIT_SCALPEL_VERSION__: string | undefined;
/**
 * The build: the version and a hash of the compiled code (scripts/bundle-cli.mjs), which the warm
 * server's socket name carries and the hook client sends; unbundled, 'unbundled'.
 */
declare const __GIT_SCALPEL_BUILD__: string | undefined;

function builtVersion(): string | undefined {
  return typeof __GIT_SCALPEL_VERSION__ === 'string' ? __GIT_SCALPEL_VERSION__ : undefined;
}

export function buildId(): string {
  return typeof __GIT_SCALPEL_BUILD__ === 'string' ? __GIT_SCALPEL_BUILD__ : 'unbundled';
}

/**
 * The version of the git-scalpel package holding `dir`: the nearest package.json above it named
 * git-scalpel. For the unbundled command line (the bundle has it built in).
 */
export async function packageVersion(fs: Fs, dir: string): Promise<string | undefined> {
  for (let d = dir, k = 0; k < 8; d = dirname(d), k++) {
    const bytes = await fs.readFile(joinPath(d, 'package.json')).catch(() => null);
    if (bytes) {
      try {
        const pkg = JSON.parse(utf8Decode(bytes)) as { name?: unknown; version?: unknown };
        if (pkg.name === 'git-scalpel' && typeof pkg.version === 'string') return pkg.version;
      } catch {
        // not JSON: go on up
      }
    }
    if (d === '/' || d === '') break;
  }
  return undefined;
}

/** The terminal's keys as typed (raw mode while they are read), each read one string. */
async function* terminalKeys(): AsyncIterable<string> {
  process.stdin.setRawMode(true);
  process.stdin.setEncoding('utf8');
  try {
    for await (const chunk of process.stdin) yield chunk as string;
  } finally {
    process.stdin.setRawMode(false);
    process.stdin.pause();
  }
}

/** The command line on this process (argv, stdio, exit code): what the `git-scalpel` binary runs. */
export async function main(): Promise<void> {
  const fs = nodeFs();
  const argv = process.argv.slice(2);
  const env = cliEnv(process.env);
  const script = process.argv[1] ?? '';
  const command = commandOf(argv);
  const io: RunIo = {
    fs,
    script,
    processEnv: process.env,
    cwd: process.cwd(),
    out: (t) => void process.stdout.write(t),
    err: (t) => void process.stderr.write(t),
    env,
    ...(process.stdout.isTTY
      ? {
          terminal: {
            colour: useColour({ isTTY: true, env: process.env }) && process.env.TERM !== 'dumb',
            columns: process.stdout.columns,
            rows: process.stdout.rows,
            ...(process.stdin.isTTY ? { keys: terminalKeys } : {}),
          },
        }
      : {}),
    stdin: async () => {
      const chunks: Uint8Array[] = [];
      for await (const c of process.stdin) chunks.push(c as Uint8Array);
      return new Uint8Array(Buffer.concat(chunks));
    },
  };
  // how a person runs this again, for the commands the output names (not worth a PATH walk for a hook)
  if (command !== undefined && !PROTOCOL_COMMANDS.has(command) && script !== '') {
    const abs = resolvePath(io.cwd, script);
    io.bin = personCommand({ script: abs, onPath: await firstOnPathIs(fs, env.PATH, abs).catch(() => false) });
  }
  // the MCP server reports it to its client in the initialize handshake
  if (command === '--version' || command === 'server' || command === 'mcp')
    io.version = builtVersion() ?? (await packageVersion(fs, dirname(resolvePath(io.cwd, script))));
  // the hook client (dist/git-scalpel-hook.sh) found no server to answer: after this process
  // answered, start one for the next event (never waited for, never in the answer's way)
  const startServer = command === 'hook' && process.env.GIT_SCALPEL_SERVER === 'start' && process.platform !== 'win32';
  delete process.env.GIT_SCALPEL_SERVER;
  process.exitCode = await runCli(argv, io);
  const place = startServer && script !== '' ? serverPlace(process.env, buildId()) : null;
  if (place) await startInBackground({ place, script: resolvePath(io.cwd, script), env: process.env });
}
