import { ScalpelError } from '../errors/index.js';
import { readU32 } from '../bytes/reader.js';
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

/** What a caller passes to build an entry. Strings are hex ids / surrogate-escaped paths. */
export interface IndexEntryInit {
  path: string | Uint8Array;
  oid: string | Uint8Array;
  mode: number;
  stage?: Stage;
  flags?: Partial<EntryFlags>;
  stat?: Partial<IndexStat>;
}

const DISK = Symbol('disk');
const EMPTY = new Uint8Array(0);

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
 * One index entry. Immutable: an edit makes a new entry (`with`). Entries decoded from a file keep
 * a reference to the file's bytes and decode their path, id and stat data only when asked, so
 * decoding 100,000 entries allocates one small object each; the encoder copies an untouched
 * entry's bytes instead of re-serialising it.
 */
export class IndexEntry {
  readonly mode: number;
  /** On-disk flags word without the name length (assume-valid, extended, stage). */
  readonly flagsWord: number;
  /** v3+ extended flags word (0 when absent). */
  readonly extendedWord: number;

  /** @internal bytes that hold the fixed fields (the index file) or null for built entries */
  _src: Uint8Array | null;
  /** @internal offset of the entry's fixed part in `_src` */
  _off: number;
  /** @internal total on-disk size of the entry in `_src` (for byte copies) */
  _size: number;
  /** @internal identity of the decode this entry came from, and its position there (v4 copies) */
  _origin: object | null;
  _seq: number;
  /** @internal where the path bytes live (the file for v2/v3, an arena for v4) */
  _pathBuf: Uint8Array;
  _pathOff: number;
  _pathLen: number;
  private _oidLen: number;
  /** @internal fixed fields of a built entry (ten stat/mode words + id); null for decoded ones */
  private _fixed: Uint8Array | null;
  private _path?: string;
  private _oidHex?: string;
  private _stat?: IndexStat;
  private _flags?: EntryFlags;

  constructor(init: IndexEntryInit) {
    if (init === (DISK as unknown)) {
      // internal: fields are filled by _fromDisk; same shape as a built entry
      this.mode = 0;
      this.flagsWord = 0;
      this.extendedWord = 0;
      this._src = null;
      this._off = 0;
      this._size = 0;
      this._origin = null;
      this._seq = -1;
      this._pathBuf = EMPTY;
      this._pathOff = 0;
      this._pathLen = 0;
      this._oidLen = 20;
      this._fixed = null;
      return;
    }
    const pathBytes = typeof init.path === 'string' ? encodePath(init.path) : init.path;
    checkEntryPath(pathBytes);
    const oid = typeof init.oid === 'string' ? parseOid(init.oid) : init.oid;
    if (oid.length !== 20 && oid.length !== 32) {
      throw new ScalpelError('BAD_ARGUMENT', `object id must be 20 or 32 bytes, got ${oid.length}`, { name: 'oid', length: oid.length });
    }
    checkMode(init.mode);
    const stage = init.stage ?? 0;
    if (stage !== 0 && stage !== 1 && stage !== 2 && stage !== 3) {
      throw new ScalpelError('BAD_ARGUMENT', `stage must be 0..3, got ${String(stage)}`, { name: 'stage', value: stage });
    }
    const f = init.flags ?? {};
    let ext = 0;
    if (f.skipWorktree) ext |= CE_SKIP_WORKTREE;
    if (f.intentToAdd) ext |= CE_INTENT_TO_ADD;
    this.mode = init.mode >>> 0;
    this.flagsWord = (f.assumeValid ? CE_VALID : 0) | (ext ? CE_EXTENDED : 0) | (stage << 12);
    this.extendedWord = ext;
    this._src = null;
    this._off = 0;
    this._size = 0;
    this._origin = null;
    this._seq = -1;
    this._pathBuf = pathBytes;
    this._pathOff = 0;
    this._pathLen = pathBytes.length;
    this._oidLen = oid.length;
    // Built entries keep their fixed fields in a private 62/74-byte-equivalent store.
    const fixed = new Uint8Array(40 + oid.length);
    const s = { ...ZERO_STAT, ...(init.stat ?? {}) };
    const words = [s.ctimeSeconds, s.ctimeNanoseconds, s.mtimeSeconds, s.mtimeNanoseconds, s.dev, s.ino, this.mode, s.uid, s.gid, s.size];
    for (let i = 0; i < 10; i++) {
      const v = words[i];
      if (!Number.isInteger(v) || v < 0 || v > 0xffffffff) {
        throw new ScalpelError('BAD_ARGUMENT', `stat field ${i} out of range: ${v}`, { name: 'stat', index: i, value: v });
      }
      writeWord(fixed, i * 4, v);
    }
    fixed.set(oid, 40);
    this._fixed = fixed;
  }

  /** @internal Build an entry that points into decoded index bytes. No validation here: the decoder did it. */
  static _fromDisk(
    src: Uint8Array,
    off: number,
    size: number,
    oidLen: number,
    flagsWord: number,
    extendedWord: number,
    pathBuf: Uint8Array,
    pathOff: number,
    pathLen: number,
    origin: object,
    seq: number,
  ): IndexEntry {
    const e = new IndexEntry(DISK as unknown as IndexEntryInit);
    const w = e as unknown as Record<string, unknown>;
    w.mode = readU32(src, off + 24);
    w.flagsWord = flagsWord & ~CE_NAMEMASK;
    w.extendedWord = extendedWord;
    w._src = src;
    w._off = off;
    w._size = size;
    w._origin = origin;
    w._seq = seq;
    w._pathBuf = pathBuf;
    w._pathOff = pathOff;
    w._pathLen = pathLen;
    w._oidLen = oidLen;
    w._fixed = null;
    return e;
  }

  /** The path as bytes (a view; do not modify). */
  get pathBytes(): Uint8Array {
    return this._pathBuf.subarray(this._pathOff, this._pathOff + this._pathLen);
  }

  /** The path as a string; bytes that are not UTF-8 appear as U+DC80..U+DCFF (see bytes/text). */
  get path(): string {
    return (this._path ??= decodePath(this._pathBuf, this._pathOff, this._pathOff + this._pathLen));
  }

  get stage(): Stage {
    return ((this.flagsWord & CE_STAGEMASK) >> 12) as Stage;
  }

  get oidBytes(): Uint8Array {
    const f = this._fixed;
    if (f) return f.subarray(40, 40 + this._oidLen);
    return (this._src as Uint8Array).subarray(this._off + 40, this._off + 40 + this._oidLen);
  }

  get oid(): string {
    if (this._oidHex === undefined) {
      const f = this._fixed;
      this._oidHex = f ? toHex(f, 40, 40 + this._oidLen) : toHex(this._src as Uint8Array, this._off + 40, this._off + 40 + this._oidLen);
    }
    return this._oidHex;
  }

  get flags(): EntryFlags {
    return (this._flags ??= Object.freeze({
      assumeValid: (this.flagsWord & CE_VALID) !== 0,
      skipWorktree: (this.extendedWord & CE_SKIP_WORKTREE) !== 0,
      intentToAdd: (this.extendedWord & CE_INTENT_TO_ADD) !== 0,
    }));
  }

  get assumeValid(): boolean {
    return (this.flagsWord & CE_VALID) !== 0;
  }
  get skipWorktree(): boolean {
    return (this.extendedWord & CE_SKIP_WORKTREE) !== 0;
  }
  get intentToAdd(): boolean {
    return (this.extendedWord & CE_INTENT_TO_ADD) !== 0;
  }

  get stat(): IndexStat {
    if (!this._stat) {
      const b = this._fixed ?? (this._src as Uint8Array);
      const o = this._fixed ? 0 : this._off;
      this._stat = Object.freeze({
        ctimeSeconds: readU32(b, o),
        ctimeNanoseconds: readU32(b, o + 4),
        mtimeSeconds: readU32(b, o + 8),
        mtimeNanoseconds: readU32(b, o + 12),
        dev: readU32(b, o + 16),
        ino: readU32(b, o + 20),
        uid: readU32(b, o + 28),
        gid: readU32(b, o + 32),
        size: readU32(b, o + 36),
      });
    }
    return this._stat;
  }

  /** @internal the 40 bytes of stat words + mode followed by the id, wherever they live */
  _fixedBytes(): Uint8Array {
    if (this._fixed) return this._fixed;
    return (this._src as Uint8Array).subarray(this._off, this._off + 40 + this._oidLen);
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

  /** Plain JSON-friendly view (path as string, id as hex). */
  toJSON(): { path: string; oid: string; mode: string; stage: Stage; flags: EntryFlags; stat: IndexStat } {
    return { path: this.path, oid: this.oid, mode: this.mode.toString(8).padStart(6, '0'), stage: this.stage, flags: this.flags, stat: this.stat };
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

export function checkMode(mode: number): void {
  if (!Number.isInteger(mode) || mode < 0 || mode > 0xffffffff) {
    throw new ScalpelError('BAD_ARGUMENT', `bad mode ${mode}`, { name: 'mode', value: mode });
  }
}

/** Entry paths: non-empty, no NUL, no leading or trailing slash except sparse directory entries ("dir/"). */
export function checkEntryPath(p: Uint8Array): void {
  if (p.length === 0) throw new ScalpelError('BAD_PATH', 'empty path in index entry', { path: '', reason: 'empty' });
  for (let i = 0; i < p.length; i++) {
    if (p[i] === 0) throw new ScalpelError('BAD_PATH', 'NUL byte in index entry path', { path: decodePath(p), offset: i, reason: 'nul' });
  }
  if (p[0] === 0x2f) throw new ScalpelError('BAD_PATH', 'index entry path starts with "/"', { path: decodePath(p), reason: 'absolute' });
}

/** Order of index entries: path bytes (memcmp), then stage. */
export function compareEntries(a: IndexEntry, b: IndexEntry): number {
  const ab = a._pathBuf;
  const bb = b._pathBuf;
  const ao = a._pathOff;
  const bo = b._pathOff;
  const al = a._pathLen;
  const bl = b._pathLen;
  const n = al < bl ? al : bl;
  for (let i = 0; i < n; i++) {
    const d = ab[ao + i] - bb[bo + i];
    if (d !== 0) return d;
  }
  if (al !== bl) return al - bl;
  return a.stage - b.stage;
}
