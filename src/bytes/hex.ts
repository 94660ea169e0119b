import { ScalpelError } from '../errors/index.js';

const HEX = '0123456789abcdef';
const BYTE_HEX: string[] = [];
for (let i = 0; i < 256; i++) BYTE_HEX.push(HEX[i >> 4] + HEX[i & 15]);

export function toHex(bytes: Uint8Array, start = 0, end = bytes.length): string {
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
