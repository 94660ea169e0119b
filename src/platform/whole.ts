/**
 * Whole-buffer hashing and inflating where the caller is already async: the platform's async
 * provider (WebCrypto, DecompressionStream) for large input, its synchronous one otherwise.
 * Each await of a web API costs a task switch (~50–100 µs in Chromium) and a copy into the
 * browser's memory; the pure hash and pako win below some tens of KiB (measured, see the
 * thresholds). Both paths give identical bytes.
 */
import type { ObjectFormat } from '../hash/index.js';
import type { Platform } from './types.js';

/** Below this many bytes the synchronous hash is used (pure SHA-1 does 64 KiB in ~0.2 ms). */
export const DIGEST_ASYNC_MIN = 64 * 1024;

/** Below this many compressed bytes the synchronous inflate is used. */
export const INFLATE_ASYNC_MIN = 64 * 1024;

/** The hash of all of `data` (the index trailer, a large blob read whole). */
export function digestWhole(platform: Pick<Platform, 'hash' | 'digest'>, format: ObjectFormat, data: Uint8Array): Promise<Uint8Array> {
  if (platform.digest && data.length >= DIGEST_ASYNC_MIN) return platform.digest(format, data);
  return Promise.resolve(platform.hash.create(format).update(data).digest());
}

/** Inflates one zlib stream spanning all of `data` (BAD_ZLIB as `zlib.inflate`). */
export async function inflateWhole(platform: Pick<Platform, 'zlib' | 'inflate'>, data: Uint8Array): Promise<Uint8Array> {
  if (platform.inflate && data.length >= INFLATE_ASYNC_MIN) return platform.inflate(data);
  return platform.zlib.inflate(data);
}
