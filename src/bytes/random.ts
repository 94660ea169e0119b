/**
 * Random bytes for names that must differ, not stay secret: temp files (each created exclusively,
 * so a clash is an error to retry, never a file taken over) and snapshot ids. From Math.random,
 * which every JavaScript engine seeds per process from the system's entropy: reaching for
 * `crypto.getRandomValues` instead cost a fresh Node.js process 7–11 ms, the lazy loading of its
 * WebCrypto, in every snapshot and restore.
 */
import { toHex } from './hex.js';

/** Temp names take a few bytes; a bound catches a caller that meant something else. */
const MAX = 4096;

/** `n` random bytes (n ≤ 4096), in a fresh array. */
export function randomBytes(n: number): Uint8Array {
  if (n > MAX) throw new RangeError(`randomBytes: at most ${MAX} bytes, asked for ${n}`);
  const out = new Uint8Array(n);
  for (let i = 0; i < n; i++) out[i] = (Math.random() * 256) | 0;
  return out;
}

/** `n` random bytes as lowercase hex. */
export function randomHex(n = 8): string {
  return toHex(randomBytes(n));
}
