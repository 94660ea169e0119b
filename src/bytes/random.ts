/**
 * Random bytes for temp-file names (not for secrets): `crypto.getRandomValues` where the runtime
 * has it (every browser and Node), else Math.random. Drawn from a pool filled 4 KiB at a time: a
 * whole-tree snapshot names some fifty temp files, and one getRandomValues call costs about what
 * filling the pool costs.
 */
import { toHex } from './hex.js';

const POOL_SIZE = 4096;
let pool: Uint8Array | null = null;
let used = POOL_SIZE;

function refill(): Uint8Array {
  pool ??= new Uint8Array(POOL_SIZE);
  const c = (globalThis as { crypto?: { getRandomValues?(a: Uint8Array): Uint8Array } }).crypto;
  if (c && typeof c.getRandomValues === 'function') c.getRandomValues(pool);
  else for (let i = 0; i < POOL_SIZE; i++) pool[i] = Math.floor(Math.random() * 256);
  used = 0;
  return pool;
}

/** `n` random bytes (n ≤ 4096), copied out of the pool. */
export function randomBytes(n: number): Uint8Array {
  if (n > POOL_SIZE) throw new RangeError(`randomBytes: at most ${POOL_SIZE} bytes, asked for ${n}`);
  let p = pool;
  if (p === null || used + n > POOL_SIZE) p = refill();
  const out = p.slice(used, used + n);
  used += n;
  return out;
}

/** `n` random bytes as lowercase hex. */
export function randomHex(n = 8): string {
  return toHex(randomBytes(n));
}
