import { ScalpelError } from '../errors/index.js';
import { shellQuote } from '../hooks/install-words.js';

/** Where a hint is given: the command, the whole command line as typed, and how a person runs git-scalpel (CliIo.bin). */
export interface HintContext {
  command: string | undefined;
  /** The arguments after the program's name, as given (-C DIR included). */
  argv?: readonly string[];
  /** 'git-scalpel', 'npx git-scalpel', ... (default 'git-scalpel'). */
  bin?: string;
}

/** `argv` as words a POSIX shell reads back the same, after `bin`. */
export function commandText(bin: string, argv: readonly string[]): string {
  return [bin, ...argv.map(shellQuote)].join(' ');
}

/**
 * The library's errors say what would help in its own words ("restore again with force"); on the
 * command line the command that does it is named too, ready to paste: the same command line with
 * --force. Matched by code and data, never by message.
 */
export function cliHint(e: ScalpelError, ctx: HintContext | string | undefined): string | null {
  const c: HintContext = typeof ctx === 'object' ? ctx : { command: ctx };
  const command = c.command;
  if (e.code === 'REFUSED' && e.data.overridable === true && (command === 'restore' || command === 'rewind')) {
    const argv = c.argv ?? [command];
    const again = argv.includes('--force') ? argv : [...argv.filter((a) => a !== '--dry-run'), '--force'];
    return `To do that: ${commandText(c.bin ?? 'git-scalpel', again)}`;
  }
  if (e.code === 'UNSUPPORTED' && e.data.capability === 'home' && command === 'install') return '(needed by install --user)';
  return null;
}

/** `e` with its command-line hint appended to the message (the same code and data), or `e` itself when there is none. */
export function withCliHint(e: unknown, ctx: HintContext | string | undefined): unknown {
  if (!(e instanceof ScalpelError)) return e;
  const hint = cliHint(e, ctx);
  if (hint === null) return e;
  const out = new ScalpelError(e.code, `${e.message}\n${hint}`, e.data);
  if (e.stack !== undefined) out.stack = e.stack;
  return out;
}
