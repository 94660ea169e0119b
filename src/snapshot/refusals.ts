/**
 * Why a restore refuses (I5) and what it says: paths changed after the seal, or commits made
 * since the snapshot that were pushed (or whose push cannot be told). Nothing is written then;
 * `force` overrides both (data.overridable), after saving the current state.
 */
import { ScalpelError } from '../errors/index.js';
import type { HeadMovement } from '../repo/history.js';
import type { Conflict } from './restore.js';

/**
 * Paths changed after the seal (data.conflicts). This refusal and pushedRefusal's are the ones
 * `force` overrides (data.overridable); their words are the library's ("restore again with
 * force"), and the command line and the MCP server say how their callers do that.
 */
export function refusal(conflicts: Conflict[], session: string, verb: 'restore' | 'rewind' = 'restore'): ScalpelError {
  const lines = conflicts.map((c) => `  ${c.path} (${c.part}): sealed ${c.expected}, found ${c.found}`);
  return new ScalpelError(
    'REFUSED',
    `${verb} refused: ${conflicts.length} path(s) changed after the snapshot was sealed (someone else wrote them):\n${lines.join('\n')}\n` +
      `Nothing was written. To overwrite them anyway, ${verb} again with force; ${savedWhere(session, verb)}`,
    { conflicts, session, overridable: true },
  );
}

/** Where a forced restore or rewind keeps what it overwrites, and how it is undone. */
function savedWhere(session: string, verb: 'restore' | 'rewind'): string {
  return verb === 'rewind'
    ? 'what is there now is saved first, so the forced rewind can be undone (rewind --undo).'
    : `their current state is saved first as a new snapshot on session '${session}', so the forced restore can be undone with another restore.`;
}

/** Does HEAD's movement make a restore unsafe (I5): commits made since were pushed, or that cannot be told? */
export function headRefusal(h: HeadMovement): boolean {
  return h.pushed.length > 0 || !h.complete;
}

function short(oid: string): string {
  return oid.slice(0, 12);
}

export function pushedRefusal(h: HeadMovement, session: string, verb: 'restore' | 'rewind' = 'restore'): ScalpelError {
  const lines = h.pushed.map((p) => `  ${p.ref}: ${p.commits.map(short).join(', ')}`);
  const why = h.complete
    ? `${h.pushed.length === 1 ? 'a remote-tracking ref holds' : `${h.pushed.length} remote-tracking refs hold`} commits made since the snapshot:\n${lines.join('\n')}\n` +
      'Putting the files back here would leave the remote holding the version being undone; that is for the people sharing the branch to decide (git revert, or rewriting the remote).'
    : `HEAD moved from ${h.from.commit ? short(h.from.commit) : 'an unborn branch'} to ${h.to.commit ? short(h.to.commit) : 'an unborn branch'} and the commits in between could not all be examined (${h.warnings[0] ?? 'the walk stopped at its limit'}), so whether they were pushed is unknown.`;
  return new ScalpelError(
    'REFUSED',
    `${verb} refused: ${why}\nNothing was written. To restore the paths anyway (HEAD and branches stay where they are), ${verb} again with force; ${savedWhere(session, verb)}`,
    {
      overridable: true,
      reason: h.complete ? 'pushed' : 'history-unknown',
      pushed: h.pushed,
      head: { from: h.from, to: h.to, count: h.count },
      session,
      conflicts: [],
    },
  );
}
