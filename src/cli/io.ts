import type { Fs } from '../fs/types.js';
import type { WorktreeViews } from '../fs/view.js';

/** What a command of the command line talks to: the filesystem, its directory, output, and what the process gave it. */
export interface CliIo {
  fs: Fs;
  cwd: string;
  out(text: string): void;
  err(text: string): void;
  /** Standard input, for `--pathspec-from-file=-`. */
  stdin?: () => Promise<Uint8Array>;
  /**
   * What the process's environment holds of CLI_ENV (main.ts): HOME and XDG_CONFIG_HOME (the
   * ignore rules of a shell command's capture read core.excludesFile's default there), PATH and
   * the harnesses' own variables (`install` and `status`: where their files are, which
   * git-scalpel a shell finds).
   */
  env?: Readonly<Record<string, string | undefined>> & { HOME?: string; XDG_CONFIG_HOME?: string };
  /**
   * The command line as a person runs it again ('git-scalpel', 'npx git-scalpel', 'node
   * /path/dist/git-scalpel.cjs': invocation.ts personCommand), for the commands the output names.
   * Default 'git-scalpel'.
   */
  bin?: string;
  /** The whole command line after the program's name (-C DIR included), as given: for hints that repeat it. */
  argv?: readonly string[];
  /**
   * Standard output is a terminal: whether it takes colour (no NO_COLOR, TERM not dumb), its size,
   * and (standard input a terminal too) its keys as typed, for `rewind -i`.
   */
  terminal?: { colour: boolean; columns?: number; rows?: number; keys?: () => AsyncIterable<string> };
  /** The package's version, for `--version`, the MCP handshake and `server` (main() reads it for those; without it, 'unknown'). */
  version?: string;
  /**
   * Set by the warm server (src/server/server.ts) for the hook events it answers: `hook` then
   * logs its calls as answered by the server, and names each worktree it opens (`served`), for
   * `server status`.
   */
  hookServer?: {
    served(worktree: string): void;
    /** The server's OpenOptions.cache: every event it answers opens its repository with it (index reads kept). */
    cache: object;
    /** The server's OpenOptions.views: its watched worktrees, for shell baselines. */
    views?: WorktreeViews;
  };
}

/** The command line as a person runs it again (CliIo.bin). */
export function binOf(io: CliIo): string {
  return io.bin ?? 'git-scalpel';
}
