import { ScalpelError } from '../errors/index.js';

const HEX = '0123456789abcdef';
const BYTE_HEX: string[] = [];
for (let i = 0; i < 256; i++) BYTE_HEX.push(HEX[i >> 4] + HEX[i & 15]);

/** Character codes of each byte's two hex digits, at 2*byte and 2*byte+1. */
const HEX_CODES = new Uint8Array(512);
for (let i = 0; i < 256; i++) {
  HEX_CODES[2 * i] = HEX.charCodeAt(i >> 4);
  HEX_CODES[2 * i + 1] = HEX.charCodeAt(i & 15);
}
/** Reused code arrays for the two id lengths (SHA-1, SHA-256); fromCharCode never re-enters. */
const CODES_40: number[] = new Array<number>(40).fill(0);
const CODES_64: number[] = new Array<number>(64).fill(0);

export function toHex(bytes: Uint8Array, start = 0, end = bytes.length): string {
  const n = (end - start) * 2;
  if (n === 40 || n === 64) {
    // object ids: one string made from the digit codes (concatenating 20 or 32 pairs makes as
    // many intermediate strings, flattened later: about twice the time)
    const codes = n === 40 ? CODES_40 : CODES_64;
    for (let i = start, k = 0; i < end; i++) {
      const v = bytes[i] * 2;
      codes[k++] = HEX_CODES[v];
      codes[k++] = HEX_CODES[v + 1];
    }
    return String.fromCharCode.apply(null, codes);
  }
  let s = '';
  for (let i = start; i < end; i++) s += BYTE_HEX[bytes[i]];
  return s;
}

function nibble(c: number): number {
  if (c >= 48 && c <= 57) return c - 48;
  if (c >= 97 && c <= 102) return c - 87;
  if (c >= 65 && c <= 70) return c - 55;
  return -1;
}

export function fromHex(hex: string): Uint8Array {
  if (hex.length % 2 !== 0) throw new ScalpelError('BAD_ARGUMENT', `not a hex string: ${JSON.stringify(hex)}`, { name: 'hex', value: hex });
  const out = new Uint8Array(hex.length / 2);
  for (let i = 0; i < out.length; i++) {
    const hi = nibble(hex.charCodeAt(2 * i));
    const lo = nibble(hex.charCodeAt(2 * i + 1));
    if (hi < 0 || lo < 0) throw new ScalpelError('BAD_ARGUMENT', `not a hex string: ${JSON.stringify(hex)}`, { name: 'hex', value: hex });
    out[i] = (hi << 4) | lo;
  }
  return out;
}

/** Parse hex into `out` (exactly out.length bytes) without allocating; false when `s` is not hex of that length. */
export function hexInto(s: string, out: Uint8Array): boolean {
  if (s.length !== out.length * 2) return false;
  for (let i = 0; i < out.length; i++) {
    const hi = nibble(s.charCodeAt(2 * i));
    const lo = nibble(s.charCodeAt(2 * i + 1));
    if (hi < 0 || lo < 0) return false;
    out[i] = (hi << 4) | lo;
  }
  return true;
}

export function isHex(s: string, len?: number): boolean {
  if (len !== undefined && s.length !== len) return false;
  if (s.length % 2) return false;
  for (let i = 0; i < s.length; i++) if (nibble(s.charCodeAt(i)) < 0) return false;
  return true;
}
