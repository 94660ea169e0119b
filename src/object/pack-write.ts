/**
 * Writing packs: a version 2 `.pack` of whole (undeltified) objects and its version 2 `.idx`, the
 * files git's `pack-objects` and `index-pack` make. Pure: no I/O, no Node built-ins.
 *
 * Layout (gitformat-pack): the pack is "PACK", version 2, the object count, then per object an
 * entry header (type and inflated size, `encode_in_pack_object_header`) followed by the object's
 * zlib stream, then the hash of everything before it. The idx is "\377tOc", version 2, a 256-entry
 * fanout, the ids sorted, each entry's CRC-32 (over its header and zlib stream), its offset (31
 * bits, or the MSB and a position in the table of 64-bit offsets that follows), then the pack's
 * checksum and the idx's own. For the same pack git's `index-pack` writes the same idx bytes.
 */
import { fromHex, toHex, writeU32 } from '../bytes/index.js';
import { ScalpelError } from '../errors/index.js';
import { crc32 } from '../hash/crc32.js';
import { checkObjectFormat, pureHash, oidLength, type HashProvider, type ObjectFormat } from '../hash/index.js';
import { frameHeader, isObjectType, type ObjectType } from './loose.js';
import { OBJ_BLOB, OBJ_COMMIT, OBJ_TAG, OBJ_TREE, PACK_IDX_SIGNATURE, PACK_SIGNATURE } from './pack.js';
import { checkLevel, pakoZlib, type ZlibProvider } from './zlib.js';

const TYPE_CODE: Record<ObjectType, number> = { commit: OBJ_COMMIT, tree: OBJ_TREE, blob: OBJ_BLOB, tag: OBJ_TAG };

/** Offsets from here on go to the idx's table of 64-bit offsets (git's `off32_limit`). */
const LARGE_OFFSET = 0x80000000;

/**
 * The header of a pack entry: 3 bits of type and the low 4 bits of the size, then 7 bits of size
 * per byte, least significant first, the MSB marking that another byte follows.
 */
export function packEntryHeader(typeCode: number, size: number): Uint8Array {
  if (!Number.isInteger(typeCode) || typeCode < 1 || typeCode > 7 || typeCode === 5) {
    throw new ScalpelError('BAD_ARGUMENT', `no pack entry type ${typeCode}`, { name: 'typeCode', value: typeCode });
  }
  if (!Number.isSafeInteger(size) || size < 0)
    throw new ScalpelError('BAD_ARGUMENT', `bad object size ${size}`, { name: 'size', value: size });
  const out: number[] = [];
  let c = (typeCode << 4) | (size % 16);
  let rest = Math.floor(size / 16);
  while (rest > 0) {
    out.push(c | 0x80);
    c = rest % 128;
    rest = Math.floor(rest / 128);
  }
  out.push(c);
  return Uint8Array.from(out);
}

export interface PackIndexEntry {
  /** The object's id (raw bytes, the format's length). */
  oid: Uint8Array;
  /** Where the entry starts in the pack. */
  offset: number;
  /** CRC-32 of the entry's bytes in the pack (header and zlib stream). */
  crc32: number;
}

/** A version 2 `.idx` for a pack whose trailing checksum is `packChecksum`. `entries` in any order; ids must be distinct. */
export function encodePackIndex(
  entries: readonly PackIndexEntry[],
  packChecksum: Uint8Array,
  format: ObjectFormat,
  hash: HashProvider = pureHash,
): Uint8Array {
  const fmt = checkObjectFormat(format);
  const h = oidLength(fmt);
  if (!(packChecksum instanceof Uint8Array) || packChecksum.length !== h) {
    throw new ScalpelError('BAD_ARGUMENT', `pack checksum must be ${h} bytes`, { name: 'packChecksum' });
  }
  const n = entries.length;
  for (let i = 0; i < n; i++) {
    const e = entries[i];
    if (!(e.oid instanceof Uint8Array) || e.oid.length !== h)
      throw new ScalpelError('BAD_ARGUMENT', `entry ${i}: id must be ${h} bytes`, { name: 'oid', index: i });
    if (!Number.isSafeInteger(e.offset) || e.offset < 12)
      throw new ScalpelError('BAD_ARGUMENT', `entry ${i}: bad pack offset ${e.offset}`, { name: 'offset', index: i, value: e.offset });
    if (!Number.isInteger(e.crc32) || e.crc32 < 0 || e.crc32 > 0xffffffff)
      throw new ScalpelError('BAD_ARGUMENT', `entry ${i}: bad CRC-32 ${e.crc32}`, { name: 'crc32', index: i });
  }
  const sorted = entries.slice().sort((a, b) => compareIds(a.oid, b.oid, h));
  for (let i = 1; i < n; i++) {
    if (compareIds(sorted[i - 1].oid, sorted[i].oid, h) === 0) {
      throw new ScalpelError('BAD_ARGUMENT', `object ${toHex(sorted[i].oid)} appears twice in the pack`, {
        name: 'entries',
        reason: 'duplicate-object',
        oid: toHex(sorted[i].oid),
      });
    }
  }
  let large = 0;
  for (const e of sorted) if (e.offset >= LARGE_OFFSET) large++;
  const fanoutAt = 8;
  const idsAt = fanoutAt + 256 * 4;
  const crcAt = idsAt + n * h;
  const offAt = crcAt + n * 4;
  const largeAt = offAt + n * 4;
  const tailAt = largeAt + large * 8;
  const out = new Uint8Array(tailAt + 2 * h);
  writeU32(out, 0, PACK_IDX_SIGNATURE);
  writeU32(out, 4, 2);
  let bucket = 0;
  let li = 0;
  for (let i = 0; i < n; i++) {
    const e = sorted[i];
    // fanout[b] = number of ids whose first byte is <= b
    for (; bucket < e.oid[0]; bucket++) writeU32(out, fanoutAt + bucket * 4, i);
    out.set(e.oid, idsAt + i * h);
    writeU32(out, crcAt + i * 4, e.crc32);
    if (e.offset >= LARGE_OFFSET) {
      writeU32(out, offAt + i * 4, (LARGE_OFFSET | li) >>> 0);
      const at = largeAt + li * 8;
      writeU32(out, at, Math.floor(e.offset / 0x100000000));
      writeU32(out, at + 4, e.offset % 0x100000000);
      li++;
    } else writeU32(out, offAt + i * 4, e.offset);
  }
  for (; bucket < 256; bucket++) writeU32(out, fanoutAt + bucket * 4, n);
  out.set(packChecksum, tailAt);
  out.set(
    hash
      .create(fmt)
      .update(out.subarray(0, tailAt + h))
      .digest(),
    tailAt + h,
  );
  return out;
}

function compareIds(a: Uint8Array, b: Uint8Array, h: number): number {
  for (let i = 0; i < h; i++) if (a[i] !== b[i]) return a[i] - b[i];
  return 0;
}

export interface PackObjectInput {
  type: ObjectType;
  content: Uint8Array;
  /**
   * The object's id (hex), when the caller has computed it already: taken as given, not hashed
   * again. A wrong one makes an idx that lies; pass it only from `objectId` of this type and content.
   */
  oid?: string;
}

export interface EncodePackOptions {
  format?: ObjectFormat;
  hash?: HashProvider;
  zlib?: ZlibProvider;
  /** zlib level -1..9 for every entry (default -1, zlib's default, as git's `pack.compression`). */
  level?: number;
}

export interface EncodedPack {
  /** The `.pack` file. */
  pack: Uint8Array;
  /** Its version 2 `.idx`. */
  index: Uint8Array;
  /** The pack's trailing checksum (hex): git names the files `pack-<checksum>.pack` / `.idx`. */
  checksum: string;
  /** The objects' ids, in the order given. */
  oids: string[];
}

/**
 * A pack holding `objects` whole, in the order given, and its idx. An object given twice is
 * BAD_ARGUMENT `duplicate-object` (an idx lists each id once). An empty list makes a valid empty
 * pack, as `git pack-objects` does for nothing.
 */
export function encodePack(objects: readonly PackObjectInput[], opts: EncodePackOptions = {}): EncodedPack {
  const fmt = checkObjectFormat(opts.format);
  const h = oidLength(fmt);
  const hash = opts.hash ?? pureHash;
  const zlib = opts.zlib ?? pakoZlib;
  const level = checkLevel(opts.level ?? -1);
  const crc = zlib.crc32 ? (b: Uint8Array) => (zlib.crc32 as NonNullable<ZlibProvider['crc32']>)(b, 0) : (b: Uint8Array) => crc32(b);
  const n = objects.length;
  if (n > 0xffffffff) throw new ScalpelError('BAD_ARGUMENT', 'a pack holds at most 2^32 - 1 objects', { name: 'objects' });
  const heads: Uint8Array[] = new Array(n);
  const bodies: Uint8Array[] = new Array(n);
  const ids: Uint8Array[] = new Array(n);
  let size = 12;
  for (let i = 0; i < n; i++) {
    const { type, content } = objects[i];
    if (!isObjectType(type))
      throw new ScalpelError('BAD_ARGUMENT', `object ${i}: no object type ${JSON.stringify(type)}`, { name: 'type', index: i });
    if (!(content instanceof Uint8Array))
      throw new ScalpelError('BAD_ARGUMENT', `object ${i}: content must be a Uint8Array`, { name: 'content', index: i });
    const known = objects[i].oid;
    if (known !== undefined && (typeof known !== 'string' || known.length !== 2 * h || !/^[0-9a-f]+$/.test(known))) {
      throw new ScalpelError('BAD_ARGUMENT', `object ${i}: not a lowercase ${fmt} id: ${JSON.stringify(known)}`, { name: 'oid', index: i });
    }
    ids[i] = known !== undefined ? fromHex(known) : hash.create(fmt).update(frameHeader(type, content.length)).update(content).digest();
    heads[i] = packEntryHeader(TYPE_CODE[type], content.length);
    bodies[i] = zlib.deflate(content, level);
    size += heads[i].length + bodies[i].length;
  }
  const pack = new Uint8Array(size + h);
  writeU32(pack, 0, PACK_SIGNATURE);
  writeU32(pack, 4, 2);
  writeU32(pack, 8, n);
  const entries: PackIndexEntry[] = new Array(n);
  let at = 12;
  for (let i = 0; i < n; i++) {
    const start = at;
    pack.set(heads[i], at);
    at += heads[i].length;
    pack.set(bodies[i], at);
    at += bodies[i].length;
    entries[i] = { oid: ids[i], offset: start, crc32: crc(pack.subarray(start, at)) };
  }
  const checksum = hash.create(fmt).update(pack.subarray(0, size)).digest();
  pack.set(checksum, size);
  const index = encodePackIndex(entries, checksum, fmt, hash);
  const oids = ids.map((id) => toHex(id));
  return { pack, index, checksum: toHex(checksum), oids };
}
