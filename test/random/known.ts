/**
 * Data-loss cases the engine has had (issue 19's table and what the random runs found). While a case is listed in OPEN the
 * generator steers around its trigger (so a random run finds the other bugs instead of this one
 * again and again, and `npm test` stays green); its fixed sequence lives in regressions.test.ts as
 * `it.fails`. When a fix lands: flip the regression to `it` and delete the line here, and the
 * random runs cover the case again. `RANDOM_ALL=1` ignores this list (every trigger generated).
 */
export type Gate =
  /** row 1: a tracked file missing from the worktree (someone else's unstaged deletion), then any shell command */
  | 'deletion-then-shell'
  /** row 2: a directory removed by a call of the turn, then a write beneath it in the same turn */
  | 'write-under-removed-dir'
  /** row 3: one command deletes an untracked file and runs git gc --prune=now */
  | 'gc-in-command'
  /** row 4: a tracked file replaced by a directory, then any shell command */
  | 'dir-over-tracked-then-shell'
  /** row 5: id-less calls (Gemini, generic without toolUseId), the person edits the turn's path between calls */
  | 'idless-person-between-calls'
  /** row 6: a call denied at the permission prompt (before event, never run), the change made by hand */
  | 'denied-call'
  /** row 7: turn 1 writes a, the person edits a, turn 2 writes a: rewind 1 */
  | 'rewind-over-person-between-turns'
  /** row 8: core.autocrlf / eol=crlf files edited by a command */
  | 'crlf'
  /** row 9: a write whose path is a symlink to a file */
  | 'write-through-symlink'
  /** row 10: the person saves a note in a directory the agent created, then the agent's git add -A */
  | 'note-in-agent-dir'
  /** row 12: a command removes a nested repository */
  | 'nested-repo'
  /** row 13: a pushed commit whose clock is behind the turn */
  | 'push-skewed-clock'
  /** row 15: a later call of a turn declares a path sorting before the first one */
  | 'later-path-sorts-first'
  /** issue 19 (prose): files a command creates (or changes: seed 4011) inside ignored directories stay after rewind, unnamed */
  | 'command-writes-ignored-dir'
  /** found here (seed 1005): a command that changes .gitignore un-ignores the person's files, and the rewind deletes them */
  | 'command-changes-gitignore'
  /** found here (seeds 1006, 2016): a rewind after a forced rewind of the session restores what the forced one saved */
  | 'rewind-after-force';

/**
 * The cases still open (row numbers are issue 19's table, counted from 1): none. Every row and
 * every shrunk failure above is fixed and generated again; a new bug found and not fixed at once
 * is listed here, with its sequence as an `it.fails` in regressions.test.ts.
 */
export const OPEN: ReadonlySet<Gate> = new Set<Gate>([]);

/** The gates in force: OPEN, or none under RANDOM_ALL=1, or the list in RANDOM_GATES (comma-separated). */
export function gates(): ReadonlySet<Gate> {
  if (process.env.RANDOM_ALL === '1') return new Set();
  if (process.env.RANDOM_GATES !== undefined) return new Set(process.env.RANDOM_GATES.split(',').filter(Boolean) as Gate[]);
  return OPEN;
}
