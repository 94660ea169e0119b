/**
 * Bounded inflate of one zlib stream that sits at an offset inside a larger buffer (a pack entry's
 * data), fed a chunk at a time. Unlike `ZlibProvider.createInflate()` it
 *
 * - writes into one output buffer sized from the size the pack declares, so a small object costs
 *   one exact allocation instead of a 16 KiB scratch buffer per push;
 * - never produces more than `expected + 1` bytes: a forged or corrupt size can only cost as much
 *   memory as the stream really inflates to (the buffer starts at min(expected + 1, 1 MiB) and
 *   doubles), and a stream longer than declared fails at the first surplus byte;
 * - reports how many input bytes the stream used (`consumed`), so bytes after it are never taken
 *   for part of it.
 *
 * Pure (pako's low-level API, the same one zlib.ts uses); no Node built-ins. z_streams are pooled
 * because pako allocates a 32 KiB window and its tables per stream.
 */
import {
  ZStream,
  zlibInflate,
  zlibInflateEnd,
  zlibInflateInit2,
  zlibInflateReset,
  Z_BUF_ERROR,
  Z_NEED_DICT,
  Z_NO_FLUSH,
  Z_OK,
  Z_STREAM_END,
} from 'pako';
import { ScalpelError } from '../errors/index.js';
import { zlibError } from './zlib.js';

const EMPTY = new Uint8Array(0);
const INITIAL_CAPACITY_MAX = 1 << 20;
const ZLIB_WINDOW_BITS = 15;
const POOL_MAX = 8;
const pool: ZStream[] = [];

function takeStream(): ZStream {
  const s = pool.pop();
  if (s !== undefined) {
    if (zlibInflateReset(s) === Z_OK) return s;
  }
  const strm = new ZStream();
  const status = zlibInflateInit2(strm, ZLIB_WINDOW_BITS);
  if (status !== Z_OK) throw zlibError('internal', `inflateInit2 returned ${status}`);
  return strm;
}

function giveBack(strm: ZStream, reusable: boolean): void {
  strm.input = EMPTY;
  strm.output = EMPTY as Uint8Array<ArrayBuffer>;
  if (reusable && pool.length < POOL_MAX) pool.push(strm);
  else zlibInflateEnd(strm);
}

export interface ExactInflateOptions {
  /**
   * Stop once this many bytes are out (at most `expected`), without reading the rest of the
   * stream or checking its end: for reading the size header at the start of a delta.
   */
  prefix?: number;
}

/**
 * Inflates one zlib stream whose inflated size must be exactly `expected` bytes.
 *
 *   const inf = new ExactInflate(size);
 *   while (!inf.push(nextChunk())) {}
 *   inf.result(); inf.consumed;
 *
 * Errors: BAD_ZLIB (`corrupt`, `needs-dictionary`) for a bad stream; BAD_OBJECT `size-mismatch`
 * when the stream inflates to more or fewer bytes than `expected` (data.expected, data.found).
 * `consumed` counts input bytes up to the end of the stream (after `push` returned true).
 */
export class ExactInflate {
  readonly expected: number;
  private readonly limit: number;
  private readonly prefixMode: boolean;
  private strm: ZStream | undefined;
  private out: Uint8Array<ArrayBuffer>;
  private produced = 0;
  private done = false;
  private failure: ScalpelError | undefined;
  /** Input bytes used so far (up to the end of the stream once `done`). */
  consumed = 0;

  constructor(expected: number, opts: ExactInflateOptions = {}) {
    if (!Number.isSafeInteger(expected) || expected < 0) {
      throw new ScalpelError('BAD_ARGUMENT', `inflate size must be a non-negative integer, got ${expected}`, {
        name: 'expected',
        value: expected,
      });
    }
    this.expected = expected;
    this.prefixMode = opts.prefix !== undefined;
    // One byte of headroom beyond `expected` lets a stream that is too long show itself.
    this.limit = this.prefixMode ? Math.min(expected, Math.max(0, opts.prefix ?? 0)) : expected + 1;
    this.out = new Uint8Array(Math.min(this.limit, INITIAL_CAPACITY_MAX));
    this.strm = takeStream();
    this.strm.output = this.out;
    this.strm.next_out = 0;
    this.strm.avail_out = this.out.length;
    if (this.prefixMode && this.limit === 0) this.finishOk();
  }

  /** True once the stream has ended (or, in prefix mode, once the prefix is out). */
  get ended(): boolean {
    return this.done;
  }

  /** Feeds the next input chunk; returns true when no more input is needed. */
  push(chunk: Uint8Array): boolean {
    if (this.failure) throw this.failure;
    if (this.done) return true;
    const strm = this.strm as ZStream;
    strm.input = chunk;
    strm.next_in = 0;
    strm.avail_in = chunk.length;
    try {
      for (;;) {
        const status = zlibInflate(strm, Z_NO_FLUSH);
        this.produced = strm.next_out;
        if (status === Z_STREAM_END) {
          this.consumed += strm.next_in;
          if (this.produced !== this.expected && !(this.prefixMode && this.produced >= this.limit)) throw this.sizeMismatch(this.produced);
          this.finishOk();
          return true;
        }
        if (status !== Z_OK && status !== Z_BUF_ERROR) {
          throw status === Z_NEED_DICT
            ? zlibError('needs-dictionary', 'stream needs a preset dictionary')
            : zlibError('corrupt', strm.msg || `inflate returned ${status}`);
        }
        if (strm.avail_out === 0) {
          if (this.produced >= this.limit) {
            if (this.prefixMode) {
              this.consumed += strm.next_in;
              this.finishOk();
              return true;
            }
            throw this.sizeMismatch(this.produced, true);
          }
          this.grow();
          continue;
        }
        // Room left for output, so inflate stopped for want of input.
        if (strm.avail_in > 0) throw zlibError('corrupt', 'inflate made no progress');
        this.consumed += chunk.length;
        strm.input = EMPTY;
        strm.avail_in = 0;
        strm.next_in = 0;
        return false;
      }
    } catch (e) {
      this.fail(e);
      throw e;
    }
  }

  /** The inflated bytes (exactly `expected`, or the prefix); only after `push` returned true. */
  result(): Uint8Array {
    if (this.failure) throw this.failure;
    if (!this.done) throw zlibError('truncated', 'stream ends before its end marker');
    return this.out.length === this.produced ? this.out : this.out.subarray(0, this.produced);
  }

  /** Releases the z_stream early when the caller gives up on this inflate (idempotent). */
  abandon(): void {
    if (this.strm !== undefined) {
      giveBack(this.strm, false);
      this.strm = undefined;
    }
  }

  private grow(): void {
    const strm = this.strm as ZStream;
    const cap = Math.min(this.limit, Math.max(this.out.length * 2, 1024));
    const next = new Uint8Array(cap);
    next.set(this.out.subarray(0, this.produced));
    this.out = next;
    strm.output = next;
    strm.next_out = this.produced;
    strm.avail_out = cap - this.produced;
  }

  private sizeMismatch(found: number, atLeast = false): ScalpelError {
    return new ScalpelError(
      'BAD_OBJECT',
      `zlib stream inflates to ${atLeast ? 'more than ' + this.expected : found} bytes, but ${this.expected} were declared`,
      { reason: 'size-mismatch', expected: this.expected, found: atLeast ? `>${this.expected}` : found },
    );
  }

  private finishOk(): void {
    this.done = true;
    if (this.strm !== undefined) {
      giveBack(this.strm, true);
      this.strm = undefined;
    }
  }

  private fail(e: unknown): void {
    this.failure = e instanceof ScalpelError ? e : zlibError('internal', String(e));
    if (this.strm !== undefined) {
      giveBack(this.strm, false);
      this.strm = undefined;
    }
  }
}

/** Inflates the stream at the start of `bytes` (bytes after it are ignored); see ExactInflate. */
export function inflateExact(bytes: Uint8Array, expected: number): { data: Uint8Array; consumed: number } {
  const inf = new ExactInflate(expected);
  if (!inf.push(bytes)) {
    inf.abandon();
    throw zlibError('truncated', 'stream ends before its end marker');
  }
  return { data: inf.result(), consumed: inf.consumed };
}
