/**
 * Injected zlib: a call that passes no provider uses `pakoZlib` (pure JS, a constant); the
 * platform (src/platform/) brings node:zlib in Node (see node-zlib.ts). Every provider reads and writes the zlib format (RFC 1950: header, deflate
 * data, adler32) that git's loose objects use, never raw deflate or gzip.
 *
 * Byte identity, measured with Node 20.20 (zlib 1.3.1 from Chromium) and pako 3.0.3 on x64:
 * - `pakoZlib` and node:zlib deflate to identical bytes at every level -1..9 (pako's default
 *   hash is the one Chromium's zlib uses).
 * - `pakoClassicZlib` (pako's `legacyHash`) deflates to the bytes canonical zlib writes, which is
 *   what a git linked against stock zlib writes for a loose object.
 * Object ids never depend on this: they hash the inflated bytes.
 */
import {
  deflate as pakoDeflate,
  ZStream,
  zlibInflate,
  zlibInflateEnd,
  zlibInflateInit2,
  Z_BUF_ERROR,
  Z_NEED_DICT,
  Z_NO_FLUSH,
  Z_OK,
  Z_STREAM_END,
} from 'pako';
import { concatBytes } from '../bytes/index.js';
import { ScalpelError } from '../errors/index.js';

import type { InflateStream, ZlibProvider } from '../platform/types.js';

export type { InflateStream, ZlibProvider };

/** Reasons carried in BAD_ZLIB's `data.reason`. */
export type ZlibFailure = 'corrupt' | 'truncated' | 'trailing-data' | 'needs-dictionary' | 'internal';

/** git's `core.loosecompression` default (Z_BEST_SPEED). */
export const LOOSE_COMPRESSION_DEFAULT = 1;

export function zlibError(reason: ZlibFailure, detail: string): ScalpelError {
  return new ScalpelError('BAD_ZLIB', `zlib: ${detail}`, { reason, detail });
}

/** Throws BAD_ARGUMENT unless `level` is an integer in -1..9. */
export function checkLevel(level: number): number {
  if (!Number.isInteger(level) || level < -1 || level > 9) {
    throw new ScalpelError('BAD_ARGUMENT', `compression level must be an integer from -1 to 9, got ${level}`, {
      name: 'level',
      value: level,
      reason: 'out-of-range',
    });
  }
  return level;
}

const EMPTY = new Uint8Array(0);
const MIN_OUT = 16 * 1024;
const MAX_OUT = 1024 * 1024;
/** zlib-only window (15 bits); pako would otherwise also accept gzip. */
const ZLIB_WINDOW_BITS = 15;

class PakoInflateStream implements InflateStream {
  private readonly strm = new ZStream();
  private failure: ScalpelError | undefined;
  ended = false;
  trailing = 0;

  constructor() {
    const status = zlibInflateInit2(this.strm, ZLIB_WINDOW_BITS);
    if (status !== Z_OK) throw zlibError('internal', `inflateInit2 returned ${status}`);
  }

  push(chunk: Uint8Array): Uint8Array {
    if (this.failure) throw this.failure;
    if (this.ended) {
      this.trailing += chunk.length;
      return EMPTY;
    }
    const strm = this.strm;
    strm.input = chunk;
    strm.next_in = 0;
    strm.avail_in = chunk.length;
    const out: Uint8Array[] = [];
    let size = Math.min(MAX_OUT, Math.max(MIN_OUT, chunk.length * 4));
    for (;;) {
      const buf = new Uint8Array(size);
      strm.output = buf;
      strm.next_out = 0;
      strm.avail_out = size;
      const status = zlibInflate(strm, Z_NO_FLUSH);
      if (strm.next_out > 0) out.push(strm.next_out === size ? buf : buf.subarray(0, strm.next_out));
      if (status === Z_STREAM_END) {
        this.ended = true;
        this.trailing = strm.avail_in;
        zlibInflateEnd(strm);
        break;
      }
      if (status === Z_OK && strm.avail_out === 0) {
        size = Math.min(MAX_OUT, size * 2);
        continue;
      }
      // Z_OK with room left means all input was consumed; Z_BUF_ERROR means no progress is possible without more input.
      if (status === Z_OK || status === Z_BUF_ERROR) break;
      this.failure =
        status === Z_NEED_DICT
          ? zlibError('needs-dictionary', 'stream needs a preset dictionary')
          : zlibError('corrupt', strm.msg || `inflate returned ${status}`);
      throw this.failure;
    }
    strm.input = EMPTY;
    return out.length === 1 ? out[0] : concatBytes(out);
  }

  finish(): void {
    if (this.failure) throw this.failure;
    if (!this.ended) throw zlibError('truncated', 'stream ends before its end marker');
    if (this.trailing > 0) throw zlibError('trailing-data', `${this.trailing} bytes after the end of the stream`);
  }
}

function makePakoZlib(name: string, legacyHash: boolean): ZlibProvider {
  return Object.freeze({
    name,
    deflate(data: Uint8Array, level: number): Uint8Array {
      return pakoDeflate(data, { level: checkLevel(level), legacyHash });
    },
    inflate(data: Uint8Array): Uint8Array {
      const s = new PakoInflateStream();
      const out = s.push(data);
      s.finish();
      return out;
    },
    createInflate(): InflateStream {
      return new PakoInflateStream();
    },
  });
}

/** Pure JS (pako); deflates to the same bytes as node:zlib in Node 20. */
export const pakoZlib: ZlibProvider = makePakoZlib('pako', false);

/** Pure JS (pako) with canonical zlib's hash: deflates to the bytes stock zlib (and so git) writes. */
export const pakoClassicZlib: ZlibProvider = makePakoZlib('pako-classic', true);

/**
 * @deprecated Pass a provider (`zlib` or `platform` options) instead; a call that passes none uses
 * `pakoZlib`. Kept so that callers written against the old module default compile; it returns the
 * pure constant and nothing can change it.
 */
export function defaultZlib(): ZlibProvider {
  return pakoZlib;
}
