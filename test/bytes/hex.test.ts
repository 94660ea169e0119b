import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { fromHex, toHex } from '../../src/bytes/hex.js';

/** The plain definition: two lowercase digits per byte. */
function reference(b: Uint8Array, start: number, end: number): string {
  return Array.from(b.subarray(start, end), (x) => x.toString(16).padStart(2, '0')).join('');
}

describe('toHex', () => {
  it('equals two lowercase digits per byte, for id lengths (20, 32) and any other, at any offset', () => {
    fc.assert(
      fc.property(fc.uint8Array({ minLength: 0, maxLength: 80 }), fc.nat(), fc.constantFrom(20, 32, 0, 1, 19, 21, 31, 33), (b, at, len) => {
        const start = b.length ? at % (b.length + 1) : 0;
        const end = Math.min(b.length, start + len);
        expect(toHex(b, start, end)).toBe(reference(b, start, end));
      }),
      { numRuns: 500 },
    );
  });

  it('every byte value in both positions of an id, and ids made one after another stay apart', () => {
    const all = Uint8Array.from({ length: 256 }, (_, i) => i);
    const ids: string[] = [];
    for (let at = 0; at + 20 <= 256; at += 4) ids.push(toHex(all, at, at + 20));
    for (let at = 0; at + 32 <= 256; at += 8) ids.push(toHex(all, at, at + 32));
    let k = 0;
    for (let at = 0; at + 20 <= 256; at += 4) expect(ids[k++]).toBe(reference(all, at, at + 20));
    for (let at = 0; at + 32 <= 256; at += 8) expect(ids[k++]).toBe(reference(all, at, at + 32));
    expect(fromHex(toHex(all))).toEqual(all);
  });
});
