import type { Fs } from '../fs/types.js';

/** What a command of the command line talks to: the filesystem, its directory, output, and what the process gave it. */
export interface CliIo {
  fs: Fs;
  cwd: string;
  out(text: string): void;
  err(text: string): void;
  /** Standard input, for `--pathspec-from-file=-`. */
  stdin?: () => Promise<Uint8Array>;
  /** HOME and XDG_CONFIG_HOME (the ignore rules of a shell command's capture read core.excludesFile's default there). */
  env?: { HOME?: string; XDG_CONFIG_HOME?: string };
}
