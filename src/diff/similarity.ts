/**
 * How similar two files are, as git's rename detection measures it: both files are cut into
 * chunks (a line, or 64 bytes when a line is longer), chunks are hashed, and the score is the
 * share of the larger file made of chunk bytes the other file has too, from 0 to MAX_SCORE.
 */
import { isBinary } from './binary.js';

/** The score of identical files (100%). */
export const MAX_SCORE = 60000;
/** The least score git pairs files at by default (`-M`, 50%). */
export const DEFAULT_RENAME_SCORE = 30000;

// chunk hashes are taken modulo this prime
const HASHBASE = 107927;
const CHUNK_MAX = 64;

/** Bytes per chunk hash. Counts are what matters, so equal hashes of different chunks add up, as in git. */
export type ChunkCounts = Map<number, number>;

/**
 * The chunk counts of a file. In a text file a CR before LF is skipped; an unfinished last chunk
 * (no newline, under 64 bytes) is not counted at all, as in git.
 */
export function chunkCounts(data: Uint8Array): ChunkCounts {
  const text = !isBinary(data);
  const counts: ChunkCounts = new Map();
  let n = 0;
  let acc1 = 0;
  let acc2 = 0;
  for (let i = 0; i < data.length; i++) {
    const c = data[i];
    if (text && c === 0x0d && data[i + 1] === 0x0a) continue;
    const old1 = acc1;
    acc1 = (((acc1 << 7) ^ (acc2 >>> 25)) + c) >>> 0;
    acc2 = ((acc2 << 7) ^ (old1 >>> 25)) >>> 0;
    if (++n < CHUNK_MAX && c !== 0x0a) continue;
    const h = ((acc1 + Math.imul(acc2, 0x61)) >>> 0) % HASHBASE;
    counts.set(h, (counts.get(h) ?? 0) + n);
    n = 0;
    acc1 = 0;
    acc2 = 0;
  }
  return counts;
}

/** Bytes of `dst`'s chunks that `src` has as well (each chunk hash counted up to the smaller count). */
export function copiedBytes(src: ChunkCounts, dst: ChunkCounts): number {
  let copied = 0;
  for (const [h, n] of src) {
    const m = dst.get(h);
    if (m !== undefined) copied += Math.min(n, m);
  }
  return copied;
}

export interface SimilarityOptions {
  /**
   * The least score the caller will accept (default 50%): files whose sizes differ by more than
   * that allows score 0 without being compared, as git skips them.
   */
  minScore?: number;
}

/** A file to compare: its bytes, and its chunk counts once computed (to reuse across comparisons). */
export interface Sized {
  readonly data: Uint8Array;
  counts?: ChunkCounts;
}

/**
 * git's similarity score of `src` → `dst` (0..MAX_SCORE), the number behind `-M` and
 * `similarity index N%`. Identical content scores MAX_SCORE only through exact-rename detection;
 * this estimate can be lower for identical files (an unfinished last line does not count).
 */
export function similarity(src: Uint8Array, dst: Uint8Array, opts: SimilarityOptions = {}): number {
  return estimate({ data: src }, { data: dst }, opts.minScore ?? DEFAULT_RENAME_SCORE);
}

/** The same, caching each side's chunk counts on the object. */
export function estimate(src: Sized, dst: Sized, minScore: number): number {
  const srcSize = src.data.length;
  const dstSize = dst.data.length;
  const max = Math.max(srcSize, dstSize);
  const delta = max - Math.min(srcSize, dstSize);
  // sizes too far apart for the minimum score (this also handles an empty side)
  if (max * (MAX_SCORE - minScore) < delta * MAX_SCORE) return 0;
  src.counts ??= chunkCounts(src.data);
  dst.counts ??= chunkCounts(dst.data);
  if (dstSize === 0) return 0;
  return Math.floor((copiedBytes(src.counts, dst.counts) * MAX_SCORE) / max);
}

/** The percentage git prints (`similarity index 87%`, `R087`): rounded down. */
export function similarityIndex(score: number): number {
  return Math.floor((score * 100) / MAX_SCORE);
}
