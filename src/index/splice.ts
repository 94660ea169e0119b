import { compareBytes } from '../bytes/compare.js';
import { encodePath } from '../bytes/text.js';
import { untouchedTable, type GitIndex } from './decode.js';
import { compareEntries, IndexEntry, type EntryTable } from './entry.js';
import { encodeIndexParts, type EncodeOptions, type IndexHead, type Segment } from './encode.js';
import { invalidateCacheTree, invalidateUntracked } from './edit.js';
import { cacheTreeExtension, invalidateCacheTreeBytes, untouchedCacheTree } from './ext-tree.js';
import { ewahFromBits } from './ewah.js';
import { needsSmudge, smudgedRows, type IndexStamp } from './racy.js';
import { rowsAt, rowsOf, rowsUnder } from './rows.js';
import type { IndexExtension, ResolveUndoRecord } from './types.js';

/**
 * What changes when a scope's entries are put into an index: the scope is every entry at or
 * beneath one of `roots`; its entries are replaced by `entries`, except those at a `keep` path,
 * which stay as they are. Paths are worktree-relative, '/'-separated ('' is the whole index).
 */
export interface IndexSplice {
  roots: readonly string[];
  /** The scope's new entries, in any order (each at or beneath a root, none at a `keep` path). */
  entries: readonly IndexEntry[];
  /** Paths in the scope whose entries are carried over unchanged. */
  keep?: readonly string[];
  /**
   * The mtime of the index file the base was read from: every carried entry that is racily clean
   * against it is written smudged (size 0), as git's writer does. Null or absent: none is.
   */
  stamp?: IndexStamp | null;
  /** Paths whose entries changed: their cache-tree (TREE) nodes are invalidated. */
  changed: readonly string[];
  /** Paths created or removed, in the index or the worktree: their untracked-cache (UNTR) directories are invalidated. */
  touched: readonly string[];
  /** When given, the scope's resolve-undo records (REUC): they replace every record at or beneath a root. */
  resolveUndo?: readonly ResolveUndoRecord[];
}

/** What happens to an old row: carried over as it is, dropped (a row of the scope), or rewritten smudged. */
const CARRIED = 0;
const DROPPED = 1;
const SMUDGED = 2;

/** A spliced index, ready for the writer: what it says besides its entries, and its entries as segments. */
export interface SplicedIndex {
  head: IndexHead;
  segments: Segment[];
}

/**
 * Splice a scope's entries into `base`, without making an object per entry: the rows outside the
 * scope are kept as runs of the table they were decoded from (a racily clean row is cut out and
 * rewritten smudged), and the scope's entries go in where they sort (path bytes, then stage).
 * The extensions are edited as git edits them: TREE invalidated along each changed path, UNTR
 * along each touched one, the FSMN bitmap remapped to the new positions (carried rows keep their
 * bit; inserted entries are marked not fsmonitor-valid), REUC records of the scope replaced,
 * `link` dropped (the index is written whole); EOIE and IEOT are recomputed by the writer.
 */
export function spliceIndex(base: GitIndex, edit: IndexSplice): SplicedIndex {
  const t = untouchedTable(base);
  // without a table of untouched rows, the entries (of one table or several: a merged split index)
  const list: readonly IndexEntry[] | null = t ? null : base.entries;
  const n = t ? t.count : (list as readonly IndexEntry[]).length;
  const rows = rowsOf(base);
  const fate = new Uint8Array(n); // every row CARRIED until the scope and the racy rules say otherwise
  const marked: number[] = []; // rows given another fate, in any order, perhaps twice
  for (const r of edit.roots) {
    for (const i of rowsUnder(rows, r)) {
      fate[i] = DROPPED;
      marked.push(i);
    }
  }
  for (const p of edit.keep ?? []) for (const i of rowsAt(rows, p)) fate[i] = CARRIED;
  const inserted = [...edit.entries].sort(compareEntries);
  const smudged = edit.stamp ? smudgeRows(t, list, n, fate, edit.stamp, marked) : null;
  // the rows not carried as they are, in order: the carried ones between them go out as runs,
  // found without a look at each row (a restore of 3 paths cuts 100,000 rows in a few places)
  const special = uniqueSorted(marked).filter((i) => fate[i] !== CARRIED);

  const segments: Segment[] = [];
  const wantFrom = base.extensions.some((x) => x.signature === 'FSMN');
  const from: number[] = []; // old position of each written entry, -1 for an inserted one (FSMN)
  let row = 0;
  let sp = 0; // next row of `special`
  // rows [row, to) that are not dropped: runs of their table, smudged rows one by one
  const emitRows = (to: number) => {
    let start = row;
    while (sp < special.length && special[sp] < to) {
      const i = special[sp++];
      if (i > start) pushRows(segments, t, list, start, i);
      if (fate[i] === SMUDGED) segments.push({ e: (smudged as Map<number, IndexEntry>).get(i) as IndexEntry });
      start = i + 1;
    }
    if (to > start) pushRows(segments, t, list, start, to);
    if (wantFrom) for (let i = row; i < to; i++) if (fate[i] !== DROPPED) from.push(i);
    row = to;
  };
  const stageAt = t ? (i: number) => t.stage(i) : (i: number) => (list as readonly IndexEntry[])[i].stage;
  for (const e of inserted) {
    // the first row that sorts after e: inserted entries are few, each found by binary search
    const key = e.pathBytes;
    let lo = row;
    let hi = n;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      const c = rows.compare(mid, key) || stageAt(mid) - e.stage;
      if (c <= 0) lo = mid + 1;
      else hi = mid;
    }
    emitRows(lo);
    segments.push({ e });
    if (wantFrom) from.push(-1);
  }
  emitRows(n);
  const head: IndexHead = {
    version: base.version,
    objectFormat: base.objectFormat,
    extensions: spliceExtensions(base, edit, from),
    skipHash: base.skipHash,
  };
  return { head, segments };
}

/** The distinct numbers of `xs`, ascending. */
function uniqueSorted(xs: readonly number[]): number[] {
  if (xs.length === 0) return [];
  const sorted = Int32Array.from(xs).sort();
  const out: number[] = [sorted[0]];
  for (let i = 1; i < sorted.length; i++) if (sorted[i] !== sorted[i - 1]) out.push(sorted[i]);
  return out;
}

/** spliceIndex, written: the parts of the new index file (see encodeIndexParts). */
export function encodeSplice(base: GitIndex, edit: IndexSplice, opts: EncodeOptions = {}): Uint8Array[] {
  const { head, segments } = spliceIndex(base, edit);
  return encodeIndexParts(head, segments, opts);
}

/**
 * The carried rows that are racily clean against the index file's mtime: marked SMUDGED (and
 * added to `marked`), each made a smudged entry.
 */
function smudgeRows(
  t: EntryTable | null,
  list: readonly IndexEntry[] | null,
  n: number,
  fate: Uint8Array,
  stamp: IndexStamp,
  marked: number[],
): Map<number, IndexEntry> {
  const out = new Map<number, IndexEntry>();
  if (t) {
    // one pass over the table's bytes finds the few racy rows
    for (const i of smudgedRows(t, stamp)) {
      if (fate[i] !== CARRIED) continue;
      fate[i] = SMUDGED;
      marked.push(i);
      out.set(i, new IndexEntry(t, i).with({ stat: { size: 0 } }));
    }
  } else {
    const l = list as readonly IndexEntry[];
    for (let i = 0; i < n; i++) {
      const e = l[i];
      if (fate[i] !== CARRIED || !needsSmudge(e._t, e._i, stamp)) continue;
      fate[i] = SMUDGED;
      marked.push(i);
      out.set(i, e.with({ stat: { size: 0 } }));
    }
  }
  return out;
}

/** Rows [a, b) of the base: one run of its table, or its entries coalesced into runs of theirs. */
function pushRows(segments: Segment[], t: EntryTable | null, list: readonly IndexEntry[] | null, a: number, b: number): void {
  if (t) {
    segments.push({ t, start: a, end: b });
    return;
  }
  const l = list as readonly IndexEntry[];
  let run: { t: EntryTable; start: number; end: number } | null = null;
  for (let i = a; i < b; i++) {
    const e = l[i];
    if (run && e._t === run.t && e._i === run.end) run.end++;
    else {
      if (run) segments.push(run);
      run = { t: e._t, start: e._i, end: e._i + 1 };
    }
  }
  if (run) segments.push(run);
}

function spliceExtensions(base: GitIndex, edit: IndexSplice, from: readonly number[]): IndexExtension[] {
  const extensions = base.extensions
    .filter((x) => x.signature !== 'link')
    .map((x): IndexExtension => {
      if (x.signature === 'TREE' && 'nodes' in x) {
        // as bytes when the nodes were never made (the usual case): no object per tree
        const raw = untouchedCacheTree(x);
        if (raw) return cacheTreeExtension(invalidateCacheTreeBytes(raw.layout, edit.changed.map(encodePath)), base.objectFormat);
        let nodes = x.nodes;
        for (const p of edit.changed) nodes = invalidateCacheTree(nodes, encodePath(p));
        return { signature: 'TREE', nodes };
      }
      if (x.signature === 'UNTR' && 'cache' in x) {
        let cache = x.cache;
        for (const p of edit.touched) cache = invalidateUntracked(cache, encodePath(p));
        return { signature: 'UNTR', cache };
      }
      if (x.signature === 'FSMN' && 'bitmap' in x) {
        const dirtyOld = new Set(x.bitmap.bits);
        const bits: number[] = [];
        for (let i = 0; i < from.length; i++) {
          const f = from[i];
          if (f < 0 || dirtyOld.has(f)) bits.push(i);
        }
        return { ...x, bitmap: ewahFromBits(bits.length ? bits[bits.length - 1] + 1 : 0, bits) };
      }
      return x;
    });
  return edit.resolveUndo ? withResolveUndo(extensions, base, edit.roots, edit.resolveUndo) : extensions;
}

/** git's order of extensions that come before REUC: IEOT, link, TREE (then REUC, UNTR, FSMN, sdir, EOIE). */
const BEFORE_REUC = new Set(['IEOT', 'link', 'TREE']);

/** REUC: records outside the scope kept, the scope's replaced; sorted by path; the extension dropped when empty. */
function withResolveUndo(
  extensions: IndexExtension[],
  base: GitIndex,
  roots: readonly string[],
  scoped: readonly ResolveUndoRecord[],
): IndexExtension[] {
  const existing = base.extensions.find((x) => x.signature === 'REUC');
  const rootBytes = roots.map(encodePath);
  const records: ResolveUndoRecord[] = [];
  if (existing && 'records' in existing) {
    for (const r of existing.records) if (!rootBytes.some((root) => coversBytes(root, r.path))) records.push(r);
  }
  records.push(...scoped);
  records.sort((a, b) => compareBytes(a.path, b.path));
  const without = extensions.filter((x) => x.signature !== 'REUC');
  if (records.length === 0) return without;
  const reuc: IndexExtension = { signature: 'REUC', records };
  if (existing) return extensions.map((x) => (x.signature === 'REUC' ? reuc : x));
  let at = 0;
  while (at < without.length && BEFORE_REUC.has(without[at].signature)) at++;
  return [...without.slice(0, at), reuc, ...without.slice(at)];
}

/** Is `path` the root or beneath it (the empty root covers every path)? */
function coversBytes(root: Uint8Array, path: Uint8Array): boolean {
  if (root.length === 0) return true;
  if (path.length < root.length || (path.length > root.length && path[root.length] !== 0x2f)) return false;
  for (let i = 0; i < root.length; i++) if (path[i] !== root[i]) return false;
  return true;
}
