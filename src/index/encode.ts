import { ScalpelError } from '../errors/index.js';
import { ByteWriter, writeU32 } from '../bytes/writer.js';
import { fromHex } from '../bytes/hex.js';
import { concatBytes } from '../bytes/compare.js';
import { asciiBytes } from '../bytes/text.js';
import { checkObjectFormat, defaultHash, oidLength, type HashProvider, type ObjectFormat } from '../hash/index.js';
import { CE_EXTENDED, CE_NAMEMASK, IndexEntry, type EntryTable } from './entry.js';
import { untouchedTable, type GitIndex } from './decode.js';
import { encodeCacheTree, untouchedCacheTree } from './ext-tree.js';
import { encodeResolveUndo } from './ext-resolve-undo.js';
import { encodeUntracked } from './ext-untracked.js';
import { encodeFsmonitor } from './ext-fsmonitor.js';
import { encodeEwah } from './ewah.js';
import type { IndexExtension } from './types.js';

export interface EncodeOptions {
  objectFormat?: ObjectFormat;
  hash?: HashProvider;
}

/**
 * Encode an index the way git's `do_write_index` does. For every index git writes,
 * `encodeIndex(decodeIndex(b))` is byte-identical to `b`:
 * - version 2/3 is chosen by whether any entry has extended flags ("demote 3 to 2"); 4 stays 4;
 * - v4 names are prefix-compressed against the previous name, and when an IEOT table is written
 *   the previous name is reset at each block start, as git does;
 * - EOIE and IEOT are recomputed from what is written (IEOT keeps its block sizes when they still
 *   fit the entries, otherwise it is re-split into the same number of blocks like git);
 * - entries decoded from bytes with the same layout are copied byte for byte.
 */
export function encodeIndex(index: GitIndex, opts: EncodeOptions = {}): Uint8Array {
  const objectFormat = checkObjectFormat(opts.objectFormat ?? index.objectFormat);
  const hashLen = oidLength(objectFormat);
  // entries never materialized: the decoded rows as they are, without making entry objects
  const untouched = untouchedTable(index);
  const entries: readonly IndexEntry[] = untouched ? [] : index.entries;
  const n = untouched ? untouched.count : entries.length;

  let version: 2 | 3 | 4 = index.version;
  if (version !== 2 && version !== 3 && version !== 4) {
    throw new ScalpelError('BAD_ARGUMENT', `index version must be 2, 3 or 4, got ${String(version)}`, { name: 'version', value: version });
  }
  let hasLink = false;
  for (const x of index.extensions) if (x.signature === 'link') hasLink = true;
  // The entries exactly as one decoded file held them (same table, same order)? Then its bytes can be reused.
  const src = untouched && untouched.hashLen === hashLen ? untouched : unchangedSource(entries, hashLen);
  if (version !== 4) {
    let extended = false;
    if (src) extended = (src.source as { extended: number }).extended > 0;
    else {
      for (let i = 0; i < n; i++) {
        const e = entries[i];
        // rows of a decoded file without extended flags need no look
        if (e._t.source !== null && e._t.source.extended === 0) continue;
        if (e.extendedWord !== 0) {
          extended = true;
          break;
        }
      }
    }
    version = extended ? 3 : 2;
  }

  // IEOT block boundaries must be known before v4 names are compressed.
  const ieot = index.extensions.find((x): x is Extract<IndexExtension, { signature: 'IEOT' }> => x.signature === 'IEOT');
  let blockCounts: number[] | null = null;
  if (ieot) blockCounts = ieotCounts(ieot.blocks, n);

  // Size estimate: the source file when the first entry came from one, else a guess; the writer grows as needed.
  const firstTable = untouched ?? (n > 0 ? entries[0]._t : null);
  const w = new ByteWriter(firstTable && firstTable.count > 1 ? firstTable.bytes.length + 64 : 12 + n * 96 + 1024);
  w.u32(0x44495243);
  w.u32(version);
  w.u32(n);

  const blockOffsets: number[] = [];
  const copied = src !== null && src.version === version && sameBlocks(src, index, blockCounts);
  if (!copied && untouched) return encodeIndex({ ...index, entries: index.entries }, opts);
  if (copied) {
    // header and entries as they were: one copy; IEOT blocks start where they started
    const t = src as EntryTable;
    w.pos = 0;
    w.bytes(t.bytes.subarray(0, (t.source as { entriesEnd: number }).entriesEnd));
    if (blockCounts) for (let i = 0, at = 0; i < blockCounts.length; at += blockCounts[i++]) blockOffsets.push(t.off[at]);
  } else if (version === 4) {
    encodeV4(w, entries, hashLen, blockCounts, blockOffsets, hasLink);
  } else {
    writeSegmentsV23(w, toSegments(entries), n, hashLen, blockCounts, blockOffsets, hasLink);
  }
  return finishIndex(w, index, objectFormat, w.pos, blockCounts, blockOffsets, opts, copied ? (src as EntryTable) : null);
}

/** Extensions (in the order given; EOIE and IEOT recomputed) and the trailer, after the entries. */
function finishIndex(
  w: ByteWriter,
  index: GitIndex,
  objectFormat: ObjectFormat,
  entriesEnd: number,
  blockCounts: number[] | null,
  blockOffsets: number[],
  opts: EncodeOptions,
  copiedFrom: EntryTable | null,
): Uint8Array {
  return finishIndexParts(w, [], index, objectFormat, entriesEnd, blockCounts, blockOffsets, opts, copiedFrom)[0];
}

/**
 * finishIndex when the header and entries are already `prefix` (parts not in `w`, which then
 * holds only what follows them): returns the parts of the whole file, prefix first.
 */
function finishIndexParts(
  w: ByteWriter,
  prefix: readonly Uint8Array[],
  index: GitIndex,
  objectFormat: ObjectFormat,
  entriesEnd: number,
  blockCounts: number[] | null,
  blockOffsets: number[],
  opts: EncodeOptions,
  copiedFrom: EntryTable | null,
): Uint8Array[] {
  const hashLen = oidLength(objectFormat);
  // Extensions, in the order given.
  const headers: Array<[string, number]> = [];
  for (const x of index.extensions) {
    if (x.signature === 'EOIE') {
      const h = (opts.hash ?? defaultHash()).create(objectFormat);
      for (const [sig, size] of headers) {
        const b = new Uint8Array(8);
        b.set(asciiBytes(sig));
        writeU32(b, 4, size);
        h.update(b);
      }
      writeExtHeader(w, 'EOIE', 4 + hashLen);
      w.u32(entriesEnd);
      w.bytes(h.digest());
      headers.push(['EOIE', 4 + hashLen]);
      continue;
    }
    if (x.signature === 'IEOT' && !blockCounts) continue; // fewer than two blocks: git writes no IEOT
    const headerAt = w.pos;
    writeExtHeader(w, x.signature, 0);
    const start = w.pos;
    encodeExtension(w, x, objectFormat, blockCounts, blockOffsets);
    const size = w.pos - start;
    w.setU32(headerAt + 4, size);
    headers.push([x.signature, size]);
  }

  const body = w.pos;
  if (index.skipHash) {
    w.zeros(hashLen);
  } else if (copiedFrom && prefix.length === 0 && sameAsSource(copiedFrom, w.finish(), entriesEnd)) {
    // byte for byte the file that was decoded and whose trailer was verified: its trailer is right
    w.bytes(copiedFrom.bytes.subarray(body, body + hashLen));
  } else {
    const h = (opts.hash ?? defaultHash()).create(objectFormat);
    for (const part of prefix) h.update(part);
    const digest = h.update(w.finish().subarray(0, body)).digest();
    w.bytes(digest);
  }
  return prefix.length ? [...prefix, w.finish()] : [w.finish()];
}

/** The decoded table `entries` are, untouched and complete, or null. */
function unchangedSource(entries: readonly IndexEntry[], hashLen: number): EntryTable | null {
  if (entries.length === 0) return null;
  const t = entries[0]._t;
  if (!t.source || t.count !== entries.length || t.hashLen !== hashLen) return null;
  for (let i = 0; i < entries.length; i++) {
    const e = entries[i];
    if (e._t !== t || e._i !== i) return null;
  }
  return t;
}

/** v4 names restart at IEOT block starts: a copy is only right when the blocks are the source's. */
function sameBlocks(t: EntryTable, index: GitIndex, blockCounts: number[] | null): boolean {
  if (t.version !== 4) return true;
  const ieot = index.extensions.find((x) => x.signature === 'IEOT');
  if (!blockCounts) return !ieot;
  return !!ieot && 'blocks' in ieot && ieot.blocks.length === blockCounts.length && ieot.blocks.every((b, i) => b.count === blockCounts[i]);
}

/** Is `out` (body only, no trailer yet) the decoded file's body? Entries were copied; compare what follows them. */
function sameAsSource(t: EntryTable, out: Uint8Array, entriesEnd: number): boolean {
  const s = t.source;
  if (!s || !s.trailerVerified || s.skipHash || out.length !== s.bodyEnd || entriesEnd !== s.entriesEnd) return false;
  const b = t.bytes;
  for (let i = entriesEnd; i < out.length; i++) if (out[i] !== b[i]) return false;
  return true;
}

function writeExtHeader(w: ByteWriter, sig: string, size: number): void {
  if (sig.length !== 4) throw new ScalpelError('BAD_ARGUMENT', `extension signature must be 4 characters: ${JSON.stringify(sig)}`, { name: 'signature', value: sig });
  w.bytes(asciiBytes(sig));
  w.u32(size);
}

/** Block sizes for IEOT: the stored ones if they still add up to the entry count, else git's split. */
export function ieotCounts(blocks: readonly { count: number }[], n: number): number[] | null {
  let sum = 0;
  let ok = blocks.length > 0;
  for (const b of blocks) {
    if (b.count === 0) ok = false;
    sum += b.count;
  }
  if (ok && sum === n) return blocks.map((b) => b.count);
  const nblocks = Math.min(Math.max(blocks.length, 1), n);
  if (nblocks <= 1) return null; // git writes no IEOT for fewer than two blocks
  const per = Math.ceil(n / nblocks);
  const out: number[] = [];
  for (let i = 0; i < n; i += per) out.push(Math.min(per, n - i));
  return out.length > 1 ? out : null;
}

function badLength(e: IndexEntry, i: number, hashLen: number): ScalpelError {
  return new ScalpelError('BAD_ARGUMENT', `entry ${i} (${e.path}) has a ${e._t.hashLen}-byte id in a ${hashLen}-byte index`, { name: 'entries', index: i, path: e.path });
}

function emptyPath(i: number): ScalpelError {
  return new ScalpelError('BAD_PATH', `entry ${i} has an empty path outside a split index`, { path: '', index: i, reason: 'empty' });
}

/** A run of consecutive rows of one decoded table, or one entry. */
export type Segment = { t: EntryTable; start: number; end: number } | { e: IndexEntry };

/** Entries as segments: consecutive rows of one table coalesce into one run (copied in one piece). */
function toSegments(entries: readonly IndexEntry[]): Segment[] {
  const out: Segment[] = [];
  let cur: { t: EntryTable; start: number; end: number } | null = null;
  for (const e of entries) {
    if (cur && e._t === cur.t && e._i === cur.end) cur.end++;
    else {
      if (cur) out.push(cur);
      cur = e._t.version === 4 ? null : { t: e._t, start: e._i, end: e._i + 1 };
      if (!cur) out.push({ e });
    }
  }
  if (cur) out.push(cur);
  return out;
}

function segmentLength(s: Segment): number {
  return 'e' in s ? 1 : s.end - s.start;
}

function segmentExtended(s: Segment): boolean {
  if ('e' in s) return s.e.extendedWord !== 0;
  if (s.t.source !== null && s.t.source.extended === 0) return false;
  for (let r = s.start; r < s.end; r++) if (s.t.extendedWord(r) !== 0) return true;
  return false;
}

/**
 * Encode an index given as segments instead of entries (v2/v3): runs of a decoded table are
 * copied as they sit in its bytes, so an index of 100,000 entries with a few changed costs a few
 * copies and no entry objects. Same result as encodeIndex over the same entries.
 */
export function encodeIndexSegments(index: GitIndex, segments: readonly Segment[], opts: EncodeOptions = {}): Uint8Array {
  const parts = encodeIndexSegmentsParts(index, segments, opts);
  return parts.length === 1 ? parts[0] : concatBytes(parts);
}

/**
 * encodeIndexSegments as the parts of the file, without copying them together: the runs of
 * decoded rows are views of the old file's bytes, so writing the index costs no 10 MB copy.
 */
export function encodeIndexSegmentsParts(index: GitIndex, segments: readonly Segment[], opts: EncodeOptions = {}): Uint8Array[] {
  const objectFormat = checkObjectFormat(opts.objectFormat ?? index.objectFormat);
  const hashLen = oidLength(objectFormat);
  if (index.version === 4 || segments.some((s) => !('e' in s) && (s.t.version === 4 || s.t.hashLen !== hashLen))) {
    const entries: IndexEntry[] = [];
    for (const s of segments) {
      if ('e' in s) entries.push(s.e);
      else for (let r = s.start; r < s.end; r++) entries.push(new IndexEntry(s.t, r));
    }
    return [encodeIndex({ ...index, entries }, opts)];
  }
  let n = 0;
  for (const s of segments) n += segmentLength(s);
  const version = segments.some(segmentExtended) ? 3 : 2;
  const hasLink = index.extensions.some((x) => x.signature === 'link');
  const ieot = index.extensions.find((x): x is Extract<IndexExtension, { signature: 'IEOT' }> => x.signature === 'IEOT');
  const blockCounts = ieot ? ieotCounts(ieot.blocks, n) : null;
  const header = new Uint8Array(12);
  writeU32(header, 0, 0x44495243);
  writeU32(header, 4, version);
  writeU32(header, 8, n);
  const parts: Uint8Array[] = [header];
  const blockOffsets: number[] = [];
  let pos = 12;
  let i = 0;
  let nextBlock = blockCounts ? 0 : Infinity;
  let blockIdx = 0;
  const small = new ByteWriter(4096); // entries that are not runs, collected between runs
  const flushSmall = () => {
    if (small.pos) {
      parts.push(small.finish().slice());
      small.pos = 0;
    }
  };
  for (const seg of segments) {
    if ('e' in seg) {
      if (i === nextBlock) {
        blockOffsets.push(pos + small.pos);
        nextBlock += (blockCounts as number[])[blockIdx++] ?? n;
      }
      writeOneV23(small, seg.e, i, hashLen, hasLink); // `pos` counts flushed bytes only
      i++;
      continue;
    }
    const t = seg.t;
    if (t.hashLen !== hashLen) throw badLength(new IndexEntry(t, seg.start), i, hashLen);
    if (!hasLink) for (let r = seg.start; r < seg.end; r++) if (t.pathLen[r] === 0) throw emptyPath(i + r - seg.start);
    pos += small.pos;
    flushSmall();
    let r = seg.start;
    while (r < seg.end) {
      if (i === nextBlock) {
        blockOffsets.push(pos);
        nextBlock += (blockCounts as number[])[blockIdx++] ?? n;
      }
      const upto = Math.min(seg.end, r + (nextBlock - i));
      const view = t.bytes.subarray(t.off[r], t.off[upto - 1] + t.size[upto - 1]);
      parts.push(view);
      pos += view.length;
      i += upto - r;
      r = upto;
    }
  }
  pos += small.pos;
  flushSmall();
  return finishIndexParts(new ByteWriter(4096), parts, index, objectFormat, pos, blockCounts, blockOffsets, opts, null);
}

/**
 * v2/v3 entries: every entry already has this on-disk form in its table (decoded from a v2/v3
 * file, or built), so runs are copied; rows of v4 tables are re-serialised.
 */
function writeSegmentsV23(w: ByteWriter, segments: readonly Segment[], n: number, hashLen: number, blockCounts: number[] | null, blockOffsets: number[], hasLink: boolean): void {
  let i = 0; // entries written so far
  let nextBlock = blockCounts ? 0 : Infinity;
  let blockIdx = 0;
  const boundary = () => {
    blockOffsets.push(w.pos);
    nextBlock += (blockCounts as number[])[blockIdx++] ?? n;
  };
  for (const seg of segments) {
    if ('e' in seg) {
      if (i === nextBlock) boundary();
      writeOneV23(w, seg.e, i, hashLen, hasLink);
      i++;
      continue;
    }
    const t = seg.t;
    if (t.hashLen !== hashLen) throw badLength(new IndexEntry(t, seg.start), i, hashLen);
    if (!hasLink) for (let r = seg.start; r < seg.end; r++) if (t.pathLen[r] === 0) throw emptyPath(i + r - seg.start);
    let r = seg.start;
    while (r < seg.end) {
      if (i === nextBlock) boundary();
      // copy up to the segment's end or the next block start, whichever comes first
      const upto = Math.min(seg.end, r + (nextBlock - i));
      const from = t.off[r];
      const to = t.off[upto - 1] + t.size[upto - 1];
      w.bytes(t.bytes.subarray(from, to));
      i += upto - r;
      r = upto;
    }
  }
}

function writeOneV23(w: ByteWriter, e: IndexEntry, i: number, hashLen: number, hasLink: boolean): void {
  const t = e._t;
  const row = e._i;
  if (t.hashLen !== hashLen) throw badLength(e, i, hashLen);
  if (t.pathLen[row] === 0 && !hasLink) throw emptyPath(i);
  if (t.version !== 4) {
    w.bytes(t.bytes.subarray(t.off[row], t.off[row] + t.size[row]));
    return;
  }
  const len = t.pathLen[row];
  const ext = e.extendedWord;
  const head = writeFixed(w, e, hashLen, ext, len);
  const size = (head + len + 8) & ~7;
  w.ensure(size - head);
  const po = t.pathOff[row];
  w.bytes(t.pathBuf.subarray(po, po + len));
  w.zeros(size - head - len);
}

/** Stat words, mode, id, flags word (with name length) and the extended word; returns the bytes written. */
function writeFixed(w: ByteWriter, e: IndexEntry, hashLen: number, ext: number, len: number): number {
  const t = e._t;
  const fixedLen = 40 + hashLen;
  const head = fixedLen + 2 + (ext ? 2 : 0);
  w.ensure(head);
  const buf = w.raw;
  const p = w.pos;
  const off = t.off[e._i];
  buf.set(t.bytes.subarray(off, off + fixedLen), p);
  const flags = (e.flagsWord & ~(CE_EXTENDED | CE_NAMEMASK)) | (ext ? CE_EXTENDED : 0) | (len < CE_NAMEMASK ? len : CE_NAMEMASK);
  buf[p + fixedLen] = flags >>> 8;
  buf[p + fixedLen + 1] = flags & 0xff;
  if (ext) {
    buf[p + fixedLen + 2] = ext >>> 8;
    buf[p + fixedLen + 3] = ext & 0xff;
  }
  w.pos = p + head;
  return head;
}

function encodeV4(w: ByteWriter, entries: readonly IndexEntry[], hashLen: number, blockCounts: number[] | null, blockOffsets: number[], hasLink: boolean): void {
  const n = entries.length;
  let prevBuf: Uint8Array = new Uint8Array(0);
  let prevOff = 0;
  let prevLen = 0;
  let nextBlock = 0;
  let blockIdx = 0;
  for (let i = 0; i < n; i++) {
    const e = entries[i];
    const t = e._t;
    const row = e._i;
    if (t.hashLen !== hashLen) throw badLength(e, i, hashLen);
    const len = t.pathLen[row];
    if (len === 0 && !hasLink) throw emptyPath(i);
    let reset = false;
    if (blockCounts && i === nextBlock) {
      blockOffsets.push(w.pos);
      nextBlock += blockCounts[blockIdx++] ?? n;
      reset = i > 0; // git sets the previous name's first byte to NUL: nothing in common
    }
    const pb = t.pathBuf;
    const po = t.pathOff[row];
    let common = 0;
    if (!reset) {
      const max = len < prevLen ? len : prevLen;
      while (common < max && pb[po + common] === prevBuf[prevOff + common]) common++;
    }
    writeFixed(w, e, hashLen, e.extendedWord, len);
    w.varint(prevLen - common);
    w.bytes(pb.subarray(po + common, po + len));
    w.u8(0);
    prevBuf = pb;
    prevOff = po;
    prevLen = len;
  }
}

function encodeExtension(w: ByteWriter, x: IndexExtension, format: ObjectFormat, blockCounts: number[] | null, blockOffsets: number[]): void {
  switch (x.signature) {
    case 'TREE': {
      const raw = untouchedCacheTree(x);
      if (raw) w.bytes(raw.payload);
      else encodeCacheTree(w, (x as Extract<IndexExtension, { signature: 'TREE' }>).nodes, format);
      return;
    }
    case 'REUC':
      encodeResolveUndo(w, (x as Extract<IndexExtension, { signature: 'REUC' }>).records, format);
      return;
    case 'UNTR':
      encodeUntracked(w, (x as Extract<IndexExtension, { signature: 'UNTR' }>).cache, format);
      return;
    case 'FSMN':
      encodeFsmonitor(w, x as Extract<IndexExtension, { signature: 'FSMN'; version: 1 }>);
      return;
    case 'IEOT': {
      const v = x as Extract<IndexExtension, { signature: 'IEOT' }>;
      w.u32(v.version);
      if (blockCounts) {
        for (let i = 0; i < blockCounts.length; i++) {
          w.u32(blockOffsets[i]);
          w.u32(blockCounts[i]);
        }
      }
      return;
    }
    case 'link': {
      const v = x as Extract<IndexExtension, { signature: 'link' }>;
      const oid = fromHex(v.baseOid);
      if (oid.length !== oidLength(format)) throw new ScalpelError('BAD_ARGUMENT', 'link extension: base id has the wrong length', { name: 'link', value: v.baseOid });
      w.bytes(oid);
      if (v.deleteBitmap || v.replaceBitmap) {
        if (!v.deleteBitmap || !v.replaceBitmap) throw new ScalpelError('BAD_ARGUMENT', 'link extension needs both bitmaps or neither', { name: 'link' });
        encodeEwah(w, v.deleteBitmap);
        encodeEwah(w, v.replaceBitmap);
      }
      return;
    }
    case 'sdir':
      return;
    default: {
      const raw = (x as { raw?: Uint8Array }).raw;
      if (!(raw instanceof Uint8Array)) throw new ScalpelError('BAD_ARGUMENT', `extension ${x.signature} has no raw payload`, { name: 'extensions', signature: x.signature });
      const c = x.signature.charCodeAt(0);
      if (c < 0x41 || c > 0x5a) throw new ScalpelError('UNKNOWN_MANDATORY_EXTENSION', `cannot write unknown mandatory extension ${x.signature}`, { signature: x.signature });
      w.bytes(raw);
    }
  }
}
