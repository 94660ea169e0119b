/**
 * EWAH bitmaps as git serialises them in the index (ewah/ewah_io.c, ewah/ewah_bitmap.c).
 *
 * Serialised form (all big-endian):
 *   u32 bit_size | u32 N (number of 64-bit words) | N × u64 words | u32 rlw (index of the last
 *   run-length word)
 *
 * The word stream is a sequence of groups: one run-length word (RLW), then its literal words.
 * An RLW holds, from the least significant bit: 1 run bit, a 32-bit run length (in words of all
 * run-bit values), a 31-bit literal count (how many verbatim 64-bit words follow). Bit k of the
 * bitmap is bit (k % 64) of the (k / 64)-th uncompressed word.
 *
 * git builds every index bitmap by calling `ewah_set` with increasing positions starting from
 * `ewah_new()`; `encodeEwah` reproduces that construction exactly, so a bitmap git wrote and we
 * rebuild from its bits is byte-identical.
 */
import { ByteWriter } from '../bytes/writer.js';
import { readU32 } from '../bytes/reader.js';
import { ScalpelError } from '../errors/index.js';
import type { EwahBitmap } from './types.js';

const MAX_RUN = 0xffffffff; // RLW_LARGEST_RUNNING_COUNT
const MAX_LIT = 0x7fffffff; // RLW_LARGEST_LITERAL_COUNT
const TWO31 = 0x80000000;
const U32_MAX = 0xffffffff;

/** Default cap on how many set bits one bitmap may expand to (runs of ones are cheap to forge). */
export const DEFAULT_MAX_SET_BITS = 1 << 24;

export interface EwahDecodeOptions {
  /**
   * Every set position must be below this (exclusive). Default: the bitmap's own `bit_size`.
   * git's `ewah_read_mmap` does not compare set bits with bit_size, and git's own writer never
   * sets a bit at or past it (`ewah_set` makes bit_size = last + 1); what git's consumers check
   * is the position against the table the bits index (cache_nr, the untracked dir count).
   * Callers that know that table size pass it here to mirror git exactly.
   */
  limit?: number;
  /** Cap on the number of set bits materialised (default 2^24). */
  maxSetBits?: number;
}

function bad(offset: number, what: string, reason: string, message: string, extra: Record<string, unknown> = {}): ScalpelError {
  return new ScalpelError('BAD_EWAH', `${what}: corrupt ewah bitmap: ${message} (byte ${offset})`, { offset, reason, what, ...extra });
}

/**
 * Read one serialised EWAH bitmap starting at `start`, never reading at or past `end`.
 * Returns the bitmap (ascending set positions, plus a copy of the serialised bytes in `raw`)
 * and the offset just after it. Errors are `BAD_EWAH` with the absolute byte offset.
 *
 * Checks, in git's order: eof before bit size / length / data / rlw (the word count is checked
 * against the bytes left before anything is allocated). Then, where git has no check but would
 * read out of bounds or misbehave: rlw position < word count (when there are words); every
 * run-length word's literal count fits in the remaining words; set positions < limit; set bit
 * count <= maxSetBits.
 */
export function decodeEwah(
  bytes: Uint8Array,
  start: number,
  end: number,
  what: string,
  opts: EwahDecodeOptions = {},
): { bitmap: EwahBitmap; next: number } {
  if (end > bytes.length) end = bytes.length;
  if (!(start >= 0) || end - start < 4) throw bad(start, what, 'eof-before-bit-size', 'eof before bit size');
  const bitSize = readU32(bytes, start);
  if (end - start - 4 < 4) throw bad(start + 4, what, 'eof-before-length', 'eof before length');
  const n = readU32(bytes, start + 4);
  const dataStart = start + 8;
  const left = end - dataStart;
  if (n * 8 > left) {
    throw bad(start + 4, what, 'eof-in-data', `${n} words need ${n * 8} bytes, ${left} left`, { words: n, need: n * 8, left });
  }
  const rlwAt = dataStart + n * 8;
  if (end - rlwAt < 4) throw bad(rlwAt, what, 'eof-before-rlw', 'eof before rlw');
  const rlw = readU32(bytes, rlwAt);
  if (n > 0 && rlw >= n)
    throw bad(rlwAt, what, 'rlw-out-of-range', `rlw position ${rlw} is not below the word count ${n}`, { rlw, words: n });

  const limit = opts.limit ?? bitSize;
  const maxSetBits = opts.maxSetBits ?? DEFAULT_MAX_SET_BITS;
  const bits: number[] = [];
  let pos = 0; // bit position of the next uncompressed word
  let p = 0;
  while (p < n) {
    const off = dataStart + p * 8;
    const hi = readU32(bytes, off);
    const lo = readU32(bytes, off + 4);
    const runBit = lo & 1;
    const runLen = (lo >>> 1) + (hi & 1) * TWO31;
    const lit = hi >>> 1;
    if (lit > n - p - 1) {
      throw bad(off, what, 'literal-overrun', `run-length word ${p} announces ${lit} literal words, only ${n - p - 1} follow`, {
        word: p,
        literals: lit,
      });
    }
    if (runLen > 0) {
      const runBits = runLen * 64;
      if (runBit) {
        if (pos + runBits > limit) {
          throw bad(off, what, 'bit-out-of-range', `run of ones up to bit ${pos + runBits - 1} reaches past ${limit}`, {
            bit: pos + runBits - 1,
            limit,
          });
        }
        if (bits.length + runBits > maxSetBits)
          throw bad(off, what, 'too-many-bits', `more than ${maxSetBits} set bits`, { max: maxSetBits });
        for (let k = 0; k < runBits; k++) bits.push(pos + k);
      }
      pos += runBits;
    }
    p++;
    for (let k = 0; k < lit; k++, p++, pos += 64) {
      const woff = dataStart + p * 8;
      let x = readU32(bytes, woff + 4) | 0;
      let base = pos;
      for (let half = 0; half < 2; half++) {
        while (x !== 0) {
          const t = x & -x;
          const q = base + 31 - Math.clz32(t);
          if (q >= limit) throw bad(woff, what, 'bit-out-of-range', `bit ${q} is not below ${limit}`, { bit: q, limit });
          if (bits.length >= maxSetBits) throw bad(woff, what, 'too-many-bits', `more than ${maxSetBits} set bits`, { max: maxSetBits });
          bits.push(q);
          x ^= t;
        }
        x = readU32(bytes, woff) | 0;
        base = pos + 32;
      }
    }
  }
  const next = rlwAt + 4;
  return { bitmap: { bitSize, bits, raw: bytes.slice(start, next) }, next };
}

/** A bitmap of `bitSize` bits with the given set positions (strictly ascending, each < bitSize). */
export function ewahFromBits(bitSize: number, bits: readonly number[]): EwahBitmap {
  if (!Number.isInteger(bitSize) || bitSize < 0 || bitSize > U32_MAX) {
    throw new ScalpelError('BAD_ARGUMENT', `ewah bit size ${bitSize} is not a 32-bit unsigned integer`, {
      name: 'bitSize',
      reason: 'not-u32',
      value: bitSize,
    });
  }
  checkBits(bits);
  if (bits.length > 0 && bits[bits.length - 1] >= bitSize) {
    throw new ScalpelError('BAD_ARGUMENT', `ewah bit ${bits[bits.length - 1]} is not below the bit size ${bitSize}`, {
      name: 'bits',
      reason: 'bit-beyond-size',
      value: bits[bits.length - 1],
    });
  }
  return { bitSize, bits: bits.slice() };
}

function checkBits(bits: readonly number[]): void {
  let prev = -1;
  for (let i = 0; i < bits.length; i++) {
    const b = bits[i];
    if (!Number.isInteger(b) || b <= prev || b >= U32_MAX) {
      throw new ScalpelError('BAD_ARGUMENT', `ewah bits must be strictly ascending integers in [0, 2^32-1): bits[${i}] = ${b}`, {
        name: 'bits',
        reason: 'not-ascending',
        index: i,
        value: b,
      });
    }
    prev = b;
  }
}

/**
 * Write `bm` in git's serialised form.
 *
 * `raw` is written verbatim when it is present and still says the same thing: it is decoded
 * again (one linear pass) and used only if it is exactly one well-formed bitmap whose bit_size
 * and set bits equal `bm.bitSize` / `bm.bits`. So editing `bits` without clearing `raw` is safe.
 * Otherwise the canonical form is built as git does: `ewah_new()` + `ewah_set` for each bit in
 * increasing order, then `ewah_serialize`; the bit_size field is `bm.bitSize` (git's own bitmaps
 * have bitSize = last bit + 1, or 0 when empty).
 */
export function encodeEwah(w: ByteWriter, bm: EwahBitmap): void {
  if (bm.raw !== undefined && rawMatches(bm)) {
    w.bytes(bm.raw);
    return;
  }
  if (!Number.isInteger(bm.bitSize) || bm.bitSize < 0 || bm.bitSize > U32_MAX) {
    throw new ScalpelError('BAD_ARGUMENT', `ewah bit size ${bm.bitSize} is not a 32-bit unsigned integer`, {
      name: 'bitSize',
      reason: 'not-u32',
      value: bm.bitSize,
    });
  }
  checkBits(bm.bits);
  const b = new Builder();
  for (const i of bm.bits) b.set(i);
  const n = b.H.length;
  w.ensure(12 + n * 8);
  w.u32(bm.bitSize);
  w.u32(n);
  for (let k = 0; k < n; k++) {
    w.u32(b.H[k]);
    w.u32(b.L[k]);
  }
  w.u32(b.rlw);
}

/** Serialise to a fresh byte array. */
export function ewahToBytes(bm: EwahBitmap): Uint8Array {
  const w = new ByteWriter(12 + bm.bits.length);
  encodeEwah(w, bm);
  return w.finish().slice();
}

function rawMatches(bm: EwahBitmap): boolean {
  const raw = bm.raw!;
  try {
    const { bitmap, next } = decodeEwah(raw, 0, raw.length, 'raw', { limit: Infinity, maxSetBits: bm.bits.length });
    if (next !== raw.length || bitmap.bitSize !== bm.bitSize || bitmap.bits.length !== bm.bits.length) return false;
    const a = bitmap.bits;
    const c = bm.bits;
    for (let i = 0; i < a.length; i++) if (a[i] !== c[i]) return false;
    return true;
  } catch {
    return false;
  }
}

/**
 * A port of the parts of git's ewah_bitmap.c that `ewah_set` uses, on 64-bit words held as two
 * unsigned 32-bit halves (H = high, L = low). `rlw` is the index of the current run-length word.
 */
class Builder {
  H: number[] = [0];
  L: number[] = [0];
  rlw = 0;
  bitSize = 0;

  private runBit(i: number): number {
    return this.L[i] & 1;
  }
  private runLen(i: number): number {
    return (this.L[i] >>> 1) + (this.H[i] & 1) * TWO31;
  }
  private lits(i: number): number {
    return this.H[i] >>> 1;
  }
  private setRunBit(i: number, v: number): void {
    this.L[i] = ((this.L[i] & ~1) | v) >>> 0;
  }
  private setRunLen(i: number, len: number): void {
    this.L[i] = ((this.L[i] & 1) | ((len % TWO31) << 1)) >>> 0;
    this.H[i] = ((this.H[i] & ~1) | Math.floor(len / TWO31)) >>> 0;
  }
  private setLits(i: number, n: number): void {
    this.H[i] = ((this.H[i] & 1) | (n << 1)) >>> 0;
  }
  private push(h: number, l: number): void {
    this.H.push(h);
    this.L.push(l);
  }
  private pushRlw(): void {
    this.push(0, 0);
    this.rlw = this.H.length - 1;
  }

  /** add_empty_words (static: does not touch bit_size). */
  private addEmptyWords(v: number, number: number): void {
    const r = this.rlw;
    if (this.runBit(r) !== v && this.runLen(r) + this.lits(r) === 0) {
      this.setRunBit(r, v);
    } else if (this.lits(r) !== 0 || this.runBit(r) !== v) {
      this.pushRlw();
      if (v) this.setRunBit(this.rlw, v);
    }
    const runlen = this.runLen(this.rlw);
    const canAdd = Math.min(number, MAX_RUN - runlen);
    this.setRunLen(this.rlw, runlen + canAdd);
    number -= canAdd;
    while (number >= MAX_RUN) {
      this.pushRlw();
      if (v) this.setRunBit(this.rlw, v);
      this.setRunLen(this.rlw, MAX_RUN);
      number -= MAX_RUN;
    }
    if (number > 0) {
      this.pushRlw();
      if (v) this.setRunBit(this.rlw, v);
      this.setRunLen(this.rlw, number);
    }
  }

  private addLiteral(h: number, l: number): void {
    const cur = this.lits(this.rlw);
    if (cur >= MAX_LIT) {
      this.pushRlw();
      this.setLits(this.rlw, 1);
      this.push(h, l);
      return;
    }
    this.setLits(this.rlw, cur + 1);
    this.push(h, l);
  }

  private addEmptyWord(v: number): void {
    const r = this.rlw;
    const noLiteral = this.lits(r) === 0;
    const runLen = this.runLen(r);
    if (noLiteral && runLen === 0) this.setRunBit(r, v);
    if (noLiteral && this.runBit(r) === v && runLen < MAX_RUN) {
      this.setRunLen(r, runLen + 1);
      return;
    }
    this.pushRlw();
    this.setRunBit(this.rlw, v);
    this.setRunLen(this.rlw, 1);
  }

  /** ewah_set(i); i must be >= bitSize. */
  set(i: number): void {
    const dist = Math.floor((i + 64) / 64) - Math.floor((this.bitSize + 63) / 64);
    this.bitSize = i + 1;
    const b = i % 64;
    const h = b >= 32 ? (1 << (b - 32)) >>> 0 : 0;
    const l = b < 32 ? (1 << b) >>> 0 : 0;
    if (dist > 0) {
      if (dist > 1) this.addEmptyWords(0, dist - 1);
      this.addLiteral(h, l);
      return;
    }
    if (this.lits(this.rlw) === 0) {
      // unreachable for increasing positions from ewah_new(); kept for fidelity
      this.setRunLen(this.rlw, Math.max(0, this.runLen(this.rlw) - 1));
      this.addLiteral(h, l);
      return;
    }
    const last = this.H.length - 1;
    this.H[last] = (this.H[last] | h) >>> 0;
    this.L[last] = (this.L[last] | l) >>> 0;
    if (this.H[last] === U32_MAX && this.L[last] === U32_MAX) {
      // a stream of ones is complete: turn the literal into a run
      this.H.pop();
      this.L.pop();
      this.setLits(this.rlw, this.lits(this.rlw) - 1);
      this.addEmptyWord(1);
    }
  }
}
