/**
 * Pack files, read-only: the `.idx` (versions 1 and 2) and random access to the objects of a
 * `.pack` (version 2 or 3), undeltified and deltified (OFS_DELTA and REF_DELTA). Pure: no Node
 * built-ins, no I/O — bytes come through a `PackSource` the caller supplies, which may be a whole
 * pack in memory (`bufferPackSource`) or an asynchronous reader of byte ranges of a file
 * (`windowedPackSource`), so a pack of hundreds of megabytes need not be held in memory.
 *
 * The rules follow git's packfile.c (`check_packed_git_idx`, `nth_packed_object_offset`,
 * `unpack_object_header_buffer`, `get_delta_base`, `unpack_entry`) and patch-delta.c
 * (`patch_delta`). Untrusted input never drives an allocation: every size and offset is checked
 * against the bytes that exist (or a cap) first, delta chains are walked iteratively with cycle
 * detection, and an inflated length must equal the declared one.
 *
 * Errors (ScalpelError): TRUNCATED (data.offset, data.need), BAD_SIGNATURE, BAD_VERSION,
 * BAD_ZLIB (data.reason, data.offset = the entry), BAD_OBJECT (data.reason, data.offset: a byte
 * offset in the idx, or the pack offset of the entry at fault; delta errors add data.deltaOffset),
 * CHECKSUM_MISMATCH (data.expected, data.found), UNSUPPORTED `too-large` (over `maxObjectSize`).
 */
import { hexInto } from '../bytes/hex.js';
import { readU32, toHex } from '../bytes/index.js';
import { ScalpelError } from '../errors/index.js';
import { checkObjectFormat, pureHash, oidLength, type HashProvider, type ObjectFormat } from '../hash/index.js';
import { isObjectType, type ObjectType } from './loose.js';
import { ExactInflate } from './pack-inflate.js';

// ───────────────────────────────────────────────────────────────────────────── errors

function bad(reason: string, message: string, data: Record<string, unknown> = {}): ScalpelError {
  return new ScalpelError('BAD_OBJECT', message, { reason, ...data });
}

function truncated(what: string, offset: number, need: number): ScalpelError {
  return new ScalpelError('TRUNCATED', `${what}: truncated at byte ${offset} (need ${need} more bytes)`, { what, offset, need });
}

// ───────────────────────────────────────────────────────────────────────────── .idx

/** `\377tOc`: the signature of a version 2+ pack index. */
export const PACK_IDX_SIGNATURE = 0xff744f63;

/**
 * A parsed `.idx`: a view over its bytes. Nothing per object is allocated at parse time; `find`
 * binary-searches the sorted ids inside the fanout bucket of the id's first byte.
 */
export interface PackIndex {
  readonly format: ObjectFormat;
  readonly version: 1 | 2;
  /** Number of objects in the pack. */
  readonly count: number;
  /** The pack's trailing checksum as the idx records it (hex). */
  readonly packChecksum: string;
  /** The idx file's own trailing checksum (hex). */
  readonly indexChecksum: string;
  /** The idx file's bytes. */
  readonly bytes: Uint8Array;
  /** Pack offset of the object, or undefined when this pack does not hold it. BAD_ARGUMENT for a malformed id. */
  find(oid: Uint8Array | string): number | undefined;
  /** Position of the object in the sorted id table, or -1. */
  position(oid: Uint8Array | string): number;
  /** The id at sorted position `i` (a view into `bytes`). */
  oidAt(i: number): Uint8Array;
  oidHexAt(i: number): string;
  /** The pack offset of the object at sorted position `i`. BAD_OBJECT `bad-large-offset` for a broken 64-bit entry. */
  offsetAt(i: number): number;
  /** CRC32 of the packed entry at position `i` (version 2 only). */
  crc32At(i: number): number | undefined;
}

const FANOUT_BYTES = 256 * 4;

class PackIndexView implements PackIndex {
  readonly format: ObjectFormat;
  readonly version: 1 | 2;
  readonly count: number;
  readonly bytes: Uint8Array;
  private readonly hashLen: number;
  private readonly fanoutStart: number;
  /** Where sorted id i starts: idStart + i * idStride. */
  private readonly idStart: number;
  private readonly idStride: number;
  private readonly crcStart: number;
  /** Where the 4-byte offset of i is: offStart + i * offStride. */
  private readonly offStart: number;
  private readonly offStride: number;
  private readonly largeStart: number;
  private readonly largeCount: number;
  private readonly scratch: Uint8Array;

  constructor(bytes: Uint8Array, format: ObjectFormat, version: 1 | 2, fanoutStart: number, count: number, largeCount: number) {
    const h = oidLength(format);
    this.bytes = bytes;
    this.format = format;
    this.version = version;
    this.count = count;
    this.hashLen = h;
    this.fanoutStart = fanoutStart;
    this.scratch = new Uint8Array(h);
    if (version === 2) {
      this.idStart = fanoutStart + FANOUT_BYTES;
      this.idStride = h;
      this.crcStart = this.idStart + count * h;
      this.offStart = this.crcStart + count * 4;
      this.offStride = 4;
      this.largeStart = this.offStart + count * 4;
      this.largeCount = largeCount;
    } else {
      this.idStart = FANOUT_BYTES + 4;
      this.idStride = h + 4;
      this.crcStart = -1;
      this.offStart = FANOUT_BYTES;
      this.offStride = h + 4;
      this.largeStart = -1;
      this.largeCount = 0;
    }
  }

  get packChecksum(): string {
    const end = this.bytes.length - this.hashLen;
    return toHex(this.bytes, end - this.hashLen, end);
  }

  get indexChecksum(): string {
    return toHex(this.bytes, this.bytes.length - this.hashLen, this.bytes.length);
  }

  private key(oid: Uint8Array | string): Uint8Array {
    const h = this.hashLen;
    if (typeof oid === 'string') {
      if (oid.length !== 2 * h || !hexInto(oid, this.scratch)) {
        throw new ScalpelError('BAD_ARGUMENT', `not a ${this.format} object id: ${JSON.stringify(oid)}`, {
          name: 'oid',
          value: oid,
          reason: 'bad-oid',
        });
      }
      return this.scratch;
    }
    if (!(oid instanceof Uint8Array) || oid.length !== h) {
      throw new ScalpelError('BAD_ARGUMENT', `a ${this.format} object id is ${h} bytes`, { name: 'oid', reason: 'bad-oid' });
    }
    return oid;
  }

  position(oid: Uint8Array | string): number {
    const key = this.key(oid);
    const b = this.bytes;
    const h = this.hashLen;
    const first = key[0];
    let lo = first === 0 ? 0 : readU32(b, this.fanoutStart + (first - 1) * 4);
    let hi = readU32(b, this.fanoutStart + first * 4);
    const base = this.idStart;
    const stride = this.idStride;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      const p = base + mid * stride;
      let cmp = 0;
      for (let k = 0; k < h; k++) {
        const d = b[p + k] - key[k];
        if (d !== 0) {
          cmp = d;
          break;
        }
      }
      if (cmp === 0) return mid;
      if (cmp < 0) lo = mid + 1;
      else hi = mid;
    }
    return -1;
  }

  find(oid: Uint8Array | string): number | undefined {
    const i = this.position(oid);
    return i < 0 ? undefined : this.offsetAt(i);
  }

  private checkPosition(i: number): void {
    if (!Number.isInteger(i) || i < 0 || i >= this.count) {
      throw new ScalpelError('BAD_ARGUMENT', `pack index position ${i} out of range 0..${this.count - 1}`, { name: 'position', value: i });
    }
  }

  oidAt(i: number): Uint8Array {
    this.checkPosition(i);
    const p = this.idStart + i * this.idStride;
    return this.bytes.subarray(p, p + this.hashLen);
  }

  oidHexAt(i: number): string {
    this.checkPosition(i);
    const p = this.idStart + i * this.idStride;
    return toHex(this.bytes, p, p + this.hashLen);
  }

  offsetAt(i: number): number {
    this.checkPosition(i);
    const b = this.bytes;
    const off = readU32(b, this.offStart + i * this.offStride);
    if (this.version === 1 || off < 0x80000000) return off;
    const k = off & 0x7fffffff;
    const at = this.largeStart + k * 8;
    if (k >= this.largeCount) {
      throw bad('bad-large-offset', `pack index: object ${i} refers to 64-bit offset ${k}, but the table holds ${this.largeCount}`, {
        what: 'pack index',
        offset: this.offStart + i * 4,
        index: k,
      });
    }
    const hi = readU32(b, at);
    const lo = readU32(b, at + 4);
    if (hi >= 0x200000) {
      throw bad('offset-too-large', `pack index: 64-bit offset at byte ${at} exceeds 2^53`, { what: 'pack index', offset: at });
    }
    return hi * 0x100000000 + lo;
  }

  crc32At(i: number): number | undefined {
    this.checkPosition(i);
    return this.version === 2 ? readU32(this.bytes, this.crcStart + i * 4) : undefined;
  }
}

/**
 * Parses a `.idx` (version 2, or the older version 1 that has no signature). Checks the
 * signature, version, that the fanout never decreases, and that the file is exactly as large as
 * the object count implies (version 2: plus up to count - 1 64-bit offsets) before anything else.
 * 64-bit offset entries are checked when read. The sort order and checksum are not checked here
 * (git does not either); see `verifyPackIndex`.
 */
export function parsePackIndex(bytes: Uint8Array, format: ObjectFormat): PackIndex {
  const fmt = checkObjectFormat(format);
  const h = oidLength(fmt);
  if (!(bytes instanceof Uint8Array)) throw new ScalpelError('BAD_ARGUMENT', 'pack index must be a Uint8Array', { name: 'bytes' });
  const what = 'pack index';
  if (bytes.length < 8) throw truncated(what, bytes.length, 8 - bytes.length);
  let version: 1 | 2 = 1;
  let fanoutStart = 0;
  if (readU32(bytes, 0) === PACK_IDX_SIGNATURE) {
    const v = readU32(bytes, 4);
    if (v !== 2)
      throw new ScalpelError('BAD_VERSION', `pack index version ${v} is not supported (expected 2)`, { what, version: v, offset: 4 });
    version = 2;
    fanoutStart = 8;
  }
  const headerEnd = fanoutStart + FANOUT_BYTES;
  if (bytes.length < headerEnd + 2 * h) throw truncated(what, bytes.length, headerEnd + 2 * h - bytes.length);
  let prev = 0;
  for (let i = 0; i < 256; i++) {
    const at = fanoutStart + i * 4;
    const v = readU32(bytes, at);
    if (v < prev)
      throw bad('bad-fanout', `pack index: fanout entry ${i} (${v}) is smaller than the one before (${prev})`, { what, offset: at });
    prev = v;
  }
  const count = prev;
  let largeCount = 0;
  if (version === 2) {
    const minSize = headerEnd + count * (h + 8) + 2 * h;
    const maxSize = minSize + (count > 0 ? (count - 1) * 8 : 0);
    if (bytes.length < minSize) throw truncated(what, bytes.length, minSize - bytes.length);
    if (bytes.length > maxSize) {
      throw bad('bad-size', `pack index: ${bytes.length} bytes, but ${count} objects need at most ${maxSize}`, {
        what,
        offset: maxSize,
        expected: maxSize,
        found: bytes.length,
      });
    }
    largeCount = Math.floor((bytes.length - minSize) / 8);
  } else {
    const size = headerEnd + count * (h + 4) + 2 * h;
    if (bytes.length < size) throw truncated(what, bytes.length, size - bytes.length);
    if (bytes.length > size)
      throw bad('bad-size', `pack index: ${bytes.length} bytes, but ${count} objects need ${size}`, {
        what,
        offset: size,
        expected: size,
        found: bytes.length,
      });
  }
  return new PackIndexView(bytes, fmt, version, fanoutStart, count, largeCount);
}

/**
 * Full check of an idx: its trailing checksum (CHECKSUM_MISMATCH), ids strictly ascending and each
 * in its fanout bucket, every offset readable (BAD_OBJECT). O(count).
 */
export function verifyPackIndex(index: PackIndex, hash: HashProvider = pureHash): void {
  const b = index.bytes;
  const h = oidLength(index.format);
  const found = toHex(
    hash
      .create(index.format)
      .update(b.subarray(0, b.length - h))
      .digest(),
  );
  if (found !== index.indexChecksum) {
    throw new ScalpelError('CHECKSUM_MISMATCH', `pack index checksum is ${index.indexChecksum}, content hashes to ${found}`, {
      what: 'pack index',
      expected: index.indexChecksum,
      found,
    });
  }
  let prev: Uint8Array | undefined;
  for (let i = 0; i < index.count; i++) {
    const id = index.oidAt(i);
    if (prev !== undefined) {
      let cmp = 0;
      for (let k = 0; k < h && cmp === 0; k++) cmp = prev[k] - id[k];
      if (cmp >= 0) throw bad('unsorted', `pack index: id ${i} is not greater than the one before`, { what: 'pack index', index: i });
    }
    if (index.position(id) !== i)
      throw bad('bad-fanout', `pack index: id ${i} is outside its fanout bucket`, { what: 'pack index', index: i });
    index.offsetAt(i);
    prev = id;
  }
}

// ───────────────────────────────────────────────────────────────────────────── .pack

export const PACK_SIGNATURE = 0x5041434b; // "PACK"
export const PACK_HEADER_SIZE = 12;

export interface PackHeader {
  version: 2 | 3;
  count: number;
}

/** The 12-byte header of a `.pack`: "PACK", version 2 or 3, object count. */
export function parsePackHeader(bytes: Uint8Array): PackHeader {
  if (bytes.length < PACK_HEADER_SIZE) throw truncated('pack', bytes.length, PACK_HEADER_SIZE - bytes.length);
  if (readU32(bytes, 0) !== PACK_SIGNATURE) {
    throw new ScalpelError('BAD_SIGNATURE', 'pack: does not start with "PACK"', { what: 'pack', offset: 0, found: toHex(bytes, 0, 4) });
  }
  const version = readU32(bytes, 4);
  if (version !== 2 && version !== 3)
    throw new ScalpelError('BAD_VERSION', `pack version ${version} is not supported`, { what: 'pack', version, offset: 4 });
  return { version, count: readU32(bytes, 8) };
}

/**
 * Random access to the bytes of a pack. `read` returns exactly min(length, size - offset) bytes
 * (a view is fine; callers never modify it). Synchronous for an in-memory pack, a promise for a
 * file read; `readPackedObject` takes both, `readPackedObjectSync` needs a synchronous one.
 */
export interface PackSource {
  readonly size: number;
  read(offset: number, length: number): Uint8Array | Promise<Uint8Array>;
}

export interface SyncPackSource extends PackSource {
  read(offset: number, length: number): Uint8Array;
}

/** A whole pack in memory; reads are views (no copies). */
export function bufferPackSource(bytes: Uint8Array): SyncPackSource {
  return {
    size: bytes.length,
    read(offset: number, length: number): Uint8Array {
      return bytes.subarray(offset, Math.min(bytes.length, offset + length));
    },
  };
}

export interface WindowedSourceOptions {
  /** Minimum bytes fetched per read (default 64 KiB). */
  windowSize?: number;
  /** Windows kept (default 32). */
  windows?: number;
}

/**
 * A pack read through an asynchronous range reader (e.g. a file handle), with a small cache of
 * recently read windows so the headers and data of neighbouring entries of a delta chain cost one
 * read. `readRange(position, length)` must return min(length, size - position) bytes.
 */
export function windowedPackSource(
  size: number,
  readRange: (position: number, length: number) => Promise<Uint8Array>,
  opts: WindowedSourceOptions = {},
): PackSource {
  const windowSize = Math.max(512, opts.windowSize ?? 64 * 1024);
  const max = Math.max(1, opts.windows ?? 32);
  const windows: Array<{ start: number; bytes: Uint8Array }> = [];
  return {
    size,
    async read(offset: number, length: number): Promise<Uint8Array> {
      const end = Math.min(size, offset + length);
      for (let i = windows.length - 1; i >= 0; i--) {
        const w = windows[i];
        if (offset >= w.start && end <= w.start + w.bytes.length) {
          if (i !== windows.length - 1) {
            windows.splice(i, 1);
            windows.push(w);
          }
          return w.bytes.subarray(offset - w.start, end - w.start);
        }
      }
      const want = Math.min(size - offset, Math.max(length, windowSize));
      const bytes = want > 0 ? await readRange(offset, want) : new Uint8Array(0);
      if (bytes.length > length && bytes.length <= 4 * windowSize) {
        windows.push({ start: offset, bytes });
        if (windows.length > max) windows.shift();
      }
      return bytes.subarray(0, Math.min(bytes.length, end - offset));
    },
  };
}

/** Pack entry type codes (`enum object_type`). */
export const OBJ_COMMIT = 1;
export const OBJ_TREE = 2;
export const OBJ_BLOB = 3;
export const OBJ_TAG = 4;
export const OBJ_OFS_DELTA = 6;
export const OBJ_REF_DELTA = 7;

const TYPE_BY_CODE: readonly (ObjectType | undefined)[] = [undefined, 'commit', 'tree', 'blob', 'tag', undefined, undefined, undefined];

export type PackEntryKind = ObjectType | 'ofs-delta' | 'ref-delta';

/** What the header of one pack entry says. */
export interface PackEntryHeader {
  /** Pack offset of the entry. */
  offset: number;
  kind: PackEntryKind;
  typeCode: number;
  /** Declared inflated size: the object's size, or for a delta the size of the delta data. */
  size: number;
  /** Pack offset where the entry's zlib stream starts. */
  dataOffset: number;
  /** OFS_DELTA: pack offset of the base (always below `offset`). */
  baseOffset?: number;
  /** REF_DELTA: the base's id (a view into the bytes parsed). */
  baseId?: Uint8Array;
}

/** Longest entry header: 10-byte size varint + a 32-byte base id or a 10-byte offset varint. */
const MAX_ENTRY_HEADER = 64;

/**
 * Parses the header of the pack entry at pack offset `offset`, whose bytes begin at `bytes[0]`.
 * BAD_OBJECT `bad-type` (types 0 and 5), `bad-size`, `bad-delta-base` (an OFS_DELTA base at or
 * after the entry, or before the pack header); TRUNCATED when `bytes` ends inside the header.
 */
export function parsePackEntryHeader(bytes: Uint8Array, offset: number, format: ObjectFormat): PackEntryHeader {
  const h = oidLength(format);
  let p = 0;
  const next = (): number => {
    if (p >= bytes.length) throw truncated('pack', offset + p, 1);
    return bytes[p++];
  };
  let c = next();
  const typeCode = (c >> 4) & 7;
  let size = c & 15;
  let scale = 16;
  while (c & 0x80) {
    c = next();
    if (scale > 2 ** 52) throw bad('bad-size', `pack: entry at ${offset} has an oversized size field`, { what: 'pack', offset });
    size += (c & 0x7f) * scale;
    scale *= 128;
  }
  if (!Number.isSafeInteger(size)) throw bad('bad-size', `pack: entry at ${offset} has an oversized size field`, { what: 'pack', offset });
  if (typeCode === OBJ_OFS_DELTA) {
    c = next();
    let rel = c & 0x7f;
    while (c & 0x80) {
      if (rel >= 2 ** 45) throw bad('bad-delta-base', `pack: entry at ${offset} has an oversized base offset`, { what: 'pack', offset });
      c = next();
      rel = (rel + 1) * 128 + (c & 0x7f);
    }
    const baseOffset = offset - rel;
    if (rel <= 0 || baseOffset < PACK_HEADER_SIZE) {
      throw bad('bad-delta-base', `pack: delta at ${offset} names a base at ${baseOffset}, which is not before it`, {
        what: 'pack',
        offset,
        baseOffset,
      });
    }
    return { offset, kind: 'ofs-delta', typeCode, size, dataOffset: offset + p, baseOffset };
  }
  if (typeCode === OBJ_REF_DELTA) {
    if (p + h > bytes.length) throw truncated('pack', offset + bytes.length, p + h - bytes.length);
    const baseId = bytes.subarray(p, p + h);
    return { offset, kind: 'ref-delta', typeCode, size, dataOffset: offset + p + h, baseId };
  }
  const kind = TYPE_BY_CODE[typeCode];
  if (kind === undefined)
    throw bad('bad-type', `pack: entry at ${offset} has invalid type ${typeCode}`, { what: 'pack', offset, type: typeCode });
  return { offset, kind, typeCode, size, dataOffset: offset + p };
}

// ───────────────────────────────────────────────────────────────────────────── delta

export interface DeltaHeader {
  baseSize: number;
  resultSize: number;
  /** Where the instructions start. */
  headerLength: number;
}

function deltaVarint(d: Uint8Array, p: number): [number, number] {
  let size = 0;
  let scale = 1;
  let c: number;
  do {
    if (p >= d.length) throw bad('delta-truncated', 'delta: ends inside its size header', { what: 'delta', offset: p });
    if (scale > 2 ** 49) throw bad('delta-bad-size', 'delta: size header too large', { what: 'delta', offset: p });
    c = d[p++];
    size += (c & 0x7f) * scale;
    scale *= 128;
  } while (c & 0x80);
  return [size, p];
}

/** The base and result sizes a delta declares (`get_delta_hdr_size` twice). */
export function parseDeltaHeader(delta: Uint8Array): DeltaHeader {
  const [baseSize, p1] = deltaVarint(delta, 0);
  const [resultSize, p2] = deltaVarint(delta, p1);
  return { baseSize, resultSize, headerLength: p2 };
}

export interface ApplyDeltaOptions {
  /** Refuse (UNSUPPORTED `too-large`) a result larger than this; default DEFAULT_MAX_OBJECT_SIZE. */
  maxSize?: number;
}

/** Default cap on one object (inflated or delta result): 2 GiB. */
export const DEFAULT_MAX_OBJECT_SIZE = 2 ** 31;

function tooLarge(size: number, max: number, data: Record<string, unknown> = {}): ScalpelError {
  return new ScalpelError('UNSUPPORTED', `object of ${size} bytes exceeds the limit of ${max}`, {
    reason: 'too-large',
    capability: 'object-size',
    size,
    max,
    ...data,
  });
}

const POPCOUNT7: Uint8Array = (() => {
  const t = new Uint8Array(128);
  for (let i = 0; i < 128; i++)
    t[i] = (i & 1) + ((i >> 1) & 1) + ((i >> 2) & 1) + ((i >> 3) & 1) + ((i >> 4) & 1) + ((i >> 5) & 1) + ((i >> 6) & 1);
  return t;
})();

/**
 * git's `patch_delta`: the delta's declared base size must equal `base.length`; copy
 * instructions (offset and size bytes selected by the low 7 bits; size 0 means 0x10000) must
 * stay inside the base; insert instructions carry 1..127 literal bytes; opcode 0 is reserved.
 * A first pass validates every instruction and sums the output, which must equal the declared
 * result size, before the result is allocated — a forged result size allocates nothing.
 * Errors: BAD_OBJECT `delta-base-size-mismatch`, `delta-truncated`, `delta-copy-out-of-range`,
 * `delta-reserved-opcode`, `delta-size-mismatch` (data.offset: position in the delta);
 * UNSUPPORTED `too-large`.
 */
export function applyDelta(base: Uint8Array, delta: Uint8Array, opts: ApplyDeltaOptions = {}): Uint8Array {
  const maxSize = opts.maxSize ?? DEFAULT_MAX_OBJECT_SIZE;
  const { baseSize, resultSize, headerLength } = parseDeltaHeader(delta);
  const what = 'delta';
  if (baseSize !== base.length) {
    throw bad('delta-base-size-mismatch', `delta: expects a base of ${baseSize} bytes, base has ${base.length}`, {
      what,
      offset: 0,
      expected: baseSize,
      found: base.length,
    });
  }
  if (resultSize > maxSize) throw tooLarge(resultSize, maxSize, { what });
  const end = delta.length;
  // Pass 1: validate and measure.
  let p = headerLength;
  let total = 0;
  while (p < end) {
    const at = p;
    const cmd = delta[p++];
    if (cmd & 0x80) {
      const n = POPCOUNT7[cmd & 0x7f];
      if (p + n > end) throw bad('delta-truncated', `delta: copy instruction at ${at} is cut off`, { what, offset: at });
      let off = 0;
      let size = 0;
      if (cmd & 0x01) off = delta[p++];
      if (cmd & 0x02) off |= delta[p++] << 8;
      if (cmd & 0x04) off |= delta[p++] << 16;
      if (cmd & 0x08) off += delta[p++] * 0x1000000;
      if (cmd & 0x10) size = delta[p++];
      if (cmd & 0x20) size |= delta[p++] << 8;
      if (cmd & 0x40) size |= delta[p++] << 16;
      if (size === 0) size = 0x10000;
      if (off + size > baseSize) {
        throw bad('delta-copy-out-of-range', `delta: instruction at ${at} copies ${size} bytes from ${off}, past the base's ${baseSize}`, {
          what,
          offset: at,
        });
      }
      total += size;
    } else if (cmd !== 0) {
      if (p + cmd > end) throw bad('delta-truncated', `delta: insert instruction at ${at} is cut off`, { what, offset: at });
      p += cmd;
      total += cmd;
    } else {
      throw bad('delta-reserved-opcode', `delta: reserved opcode 0 at ${at}`, { what, offset: at });
    }
    if (total > resultSize) {
      throw bad('delta-size-mismatch', `delta: instructions produce more than the declared ${resultSize} bytes`, {
        what,
        offset: at,
        expected: resultSize,
      });
    }
  }
  if (total !== resultSize) {
    throw bad('delta-size-mismatch', `delta: instructions produce ${total} bytes, ${resultSize} declared`, {
      what,
      offset: end,
      expected: resultSize,
      found: total,
    });
  }
  // Pass 2: build.
  const out = new Uint8Array(resultSize);
  let o = 0;
  p = headerLength;
  while (p < end) {
    const cmd = delta[p++];
    if (cmd & 0x80) {
      let off = 0;
      let size = 0;
      if (cmd & 0x01) off = delta[p++];
      if (cmd & 0x02) off |= delta[p++] << 8;
      if (cmd & 0x04) off |= delta[p++] << 16;
      if (cmd & 0x08) off += delta[p++] * 0x1000000;
      if (cmd & 0x10) size = delta[p++];
      if (cmd & 0x20) size |= delta[p++] << 8;
      if (cmd & 0x40) size |= delta[p++] << 16;
      if (size === 0) size = 0x10000;
      if (size > 32) out.set(base.subarray(off, off + size), o);
      else for (let k = 0; k < size; k++) out[o + k] = base[off + k];
      o += size;
    } else {
      if (cmd > 32) out.set(delta.subarray(p, p + cmd), o);
      else for (let k = 0; k < cmd; k++) out[o + k] = delta[p + k];
      o += cmd;
      p += cmd;
    }
  }
  return out;
}

// ───────────────────────────────────────────────────────────────────────────── objects

export interface PackedObject {
  type: ObjectType;
  content: Uint8Array;
}

export interface PackedObjectHeader {
  type: ObjectType;
  size: number;
}

/** A cache of objects by pack offset (delta bases). Entries are never modified by the reader. */
export interface PackObjectCache {
  get(offset: number): PackedObject | undefined;
  set(offset: number, obj: PackedObject): void;
}

/**
 * A byte-bounded LRU of delta bases shared by several packs (git's delta_base_cache); `forPack`
 * gives each pack its own key space.
 */
export class DeltaBaseCache {
  readonly maxBytes: number;
  private bytes = 0;
  private readonly map = new Map<string, PackedObject>();
  private nextId = 0;

  constructor(maxBytes = 32 * 1024 * 1024) {
    this.maxBytes = maxBytes;
  }

  /** Bytes of content held. */
  get size(): number {
    return this.bytes;
  }

  forPack(): PackObjectCache {
    const prefix = `${this.nextId++}:`;
    return {
      get: (offset) => {
        const key = prefix + offset;
        const hit = this.map.get(key);
        if (hit !== undefined) {
          this.map.delete(key);
          this.map.set(key, hit);
        }
        return hit;
      },
      set: (offset, obj) => {
        const n = obj.content.length;
        if (n > this.maxBytes / 4) return;
        const key = prefix + offset;
        const old = this.map.get(key);
        if (old !== undefined) {
          this.bytes -= old.content.length;
          this.map.delete(key);
        }
        this.map.set(key, obj);
        this.bytes += n;
        while (this.bytes > this.maxBytes) {
          const first = this.map.keys().next();
          if (first.done) break;
          const victim = this.map.get(first.value) as PackedObject;
          this.map.delete(first.value);
          this.bytes -= victim.content.length;
        }
      },
    };
  }

  clear(): void {
    this.map.clear();
    this.bytes = 0;
  }
}

type MaybePromise<T> = T | Promise<T>;

export interface ReadPackedOptions {
  format: ObjectFormat;
  /** The pack's index: REF_DELTA bases found in it are read from this pack. */
  index?: PackIndex;
  /**
   * A REF_DELTA base not in this pack (a thin pack, or a corrupt one): look it up elsewhere — in
   * another pack or as a loose object. Return undefined when it does not exist.
   */
  resolveRef?: (oid: string) => MaybePromise<PackedObject | undefined>;
  /** For `readPackedHeader`: the type of such a base (falls back to `resolveRef`). */
  resolveRefType?: (oid: string) => MaybePromise<ObjectType | undefined>;
  /** Recently used delta bases of this pack. */
  cache?: PackObjectCache;
  /** Largest object (inflated or delta result) to materialise; default DEFAULT_MAX_OBJECT_SIZE. */
  maxObjectSize?: number;
  /** Longest delta chain to follow; default 100,000 (git writes at most 4095). */
  maxChainLength?: number;
}

export interface ReadPackedSyncOptions extends ReadPackedOptions {
  resolveRef?: (oid: string) => PackedObject | undefined;
  resolveRefType?: (oid: string) => ObjectType | undefined;
}

const REQ_READ = 0;
const REQ_REF = 1;
const REQ_REF_TYPE = 2;
type Req = { kind: typeof REQ_READ; offset: number; length: number } | { kind: typeof REQ_REF | typeof REQ_REF_TYPE; oid: string };
/** The readers are written once, as generators that yield their I/O; a sync and an async driver run them. */
type Gen<T> = Generator<Req, T, unknown>;

interface Ctx {
  format: ObjectFormat;
  hashLen: number;
  index: PackIndex | undefined;
  cache: PackObjectCache | undefined;
  maxSize: number;
  maxChain: number;
  /** End of the entries: the trailer starts here. */
  limit: number;
}

function makeCtx(pack: PackSource, opts: ReadPackedOptions): Ctx {
  const format = checkObjectFormat(opts.format);
  const hashLen = oidLength(format);
  if (!pack || typeof pack.read !== 'function' || !Number.isSafeInteger(pack.size) || pack.size < 0) {
    throw new ScalpelError('BAD_ARGUMENT', 'pack source needs a read() method and a size', { name: 'pack' });
  }
  return {
    format,
    hashLen,
    index: opts.index,
    cache: opts.cache,
    maxSize: opts.maxObjectSize ?? DEFAULT_MAX_OBJECT_SIZE,
    maxChain: opts.maxChainLength ?? 100_000,
    limit: pack.size - hashLen,
  };
}

function* readBytes(offset: number, length: number): Gen<Uint8Array> {
  const got = yield { kind: REQ_READ, offset, length };
  if (!(got instanceof Uint8Array))
    throw new ScalpelError('BAD_ARGUMENT', 'pack source read() did not return a Uint8Array', { name: 'pack', offset });
  if (got.length < length) throw truncated('pack', offset + got.length, length - got.length);
  return got.length === length ? got : got.subarray(0, length);
}

function* headerAt(offset: number, c: Ctx): Gen<PackEntryHeader> {
  if (!Number.isSafeInteger(offset) || offset < PACK_HEADER_SIZE || offset >= c.limit) {
    throw bad('bad-offset', `pack: no entry can start at offset ${offset} (entries lie in ${PACK_HEADER_SIZE}..${c.limit - 1})`, {
      what: 'pack',
      offset,
    });
  }
  const bytes = yield* readBytes(offset, Math.min(MAX_ENTRY_HEADER, c.limit - offset));
  return parsePackEntryHeader(bytes, offset, c.format);
}

function withEntry(e: unknown, offset: number): unknown {
  if (e instanceof ScalpelError) {
    if (e.data.offset === undefined) e.data.offset = offset;
    else if (e.data.what === 'delta' && e.data.deltaOffset === undefined) {
      e.data.deltaOffset = e.data.offset;
      e.data.offset = offset;
    }
    if (e.data.what === undefined) e.data.what = 'pack';
  }
  return e;
}

/** Inflates an entry's data (or only its first `prefix` bytes). */
function* inflateEntry(h: PackEntryHeader, c: Ctx, prefix?: number): Gen<Uint8Array> {
  if (h.size > c.maxSize) throw tooLarge(h.size, c.maxSize, { what: 'pack', offset: h.offset });
  const inf = new ExactInflate(h.size, prefix === undefined ? {} : { prefix });
  let pos = h.dataOffset;
  let chunk = Math.max(256, Math.min(h.size + (h.size >>> 6) + 64, 1 << 20));
  if (prefix !== undefined) chunk = 256;
  try {
    for (;;) {
      if (pos >= c.limit) {
        throw new ScalpelError('BAD_ZLIB', `pack: zlib stream of the entry at ${h.offset} runs into the pack trailer`, {
          reason: 'truncated',
          what: 'pack',
          offset: h.offset,
        });
      }
      const n = Math.min(chunk, c.limit - pos);
      const bytes = yield* readBytes(pos, n);
      if (inf.push(bytes)) break;
      pos += n;
      chunk = Math.min(chunk * 2, 4 << 20);
    }
    return inf.result();
  } catch (e) {
    inf.abandon();
    throw withEntry(e, h.offset);
  }
}

function refOid(h: PackEntryHeader): string {
  return toHex(h.baseId as Uint8Array);
}

function* unpack(offset: number, c: Ctx): Gen<PackedObject> {
  const chain: PackEntryHeader[] = [];
  const seen = new Set<number>();
  let cur = offset;
  let base: PackedObject;
  /** True when `base` is not ours to hand out (cached, or the caller's). */
  let shared = false;
  let baseOffset = -1;
  for (;;) {
    if (seen.has(cur)) throw bad('delta-cycle', `pack: delta chain from ${offset} loops back to ${cur}`, { what: 'pack', offset: cur });
    if (chain.length > c.maxChain)
      throw bad('delta-chain-too-long', `pack: delta chain from ${offset} is longer than ${c.maxChain}`, { what: 'pack', offset });
    seen.add(cur);
    const hit = c.cache?.get(cur);
    if (hit !== undefined) {
      base = hit;
      shared = true;
      break;
    }
    const h = yield* headerAt(cur, c);
    if (h.typeCode === OBJ_OFS_DELTA) {
      chain.push(h);
      cur = h.baseOffset as number;
      continue;
    }
    if (h.typeCode === OBJ_REF_DELTA) {
      chain.push(h);
      const at = c.index?.find(h.baseId as Uint8Array);
      if (at !== undefined) {
        cur = at;
        continue;
      }
      const oid = refOid(h);
      const r = (yield { kind: REQ_REF, oid }) as PackedObject | undefined;
      if (r === undefined || r === null)
        throw bad('missing-delta-base', `pack: base ${oid} of the delta at ${h.offset} is not available`, {
          what: 'pack',
          offset: h.offset,
          base: oid,
        });
      if (!isObjectType(r.type) || !(r.content instanceof Uint8Array)) {
        throw new ScalpelError('BAD_ARGUMENT', 'resolveRef must return { type, content }', { name: 'resolveRef', base: oid });
      }
      base = r;
      shared = true;
      break;
    }
    base = { type: h.kind as ObjectType, content: yield* inflateEntry(h, c) };
    baseOffset = cur;
    break;
  }
  if (chain.length === 0) return shared ? { type: base.type, content: base.content.slice() } : base;
  if (baseOffset >= 0) c.cache?.set(baseOffset, base);
  let content = base.content;
  for (let i = chain.length - 1; i >= 0; i--) {
    const h = chain[i];
    const delta = yield* inflateEntry(h, c);
    try {
      content = applyDelta(content, delta, { maxSize: c.maxSize });
    } catch (e) {
      throw withEntry(e, h.offset);
    }
    if (i > 0) c.cache?.set(h.offset, { type: base.type, content });
  }
  return { type: base.type, content };
}

function* unpackHeader(offset: number, c: Ctx): Gen<PackedObjectHeader> {
  const top = yield* headerAt(offset, c);
  let size = top.size;
  if (top.typeCode === OBJ_OFS_DELTA || top.typeCode === OBJ_REF_DELTA) {
    const prefix = yield* inflateEntry(top, c, 20);
    try {
      size = parseDeltaHeader(prefix).resultSize;
    } catch (e) {
      throw withEntry(e, top.offset);
    }
  }
  const seen = new Set<number>([offset]);
  let h = top;
  let depth = 0;
  for (;;) {
    if (h.typeCode !== OBJ_OFS_DELTA && h.typeCode !== OBJ_REF_DELTA) return { type: h.kind as ObjectType, size };
    if (++depth > c.maxChain)
      throw bad('delta-chain-too-long', `pack: delta chain from ${offset} is longer than ${c.maxChain}`, { what: 'pack', offset });
    let next: number | undefined;
    if (h.typeCode === OBJ_OFS_DELTA) next = h.baseOffset as number;
    else {
      next = c.index?.find(h.baseId as Uint8Array);
      if (next === undefined) {
        const oid = refOid(h);
        const t = (yield { kind: REQ_REF_TYPE, oid }) as ObjectType | undefined;
        if (!isObjectType(t))
          throw bad('missing-delta-base', `pack: base ${oid} of the delta at ${h.offset} is not available`, {
            what: 'pack',
            offset: h.offset,
            base: oid,
          });
        return { type: t, size };
      }
    }
    if (seen.has(next)) throw bad('delta-cycle', `pack: delta chain from ${offset} loops back to ${next}`, { what: 'pack', offset: next });
    seen.add(next);
    const hit = c.cache?.get(next);
    if (hit !== undefined) return { type: hit.type, size };
    h = yield* headerAt(next, c);
  }
}

function isThenable(v: unknown): v is PromiseLike<unknown> {
  return typeof v === 'object' && v !== null && typeof (v as { then?: unknown }).then === 'function';
}

async function answerAsync(req: Req, pack: PackSource, opts: ReadPackedOptions): Promise<unknown> {
  if (req.kind === REQ_READ) return pack.read(req.offset, req.length);
  if (req.kind === REQ_REF) return opts.resolveRef?.(req.oid);
  if (opts.resolveRefType) return opts.resolveRefType(req.oid);
  return (await opts.resolveRef?.(req.oid))?.type;
}

function answerSync(req: Req, pack: PackSource, opts: ReadPackedSyncOptions): unknown {
  let v: unknown;
  if (req.kind === REQ_READ) v = pack.read(req.offset, req.length);
  else if (req.kind === REQ_REF) v = opts.resolveRef?.(req.oid);
  else v = opts.resolveRefType ? opts.resolveRefType(req.oid) : opts.resolveRef?.(req.oid)?.type;
  if (isThenable(v)) {
    throw new ScalpelError('BAD_ARGUMENT', 'readPackedObjectSync needs a synchronous pack source and resolvers; use readPackedObject', {
      name: 'pack',
    });
  }
  return v;
}

async function runAsync<T>(gen: Gen<T>, pack: PackSource, opts: ReadPackedOptions): Promise<T> {
  let step = gen.next();
  while (!step.done) {
    let value: unknown;
    try {
      value = await answerAsync(step.value, pack, opts);
    } catch (e) {
      step = gen.throw(e);
      continue;
    }
    step = gen.next(value);
  }
  return step.value;
}

function runSync<T>(gen: Gen<T>, pack: PackSource, opts: ReadPackedSyncOptions): T {
  let step = gen.next();
  while (!step.done) {
    let value: unknown;
    try {
      value = answerSync(step.value, pack, opts);
    } catch (e) {
      step = gen.throw(e);
      continue;
    }
    step = gen.next(value);
  }
  return step.value;
}

/**
 * Reads the object whose entry starts at pack offset `offset` (from `PackIndex.find`), resolving
 * its delta chain. The id of the result is not checked here (the caller knows which id it asked
 * for: see ObjectDatabase.read). The content returned is the caller's to keep and modify.
 */
export function readPackedObject(pack: PackSource, offset: number, opts: ReadPackedOptions): Promise<PackedObject> {
  return walkAsync(pack, opts, (c) => unpack(offset, c));
}

/** Runs a walk over the pack; a failure setting it up (bad options) rejects, as every later one does. */
function walkAsync<T>(pack: PackSource, opts: ReadPackedOptions, walk: (c: Ctx) => Gen<T>): Promise<T> {
  try {
    return runAsync(walk(makeCtx(pack, opts)), pack, opts);
  } catch (e) {
    return Promise.reject(e);
  }
}

/** `readPackedObject` for a synchronous source (e.g. `bufferPackSource`) and resolvers. */
export function readPackedObjectSync(pack: SyncPackSource, offset: number, opts: ReadPackedSyncOptions): PackedObject {
  return runSync(unpack(offset, makeCtx(pack, opts)), pack, opts);
}

/**
 * Type and size of the object at `offset` without materialising it: walks the chain's entry
 * headers to the base type, and inflates only the first bytes of the top delta for the size.
 */
export function readPackedHeader(pack: PackSource, offset: number, opts: ReadPackedOptions): Promise<PackedObjectHeader> {
  return walkAsync(pack, opts, (c) => unpackHeader(offset, c));
}

export function readPackedHeaderSync(pack: SyncPackSource, offset: number, opts: ReadPackedSyncOptions): PackedObjectHeader {
  return runSync(unpackHeader(offset, makeCtx(pack, opts)), pack, opts);
}

/** Header of the entry at `offset` (its own kind and declared size; no delta resolution). */
export function readPackEntryHeader(pack: PackSource, offset: number, format: ObjectFormat): Promise<PackEntryHeader> {
  return walkAsync(pack, { format }, (c) => headerAt(offset, c));
}

// ───────────────────────────────────────────────────────────────────────────── checks

/**
 * Hashes the whole pack but its trailer and compares with the trailer (CHECKSUM_MISMATCH);
 * checks the header, and when `index` is given that the idx belongs to this pack (same object
 * count and pack checksum). Returns the checksum (hex). Reads 1 MiB at a time.
 */
export async function verifyPackChecksum(
  pack: PackSource,
  format: ObjectFormat,
  opts: { hash?: HashProvider; index?: PackIndex } = {},
): Promise<string> {
  const fmt = checkObjectFormat(format);
  const h = oidLength(fmt);
  if (pack.size < PACK_HEADER_SIZE + h) throw truncated('pack', pack.size, PACK_HEADER_SIZE + h - pack.size);
  const header = parsePackHeader(await pack.read(0, PACK_HEADER_SIZE));
  const state = (opts.hash ?? pureHash).create(fmt);
  const end = pack.size - h;
  const step = 1 << 20;
  for (let pos = 0; pos < end; pos += step) {
    const n = Math.min(step, end - pos);
    const chunk = await pack.read(pos, n);
    if (chunk.length !== n) throw truncated('pack', pos + chunk.length, n - chunk.length);
    state.update(chunk);
  }
  const found = toHex(state.digest());
  const expected = toHex(await pack.read(end, h));
  if (found !== expected) {
    throw new ScalpelError('CHECKSUM_MISMATCH', `pack checksum is ${expected}, content hashes to ${found}`, {
      what: 'pack',
      expected,
      found,
    });
  }
  if (opts.index) checkPackMatchesIndex(header, expected, opts.index);
  return found;
}

/** The pack's header and trailer agree with its idx (git's `open_packed_git_1` checks). */
export function checkPackMatchesIndex(header: PackHeader, trailerHex: string, index: PackIndex): void {
  if (header.count !== index.count) {
    throw bad('pack-index-mismatch', `pack holds ${header.count} objects, its idx ${index.count}`, {
      what: 'pack',
      expected: index.count,
      found: header.count,
    });
  }
  if (trailerHex !== index.packChecksum) {
    throw bad('pack-index-mismatch', `pack checksum ${trailerHex} differs from the one its idx records (${index.packChecksum})`, {
      what: 'pack',
      expected: index.packChecksum,
      found: trailerHex,
    });
  }
}
