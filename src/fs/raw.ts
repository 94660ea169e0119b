/**
 * The promise fs API a caller hands over (a node-style module's `.promises`, memfs, an
 * isomorphic-git-style promise fs), as the adapter and the probes call it: untyped methods,
 * found by name.
 */
import { utf8Encode } from '../bytes/text.js';

/**
 * How names that are not UTF-8 (strings with U+DC80..U+DCFF escapes, see bytes/text.ts) reach
 * the underlying fs:
 * - 'bytes': as Uint8Array paths, and readdir/readlink ask for `encoding: 'buffer'` (node:fs).
 * - 'strings': the escaped string is passed as is; the fs stores JS strings and gives the same
 *   string back (memfs, lightning-fs). Raw bytes cannot be produced on disk there, but names
 *   round-trip through it.
 * - 'utf8': neither works (or not probed): such names are refused with UNSUPPORTED.
 */
export type PathMode = 'bytes' | 'strings' | 'utf8';

export type RawFn = (...args: unknown[]) => Promise<unknown>;
export type RawFs = Record<string, unknown>;

export function isFn(raw: RawFs, k: string): boolean {
  return typeof raw[k] === 'function';
}

/** The promise API of `input` (its `.promises` with readFile, or `input` itself when it has readFile), or undefined when it is not one. */
export function promiseApi(input: unknown): RawFs | undefined {
  if (!input || (typeof input !== 'object' && typeof input !== 'function')) return undefined;
  const o = input as RawFs;
  const p = o.promises as RawFs | undefined;
  if (p && typeof p === 'object' && isFn(p, 'readFile')) return p;
  if (isFn(o, 'readFile')) return o;
  return undefined;
}

/** What a read gave back (a Buffer, any typed array, a string) as bytes; undefined for anything else. */
export function toBytes(v: unknown): Uint8Array | undefined {
  if (v instanceof Uint8Array) return new Uint8Array(v.buffer, v.byteOffset, v.byteLength);
  if (v instanceof ArrayBuffer) return new Uint8Array(v);
  if (ArrayBuffer.isView(v)) return new Uint8Array(v.buffer, v.byteOffset, v.byteLength);
  if (typeof v === 'string') return utf8Encode(v);
  return undefined;
}
