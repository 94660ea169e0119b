/** git's test for a binary file when no attribute decides: a NUL byte among the first 8000 bytes. */

const FIRST_FEW_BYTES = 8000;

/** True when git treats `bytes` as binary (prints `Binary files a/x and b/y differ` instead of hunks). */
export function isBinary(bytes: Uint8Array): boolean {
  const n = Math.min(bytes.length, FIRST_FEW_BYTES);
  return bytes.subarray(0, n).indexOf(0) >= 0;
}
