import { ScalpelError } from '../errors/index.js';
import { ByteWriter, writeU32 } from '../bytes/writer.js';
import { fromHex } from '../bytes/hex.js';
import { concatBytes } from '../bytes/compare.js';
import { asciiBytes } from '../bytes/text.js';
import { checkObjectFormat, oidLength, pureHash, type HashProvider, type ObjectFormat } from '../hash/index.js';
import { CE_EXTENDED, CE_NAMEMASK, type EntryTable, type IndexEntry, ENTRY } from './entry.js';
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
  /**
   * Memory for encodeIndex's result, which it writes whole (`Platform.alloc`: in Node unzeroed,
   * ~2 ms less for a 10 MB index than zeroed memory). Default: a zeroed Uint8Array.
   */
  alloc?: (size: number) => Uint8Array;
}

/** What the writer needs of an index besides its entries. */
export type IndexHead = Pick<GitIndex, 'version' | 'objectFormat' | 'extensions' | 'skipHash'>;

/** A run of consecutive rows of one table, or one entry (a run of one row of its own table). */
export type Segment = { t: EntryTable; start: number; end: number } | { e: IndexEntry };

/**
 * Encode an index the way git's `do_write_index` does. For every index git writes,
 * `encodeIndex(decodeIndex(b))` is byte-identical to `b`:
 * - version 2/3 is chosen by whether any entry has extended flags ("demote 3 to 2"); 4 stays 4;
 * - v4 names are prefix-compressed against the previous name, and when an IEOT table is written
 *   the previous name is reset at each block start, as git does;
 * - EOIE and IEOT are recomputed from what is written (IEOT keeps its block sizes when they still
 *   fit the entries, otherwise it is re-split into the same number of blocks like git);
 * - entries decoded from bytes with the same layout are copied byte for byte.
 * The same writer as an index splice (one scope's entries replaced in an index read from disk):
 * the entries go in as segments either way.
 */
export function encodeIndex(index: GitIndex, opts: EncodeOptions = {}): Uint8Array {
  return joinParts(encodeIndexParts(index, indexSegments(index), opts), opts.alloc);
}

/**
 * Encode an index whose entries are given as segments instead of `index.entries`: runs of a
 * decoded table are copied as they sit in its bytes. Same result as encodeIndex over the same entries.
 */
export function encodeIndexSegments(index: IndexHead | GitIndex, segments: readonly Segment[], opts: EncodeOptions = {}): Uint8Array {
  return joinParts(encodeIndexParts(index, segments, opts));
}

/** An index's entries as segments: the decoded rows as one run when they were never materialized. */
export function indexSegments(index: GitIndex): Segment[] {
  const t = untouchedTable(index);
  if (t) return t.count > 0 ? [{ t, start: 0, end: t.count }] : [];
  return toSegments(index.entries);
}

/** Entries as segments: consecutive rows of one table coalesce into one run. */
export function toSegments(entries: readonly IndexEntry[]): Segment[] {
  const out: Segment[] = [];
  let cur: { t: EntryTable; start: number; end: number } | null = null;
  for (const e of entries) {
    if (cur && e._t === cur.t && e._i === cur.end) cur.end++;
    else {
      if (cur) out.push(cur);
      cur = { t: e._t, start: e._i, end: e._i + 1 };
    }
  }
  if (cur) out.push(cur);
  return out;
}

/**
 * The one index writer: header, entries (from segments), extensions in the order given (EOIE and
 * IEOT recomputed) and the trailer, as the parts of the file, without copying them together:
 * long runs of v2/v3 rows are views of the bytes they were decoded from, so a restore that
 * changes 3 entries of 100,000 writes the index without a 10 MB copy.
 */
export function encodeIndexParts(index: IndexHead, segments: readonly Segment[], opts: EncodeOptions = {}): Uint8Array[] {
  const objectFormat = checkObjectFormat(opts.objectFormat ?? index.objectFormat);
  const hashLen = oidLength(objectFormat);
  let version: 2 | 3 | 4 = index.version;
  if (version !== 2 && version !== 3 && version !== 4) {
    throw new ScalpelError('BAD_ARGUMENT', `index version must be 2, 3 or 4, got ${String(version)}`, { name: 'version', value: version });
  }
  const runs = segments.map(runOf);
  let n = 0;
  let copyBytes = 0; // what goes through the writer rather than as views: its first size
  for (const s of runs) {
    n += s.end - s.start;
    const bytes = runBytes(s);
    if (version === 4 || s.t.version === 4) copyBytes += s.t.version === 4 ? bytes * 2 : bytes;
    else if (bytes < VIEW_MIN) copyBytes += bytes;
  }
  if (version !== 4) version = runs.some(runExtended) ? 3 : 2;
  let hasLink = false;
  for (const x of index.extensions) if (x.signature === 'link') hasLink = true;
  // IEOT block boundaries must be known before v4 names are compressed.
  const ieot = index.extensions.find((x): x is Extract<IndexExtension, { signature: 'IEOT' }> => x.signature === 'IEOT');
  const blockCounts = ieot ? ieotCounts(ieot.blocks, n) : null;

  const whole = wholeSource(runs, hashLen, version, index, blockCounts);
  const src = whole ? (whole.source as NonNullable<EntryTable['source']>) : null;
  // the writer's first size: what follows the entries of a whole file, or what is copied
  const out = new Parts(src ? src.bodyEnd - src.entriesEnd + 64 : 12 + copyBytes + 1024);
  const blockOffsets: number[] = [];
  if (whole && src) {
    // header and entries as they were: one view (the writer then holds only what follows them); IEOT blocks start where they started
    out.view(whole.bytes.subarray(0, src.entriesEnd));
    if (blockCounts) for (let i = 0, at = 0; i < blockCounts.length; at += blockCounts[i++]) blockOffsets.push(whole.off[at]);
  } else {
    out.w.u32(0x44495243);
    out.w.u32(version);
    out.w.u32(n);
    if (version === 4) writeRowsV4(out, runs, n, hashLen, blockCounts, blockOffsets, hasLink);
    else writeRunsV23(out, runs, n, hashLen, blockCounts, blockOffsets, hasLink);
  }
  return finishIndex(out, index, objectFormat, out.at, blockCounts, blockOffsets, opts, whole);
}

function joinParts(parts: Uint8Array[], alloc?: (size: number) => Uint8Array): Uint8Array {
  return parts.length === 1 ? parts[0] : concatBytes(parts, alloc);
}

type Run = { t: EntryTable; start: number; end: number };

function runOf(s: Segment): Run {
  return 'e' in s ? { t: s.e._t, start: s.e._i, end: s.e._i + 1 } : s;
}

/** The run's bytes in its table (consecutive rows sit back to back). */
function runBytes(s: Run): number {
  return s.end > s.start ? s.t.off[s.end - 1] + s.t.size[s.end - 1] - s.t.off[s.start] : 0;
}

function runExtended(s: Run): boolean {
  const src = s.t.source;
  // a decoded file counted its rows with extended flags: none, or all of its rows, need no look
  if (src !== null && (src.extended === 0 || (s.start === 0 && s.end === s.t.count))) return src.extended > 0;
  for (let r = s.start; r < s.end; r++) if (s.t.extendedWord(r) !== 0) return true;
  return false;
}

/**
 * The decoded file whose rows the runs are, all of them in order, in the layout being written:
 * then its header and entries are written as they are (and its trailer may be reused).
 */
function wholeSource(
  runs: readonly Run[],
  hashLen: number,
  version: number,
  index: IndexHead,
  blockCounts: number[] | null,
): EntryTable | null {
  if (runs.length !== 1) return null;
  const { t, start, end } = runs[0];
  if (!t.source || start !== 0 || end !== t.count || t.hashLen !== hashLen || t.version !== version) return null;
  return sameBlocks(t, index, blockCounts) ? t : null;
}

/** Runs shorter than this are copied into the writer; longer ones are output as views. */
const VIEW_MIN = 4096;

/** The file being written, as parts: views of decoded bytes, and what the writer collected between them. */
class Parts {
  readonly list: Uint8Array[] = [];
  /** Bytes in `list`. */
  private done = 0;
  w: ByteWriter;
  constructor(initial: number) {
    this.w = new ByteWriter(initial);
  }
  /** Offset in the file of the next byte. */
  get at(): number {
    return this.done + this.w.pos;
  }
  /** Bytes that are written as they are: long ones as views (not copied), short ones copied. */
  put(b: Uint8Array): void {
    if (b.length < VIEW_MIN) this.w.bytes(b);
    else this.view(b);
  }
  /** Bytes written as they are, as a view: what the writer holds goes before them, and it starts afresh. */
  view(b: Uint8Array): void {
    if (this.w.pos > 0) {
      this.list.push(this.w.finish());
      this.done += this.w.pos;
      this.w = new ByteWriter(4096);
    }
    this.list.push(b);
    this.done += b.length;
  }
  finish(): Uint8Array[] {
    if (this.w.pos > 0 || this.list.length === 0) this.list.push(this.w.finish());
    return this.list;
  }
}

/** Extensions (in the order given; EOIE and IEOT recomputed) and the trailer, after the entries. */
function finishIndex(
  out: Parts,
  index: IndexHead,
  objectFormat: ObjectFormat,
  entriesEnd: number,
  blockCounts: number[] | null,
  blockOffsets: number[],
  opts: EncodeOptions,
  whole: EntryTable | null,
): Uint8Array[] {
  const hashLen = oidLength(objectFormat);
  // from here on only the writer is written to: `w` holds everything after the last view
  const w = out.w;
  const headers: Array<[string, number]> = [];
  for (const x of index.extensions) {
    if (x.signature === 'EOIE') {
      const h = (opts.hash ?? pureHash).create(objectFormat);
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
  } else if (whole && sameAsSource(whole, w.finish(), entriesEnd)) {
    // byte for byte the file that was decoded and whose trailer was verified: its trailer is right
    w.bytes(whole.bytes.subarray(entriesEnd + body, entriesEnd + body + hashLen));
  } else {
    const h = (opts.hash ?? pureHash).create(objectFormat);
    for (const part of out.list) h.update(part);
    w.bytes(h.update(w.finish().subarray(0, body)).digest());
  }
  return out.finish();
}

/** v4 names restart at IEOT block starts: a copy is only right when the blocks are the source's. */
function sameBlocks(t: EntryTable, index: IndexHead, blockCounts: number[] | null): boolean {
  if (t.version !== 4) return true;
  const ieot = index.extensions.find((x) => x.signature === 'IEOT');
  if (!blockCounts) return !ieot;
  return !!ieot && 'blocks' in ieot && ieot.blocks.length === blockCounts.length && ieot.blocks.every((b, i) => b.count === blockCounts[i]);
}

/** Is `after` (what follows the entries, no trailer yet) what follows them in the decoded file? */
function sameAsSource(t: EntryTable, after: Uint8Array, entriesEnd: number): boolean {
  const s = t.source;
  if (!s || !s.trailerVerified || s.skipHash || entriesEnd + after.length !== s.bodyEnd || entriesEnd !== s.entriesEnd) return false;
  const b = t.bytes;
  for (let i = 0; i < after.length; i++) if (after[i] !== b[entriesEnd + i]) return false;
  return true;
}

function writeExtHeader(w: ByteWriter, sig: string, size: number): void {
  if (sig.length !== 4)
    throw new ScalpelError('BAD_ARGUMENT', `extension signature must be 4 characters: ${JSON.stringify(sig)}`, {
      name: 'signature',
      value: sig,
    });
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

function badLength(t: EntryTable, row: number, i: number, hashLen: number): ScalpelError {
  const path = t.pathString(row);
  return new ScalpelError('BAD_ARGUMENT', `entry ${i} (${path}) has a ${t.hashLen}-byte id in a ${hashLen}-byte index`, {
    name: 'entries',
    index: i,
    path,
  });
}

function emptyPath(i: number): ScalpelError {
  return new ScalpelError('BAD_PATH', `entry ${i} has an empty path outside a split index`, { path: '', index: i, reason: 'empty' });
}

/**
 * v2/v3 entries: rows of v2/v3 tables already have this on-disk form, so runs of them are output
 * as they are (cut at IEOT block starts, whose offsets are recorded); rows of v4 tables are
 * re-serialised with padded names.
 */
function writeRunsV23(
  out: Parts,
  runs: readonly Run[],
  n: number,
  hashLen: number,
  blockCounts: number[] | null,
  blockOffsets: number[],
  hasLink: boolean,
): void {
  let i = 0; // entries written so far
  let nextBlock = blockCounts ? 0 : Infinity;
  let blockIdx = 0;
  for (const { t, start, end } of runs) {
    if (t.hashLen !== hashLen) throw badLength(t, start, i, hashLen);
    if (!hasLink) {
      // natively: a loop here would run over every row of the index, in the interpreter after a
      // garbage collection has thrown this function's optimized code away
      const empty = t.pathLen.subarray(start, end).indexOf(0);
      if (empty >= 0) throw emptyPath(i + empty);
    }
    if (t.version === 4) {
      for (let r = start; r < end; r++, i++) {
        if (i === nextBlock) {
          blockOffsets.push(out.at);
          nextBlock += (blockCounts as number[])[blockIdx++] ?? n;
        }
        writeRowV23(out.w, t, r, hashLen);
      }
      continue;
    }
    let r = start;
    while (r < end) {
      if (i === nextBlock) {
        blockOffsets.push(out.at);
        nextBlock += (blockCounts as number[])[blockIdx++] ?? n;
      }
      // up to the run's end or the next block start, whichever comes first
      const upto = Math.min(end, r + (nextBlock - i));
      out.put(t.bytes.subarray(t.off[r], t.off[upto - 1] + t.size[upto - 1]));
      i += upto - r;
      r = upto;
    }
  }
}

/** A row of a v4 table in v2/v3 form: the fixed part, the full name, NUL padding to a multiple of 8. */
function writeRowV23(w: ByteWriter, t: EntryTable, row: number, hashLen: number): void {
  const len = t.pathLen[row];
  const head = writeFixed(w, t, row, hashLen, t.extendedWord(row), len);
  const size = (head + len + 8) & ~7;
  w.ensure(size - head);
  const po = t.pathOff[row];
  w.bytes(t.pathBuf.subarray(po, po + len));
  w.zeros(size - head - len);
}

/** Stat words, mode, id, flags word (with name length) and the extended word; returns the bytes written. */
function writeFixed(w: ByteWriter, t: EntryTable, row: number, hashLen: number, ext: number, len: number): number {
  const fixedLen = ENTRY.oid + hashLen;
  const head = fixedLen + 2 + (ext ? 2 : 0);
  w.ensure(head);
  const buf = w.raw;
  const p = w.pos;
  const off = t.off[row];
  buf.set(t.bytes.subarray(off, off + fixedLen), p);
  const flags = (t.flagsWord(row) & ~(CE_EXTENDED | CE_NAMEMASK)) | (ext ? CE_EXTENDED : 0) | (len < CE_NAMEMASK ? len : CE_NAMEMASK);
  buf[p + fixedLen] = flags >>> 8;
  buf[p + fixedLen + 1] = flags & 0xff;
  if (ext) {
    buf[p + fixedLen + 2] = ext >>> 8;
    buf[p + fixedLen + 3] = ext & 0xff;
  }
  w.pos = p + head;
  return head;
}

/** v4 entries: every row re-serialised, its name prefix-compressed against the previous one. */
function writeRowsV4(
  out: Parts,
  runs: readonly Run[],
  n: number,
  hashLen: number,
  blockCounts: number[] | null,
  blockOffsets: number[],
  hasLink: boolean,
): void {
  const w = out.w; // nothing is output as a view here: the writer stays the same
  let prevBuf: Uint8Array = new Uint8Array(0);
  let prevOff = 0;
  let prevLen = 0;
  let nextBlock = 0;
  let blockIdx = 0;
  let i = 0;
  for (const { t, start, end } of runs) {
    if (t.hashLen !== hashLen) throw badLength(t, start, i, hashLen);
    const pb = t.pathBuf;
    for (let row = start; row < end; row++, i++) {
      const len = t.pathLen[row];
      if (len === 0 && !hasLink) throw emptyPath(i);
      let reset = false;
      if (blockCounts && i === nextBlock) {
        blockOffsets.push(out.at);
        nextBlock += blockCounts[blockIdx++] ?? n;
        reset = i > 0; // git sets the previous name's first byte to NUL: nothing in common
      }
      const po = t.pathOff[row];
      let common = 0;
      if (!reset) {
        const max = len < prevLen ? len : prevLen;
        while (common < max && pb[po + common] === prevBuf[prevOff + common]) common++;
      }
      writeFixed(w, t, row, hashLen, t.extendedWord(row), len);
      w.varint(prevLen - common);
      w.bytes(pb.subarray(po + common, po + len));
      w.u8(0);
      prevBuf = pb;
      prevOff = po;
      prevLen = len;
    }
  }
}

function encodeExtension(
  w: ByteWriter,
  x: IndexExtension,
  format: ObjectFormat,
  blockCounts: number[] | null,
  blockOffsets: number[],
): void {
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
      if (oid.length !== oidLength(format))
        throw new ScalpelError('BAD_ARGUMENT', 'link extension: base id has the wrong length', { name: 'link', value: v.baseOid });
      w.bytes(oid);
      if (v.deleteBitmap || v.replaceBitmap) {
        if (!v.deleteBitmap || !v.replaceBitmap)
          throw new ScalpelError('BAD_ARGUMENT', 'link extension needs both bitmaps or neither', { name: 'link' });
        encodeEwah(w, v.deleteBitmap);
        encodeEwah(w, v.replaceBitmap);
      }
      return;
    }
    case 'sdir':
      return;
    default: {
      const raw = (x as { raw?: Uint8Array }).raw;
      if (!(raw instanceof Uint8Array))
        throw new ScalpelError('BAD_ARGUMENT', `extension ${x.signature} has no raw payload`, {
          name: 'extensions',
          signature: x.signature,
        });
      const c = x.signature.charCodeAt(0);
      if (c < 0x41 || c > 0x5a)
        throw new ScalpelError('UNKNOWN_MANDATORY_EXTENSION', `cannot write unknown mandatory extension ${x.signature}`, {
          signature: x.signature,
        });
      w.bytes(raw);
    }
  }
}
