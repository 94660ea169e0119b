import { MODE_GITLINK } from '../object/tree.js';
import { ENTRY, mtimeSecondsAt, type EntryTable, type IndexEntry } from './entry.js';

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

/**
 * The rows of `t` that the writer smudges (needsSmudge), in order: one pass over the table's
 * bytes, as git's writer makes one pass over its entries.
 */
export function smudgedRows(t: EntryTable, stamp: IndexStamp): number[] {
  const src = t.source;
  // the decoder noted the rows not older than the index it read: when this stamp is not older,
  // they hold every candidate (a restore rewrites the index it read, a moment later)
  const candidates =
    src && src.racySince <= stamp.mtimeSeconds
      ? src.racyRows
      : racyCandidates(t.bytes, t.off, t.count, stamp.mtimeSeconds, stamp.mtimeNanoseconds);
  const out: number[] = [];
  for (const i of candidates) if (needsSmudge(t, i, stamp)) out.push(i);
  return out;
}

/**
 * The rows (of `n` at offsets `off` in `bytes`) whose cached mtime is not older than `seconds`
 * and `nanoseconds` (isRacyRow's time test). It runs over every row of the index on each write (100,000 rows here), so it
 * touches nothing but typed arrays: their object shapes never die, so the code V8 optimizes for
 * it stays valid across garbage collections (code built on the shape of an object, such as an
 * EntryTable, is thrown away when a collection takes the last object of that shape, and the
 * next write would run the loop in the interpreter).
 */
function racyCandidates(bytes: Uint8Array, off: Uint32Array, n: number, seconds: number, nanoseconds: number): number[] {
  const out: number[] = [];
  for (let i = 0; i < n; i++) {
    const s = mtimeSecondsAt(bytes, off[i]);
    if (s < seconds) continue;
    const o = off[i] + ENTRY.mtime + 4;
    if (s === seconds && ((bytes[o] << 24) | (bytes[o + 1] << 16) | (bytes[o + 2] << 8) | bytes[o + 3]) >>> 0 < nanoseconds) continue;
    out.push(i);
  }
  return out;
}
