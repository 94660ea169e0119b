import { nodeFs } from '../fs/node.js';
import { resolvePath } from '../fs/path.js';
import { ScalpelError } from '../errors/index.js';
import { UsageError, errorExitCode } from './args.js';
import { cmdIndex } from './cmd-index.js';
import type { CliIo } from './io.js';
import { withCliHint } from './hints.js';
import { cmdSnapshot, cmdSeal, cmdRestore, cmdList, cmdShow, cmdDrop, cmdPrune, cmdLog } from './cmd-stack.js';
import { cmdHook, cmdRewind, cmdTurns } from './cmd-turns.js';
import { cmdInstall } from './cmd-install.js';
import { cmdStatus } from './cmd-status.js';
import { HARNESS_ENV } from '../hooks/install.js';
import { cmdApply } from './cmd-apply.js';
import { cmdConformance } from './cmd-conformance.js';
import { USAGE } from './usage.js';

export async function run(argv: string[], io: CliIo): Promise<number> {
  let cwd = io.cwd;
  let i = 0;
  while (i < argv.length) {
    const a = argv[i];
    if (a === '-C') {
      const d = argv[i + 1];
      if (d === undefined) throw new UsageError('-C needs a directory');
      cwd = resolvePath(cwd, d);
      i += 2;
    } else if (a.startsWith('-C') && a.length > 2) {
      cwd = resolvePath(cwd, a.slice(2));
      i += 1;
    } else break;
  }
  const cmd = argv[i];
  try {
    return await dispatch(cmd, argv.slice(i + 1), { ...io, cwd });
  } catch (e) {
    // the library's errors get their command-line words (the flag that helps) on the way out
    throw withCliHint(e, cmd);
  }
}

/** One command, its arguments after `-C DIR`. */
async function dispatch(cmd: string | undefined, rest: string[], ctx: CliIo): Promise<number> {
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
    case 'install':
      return cmdInstall(rest, ctx);
    case 'status':
      return cmdStatus(rest, ctx);
    case 'apply':
      return cmdApply(rest, ctx);
    case 'conformance':
      return cmdConformance(rest, ctx);
    case 'mcp':
      // the MCP SDK is large: only this command loads it, from its own bundle (dist/mcp.cjs beside
      // dist/cli.cjs; unbundled, the module) — a literal import would inline it into every command
      return ((typeof require === 'function' ? require(`${__dirname}/mcp.cjs`) : await import(['..', 'mcp', 'cli.js'].join('/'))) as typeof import('../mcp/cli.js')).cmdMcp(rest, ctx);
    case undefined:
    case 'help':
    case '-h':
    case '--help':
      ctx.out(USAGE);
      return cmd === undefined ? 2 : 0;
    default:
      throw new UsageError(`unknown command '${cmd}'`);
  }
}

/**
 * The variables the command line reads: HOME and XDG_CONFIG_HOME (ignore rules), PATH (is this
 * git-scalpel the one a shell finds?) and the harnesses' own (HARNESS_ENV: CLAUDE_CONFIG_DIR,
 * CODEX_HOME, GEMINI_CLI_HOME, ...). Nothing else of the environment reaches a command.
 */
export const CLI_ENV = ['XDG_CONFIG_HOME', 'PATH', ...HARNESS_ENV] as const;

export function cliEnv(env: Readonly<Record<string, string | undefined>>): Record<string, string | undefined> {
  const out: Record<string, string | undefined> = {};
  for (const k of CLI_ENV) if (env[k] !== undefined) out[k] = env[k];
  return out;
}

/** The command line on this process (argv, stdio, exit code): what the `git-scalpel` binary runs. */
export async function main(): Promise<void> {
  const io: CliIo = {
    fs: nodeFs(),
    cwd: process.cwd(),
    out: (t) => void process.stdout.write(t),
    err: (t) => void process.stderr.write(t),
    env: cliEnv(process.env),
    stdin: async () => {
      const chunks: Uint8Array[] = [];
      for await (const c of process.stdin) chunks.push(c as Uint8Array);
      return new Uint8Array(Buffer.concat(chunks));
    },
  };
  let code: number;
  try {
    code = await run(process.argv.slice(2), io);
  } catch (e) {
    code = errorExitCode(e);
    if (e instanceof UsageError) io.err(`git-scalpel: ${e.message}\n\n${USAGE}`);
    else if (e instanceof ScalpelError) io.err(`git-scalpel: ${code === 3 ? 'refused' : 'error'} [${e.code}]: ${e.message}\n`);
    else io.err(`git-scalpel: unexpected error: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
  }
  process.exitCode = code;
}
