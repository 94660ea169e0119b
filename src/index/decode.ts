import { ScalpelError } from '../errors/index.js';
import { ByteReader, readU16, readU32 } from '../bytes/reader.js';
import { toHex, equalBytes } from '../bytes/index.js';
import { checkObjectFormat, pureHash, oidLength, type HashProvider, type ObjectFormat } from '../hash/index.js';
import { CE_EXTENDED, CE_EXTENDED_KNOWN, CE_NAMEMASK, EntryTable, IndexEntry, mtimeSecondsAt, TableSource } from './entry.js';
import { cacheTreeExtension } from './ext-tree.js';
import { decodeResolveUndo } from './ext-resolve-undo.js';
import { decodeUntracked } from './ext-untracked.js';
import { decodeFsmonitor } from './ext-fsmonitor.js';
import { decodeEwah } from './ewah.js';
import type { DroppedExtension, IndexExtension } from './types.js';
import { lazyList } from './lazy.js';

export interface GitIndex {
  /** 2, 3 or 4 as read (the encoder follows git: 2/3 is chosen by whether any entry has extended flags). */
  version: 2 | 3 | 4;
  objectFormat: ObjectFormat;
  /** Sorted by path bytes then stage (as git keeps them; not re-checked on read, as git does not). */
  entries: IndexEntry[];
  /** In file order. */
  extensions: IndexExtension[];
  /** The trailer was all zeros (`index.skipHash`); the encoder writes zeros again. */
  skipHash: boolean;
  /** The trailer as read (hex), for callers that compare with a split index's `link`. */
  checksum?: string;
  /** Set by mergeSplitIndex: the shared index id and the entries the split file replaced. */
  split?: { baseOid: string; replaced: ReadonlySet<IndexEntry> };
  /**
   * Set by a lenient decode that left out an optional cache extension it could not decode, in
   * file order; absent when nothing was left out (and always absent after a strict decode).
   */
  dropped?: DroppedExtension[];
}

export interface DecodeOptions {
  objectFormat?: ObjectFormat;
  /** Check the trailing hash (default true). git itself skips this on ordinary reads. */
  verifyChecksum?: boolean;
  hash?: HashProvider;
  /**
   * Read what git reads (default false: strict, every extension must decode to bytes that
   * re-encode exactly). git throws away an optional cache it cannot parse and carries on: a bad
   * TREE (cache-tree.c's reader gives up on it), a bad UNTR (read_untracked_extension returns
   * NULL), a bad FSMN (reported and ignored), a bad EOIE or IEOT (only hints for a threaded
   * load). Lenient, such an extension (any ScalpelError while decoding its payload) is left out
   * of `extensions` and named in `dropped`, so an index encoded from the result is written
   * without it, as git would write it; so is an FSMN bitmap covering more entries than the index
   * has (git itself stops on that one with BUG(); leaving it out repairs the index). Everything
   * else stays an error: entries, REUC (it is state, not a cache), `link`, `sdir`, unknown
   * mandatory extensions, an extension header or size running past the body, the trailer.
   */
  lenient?: boolean;
  /**
   * A whole-buffer Latin-1 decoder (the platform's `latin1`: Node's Buffer#latin1Slice). Visiting
   * every path builds one string of all of them with it; without it, a copy and one UTF-8 decode.
   */
  latin1?: (bytes: Uint8Array) => string;
  /**
   * The index file's mtime seconds (its lstat before the read): the row scan notes the entries not
   * older than it, the only ones the racy-git rule can smudge when the index is written back, so
   * that the writer does not look at every entry again (readIndexFile passes it).
   */
  racySince?: number;
}

/**
 * The optional extensions that only cache what the entries (or the worktree) already say, and
 * that git drops when it cannot read them. A lenient decode may leave these out.
 */
function isCacheExtension(signature: string): boolean {
  return signature === 'TREE' || signature === 'UNTR' || signature === 'FSMN' || signature === 'EOIE' || signature === 'IEOT';
}

const SIG_DIRC = 0x44495243;

/** Smallest possible on-disk entry: 62/74 fixed bytes + at least one NUL, rounded (v2/v3) or + varint (v4). */
function minEntrySize(hashLen: number): number {
  return 40 + hashLen + 2 + 2;
}

/** Cap on the bytes v4 path reconstruction may allocate (prefix sharing can amplify a small file). */
function pathArenaCap(fileSize: number): number {
  return fileSize * 32 + (16 << 20);
}

/**
 * Decode `.git/index` bytes. Throws ScalpelError (TRUNCATED, BAD_SIGNATURE, BAD_VERSION,
 * CHECKSUM_MISMATCH, BAD_ENTRY, BAD_EXTENSION, BAD_EWAH, UNKNOWN_MANDATORY_EXTENSION) with the
 * byte offset in `data.offset`; never reads out of bounds or allocates from an unchecked length.
 * With `lenient`, an optional cache extension that does not decode is left out and named in
 * `dropped` instead (DecodeOptions.lenient).
 */
export function decodeIndex(bytes: Uint8Array, opts: DecodeOptions = {}): DecodedIndex {
  const objectFormat = checkObjectFormat(opts.objectFormat);
  const hashLen = oidLength(objectFormat);
  if (bytes.length < 12 + hashLen) {
    throw new ScalpelError('TRUNCATED', `index: ${bytes.length} bytes is shorter than a header and trailer`, {
      offset: bytes.length,
      need: 12 + hashLen,
    });
  }
  const sig = readU32(bytes, 0);
  if (sig !== SIG_DIRC) {
    throw new ScalpelError('BAD_SIGNATURE', 'index: bad signature (expected "DIRC")', { offset: 0, found: toHex(bytes, 0, 4) });
  }
  const version = readU32(bytes, 4);
  if (version !== 2 && version !== 3 && version !== 4) {
    throw new ScalpelError('BAD_VERSION', `index: unsupported version ${version}`, { offset: 4, version });
  }
  const count = readU32(bytes, 8);
  const bodyEnd = bytes.length - hashLen;
  const trailer = bytes.subarray(bodyEnd);
  let skipHash = true;
  for (let i = 0; i < hashLen; i++) {
    if (trailer[i] !== 0) {
      skipHash = false;
      break;
    }
  }
  const verified = !skipHash && opts.verifyChecksum !== false;
  if (verified) {
    const h = (opts.hash ?? pureHash).create(objectFormat).update(bytes.subarray(0, bodyEnd)).digest();
    if (!equalBytes(h, trailer)) {
      throw new ScalpelError('CHECKSUM_MISMATCH', 'index: trailing checksum does not match the content', {
        offset: bodyEnd,
        expected: toHex(trailer),
        found: toHex(h),
      });
    }
  }
  if (count > (bodyEnd - 12) / minEntrySize(hashLen)) {
    throw new ScalpelError('TRUNCATED', `index: ${count} entries cannot fit in ${bodyEnd - 12} bytes`, {
      offset: 8,
      need: count * minEntrySize(hashLen),
    });
  }

  const cols = {
    off: new Uint32Array(count),
    size: new Uint32Array(count),
    pathOff: new Uint32Array(count),
    pathLen: new Uint32Array(count),
  };
  // the row scans are functions of their own: a hot loop alone optimizes quickly and stays optimized
  const racySince = opts.racySince ?? NEVER;
  const scan =
    version !== 4
      ? scanRowsV2(bytes, count, hashLen, bodyEnd, cols.off, cols.size, cols.pathOff, cols.pathLen, racySince)
      : scanRowsV4(bytes, count, hashLen, bodyEnd, cols, racySince);
  let off = scan.end;
  const emptyNames = scan.emptyNames;
  const extendedCount = scan.extended;
  const pathBuf = scan.pathBuf;
  const table = new EntryTable(bytes, version, hashLen, pathBuf, cols);
  table.source = new TableSource(off, bodyEnd, extendedCount, verified, skipHash, racySince, scan.racyRows);
  if (opts.latin1) table.latin1 = opts.latin1;

  const extensions: IndexExtension[] = [];
  const lenient = opts.lenient === true;
  // made only when something is left out: an index that decodes cleanly costs nothing more
  let dropped: DroppedExtension[] | undefined;
  let fsmn: Array<{ ext: IndexExtension; at: number }> | undefined; // FSMN kept, with header offsets, for the check after the loop
  let hasLink = false;
  while (off < bodyEnd) {
    if (off + 8 > bodyEnd) {
      throw new ScalpelError('TRUNCATED', `index: ${bodyEnd - off} stray bytes after the entries at byte ${off}`, { offset: off, need: 8 });
    }
    const s = String.fromCharCode(bytes[off], bytes[off + 1], bytes[off + 2], bytes[off + 3]);
    const size = readU32(bytes, off + 4);
    const start = off + 8;
    if (size > bodyEnd - start) {
      throw new ScalpelError(
        'TRUNCATED',
        `index: extension ${JSON.stringify(s)} at byte ${off} claims ${size} bytes, ${bodyEnd - start} left`,
        {
          offset: off + 4,
          need: size,
          signature: s,
        },
      );
    }
    const end = start + size;
    try {
      // a TREE payload is scanned whole here even though its nodes are made later
      // (cacheTreeExtension), so a bad one fails now, where a lenient read can still leave it out
      const ext = decodeExtension(s, bytes, start, end, objectFormat, off);
      if (ext.signature === 'link') hasLink = true;
      else if (ext.signature === 'FSMN') (fsmn ??= []).push({ ext, at: off });
      extensions.push(ext);
    } catch (e) {
      if (!(e instanceof ScalpelError)) throw e;
      if (e.data.signature === undefined) e.data.signature = s;
      // where the extension whose payload failed starts: tells a payload that ends early (the
      // extension is bad, the file is whole) from a size running past the file (TRUNCATED above)
      if (e.data.extensionOffset === undefined) e.data.extensionOffset = off;
      if (!lenient || !isCacheExtension(s)) throw e;
      (dropped ??= []).push({ signature: s, offset: off, code: e.code, reason: e.message });
    }
    off = end;
  }
  if (fsmn && !hasLink) {
    // Bit positions count the entries of the index (of the merged index when split: not known here).
    // git stops with BUG() on a bitmap reaching past them as it reads the extension
    // (fsmonitor.c assert_index_minimum, whatever core.fsmonitor says): strict refuses it clearly;
    // lenient leaves it out, since all it caches is which entries fsmonitor has not vouched for.
    for (const { ext, at } of fsmn) {
      if (!('bitmap' in ext) || ext.bitmap.bitSize <= count) continue;
      const err = badExt('FSMN', at, `fsmonitor bitmap covers ${ext.bitmap.bitSize} entries, the index has ${count}`);
      if (!lenient) throw err;
      extensions.splice(extensions.indexOf(ext), 1);
      (dropped ??= []).push({ signature: 'FSMN', offset: at, code: err.code, reason: err.message });
      dropped.sort((a, b) => a.offset - b.offset);
    }
  }
  if (emptyNames > 0 && !hasLink) {
    const i = cols.pathLen.indexOf(0);
    throw badEntry(cols.off[i], i, 'empty path (only allowed for replaced entries of a split index)');
  }
  return new DecodedIndex(table, { version, objectFormat, extensions, skipHash, checksum: skipHash ? undefined : toHex(trailer) }, dropped);
}

interface Columns {
  off: Uint32Array;
  size: Uint32Array;
  pathOff: Uint32Array;
  pathLen: Uint32Array;
}

/** What a row scan found. */
class Scan {
  constructor(
    readonly end: number,
    readonly emptyNames: number,
    readonly extended: number,
    readonly pathBuf: Uint8Array,
    /** The rows whose mtime seconds are not below DecodeOptions.racySince (in order). */
    readonly racyRows: number[],
  ) {}
}

/** No u32 mtime reaches it: no row is noted when DecodeOptions.racySince is not given. */
const NEVER = 2 ** 32;

/** v2/v3 rows: names in place, length from the flags (or up to the NUL when 0xFFF). */
function scanRowsV2(
  bytes: Uint8Array,
  count: number,
  hashLen: number,
  bodyEnd: number,
  offs: Uint32Array,
  sizes: Uint32Array,
  pathOff: Uint32Array,
  pathLen: Uint32Array,
  racySince: number,
): Scan {
  const fixedLen = 40 + hashLen;
  let off = 12;
  let emptyNames = 0;
  let extendedCount = 0;
  const racy: number[] = [];
  for (let i = 0; i < count; i++) {
    if (off + fixedLen + 2 > bodyEnd) throw truncatedEntry(off, i);
    const flags = (bytes[off + fixedLen] << 8) | bytes[off + fixedLen + 1];
    if (mtimeSecondsAt(bytes, off) >= racySince) racy.push(i);
    let nameOff = off + fixedLen + 2;
    if (flags & CE_EXTENDED) {
      if (nameOff + 2 > bodyEnd) throw truncatedEntry(off, i);
      const ext = (bytes[nameOff] << 8) | bytes[nameOff + 1];
      if (ext & ~CE_EXTENDED_KNOWN) throw badEntry(nameOff, i, `unknown extended flags 0x${ext.toString(16)}`);
      if (ext) extendedCount++;
      nameOff += 2;
    }
    let nameLen = flags & CE_NAMEMASK;
    if (nameLen === CE_NAMEMASK) {
      const z = bytes.indexOf(0, nameOff);
      if (z === -1 || z >= bodyEnd) throw truncatedEntry(off, i);
      nameLen = z - nameOff;
    } else if (nameOff + nameLen > bodyEnd) throw truncatedEntry(off, i);
    // A NUL inside a name is not looked for here (git's reader does not either, and the scan
    // would be most of a decode's time): it is refused where an entry's path is used as a path
    // (capture refuses such an entry with BAD_ENTRY; stored manifests are checked again at restore).
    // (fixed + flags [+ flags2] + name + 8) & ~7, as git's ondisk_ce_size
    const size = (nameOff - off + nameLen + 8) & ~7;
    if (off + size > bodyEnd) throw truncatedEntry(off, i);
    if (nameLen === 0) emptyNames++;
    offs[i] = off;
    sizes[i] = size;
    pathOff[i] = nameOff;
    pathLen[i] = nameLen;
    off += size;
  }
  return new Scan(off, emptyNames, extendedCount, bytes, racy);
}

/** v4 rows: prefix-compressed names, rebuilt into an arena. */
function scanRowsV4(bytes: Uint8Array, count: number, hashLen: number, bodyEnd: number, cols: Columns, racySince: number): Scan {
  const fixedLen = 40 + hashLen;
  let off = 12;
  let emptyNames = 0;
  let extendedCount = 0;
  const cap = pathArenaCap(bytes.length);
  let arena = new Uint8Array(Math.min(Math.max(4096, bodyEnd), cap));
  let used = 0;
  let prevOff = 0;
  let prevLen = 0;
  const r = new ByteReader(bytes, 0, bodyEnd, 'index');
  const racy: number[] = [];
  for (let i = 0; i < count; i++) {
    const start = off;
    if (off + fixedLen + 2 > bodyEnd) throw truncatedEntry(off, i);
    if (mtimeSecondsAt(bytes, off) >= racySince) racy.push(i);
    const flags = readU16(bytes, off + fixedLen);
    let p = off + fixedLen + 2;
    if (flags & CE_EXTENDED) {
      if (p + 2 > bodyEnd) throw truncatedEntry(off, i);
      const ext = readU16(bytes, p);
      if (ext & ~CE_EXTENDED_KNOWN) throw badEntry(p, i, `unknown extended flags 0x${ext.toString(16)}`);
      if (ext) extendedCount++;
      p += 2;
    }
    r.pos = p;
    let strip: number;
    try {
      strip = r.varint();
    } catch (e) {
      throw e instanceof ScalpelError && e.code === 'TRUNCATED' ? truncatedEntry(off, i) : e;
    }
    if (strip > prevLen) throw badEntry(p, i, `prefix strip ${strip} longer than the previous path (${prevLen})`);
    const sufStart = r.pos;
    const z = bytes.indexOf(0, sufStart);
    if (z === -1 || z >= bodyEnd) throw truncatedEntry(off, i);
    const keep = prevLen - strip;
    const len = keep + (z - sufStart);
    if (used + len > arena.length) {
      if (used + len > cap) throw badEntry(start, i, 'reconstructed paths exceed the size limit for this index');
      let n = arena.length * 2;
      while (n < used + len) n *= 2;
      const next = new Uint8Array(Math.min(n, cap));
      next.set(arena.subarray(0, used));
      arena = next;
    }
    arena.copyWithin(used, prevOff, prevOff + keep);
    arena.set(bytes.subarray(sufStart, z), used + keep);
    if (len === 0) emptyNames++;
    cols.off[i] = start;
    cols.size[i] = z + 1 - start;
    cols.pathOff[i] = used;
    cols.pathLen[i] = len;
    prevOff = used;
    prevLen = len;
    used += len;
    off = z + 1;
  }
  return new Scan(off, emptyNames, extendedCount, arena, racy);
}

/**
 * A decoded index file, as gix-index's `State` with its `path_backing`: the rows of the file as
 * they sit in its bytes (`rows`), and `entries` made from them on first use. One small object per
 * entry is the largest cost of a decode (and of the garbage collections after it), and many
 * readers never need them: forEachEntry and rowsOf read the rows, and an index that is still
 * `untouched` re-encodes by copying its bytes.
 *
 * Everything the fast paths rely on is in this object's own fields, not in a side table keyed by
 * its identity. A copy (a spread, structuredClone) is a plain GitIndex holding the materialized
 * entries: it encodes to the same bytes, by the general path.
 */
export class DecodedIndex implements GitIndex {
  version: 2 | 3 | 4;
  objectFormat: ObjectFormat;
  /**
   * Made from the rows on first use (and then no longer `untouched`); may be replaced. An own,
   * enumerable accessor rather than a getter on the prototype, because a spread, JSON.stringify
   * and structuredClone copy only own enumerable properties and must see the entries.
   */
  declare entries: IndexEntry[];
  extensions: IndexExtension[];
  skipHash: boolean;
  checksum: string | undefined;
  declare dropped?: DroppedExtension[];
  declare split?: GitIndex['split'];
  readonly #rows: EntryTable;
  #entries: IndexEntry[] | null = null;
  #untouched = true;

  /** One descriptor for every instance (index/lazy.ts). */
  static readonly #ENTRIES = lazyList<DecodedIndex, IndexEntry[]>((self, set) => {
    self.#untouched = false;
    return set !== undefined ? (self.#entries = set) : (self.#entries ??= materialize(self.#rows));
  });

  /**
   * @internal never read. One live decoded index, as IndexEntry.shapeKeeper is for entries: with
   * none alive during a garbage collection (a caller that decodes, visits and drops an index),
   * V8 let the shape go and cleared what forEachEntry, entryCount and the encoder had learnt
   * about it ("Insufficient type feedback" deopts after every collection).
   */
  static readonly shapeKeeper: DecodedIndex = new DecodedIndex(
    IndexEntry.shapeKeeper._t,
    { version: 2, objectFormat: 'sha1', extensions: [], skipHash: false, checksum: undefined },
    undefined,
  );

  /** @internal */
  constructor(
    rows: EntryTable,
    head: { version: 2 | 3 | 4; objectFormat: ObjectFormat; extensions: IndexExtension[]; skipHash: boolean; checksum: string | undefined },
    dropped: DroppedExtension[] | undefined,
  ) {
    this.version = head.version;
    this.objectFormat = head.objectFormat;
    this.extensions = head.extensions;
    this.skipHash = head.skipHash;
    this.checksum = head.checksum;
    if (dropped) this.dropped = dropped;
    this.#rows = rows;
    Object.defineProperty(this, 'entries', DecodedIndex.#ENTRIES);
  }

  /**
   * True while `entries` was never read or assigned: the rows are then all there is, and the
   * encoder copies the decoded bytes without making entry objects. Reading `entries` ends it
   * (the list handed out may be changed in place), as does assigning them.
   */
  get untouched(): boolean {
    return this.#untouched;
  }

  /** @internal The decoded rows (what `entries` are made from; no longer what they are once touched). */
  get rows(): EntryTable {
    return this.#rows;
  }
}

function materialize(table: EntryTable): IndexEntry[] {
  const n = table.count;
  const list = new Array<IndexEntry>(n);
  for (let i = 0; i < n; i++) list[i] = new IndexEntry(table, i);
  return list;
}

/** @internal The decoded rows of `index` while it is an untouched DecodedIndex (else null). */
export function untouchedTable(index: GitIndex): EntryTable | null {
  return index instanceof DecodedIndex && index.untouched ? index.rows : null;
}

/** Number of entries, without materializing them. */
export function entryCount(index: GitIndex): number {
  return untouchedTable(index)?.count ?? index.entries.length;
}

/**
 * Visit every entry in order. On an index whose entries were not materialized, one view object is
 * moved from row to row: `fn` must not keep the entry it is given (copy what it needs, or use
 * `index.entries` to get entries that can be kept).
 */
export function forEachEntry(index: GitIndex, fn: (entry: IndexEntry, i: number) => void): void {
  const t = untouchedTable(index);
  if (!t) {
    const list = index.entries;
    for (let i = 0; i < list.length; i++) fn(list[i], i);
    return;
  }
  const view = new IndexEntry(t, 0);
  const w = view as unknown as { _i: number };
  for (let i = 0; i < t.count; i++) {
    w._i = i;
    fn(view, i);
  }
}

function decodeExtension(
  s: string,
  bytes: Uint8Array,
  start: number,
  end: number,
  format: ObjectFormat,
  headerOff: number,
): IndexExtension {
  const hashLen = oidLength(format);
  switch (s) {
    case 'TREE':
      return cacheTreeExtension(bytes.subarray(start, end), format);
    case 'REUC':
      return { signature: 'REUC', records: decodeResolveUndo(bytes, start, end, format) };
    case 'UNTR':
      return { signature: 'UNTR', cache: decodeUntracked(bytes, start, end, format) };
    case 'FSMN':
      return decodeFsmonitor(bytes, start, end);
    case 'EOIE': {
      if (end - start !== 4 + hashLen) throw badExt(s, headerOff, `size ${end - start}, expected ${4 + hashLen}`);
      return { signature: 'EOIE', offset: readU32(bytes, start), hash: toHex(bytes, start + 4, end) };
    }
    case 'IEOT': {
      const n = end - start;
      if (n < 4 || (n - 4) % 8 !== 0) throw badExt(s, headerOff, `size ${n} is not 4 + 8k`);
      const version = readU32(bytes, start);
      if (version !== 1) throw badExt(s, start, `unknown IEOT version ${version}`);
      const blocks: { offset: number; count: number }[] = [];
      for (let p = start + 4; p < end; p += 8) blocks.push({ offset: readU32(bytes, p), count: readU32(bytes, p + 4) });
      return { signature: 'IEOT', version, blocks };
    }
    case 'link': {
      if (end - start < hashLen) throw badExt(s, headerOff, 'shorter than an object id');
      const baseOid = toHex(bytes, start, start + hashLen);
      if (end - start === hashLen) return { signature: 'link', baseOid };
      const d = decodeEwah(bytes, start + hashLen, end, 'link delete bitmap');
      const rep = decodeEwah(bytes, d.next, end, 'link replace bitmap');
      if (rep.next !== end) throw badExt(s, rep.next, 'garbage at the end of the link extension');
      return { signature: 'link', baseOid, deleteBitmap: d.bitmap, replaceBitmap: rep.bitmap };
    }
    case 'sdir':
      if (end !== start) throw badExt(s, start, 'sparse-directory marker has a payload');
      return { signature: 'sdir' };
    default: {
      const c = s.charCodeAt(0);
      if (c < 0x41 || c > 0x5a) {
        throw new ScalpelError(
          'UNKNOWN_MANDATORY_EXTENSION',
          `index uses the ${JSON.stringify(s)} extension, which is required and not understood`,
          {
            offset: headerOff,
            signature: s,
          },
        );
      }
      return { signature: s, raw: bytes.slice(start, end) };
    }
  }
}

function truncatedEntry(offset: number, index: number): ScalpelError {
  return new ScalpelError('TRUNCATED', `index: entry ${index} at byte ${offset} runs past the end of the entries`, { offset, index });
}

function badEntry(offset: number, index: number, reason: string): ScalpelError {
  return new ScalpelError('BAD_ENTRY', `index: entry ${index}: ${reason} (byte ${offset})`, { offset, index, reason });
}

function badExt(signature: string, offset: number, reason: string): ScalpelError {
  return new ScalpelError('BAD_EXTENSION', `index: ${signature} extension: ${reason} (byte ${offset})`, { signature, offset, reason });
}
