/**
 * git's commit-graph files (gitformat-commit-graph(5)), read-only and pure: bytes in, lookups out.
 *
 * A commit-graph lists commits sorted by id with, for each, its parents (as positions in the
 * graph), its committer date and its topological level (generation number v1), so a history
 * walk can step from commit to commit without inflating a single object. A repository has one
 * file (`objects/info/commit-graph`) or a chain of layers (`objects/info/commit-graphs/`), each
 * layer's positions continuing where its bases' end.
 *
 * Layout, all numbers big-endian:
 *
 *   header   "CGPH", version 1, hash version (1 SHA-1, 2 SHA-256), chunk count C, base count B
 *   lookup   (C + 1) × { id u32, offset u64 }, the last with id 0 and the end offset
 *   OIDF     256 × u32 fan-out: F[i] = number of ids whose first byte is ≤ i; F[255] = N
 *   OIDL     N ids, ascending
 *   CDAT     N × { tree id, parent1 u32, parent2 u32, level<<2 | date bits 33–34 u32, date low u32 }
 *            a parent is 0x70000000 when absent; a parent2 with the top bit set is an index into
 *            EDGE where the second through last parents are listed, the last with its top bit set
 *   EDGE     u32 parent positions of octopus merges (optional)
 *   BASE     B ids: the checksums of the base layers, base first (required when B > 0)
 *   trailer  hash of everything before it
 *
 * Bloom filters (BIDX/BDAT) and corrected commit dates (GDA2/GDO2) are not read: the walks
 * that use this order by committer date and use topological levels as the tie-break and bound.
 *
 * Parsing checks everything a lookup will later trust — chunk bounds, a fan-out that never
 * decreases, ids in strictly ascending order, every parent position inside the graph and every
 * EDGE list terminated inside its chunk — so lookups never read out of range. A caller that
 * cannot trust the file (a walk deciding whether commits were pushed) also checks the trailer.
 */
import { compareRange, hexInto, readU32, toHex } from '../bytes/index.js';
import { ScalpelError } from '../errors/index.js';
import { pureHash, oidLength, type HashProvider, type ObjectFormat } from '../hash/index.js';

const SIGNATURE = 0x43475048; // "CGPH"
const CHUNK_OIDF = 0x4f494446;
const CHUNK_OIDL = 0x4f49444c;
const CHUNK_CDAT = 0x43444154;
const CHUNK_EDGE = 0x45444745;
const CHUNK_BASE = 0x42415345;

/** A parent slot holding no parent. */
const PARENT_NONE = 0x70000000;
const EDGE_FLAG = 0x80000000;
const HEADER_SIZE = 8;
const LOOKUP_ENTRY = 12;

export interface CommitGraphLayerOptions {
  /** Commits in the layers below this one (their positions come first). Default 0. */
  baseCount?: number;
  /** Check the trailing hash against the content (git does this only in `commit-graph verify`). Default true. */
  verifyChecksum?: boolean;
  hash?: HashProvider;
}

/** One parsed commit-graph file: where its chunks are, validated. */
export interface CommitGraphLayer {
  readonly bytes: Uint8Array;
  readonly format: ObjectFormat;
  /** Commits in this file. */
  readonly count: number;
  /** Commits in the layers below; this file's i-th id has graph position baseCount + i. */
  readonly baseCount: number;
  /** Checksums of the base layers (the BASE chunk), base first. */
  readonly bases: readonly string[];
  /** This file's trailing hash, hex: the name a chain gives it (`graph-<checksum>.graph`). */
  readonly checksum: string;
  readonly fanout: number;
  readonly oidl: number;
  readonly cdat: number;
  /** Offset of EDGE, or -1. */
  readonly edge: number;
  readonly edgeCount: number;
}

function bad(reason: string, message: string, data: Record<string, unknown> = {}): ScalpelError {
  return new ScalpelError('BAD_OBJECT', `commit-graph: ${message}`, { what: 'commit-graph', reason, ...data });
}

function truncated(offset: number, need: number): ScalpelError {
  return new ScalpelError('TRUNCATED', `commit-graph: truncated at byte ${offset} (need ${need} more bytes)`, {
    what: 'commit-graph',
    offset,
    need,
  });
}

/** The chunk lookup table: id → [start, end). Errors as git's read_table_of_contents reports them. */
function readChunks(bytes: Uint8Array, chunkCount: number, hashLen: number): Map<number, [number, number]> {
  const tocEnd = HEADER_SIZE + (chunkCount + 1) * LOOKUP_ENTRY;
  if (bytes.length < tocEnd + hashLen) throw truncated(bytes.length, tocEnd + hashLen - bytes.length);
  const dataEnd = bytes.length - hashLen;
  const offsetAt = (p: number): number => {
    const hi = readU32(bytes, p);
    const lo = readU32(bytes, p + 4);
    // 2^21 × 2^32 bytes is beyond any file a Uint8Array holds: such an offset is simply wrong
    if (hi >= 1 << 21) return Number.MAX_SAFE_INTEGER;
    return hi * 0x1_0000_0000 + lo;
  };
  const chunks = new Map<number, [number, number]>();
  for (let i = 0; i < chunkCount; i++) {
    const p = HEADER_SIZE + i * LOOKUP_ENTRY;
    const id = readU32(bytes, p);
    const start = offsetAt(p + 4);
    const end = offsetAt(p + 4 + LOOKUP_ENTRY);
    if (id === 0) throw bad('chunk-table', `chunk ${i} of ${chunkCount} has the terminating id`, { offset: p });
    if (start < tocEnd || start > dataEnd || end < start || end > dataEnd) {
      throw bad('chunk-offset', `chunk ${chunkName(id)} spans bytes ${start}..${end} outside ${tocEnd}..${dataEnd}`, {
        offset: p,
        chunk: chunkName(id),
      });
    }
    if (chunks.has(id)) throw bad('chunk-table', `chunk ${chunkName(id)} appears twice`, { offset: p, chunk: chunkName(id) });
    chunks.set(id, [start, end]);
  }
  if (readU32(bytes, HEADER_SIZE + chunkCount * LOOKUP_ENTRY) !== 0) {
    throw bad('chunk-table', 'chunk table does not end with the terminating id', { offset: HEADER_SIZE + chunkCount * LOOKUP_ENTRY });
  }
  return chunks;
}

/** bytes[a..a+len) < bytes[b..b+len) */
function ascending(bytes: Uint8Array, a: number, b: number, len: number): boolean {
  for (let k = 0; k < len; k++) {
    const d = bytes[a + k] - bytes[b + k];
    if (d !== 0) return d < 0;
  }
  return false;
}

function chunkName(id: number): string {
  return String.fromCharCode((id >>> 24) & 0xff, (id >>> 16) & 0xff, (id >>> 8) & 0xff, id & 0xff);
}

/**
 * Parses and validates one commit-graph file. Typed errors: BAD_SIGNATURE, BAD_VERSION (file
 * version, or a hash version other than `format`'s), TRUNCATED, CHECKSUM_MISMATCH, and
 * BAD_OBJECT (data.what 'commit-graph') with reasons `chunk-table`, `chunk-offset`,
 * `missing-chunk`, `chunk-size`, `fanout`, `oid-order`, `parent`, `edge`, `base`.
 */
export function parseCommitGraphLayer(bytes: Uint8Array, format: ObjectFormat, opts: CommitGraphLayerOptions = {}): CommitGraphLayer {
  const hashLen = oidLength(format);
  const baseCount = opts.baseCount ?? 0;
  if (bytes.length < HEADER_SIZE) throw truncated(bytes.length, HEADER_SIZE - bytes.length);
  const sig = readU32(bytes, 0);
  if (sig !== SIGNATURE)
    throw new ScalpelError('BAD_SIGNATURE', `commit-graph: signature ${sig.toString(16)} is not CGPH`, {
      what: 'commit-graph',
      offset: 0,
      found: sig,
    });
  if (bytes[4] !== 1)
    throw new ScalpelError('BAD_VERSION', `commit-graph: version ${bytes[4]} is not 1`, { what: 'commit-graph', version: bytes[4] });
  const hashVersion = format === 'sha256' ? 2 : 1;
  if (bytes[5] !== hashVersion) {
    throw new ScalpelError('BAD_VERSION', `commit-graph: hash version ${bytes[5]} does not match the repository's ${format}`, {
      what: 'commit-graph',
      version: bytes[5],
      reason: 'hash-version',
    });
  }
  const chunkCount = bytes[6];
  const baseLayers = bytes[7];

  const chunks = readChunks(bytes, chunkCount, hashLen);
  const dataEnd = bytes.length - hashLen;
  const checksum = toHex(bytes, dataEnd, bytes.length);
  if (opts.verifyChecksum !== false) {
    const found = toHex((opts.hash ?? pureHash).create(format).update(bytes.subarray(0, dataEnd)).digest());
    if (found !== checksum)
      throw new ScalpelError('CHECKSUM_MISMATCH', 'commit-graph: trailing checksum does not match the content', {
        what: 'commit-graph',
        expected: checksum,
        found,
      });
  }

  const need = (id: number): [number, number] => {
    const c = chunks.get(id);
    if (!c) throw bad('missing-chunk', `required chunk ${chunkName(id)} is missing`, { chunk: chunkName(id) });
    return c;
  };
  const [fanout, fanoutEnd] = need(CHUNK_OIDF);
  if (fanoutEnd - fanout !== 256 * 4) throw bad('chunk-size', `OIDF is ${fanoutEnd - fanout} bytes, not 1024`, { chunk: 'OIDF' });
  let prev = 0;
  for (let i = 0; i < 256; i++) {
    const v = readU32(bytes, fanout + 4 * i);
    if (v < prev) throw bad('fanout', `fan-out decreases at entry ${i}`, { offset: fanout + 4 * i });
    prev = v;
  }
  const count = prev;
  const [oidl, oidlEnd] = need(CHUNK_OIDL);
  if (oidlEnd - oidl !== count * hashLen)
    throw bad('chunk-size', `OIDL is ${oidlEnd - oidl} bytes for ${count} commits`, { chunk: 'OIDL' });
  const [cdat, cdatEnd] = need(CHUNK_CDAT);
  if (cdatEnd - cdat !== count * (hashLen + 16))
    throw bad('chunk-size', `CDAT is ${cdatEnd - cdat} bytes for ${count} commits`, { chunk: 'CDAT' });
  let edge = -1;
  let edgeCount = 0;
  const edgeChunk = chunks.get(CHUNK_EDGE);
  if (edgeChunk) {
    if ((edgeChunk[1] - edgeChunk[0]) % 4 !== 0) throw bad('chunk-size', 'EDGE is not a whole number of entries', { chunk: 'EDGE' });
    edge = edgeChunk[0];
    edgeCount = (edgeChunk[1] - edgeChunk[0]) / 4;
  }
  const bases: string[] = [];
  if (baseLayers > 0) {
    const [base, baseEnd] = need(CHUNK_BASE);
    if (baseEnd - base !== baseLayers * hashLen)
      throw bad('chunk-size', `BASE is ${baseEnd - base} bytes for ${baseLayers} base layers`, { chunk: 'BASE' });
    for (let i = 0; i < baseLayers; i++) bases.push(toHex(bytes, base + i * hashLen, base + (i + 1) * hashLen));
  }

  // ids ascending and in the fan-out bucket of their first byte: the binary search relies on both
  for (let i = 0; i < count; i++) {
    const p = oidl + i * hashLen;
    if (i > 0 && !ascending(bytes, p - hashLen, p, hashLen)) {
      throw bad('oid-order', `ids ${i - 1} and ${i} are not in ascending order`, { offset: p });
    }
    const first = bytes[p];
    const lo = first === 0 ? 0 : readU32(bytes, fanout + 4 * (first - 1));
    const hi = readU32(bytes, fanout + 4 * first);
    if (i < lo || i >= hi) throw bad('fanout', `id ${i} lies outside the fan-out bucket of its first byte`, { offset: p });
  }

  const total = baseCount + count;
  const checkPosition = (pos: number, at: number): void => {
    if (pos >= total) throw bad('parent', `parent position ${pos} is outside the graph's ${total} commits`, { offset: at, position: pos });
  };
  for (let i = 0; i < count; i++) {
    const p = cdat + i * (hashLen + 16) + hashLen;
    const p1 = readU32(bytes, p);
    const p2 = readU32(bytes, p + 4);
    if (p1 !== PARENT_NONE) checkPosition(p1, p);
    if (p2 === PARENT_NONE) continue;
    if (p1 === PARENT_NONE) throw bad('parent', `commit ${i} has a second parent but no first`, { offset: p });
    if (!(p2 & EDGE_FLAG)) {
      checkPosition(p2, p + 4);
      continue;
    }
    let k = p2 & ~EDGE_FLAG;
    for (;;) {
      if (edge < 0 || k >= edgeCount) throw bad('edge', `commit ${i}'s parent list runs past the EDGE chunk`, { offset: p + 4, index: k });
      const v = readU32(bytes, edge + 4 * k);
      checkPosition((v & ~EDGE_FLAG) >>> 0, edge + 4 * k);
      if (v & EDGE_FLAG) break;
      k++;
    }
  }

  return { bytes, format, count, baseCount, bases, checksum, fanout, oidl, cdat, edge, edgeCount };
}

/**
 * A whole commit-graph: one file, or a chain of layers, base first. Positions run over all
 * layers (the base's commits first). `find` is a binary search per layer; everything else is a
 * few reads at a computed offset.
 */
export class CommitGraph {
  readonly layers: readonly CommitGraphLayer[];
  readonly format: ObjectFormat;
  /** Commits in all layers. */
  readonly size: number;
  private readonly hashLen: number;
  private readonly probe: Uint8Array;

  /**
   * `layers` base first, each parsed with the baseCount of the ones before it; a layer's BASE
   * chunk must list exactly the checksums of the layers below it (BAD_OBJECT `base` otherwise).
   */
  constructor(layers: readonly CommitGraphLayer[]) {
    if (layers.length === 0) throw new ScalpelError('BAD_ARGUMENT', 'commit-graph: no layers', { name: 'layers', reason: 'empty' });
    let below = 0;
    layers.forEach((layer, i) => {
      if (layer.format !== layers[0].format) throw bad('base', `layer ${i} has another object format`, { layer: i });
      if (layer.baseCount !== below)
        throw bad('base', `layer ${i} was parsed with ${layer.baseCount} base commits, the layers below hold ${below}`, { layer: i });
      if (layer.bases.length !== i || layer.bases.some((b, j) => b !== layers[j].checksum)) {
        throw bad('base', `layer ${i}'s BASE chunk does not list the ${i} layers below it`, { layer: i });
      }
      below += layer.count;
    });
    this.layers = layers;
    this.format = layers[0].format;
    this.size = below;
    this.hashLen = oidLength(this.format);
    this.probe = new Uint8Array(this.hashLen);
  }

  /** The graph position of `oid` (hex), or -1 when no layer holds it. */
  find(oid: string): number {
    const key = this.probe;
    if (!hexInto(oid, key)) return -1;
    // top layer first, as git searches: the newest commits are the likeliest to be asked for
    for (let l = this.layers.length - 1; l >= 0; l--) {
      const layer = this.layers[l];
      const b = layer.bytes;
      let lo = key[0] === 0 ? 0 : readU32(b, layer.fanout + 4 * (key[0] - 1));
      let hi = readU32(b, layer.fanout + 4 * key[0]);
      while (lo < hi) {
        const mid = (lo + hi) >>> 1;
        const c = compareRange(b, layer.oidl + mid * this.hashLen, this.hashLen, key);
        if (c === 0) return layer.baseCount + mid;
        if (c < 0) lo = mid + 1;
        else hi = mid;
      }
    }
    return -1;
  }

  private at(pos: number): { layer: CommitGraphLayer; i: number } {
    if (!Number.isInteger(pos) || pos < 0 || pos >= this.size) {
      throw new ScalpelError('BAD_ARGUMENT', `commit-graph: position ${pos} is outside the graph's ${this.size} commits`, {
        name: 'position',
        value: pos,
      });
    }
    for (let l = this.layers.length - 1; ; l--) {
      const layer = this.layers[l];
      if (pos >= layer.baseCount) return { layer, i: pos - layer.baseCount };
    }
  }

  /** The id at a position, hex. */
  oid(pos: number): string {
    const { layer, i } = this.at(pos);
    const p = layer.oidl + i * this.hashLen;
    return toHex(layer.bytes, p, p + this.hashLen);
  }

  /** The commit's root tree id, hex. */
  tree(pos: number): string {
    const { layer, i } = this.at(pos);
    const p = layer.cdat + i * (this.hashLen + 16);
    return toHex(layer.bytes, p, p + this.hashLen);
  }

  /** Parent positions, in the commit's order. */
  parents(pos: number): number[] {
    const { layer, i } = this.at(pos);
    const b = layer.bytes;
    const p = layer.cdat + i * (this.hashLen + 16) + this.hashLen;
    const p1 = readU32(b, p);
    if (p1 === PARENT_NONE) return [];
    const p2 = readU32(b, p + 4);
    if (p2 === PARENT_NONE) return [p1];
    if (!(p2 & EDGE_FLAG)) return [p1, p2];
    const out = [p1];
    for (let k = p2 & ~EDGE_FLAG; ; k++) {
      const v = readU32(b, layer.edge + 4 * k);
      out.push((v & ~EDGE_FLAG) >>> 0);
      if (v & EDGE_FLAG) return out;
    }
  }

  /** Committer date, seconds since the epoch (34 bits, as git stores it). */
  date(pos: number): number {
    const { layer, i } = this.at(pos);
    const p = layer.cdat + i * (this.hashLen + 16) + this.hashLen + 8;
    return (readU32(layer.bytes, p) & 3) * 0x1_0000_0000 + readU32(layer.bytes, p + 4);
  }

  /**
   * Topological level (generation number v1): 1 for a root, else 1 + the largest of the parents'
   * (capped at 0x3FFFFFFF). 0 means the writer computed none (git before 2.19): unknown.
   */
  generation(pos: number): number {
    const { layer, i } = this.at(pos);
    return readU32(layer.bytes, layer.cdat + i * (this.hashLen + 16) + this.hashLen + 8) >>> 2;
  }
}
