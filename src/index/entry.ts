import { ScalpelError } from '../errors/index.js';
import { readU16, readU32 } from '../bytes/reader.js';
import { toHex, fromHex, isHex } from '../bytes/hex.js';
import { decodePath, encodePath } from '../bytes/text.js';
import type { EntryFlags, IndexStat, Stage } from './types.js';

/** Flag bits of the on-disk 16-bit flags word. */
export const CE_VALID = 0x8000;
export const CE_EXTENDED = 0x4000;
export const CE_STAGEMASK = 0x3000;
export const CE_NAMEMASK = 0x0fff;
/** Bits of the v3+ extended flags word. */
export const CE_SKIP_WORKTREE = 0x4000;
export const CE_INTENT_TO_ADD = 0x2000;
export const CE_EXTENDED_KNOWN = CE_SKIP_WORKTREE | CE_INTENT_TO_ADD;

/**
 * Byte offsets of the fixed fields in an on-disk entry (git's `struct ondisk_cache_entry`):
 * ten 32-bit words, then the object id; the flags word follows the id (at 40 + id length).
 */
export const ENTRY = Object.freeze({ ctime: 0, mtime: 8, dev: 16, ino: 20, mode: 24, uid: 28, gid: 32, size: 36, oid: 40 });

/** The mtime seconds of the entry at `off` in `bytes` (the racy-git rule's first test). */
export function mtimeSecondsAt(bytes: Uint8Array, off: number): number {
  const o = off + ENTRY.mtime;
  return ((bytes[o] << 24) | (bytes[o + 1] << 16) | (bytes[o + 2] << 8) | bytes[o + 3]) >>> 0;
}

/** What a caller passes to build an entry. Strings are hex ids / surrogate-escaped paths. */
export interface IndexEntryInit {
  path: string | Uint8Array;
  oid: string | Uint8Array;
  mode: number;
  stage?: Stage;
  flags?: Partial<EntryFlags>;
  stat?: Partial<IndexStat>;
}

/** Decode every path at once (one TextDecoder call) after this many single path lookups. */
const BULK_AFTER = 64;
const asciiDecoder = new TextDecoder('utf-8');
const strictUtf8 = new TextDecoder('utf-8', { fatal: true });

/**
 * @internal What the decoder records about the whole index file a table was decoded from. A
 * class rather than an object literal so that IndexEntry.shapeKeeper's table can hold one: the
 * shape of a literal made only by decodeIndex died at every garbage collection between two
 * decodes, and the encoder's check of the bytes after the entries (read through it) was thrown
 * back to the interpreter each time.
 */
export class TableSource {
  constructor(
    readonly entriesEnd: number,
    readonly bodyEnd: number,
    readonly extended: number,
    readonly trailerVerified: boolean,
    readonly skipHash: boolean,
    /** The rows whose mtime seconds are at least `racySince` (DecodeOptions.racySince; 2^32: none asked). */
    readonly racySince: number,
    readonly racyRows: readonly number[],
  ) {}
}

/**
 * @internal Columnar storage of entries as they sit in index bytes: one object per decoded
 * file (or per built entry), typed arrays per field, the file's bytes shared. Entries are thin
 * views (table + row), so decoding 100,000 entries allocates 100,000 two-field objects and a
 * few arrays; paths, ids and stat data are read from the bytes only when asked for.
 */
export class EntryTable {
  /** Bytes holding each entry's fixed part (stat words, mode, id, flags). */
  readonly bytes: Uint8Array;
  /** `bytes.buffer` and `bytes.byteOffset`, kept for making id views cheaply. */
  readonly buffer: ArrayBufferLike;
  readonly base: number;
  /** Layout of `bytes`: 2/3 (padded names) or 4 (prefix-compressed names). */
  readonly version: number;
  readonly hashLen: number;
  readonly count: number;
  /** Offset of each entry in `bytes` and its on-disk size. */
  readonly off: Uint32Array;
  readonly size: Uint32Array;
  /** Where each full path lives: `bytes` for v2/v3, a reconstruction arena for v4. */
  readonly pathBuf: Uint8Array;
  readonly pathOff: Uint32Array;
  readonly pathLen: Uint32Array;
  /**
   * Set by the decoder for a whole index file: where its entries end, how many entries have
   * extended flags, and whether its trailer was checked (then an unchanged re-encode may reuse it).
   */
  source: TableSource | null = null;
  /** The platform's whole-buffer Latin-1 decoder (DecodeOptions.latin1), for bulk path strings. */
  latin1: ((b: Uint8Array) => string) | null = null;
  private lookups = 0;
  private bulk: string | null = null;
  private bulkStart: Int32Array | null = null;
  private nonAscii: Uint8Array | null = null;

  constructor(
    bytes: Uint8Array,
    version: number,
    hashLen: number,
    pathBuf: Uint8Array,
    cols: { off: Uint32Array; size: Uint32Array; pathOff: Uint32Array; pathLen: Uint32Array },
  ) {
    this.bytes = bytes;
    this.buffer = bytes.buffer;
    this.base = bytes.byteOffset;
    this.version = version;
    this.hashLen = hashLen;
    this.count = cols.off.length;
    this.off = cols.off;
    this.size = cols.size;
    this.pathBuf = pathBuf;
    this.pathOff = cols.pathOff;
    this.pathLen = cols.pathLen;
  }

  flagsWord(i: number): number {
    return readU16(this.bytes, this.off[i] + ENTRY.oid + this.hashLen);
  }

  extendedWord(i: number): number {
    const o = this.off[i] + ENTRY.oid + this.hashLen;
    return readU16(this.bytes, o) & CE_EXTENDED ? readU16(this.bytes, o + 2) : 0;
  }

  /** Row i's mode word. The accessors below read one field in place (loops over every row use them). */
  mode(i: number): number {
    return readU32(this.bytes, this.off[i] + ENTRY.mode);
  }

  stage(i: number): Stage {
    return ((this.flagsWord(i) & CE_STAGEMASK) >> 12) as Stage;
  }

  mtimeSeconds(i: number): number {
    return readU32(this.bytes, this.off[i] + ENTRY.mtime);
  }

  mtimeNanoseconds(i: number): number {
    return readU32(this.bytes, this.off[i] + ENTRY.mtime + 4);
  }

  /** The cached file size (32 bits; 0 when smudged or never stat'ed). */
  cachedSize(i: number): number {
    return readU32(this.bytes, this.off[i] + ENTRY.size);
  }

  /**
   * The path of row i as a string. Not cached per row: a substring of the bulk string is as cheap
   * as a cache lookup, and 100,000 cached strings would live as long as the index (GC cost).
   */
  pathString(i: number): string {
    if (this.bulk === null && ++this.lookups > BULK_AFTER && this.count > BULK_AFTER * 4) this.decodeAll();
    const po = this.pathOff[i];
    const pl = this.pathLen[i];
    const bulk = this.bulk;
    if (bulk !== null) {
      const start = this.bulkStart ? this.bulkStart[i] : po;
      if (start >= 0 && (this.bulkStart || this.nonAscii === null || this.nonAscii[i] === 0)) return bulk.substring(start, start + pl);
    }
    return decodePath(this.pathBuf, po, po + pl);
  }

  /**
   * Many paths are being asked for: make one string holding them. With a platform Latin-1
   * decoder, the whole path buffer (ASCII paths are then substrings at their byte offsets);
   * otherwise the path bytes are copied together and decoded with one UTF-8 call.
   */
  private decodeAll(): void {
    const fast = this.latin1;
    if (fast) {
      this.bulk = fast(this.pathBuf);
      this.bulkStart = null;
      // which rows hold bytes >= 0x80 (those decode as UTF-8, not Latin-1); null when none does
      this.nonAscii = nonAsciiRows(this.pathBuf, this.pathOff, this.pathLen, this.count);
      return;
    }
    const n = this.count;
    let total = 0;
    for (let i = 0; i < n; i++) total += this.pathLen[i];
    const cat = new Uint8Array(total);
    const start = new Int32Array(n);
    const src = this.pathBuf;
    let w = 0;
    for (let i = 0; i < n; i++) {
      const po = this.pathOff[i];
      const end = po + this.pathLen[i];
      start[i] = w;
      for (let k = po; k < end; k++) cat[w++] = src[k];
    }
    // all ASCII (the usual case): one decode, and string offsets are byte offsets
    let text: string | null = null;
    try {
      text = strictUtf8.decode(cat);
    } catch {
      text = null;
    }
    if (text !== null && text.length === total) {
      this.bulk = text;
      this.bulkStart = start;
      return;
    }
    // some path is not ASCII: mark those, decode the rest together
    w = 0;
    for (let i = 0; i < n; i++) {
      const po = this.pathOff[i];
      const end = po + this.pathLen[i];
      const at = w;
      let bits = 0;
      for (let k = po; k < end; k++) {
        const c = src[k];
        bits |= c;
        cat[w++] = c;
      }
      if (bits & 0x80) {
        w = at;
        start[i] = -1;
      } else start[i] = at;
    }
    this.bulk = asciiDecoder.decode(cat.subarray(0, w));
    this.bulkStart = start;
  }
}

const LITTLE_ENDIAN = new Uint8Array(new Uint32Array([1]).buffer)[0] === 1;
const HIGH_BITS = 0x80808080 | 0;

/**
 * Flags for the rows whose name holds a byte >= 0x80 (null when none does). Names are checked a
 * 32-bit word at a time, masking the bytes of the first and last word that lie outside the name:
 * a quarter of the steps of a byte loop over the ~3.5 MB of names of a 100,000-entry index.
 * @internal (exported for tests)
 */
export function nonAsciiRows(buf: Uint8Array, off: Uint32Array, len: Uint32Array, n: number): Uint8Array | null {
  let flags: Uint8Array | null = null;
  const base = buf.byteOffset;
  const aStart = base & ~3;
  const aEnd = (base + buf.length) & ~3;
  const words = LITTLE_ENDIAN && aEnd > aStart ? new Uint32Array(buf.buffer, aStart, (aEnd - aStart) >>> 2) : null;
  const w0 = aStart >>> 2;
  for (let i = 0; i < n; i++) {
    const pl = len[i];
    if (pl === 0) continue;
    const s = base + off[i];
    const e = s + pl; // exclusive
    let bits = 0;
    if (words === null || e > aEnd) {
      for (let k = s - base; k < e - base; k++) bits |= buf[k];
      bits &= 0x80;
    } else {
      let wi = (s >>> 2) - w0;
      const wl = ((e - 1) >>> 2) - w0;
      const first = HIGH_BITS << ((s & 3) << 3);
      const last = HIGH_BITS >>> ((3 - ((e - 1) & 3)) << 3);
      if (wi === wl) bits = words[wi] & first & last;
      else {
        bits = words[wi] & first;
        for (wi++; wi < wl; wi++) bits |= words[wi];
        bits = (bits & HIGH_BITS) | (words[wl] & last);
      }
    }
    if (bits !== 0) (flags ??= new Uint8Array(n))[i] = 1;
  }
  return flags;
}

const ZERO_STAT: IndexStat = Object.freeze({
  ctimeSeconds: 0,
  ctimeNanoseconds: 0,
  mtimeSeconds: 0,
  mtimeNanoseconds: 0,
  dev: 0,
  ino: 0,
  uid: 0,
  gid: 0,
  size: 0,
});

/**
 * One index entry: an immutable view of a row of an EntryTable. An edit makes a new entry
 * (`new IndexEntry({...})` or `entry.with({...})`); a built entry gets a one-row table holding
 * its v2/v3 on-disk form, so the encoder treats built and decoded entries alike.
 */
export class IndexEntry {
  /** @internal */
  readonly _t: EntryTable;
  /** @internal */
  readonly _i: number;

  /**
   * @internal never read. One entry (and so one table) that lives as long as the class. V8
   * forgets an object shape once no object has it, and throws away every optimized function that
   * relied on it ("weak objects" in --trace-deopt); without a survivor, each garbage collection
   * between two reads of a large index sent the row loops back to the interpreter. A static field,
   * not a module-level constant: no function refers to such a constant, so once the module (or
   * the bundle, dist/git-scalpel-node.cjs) has run V8 lets it go, and in the bundle the shapes
   * died at every collection (measured on a 100,000-entry index, a forced collection
   * before each visit of every path and id: ~21-30 ms as a module constant, ~14-20 ms so).
   */
  static readonly shapeKeeper: IndexEntry = new IndexEntry(shapeTable(), 0);

  constructor(init: IndexEntryInit);
  /** @internal */
  constructor(init: IndexEntryInit | EntryTable, row?: number);
  constructor(init: IndexEntryInit | EntryTable, row = 0) {
    if (init instanceof EntryTable) {
      this._t = init;
      this._i = row;
      return;
    }
    this._t = buildTable(init);
    this._i = 0;
  }

  /** The path as bytes (a view; do not modify). */
  get pathBytes(): Uint8Array {
    const t = this._t;
    const o = t.pathOff[this._i];
    return t.pathBuf.subarray(o, o + t.pathLen[this._i]);
  }

  /** The path as a string; bytes that are not UTF-8 appear as U+DC80..U+DCFF (U+DC00 + the byte, as Python's surrogateescape; `encodePath` gives the bytes back). */
  get path(): string {
    return this._t.pathString(this._i);
  }

  get mode(): number {
    return this._t.mode(this._i);
  }

  /** On-disk flags word without the name length (assume-valid, extended, stage bits). */
  get flagsWord(): number {
    return this._t.flagsWord(this._i) & ~CE_NAMEMASK;
  }

  /** v3+ extended flags word (0 when absent). */
  get extendedWord(): number {
    return this._t.extendedWord(this._i);
  }

  get stage(): Stage {
    return this._t.stage(this._i);
  }

  get oidBytes(): Uint8Array {
    const t = this._t;
    // a view made by the constructor: about half the cost of subarray, which looks up a species
    return new Uint8Array(t.buffer, t.base + t.off[this._i] + ENTRY.oid, t.hashLen);
  }

  get oid(): string {
    const t = this._t;
    const o = t.off[this._i] + ENTRY.oid;
    return toHex(t.bytes, o, o + t.hashLen);
  }

  get assumeValid(): boolean {
    return (this._t.flagsWord(this._i) & CE_VALID) !== 0;
  }
  get skipWorktree(): boolean {
    return (this._t.extendedWord(this._i) & CE_SKIP_WORKTREE) !== 0;
  }
  get intentToAdd(): boolean {
    return (this._t.extendedWord(this._i) & CE_INTENT_TO_ADD) !== 0;
  }

  get flags(): EntryFlags {
    return { assumeValid: this.assumeValid, skipWorktree: this.skipWorktree, intentToAdd: this.intentToAdd };
  }

  get stat(): IndexStat {
    const b = this._t.bytes;
    const o = this._t.off[this._i];
    return {
      ctimeSeconds: readU32(b, o + ENTRY.ctime),
      ctimeNanoseconds: readU32(b, o + ENTRY.ctime + 4),
      mtimeSeconds: readU32(b, o + ENTRY.mtime),
      mtimeNanoseconds: readU32(b, o + ENTRY.mtime + 4),
      dev: readU32(b, o + ENTRY.dev),
      ino: readU32(b, o + ENTRY.ino),
      uid: readU32(b, o + ENTRY.uid),
      gid: readU32(b, o + ENTRY.gid),
      size: readU32(b, o + ENTRY.size),
    };
  }

  /**
   * Does the cached stat data equal `st` in every field git compares (`ie_match_stat`: times with
   * nanoseconds, dev, ino, uid, gid, size truncated to 32 bits)? Reads the words in place.
   */
  statEquals(st: IndexStat): boolean {
    const b = this._t.bytes;
    const o = this._t.off[this._i];
    return (
      readU32(b, o + ENTRY.mtime) === st.mtimeSeconds >>> 0 &&
      readU32(b, o + ENTRY.mtime + 4) === st.mtimeNanoseconds >>> 0 &&
      readU32(b, o + ENTRY.size) === st.size >>> 0 &&
      readU32(b, o + ENTRY.ctime) === st.ctimeSeconds >>> 0 &&
      readU32(b, o + ENTRY.ctime + 4) === st.ctimeNanoseconds >>> 0 &&
      readU32(b, o + ENTRY.ino) === st.ino >>> 0 &&
      readU32(b, o + ENTRY.dev) === st.dev >>> 0 &&
      readU32(b, o + ENTRY.uid) === st.uid >>> 0 &&
      readU32(b, o + ENTRY.gid) === st.gid >>> 0
    );
  }

  /** Cached mtime, read without building the whole stat object (racy-git checks over every entry). */
  get mtimeSeconds(): number {
    return this._t.mtimeSeconds(this._i);
  }
  get mtimeNanoseconds(): number {
    return this._t.mtimeNanoseconds(this._i);
  }
  get cachedSize(): number {
    return this._t.cachedSize(this._i);
  }

  /** A copy with some fields changed (path, id, mode, stage, flags, stat). */
  with(change: Partial<IndexEntryInit>): IndexEntry {
    return new IndexEntry({
      path: change.path ?? this.pathBytes,
      oid: change.oid ?? this.oidBytes,
      mode: change.mode ?? this.mode,
      stage: change.stage ?? this.stage,
      flags: { ...this.flags, ...(change.flags ?? {}) },
      stat: change.stat ? { ...this.stat, ...change.stat } : this.stat,
    });
  }

  /** Plain JSON-friendly view (path as string, id as hex, mode as octal text). */
  toJSON(): { path: string; oid: string; mode: string; stage: Stage; flags: EntryFlags; stat: IndexStat } {
    return {
      path: this.path,
      oid: this.oid,
      mode: this.mode.toString(8).padStart(6, '0'),
      stage: this.stage,
      flags: this.flags,
      stat: this.stat,
    };
  }
}

/**
 * IndexEntry.shapeKeeper's table: one v2 row (path "x", zero id and stat) with a TableSource, so
 * that the shapes of a decoded file's table and of its source both stay alive. Made without
 * buildTable, which reads constants defined after the IndexEntry class (its static field runs
 * while the class is defined).
 */
function shapeTable(): EntryTable {
  const b = new Uint8Array(64); // stat and mode words, id, flags word at 60, name at 62, NUL padding
  b[26] = 0x81; // mode 0o100644
  b[27] = 0xa4;
  b[61] = 1; // name length 1
  b[62] = 0x78;
  const t = new EntryTable(b, 2, 20, b, {
    off: Uint32Array.of(0),
    size: Uint32Array.of(64),
    pathOff: Uint32Array.of(62),
    pathLen: Uint32Array.of(1),
  });
  t.source = new TableSource(64, 64, 0, false, false, 2 ** 32, []); // not a whole file: only its shape is wanted
  return t;
}

/** A one-row table holding the entry in v2/v3 on-disk form (v3 layout when it has extended flags). */
function buildTable(init: IndexEntryInit): EntryTable {
  const pathBytes = typeof init.path === 'string' ? encodePath(init.path) : init.path;
  checkEntryPath(pathBytes);
  const oid = typeof init.oid === 'string' ? parseOid(init.oid) : init.oid;
  if (oid.length !== 20 && oid.length !== 32) {
    throw new ScalpelError('BAD_ARGUMENT', `object id must be 20 or 32 bytes, got ${oid.length}`, { name: 'oid', length: oid.length });
  }
  checkU32('mode', init.mode);
  const stage = init.stage ?? 0;
  if (stage !== 0 && stage !== 1 && stage !== 2 && stage !== 3) {
    throw new ScalpelError('BAD_ARGUMENT', `stage must be 0..3, got ${String(stage)}`, { name: 'stage', value: stage });
  }
  const f = init.flags ?? {};
  let ext = 0;
  if (f.skipWorktree) ext |= CE_SKIP_WORKTREE;
  if (f.intentToAdd) ext |= CE_INTENT_TO_ADD;
  const s = { ...ZERO_STAT, ...(init.stat ?? {}) };
  const hashLen = oid.length;
  const fixedLen = ENTRY.oid + hashLen;
  const head = fixedLen + 2 + (ext ? 2 : 0);
  const len = pathBytes.length;
  const size = (head + len + 8) & ~7;
  const b = new Uint8Array(size);
  const words = [s.ctimeSeconds, s.ctimeNanoseconds, s.mtimeSeconds, s.mtimeNanoseconds, s.dev, s.ino, init.mode, s.uid, s.gid, s.size];
  for (let i = 0; i < 10; i++) {
    checkU32(STAT_NAMES[i], words[i]);
    writeWord(b, i * 4, words[i]);
  }
  b.set(oid, ENTRY.oid);
  const flags = (f.assumeValid ? CE_VALID : 0) | (ext ? CE_EXTENDED : 0) | (stage << 12) | (len < CE_NAMEMASK ? len : CE_NAMEMASK);
  b[fixedLen] = flags >>> 8;
  b[fixedLen + 1] = flags & 0xff;
  if (ext) {
    b[fixedLen + 2] = ext >>> 8;
    b[fixedLen + 3] = ext & 0xff;
  }
  b.set(pathBytes, head);
  return new EntryTable(b, ext ? 3 : 2, hashLen, b, {
    off: Uint32Array.of(0),
    size: Uint32Array.of(size),
    pathOff: Uint32Array.of(head),
    pathLen: Uint32Array.of(len),
  });
}

const STAT_NAMES = ['ctimeSeconds', 'ctimeNanoseconds', 'mtimeSeconds', 'mtimeNanoseconds', 'dev', 'ino', 'mode', 'uid', 'gid', 'size'];

function checkU32(name: string, v: number): void {
  if (!Number.isInteger(v) || v < 0 || v > 0xffffffff) {
    throw new ScalpelError('BAD_ARGUMENT', `${name} out of range: ${v}`, { name, value: v });
  }
}

function writeWord(b: Uint8Array, p: number, v: number): void {
  b[p] = (v >>> 24) & 0xff;
  b[p + 1] = (v >>> 16) & 0xff;
  b[p + 2] = (v >>> 8) & 0xff;
  b[p + 3] = v & 0xff;
}

function parseOid(hex: string): Uint8Array {
  if (!isHex(hex, 40) && !isHex(hex, 64)) {
    throw new ScalpelError('BAD_ARGUMENT', `not an object id: ${JSON.stringify(hex)}`, { name: 'oid', value: hex });
  }
  return fromHex(hex);
}

/** Entry paths: non-empty, no NUL, not starting with "/". (Sparse directory entries end with "/".) */
export function checkEntryPath(p: Uint8Array): void {
  if (p.length === 0) throw new ScalpelError('BAD_PATH', 'empty path in index entry', { path: '', reason: 'empty' });
  for (let i = 0; i < p.length; i++) {
    if (p[i] === 0) throw new ScalpelError('BAD_PATH', 'NUL byte in index entry path', { path: decodePath(p), offset: i, reason: 'nul' });
  }
  if (p[0] === 0x2f) throw new ScalpelError('BAD_PATH', 'index entry path starts with "/"', { path: decodePath(p), reason: 'absolute' });
}

/** memcmp of two entries' paths. */
export function compareEntryPaths(a: IndexEntry, b: IndexEntry): number {
  const at = a._t;
  const bt = b._t;
  const ab = at.pathBuf;
  const bb = bt.pathBuf;
  const ao = at.pathOff[a._i];
  const bo = bt.pathOff[b._i];
  const al = at.pathLen[a._i];
  const bl = bt.pathLen[b._i];
  const n = al < bl ? al : bl;
  for (let i = 0; i < n; i++) {
    const d = ab[ao + i] - bb[bo + i];
    if (d !== 0) return d;
  }
  return al - bl;
}

/** Order of index entries: path bytes (memcmp), then stage. */
export function compareEntries(a: IndexEntry, b: IndexEntry): number {
  return compareEntryPaths(a, b) || a.stage - b.stage;
}

/** @internal where an entry sits in the bytes it was decoded from (offset, on-disk size). */
export function entryLocation(e: IndexEntry): { offset: number; size: number; pathLength: number } {
  return { offset: e._t.off[e._i], size: e._t.size[e._i], pathLength: e._t.pathLen[e._i] };
}
