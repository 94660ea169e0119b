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
import { cmdApply } from './cmd-apply.js';

const USAGE = `usage: git-scalpel [-C DIR] <command> [options]

  snapshot [--session S] [--label L] [--into ID] [--json]
           [--pathspec-from-file=F [--pathspec-file-nul] | [--] PATH...]
                         capture exactly these paths: worktree and index entries
  seal     [--session S] [--json] [ID]
                         record what the edit left, so a third party's later write is detected
  restore  [--session S] [--dry-run] [--force] [--json] [ID]
                         undo the newest snapshot (or ID and every later one) and pop it
  list     [--session S] [--json]        the session's snapshots, newest first
  show     [--session S] [--json] ID     what a snapshot holds
  drop     [--session S] [--json] ID|--all
  prune    [--session S] [--keep N] [--json]
  log      [--session S] [--json]        every snapshot, seal, restore and refusal
  index    [--json] [--verify]           print the index like \`git ls-files --stage --debug\`
  apply    [--session S] [--label L] [--index | --cached] [--check CMD] [--keep-on-failure]
           [--dry-run] [--json] [PATCH | -]
                         apply a patch (git diff, format-patch, Codex) with its rollback armed:
                         snapshot every path it touches, write it, run CMD, roll back if it fails (exit 4)

agent harnesses (one snapshot a turn; a turn is a prompt and everything the agent did for it):
  hook     claude-code|codex|gemini|generic [--fail-open]
                         read one hook event (JSON) on stdin, answer in the harness's protocol
  turns    [--session S] [--json]        the agent's turns, newest first, and what a rewind would do
  rewind   [--session S] [--dry-run] [--force] [--json] [TURN]
                         undo the newest turn (or TURN and every later one of its session)
  install  claude-code|codex|gemini [--user] [--uninstall] [--mcp] [--json]
                         write the harness's hook configuration (.claude/settings.json,
                         .codex/hooks.json, .gemini/settings.json; --user: the one in HOME);
                         --mcp: its MCP server configuration instead (.mcp.json, config.toml,
                         settings.json mcpServers)
  mcp                    a Model Context Protocol server on stdio (tools: snapshot, seal, restore,
                         list, show, turns, rewind, log; session 'mcp' unless a call names one)

exit codes: 0 done, 1 error, 2 usage, 3 refused (nothing was written)
`;

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
    case 'apply':
      return cmdApply(rest, ctx);
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

/** The command line on this process (argv, stdio, exit code): what the `git-scalpel` binary runs. */
export async function main(): Promise<void> {
  const io: CliIo = {
    fs: nodeFs(),
    cwd: process.cwd(),
    out: (t) => void process.stdout.write(t),
    err: (t) => void process.stderr.write(t),
    env: { HOME: process.env.HOME, XDG_CONFIG_HOME: process.env.XDG_CONFIG_HOME },
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
