import { ScalpelError } from '../errors/index.js';

/**
 * The library's errors say what would help in its own words ("restore again with force"); on the
 * command line the flag that does it is named too. Matched by code and data, never by message.
 */
export function cliHint(e: ScalpelError, command: string | undefined): string | null {
  if (e.code === 'REFUSED' && e.data.overridable === true && (command === 'restore' || command === 'rewind')) {
    return `To do that, run the same git-scalpel ${command} again with --force${command === 'rewind' ? ' (git-scalpel rewind --undo brings back what it overwrites)' : ''}.`;
  }
  if (e.code === 'UNSUPPORTED' && e.data.capability === 'home' && command === 'install') return '(needed by install --user)';
  return null;
}

/** `e` with its command-line hint appended to the message (the same code and data), or `e` itself when there is none. */
export function withCliHint(e: unknown, command: string | undefined): unknown {
  if (!(e instanceof ScalpelError)) return e;
  const hint = cliHint(e, command);
  if (hint === null) return e;
  const out = new ScalpelError(e.code, `${e.message}\n${hint}`, e.data);
  if (e.stack !== undefined) out.stack = e.stack;
  return out;
}
