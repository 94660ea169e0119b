/**
 * UNTR (untracked cache) extension payload, as `write_untracked_extension` /
 * `read_untracked_extension` in git's dir.c handle it:
 *
 *   varint ident_len, ident bytes
 *   stat_data info/exclude (36 bytes), stat_data core.excludesFile (36), u32 dir_flags
 *   oid info/exclude, oid core.excludesFile
 *   exclude_per_dir, NUL
 *   varint dir count — or nothing: a rootless cache ends right here with one NUL (git writes the
 *     varint 0, which is that NUL)
 *   dir blocks in pre-order: varint untracked_nr, varint dirs_nr, name NUL, untracked_nr × (name NUL)
 *   EWAH valid, EWAH check_only, EWAH sha_valid (bit n = dir block n)
 *   stat_data for each valid bit, ascending; oid for each sha_valid bit, ascending
 *   NUL (the "safe guard for string lists")
 *
 * stat_data: ctime s/ns, mtime s/ns, dev, ino, uid, gid, size — nine u32, no mode.
 */
import { ByteReader } from '../bytes/reader.js';
import type { ByteWriter } from '../bytes/writer.js';
import { fromHex, isHex, toHex } from '../bytes/hex.js';
import { ScalpelError, isScalpelError } from '../errors/index.js';
import { oidLength, type ObjectFormat } from '../hash/index.js';
import { decodeEwah, encodeEwah, ewahFromBits } from './ewah.js';
import type { EwahBitmap, StatData, UntrackedCache, UntrackedDir } from './types.js';

const STAT_SIZE = 36;

function bad(offset: number, reason: string, message: string, extra: Record<string, unknown> = {}): ScalpelError {
  return new ScalpelError('BAD_EXTENSION', `index: UNTR extension: ${message} (byte ${offset})`, {
    signature: 'UNTR',
    offset,
    reason,
    ...extra,
  });
}

function readStat(b: Uint8Array, p: number): StatData {
  const r = new ByteReader(b, p, p + STAT_SIZE);
  return {
    ctimeSeconds: r.u32(),
    ctimeNanoseconds: r.u32(),
    mtimeSeconds: r.u32(),
    mtimeNanoseconds: r.u32(),
    dev: r.u32(),
    ino: r.u32(),
    uid: r.u32(),
    gid: r.u32(),
    size: r.u32(),
  };
}

/**
 * Decode the UNTR payload in bytes[start, end). Mirrors `read_untracked_extension`: the payload must
 * end in a NUL that is not part of anything else; the dir count must equal the number of blocks the
 * tree holds; each bitmap, stat block and oid must fit before that final NUL; nothing may be left
 * over. Stricter than git where git would misbehave: counts larger than the bytes left, more blocks
 * than the dir count, bitmap positions >= the dir count (git indexes past its array) are errors.
 */
export function decodeUntracked(bytes: Uint8Array, start: number, end: number, format: ObjectFormat): UntrackedCache {
  try {
    return decodeInner(bytes, start, Math.min(end, bytes.length), format);
  } catch (e) {
    if (isScalpelError(e, 'TRUNCATED') || isScalpelError(e, 'BAD_VARINT')) {
      const offset = typeof e.data.offset === 'number' ? e.data.offset : start;
      throw bad(offset, e.code === 'TRUNCATED' ? 'truncated' : 'bad-varint', e.message, { need: e.data.need });
    }
    if (isScalpelError(e, 'BAD_EWAH') && e.data.signature === undefined) e.data.signature = 'UNTR';
    throw e;
  }
}

function decodeInner(bytes: Uint8Array, start: number, end: number, format: ObjectFormat): UntrackedCache {
  const hashLen = oidLength(format);
  if (end - start <= 1 || bytes[end - 1] !== 0) throw bad(Math.max(start, end - 1), 'no-final-nul', 'payload does not end in a NUL');
  const e = end - 1; // the final NUL is not part of any field
  const r = new ByteReader(bytes, start, e, 'UNTR extension');

  const identLen = r.varint();
  if (identLen > r.remaining) throw bad(r.pos, 'truncated', `ident of ${identLen} bytes runs past the payload`);
  const ident = r.copy(identLen);
  if (r.remaining < 2 * STAT_SIZE + 4 + 2 * hashLen + 1) throw bad(r.pos, 'truncated', 'payload ends inside the fixed header');
  const infoExcludeStat = readStat(bytes, r.pos);
  const excludesFileStat = readStat(bytes, r.pos + STAT_SIZE);
  r.skip(2 * STAT_SIZE);
  const dirFlags = r.u32();
  const infoExcludeOid = toHex(r.view(hashLen));
  const excludesFileOid = toHex(r.view(hashLen));
  const excludePerDir = r.cstring().slice();

  const cache: UntrackedCache = {
    ident,
    infoExcludeStat,
    excludesFileStat,
    infoExcludeOid,
    excludesFileOid,
    dirFlags,
    excludePerDir,
    dirs: [],
  };
  if (r.pos >= e) return cache; // git's own rootless form: the varint 0 is the final NUL

  const countAt = r.pos;
  const len = r.varint();
  if (len === 0) {
    if (r.pos !== e) throw bad(r.pos, 'trailing-bytes', 'bytes after a zero directory count');
    cache.rootlessForm = 'explicit';
    return cache;
  }
  // every block takes at least 3 bytes (two varints and the name's NUL)
  if (len > r.remaining / 3)
    throw bad(countAt, 'bad-dir-count', `directory count ${len} cannot fit in ${r.remaining} bytes`, { count: len });

  // pre-order, iteratively (a hostile nesting depth must not overflow the JS stack)
  const dirs: UntrackedDir[] = [];
  const stack: number[] = [1];
  while (stack.length > 0) {
    const top = stack.length - 1;
    if (stack[top] === 0) {
      stack.pop();
      continue;
    }
    stack[top]--;
    const at = r.pos;
    if (dirs.length >= len) throw bad(at, 'dir-count-mismatch', `more directory blocks than the count ${len}`, { count: len });
    const untrackedNr = r.varint();
    if (untrackedNr > r.remaining)
      throw bad(at, 'bad-untracked-count', `untracked count ${untrackedNr} cannot fit`, { count: untrackedNr });
    const dirCount = r.varint();
    if (dirCount > r.remaining / 3) throw bad(at, 'bad-dir-count', `subdirectory count ${dirCount} cannot fit`, { count: dirCount });
    const name = r.cstring().slice();
    const untracked: Uint8Array[] = [];
    for (let i = 0; i < untrackedNr; i++) untracked.push(r.cstring().slice());
    dirs.push({ name, untracked, dirCount, valid: false, checkOnly: false });
    stack.push(dirCount);
  }
  if (dirs.length !== len)
    throw bad(countAt, 'dir-count-mismatch', `directory count ${len}, the tree holds ${dirs.length}`, { count: len, found: dirs.length });

  const valid = decodeEwah(bytes, r.pos, e, 'UNTR valid bitmap', { limit: len });
  const checkOnly = decodeEwah(bytes, valid.next, e, 'UNTR check_only bitmap', { limit: len });
  const shaValid = decodeEwah(bytes, checkOnly.next, e, 'UNTR sha_valid bitmap', { limit: len });
  let p = shaValid.next;
  for (const i of checkOnly.bitmap.bits) dirs[i].checkOnly = true;
  const vb = valid.bitmap.bits;
  if (vb.length * STAT_SIZE > e - p) throw bad(p, 'truncated', `${vb.length} stat blocks do not fit in ${e - p} bytes`);
  for (const i of vb) {
    dirs[i].valid = true;
    dirs[i].stat = readStat(bytes, p);
    p += STAT_SIZE;
  }
  const sb = shaValid.bitmap.bits;
  if (sb.length * hashLen > e - p) throw bad(p, 'truncated', `${sb.length} object ids do not fit in ${e - p} bytes`);
  for (const i of sb) {
    dirs[i].excludeOid = toHex(bytes, p, p + hashLen);
    p += hashLen;
  }
  if (p !== e) throw bad(p, 'trailing-bytes', `${e - p} unexpected bytes before the final NUL`);
  cache.dirs = dirs;
  cache.storedBitmaps = { valid: valid.bitmap, checkOnly: checkOnly.bitmap, shaValid: shaValid.bitmap };
  return cache;
}

function argErr(name: string, reason: string, message: string, extra: Record<string, unknown> = {}): ScalpelError {
  return new ScalpelError('BAD_ARGUMENT', `UNTR: ${message}`, { name, reason, ...extra });
}

function writeStat(w: ByteWriter, s: StatData, name: string): void {
  const vals = [s.ctimeSeconds, s.ctimeNanoseconds, s.mtimeSeconds, s.mtimeNanoseconds, s.dev, s.ino, s.uid, s.gid, s.size];
  for (const v of vals) {
    if (!Number.isInteger(v) || v < 0 || v > 0xffffffff) throw argErr(name, 'not-u32', `stat field ${v} is not an unsigned 32-bit integer`);
    w.u32(v);
  }
}

function writeOid(w: ByteWriter, hex: string, hashLen: number, name: string): void {
  if (!isHex(hex, hashLen * 2)) throw argErr(name, 'bad-oid', `${JSON.stringify(hex)} is not a ${hashLen}-byte object id`);
  w.bytes(fromHex(hex));
}

function writeName(w: ByteWriter, b: Uint8Array, name: string): void {
  if (b.includes(0)) throw argErr(name, 'nul-in-name', 'name contains a NUL byte');
  w.cstring(b);
}

function sameBits(a: number[], b: number[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

function pick(stored: EwahBitmap | undefined, bits: number[]): EwahBitmap {
  if (stored && sameBits(stored.bits, bits)) return stored;
  return ewahFromBits(bits.length ? bits[bits.length - 1] + 1 : 0, bits);
}

/** Write the UNTR payload (without the signature and size header). */
export function encodeUntracked(w: ByteWriter, cache: UntrackedCache, format: ObjectFormat): void {
  const hashLen = oidLength(format);
  const dirs = cache.dirs;
  // the flat list must be exactly one pre-order tree
  if (dirs.length > 0) {
    const stack: number[] = [1];
    for (let i = 0; i < dirs.length; i++) {
      while (stack.length > 0 && stack[stack.length - 1] === 0) stack.pop();
      if (stack.length === 0)
        throw argErr('dirs', 'bad-tree', `directory ${i} is not inside the tree (dirCount values cover fewer blocks)`, { index: i });
      stack[stack.length - 1]--;
      const c = dirs[i].dirCount;
      if (!Number.isInteger(c) || c < 0) throw argErr('dirs', 'bad-tree', `directory ${i} has dirCount ${c}`, { index: i });
      stack.push(c);
    }
    if (stack.some((n) => n !== 0)) throw argErr('dirs', 'bad-tree', 'dirCount values announce more blocks than the list holds');
  }

  w.varint(cache.ident.length);
  w.bytes(cache.ident);
  writeStat(w, cache.infoExcludeStat, 'infoExcludeStat');
  writeStat(w, cache.excludesFileStat, 'excludesFileStat');
  if (!Number.isInteger(cache.dirFlags) || cache.dirFlags < 0 || cache.dirFlags > 0xffffffff)
    throw argErr('dirFlags', 'not-u32', `dirFlags ${cache.dirFlags}`);
  w.u32(cache.dirFlags);
  writeOid(w, cache.infoExcludeOid, hashLen, 'infoExcludeOid');
  writeOid(w, cache.excludesFileOid, hashLen, 'excludesFileOid');
  writeName(w, cache.excludePerDir, 'excludePerDir');

  if (dirs.length === 0) {
    w.u8(0); // varint 0, which is also the final NUL
    if (cache.rootlessForm === 'explicit') w.u8(0);
    return;
  }

  w.varint(dirs.length);
  const validBits: number[] = [];
  const checkBits: number[] = [];
  const shaBits: number[] = [];
  for (let i = 0; i < dirs.length; i++) {
    const d = dirs[i];
    if (d.valid) {
      if (!d.stat) throw argErr('dirs', 'missing-stat', `directory ${i} is valid but has no stat data`, { index: i });
      validBits.push(i);
    }
    if (d.checkOnly) checkBits.push(i);
    if (d.excludeOid !== undefined) shaBits.push(i);
    w.varint(d.untracked.length);
    w.varint(d.dirCount);
    writeName(w, d.name, `dirs[${i}].name`);
    for (const u of d.untracked) writeName(w, u, `dirs[${i}].untracked`);
  }
  const sb = cache.storedBitmaps;
  encodeEwah(w, pick(sb?.valid, validBits));
  encodeEwah(w, pick(sb?.checkOnly, checkBits));
  encodeEwah(w, pick(sb?.shaValid, shaBits));
  for (const i of validBits) writeStat(w, dirs[i].stat!, `dirs[${i}].stat`);
  for (const i of shaBits) writeOid(w, dirs[i].excludeOid!, hashLen, `dirs[${i}].excludeOid`);
  w.u8(0);
}
