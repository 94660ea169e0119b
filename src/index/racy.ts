import { MODE_GITLINK } from '../object/tree.js';
import type { EntryTable, IndexEntry } from './entry.js';

/** When the index file was last written: its mtime (an lstat of it taken before it was read). */
export interface IndexStamp {
  readonly mtimeSeconds: number;
  readonly mtimeNanoseconds: number;
}

/**
 * Racy git (git's `is_racy_timestamp`; gix's `Stat::is_racy`, libgit2's
 * `git_index_entry_newer_than_index`): an entry whose cached mtime is not older than the index
 * file's may have been changed within the same clock tick after it was stat'ed, so its stat data
 * cannot vouch for the content. Gitlinks carry no stat data that means anything: never racy.
 */
export function isRacyRow(t: EntryTable, i: number, stamp: IndexStamp): boolean {
  const s = t.mtimeSeconds(i);
  if (s < stamp.mtimeSeconds || (s === stamp.mtimeSeconds && t.mtimeNanoseconds(i) < stamp.mtimeNanoseconds)) return false;
  return t.mode(i) !== MODE_GITLINK;
}

/** isRacyRow for an entry. */
export function isRacy(e: IndexEntry, stamp: IndexStamp): boolean {
  return isRacyRow(e._t, e._i, stamp);
}

/**
 * Does the writer smudge this row (git's `ce_smudge_racily_clean_entry`, done without looking at
 * the file: always safe; git looks first and smudges fewer)? Racy and not already smudged (size 0).
 */
export function needsSmudge(t: EntryTable, i: number, stamp: IndexStamp): boolean {
  return isRacyRow(t, i, stamp) && t.cachedSize(i) !== 0;
}
