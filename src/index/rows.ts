import { compareRange } from '../bytes/compare.js';
import { encodePath } from '../bytes/text.js';
import { IndexEntry, type EntryTable } from './entry.js';
import { untouchedTable, type GitIndex } from './decode.js';

/**
 * Searching an index by path without making an object per entry: on a freshly decoded index the
 * rows of its table are searched directly (binary search over the path bytes), and only the
 * entries found are made. On an index whose entries were materialized or replaced, the entries.
 */
export interface IndexRows {
  readonly count: number;
  /** memcmp of row i's path with `key` */
  compare(i: number, key: Uint8Array): number;
  pathLength(i: number): number;
  /** Does row i's path start with `prefix`? */
  startsWith(i: number, prefix: Uint8Array): boolean;
  entry(i: number): IndexEntry;
  /** Row i's path as a string (as IndexEntry.path). */
  path(i: number): string;
}

/** Rows of a freshly decoded index: its table, searched in place. */
class TableRows implements IndexRows {
  /**
   * Never read: one live object of each row kind, as IndexEntry.shapeKeeper is for entries. V8
   * forgets an object shape once no object has it and throws away the code built on it ("weak
   * objects" in --trace-deopt): without these, a garbage collection between two searches of a
   * large index sent compare, lowerBound and rowsUnder back to the interpreter (~60 deopts over
   * 30-40 rounds with a collection before each). A static field, because a module-level constant
   * no function refers to is let go once the module (or the bundle) has run. (Also
   * DecodedIndex.shapeKeeper; DecodedCacheTree and the row scan's result showed no such deopt
   * without one, so they have none.)
   */
  static readonly shapeKeeper: TableRows = new TableRows(IndexEntry.shapeKeeper._t);
  readonly count: number;
  constructor(private readonly t: EntryTable) {
    this.count = t.count;
  }
  compare(i: number, key: Uint8Array): number {
    const t = this.t;
    return compareRange(t.pathBuf, t.pathOff[i], t.pathLen[i], key);
  }
  pathLength(i: number): number {
    return this.t.pathLen[i];
  }
  startsWith(i: number, p: Uint8Array): boolean {
    const t = this.t;
    return t.pathLen[i] >= p.length && compareRange(t.pathBuf, t.pathOff[i], p.length, p) === 0;
  }
  entry(i: number): IndexEntry {
    return new IndexEntry(this.t, i);
  }
  path(i: number): string {
    return this.t.pathString(i);
  }
}

/** Rows of an index whose entries were materialized or replaced: the entry list. */
class ListRows implements IndexRows {
  /** Never read (TableRows.shapeKeeper). */
  static readonly shapeKeeper: ListRows = new ListRows([IndexEntry.shapeKeeper]);
  readonly count: number;
  constructor(private readonly list: readonly IndexEntry[]) {
    this.count = list.length;
  }
  compare(i: number, key: Uint8Array): number {
    const e = this.list[i];
    return compareRange(e._t.pathBuf, e._t.pathOff[e._i], e._t.pathLen[e._i], key);
  }
  pathLength(i: number): number {
    const e = this.list[i];
    return e._t.pathLen[e._i];
  }
  startsWith(i: number, p: Uint8Array): boolean {
    const e = this.list[i];
    return e._t.pathLen[e._i] >= p.length && compareRange(e._t.pathBuf, e._t.pathOff[e._i], p.length, p) === 0;
  }
  entry(i: number): IndexEntry {
    return this.list[i];
  }
  path(i: number): string {
    return this.list[i].path;
  }
}

export function rowsOf(index: GitIndex): IndexRows {
  const t = untouchedTable(index);
  return t ? new TableRows(t) : new ListRows(index.entries);
}

/** First row whose path is not below `key` in memcmp order. */
export function lowerBound(rows: IndexRows, key: Uint8Array): number {
  let lo = 0;
  let hi = rows.count;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (rows.compare(mid, key) < 0) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/**
 * Rows whose path is `root` (every stage) or lies beneath it, in order. Those beneath sort after
 * unrelated siblings such as `root-x` or `root.txt` ('-' and '.' sort before '/'), so two runs.
 */
export function rowsUnder(rows: IndexRows, root: string): number[] {
  if (root === '') return Array.from({ length: rows.count }, (_, i) => i);
  const key = encodePath(root);
  const out: number[] = [];
  for (let i = lowerBound(rows, key); i < rows.count && rows.pathLength(i) === key.length && rows.compare(i, key) === 0; i++) out.push(i);
  const withSlash = new Uint8Array(key.length + 1);
  withSlash.set(key);
  withSlash[key.length] = 0x2f;
  for (let i = lowerBound(rows, withSlash); i < rows.count && rows.startsWith(i, withSlash); i++) out.push(i);
  return out;
}

/** Rows whose path is exactly `path` (any stage). */
export function rowsAt(rows: IndexRows, path: string): number[] {
  const key = encodePath(path);
  const out: number[] = [];
  for (let i = lowerBound(rows, key); i < rows.count && rows.pathLength(i) === key.length && rows.compare(i, key) === 0; i++) out.push(i);
  return out;
}
