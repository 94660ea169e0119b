/**
 * The browser platform: pure JS (@noble/hashes, pako) for everything synchronous, small or
 * streamed, plus what the web offers natively for whole buffers: `crypto.subtle.digest` for
 * hashing (the index trailer, a large blob) and DecompressionStream for inflating. Detected when
 * `webPlatform()` is called, never installed anywhere. Works in any runtime with those globals
 * (Node has both too), and degrades to the pure platform where they are missing.
 */
import { pureHash, type ObjectFormat } from '../hash/index.js';
import { pakoZlib, zlibError } from '../object/zlib.js';
import type { Platform } from './types.js';
import { concatBytes } from '../bytes/compare.js';

interface WebGlobals {
  crypto?: { subtle?: { digest?(algorithm: string, data: BufferSource): Promise<ArrayBuffer> } };
  DecompressionStream?: new (format: 'deflate') => { readable: ReadableStream<Uint8Array>; writable: WritableStream<BufferSource> };
}

/** `crypto.subtle.digest` as the platform's whole-buffer digest (same bytes as the pure hash). */
export async function webDigest(format: ObjectFormat, data: Uint8Array): Promise<Uint8Array> {
  const subtle = (globalThis as WebGlobals).crypto?.subtle;
  if (!subtle?.digest) throw zlibLessError('crypto.subtle.digest');
  return new Uint8Array(await subtle.digest(format === 'sha256' ? 'SHA-256' : 'SHA-1', data as Uint8Array<ArrayBuffer>));
}

/**
 * One zlib stream inflated by DecompressionStream('deflate') (RFC 1950, as git writes). Its errors
 * are TypeErrors with engine-specific messages; they become BAD_ZLIB with the reason pako gives
 * for the same input (a preset dictionary is checked first: the stream only says "corrupt").
 */
export async function webInflate(data: Uint8Array): Promise<Uint8Array> {
  const DS = (globalThis as WebGlobals).DecompressionStream;
  if (!DS) throw zlibLessError('DecompressionStream');
  if (data.length < 2) throw zlibError('truncated', 'stream ends before its end marker');
  if (data[1] & 0x20 && ((data[0] << 8) | data[1]) % 31 === 0) throw zlibError('needs-dictionary', 'stream needs a preset dictionary');
  const ds = new DS('deflate');
  const writer = ds.writable.getWriter();
  // failures surface on the readable side; these promises only must not go unhandled
  writer.write(data as Uint8Array<ArrayBuffer>).catch(() => undefined);
  writer.close().catch(() => undefined);
  // read by hand, not through Response#arrayBuffer, which turns every failure into "Failed to fetch"
  const reader = ds.readable.getReader();
  const chunks: Uint8Array[] = [];
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      chunks.push(value);
    }
  } catch (e) {
    const detail = e instanceof Error ? e.message : String(e);
    if (/junk|trailing|after the end|after end/i.test(detail)) throw zlibError('trailing-data', detail);
    if (/truncat|unexpected end|incomplete/i.test(detail)) throw zlibError('truncated', detail);
    throw zlibError('corrupt', detail);
  }
  return chunks.length === 1 ? chunks[0] : concatBytes(chunks);
}

function zlibLessError(what: string): Error {
  return new TypeError(`${what} is not available in this runtime`);
}

/** The best platform the web globals of this runtime offer (see the module comment). */
export function webPlatform(): Platform {
  const g = globalThis as WebGlobals;
  const hasDigest = typeof g.crypto?.subtle?.digest === 'function';
  const hasInflate = typeof g.DecompressionStream === 'function';
  return Object.freeze({
    name: 'web',
    hash: pureHash,
    zlib: pakoZlib,
    ...(hasDigest ? { digest: webDigest } : {}),
    ...(hasInflate ? { inflate: webInflate } : {}),
  });
}
