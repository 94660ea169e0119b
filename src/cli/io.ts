import type { Fs } from '../fs/types.js';

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
}
