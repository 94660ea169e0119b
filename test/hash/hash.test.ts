import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { toHex, utf8Encode } from '../../src/bytes/index.js';
import { nodeHash } from '../../src/hash/node-crypto.js';
import { hashBytes, pureHash, type HashProvider, type ObjectFormat } from '../../src/hash/index.js';

const providers: HashProvider[] = [pureHash, nodeHash];
const millionA = new Uint8Array(1_000_000).fill(0x61);

/** FIPS 180 / NIST vectors: "", "abc", one million "a". */
const vectors: { format: ObjectFormat; input: Uint8Array; hex: string }[] = [
  { format: 'sha1', input: new Uint8Array(0), hex: 'da39a3ee5e6b4b0d3255bfef95601890afd80709' },
  { format: 'sha1', input: utf8Encode('abc'), hex: 'a9993e364706816aba3e25717850c26c9cd0d89d' },
  { format: 'sha1', input: millionA, hex: '34aa973cd4c4daa4f61eeb2bdbad27316534016f' },
  { format: 'sha256', input: new Uint8Array(0), hex: 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855' },
  { format: 'sha256', input: utf8Encode('abc'), hex: 'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad' },
  { format: 'sha256', input: millionA, hex: 'cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0' },
];

describe.each(providers)('hash provider $name', (provider) => {
  it.each(vectors)('$format of $input.length bytes', ({ format, input, hex }) => {
    expect(toHex(hashBytes(format, input, provider))).toBe(hex);
  });

  it('returns a plain 20/32-byte Uint8Array', () => {
    for (const [format, len] of [
      ['sha1', 20],
      ['sha256', 32],
    ] as const) {
      const d = hashBytes(format, utf8Encode('x'), provider);
      expect(d).toBeInstanceOf(Uint8Array);
      expect(d.length).toBe(len);
      expect(Object.getPrototypeOf(d)).toBe(Uint8Array.prototype);
    }
  });

  it('incremental updates equal one shot', () => {
    fc.assert(
      fc.property(
        fc.uint8Array({ maxLength: 3000 }),
        fc.array(fc.nat(), { maxLength: 6 }),
        fc.constantFrom<ObjectFormat>('sha1', 'sha256'),
        (data, cuts, format) => {
          const points = [...new Set(cuts.map((c) => c % (data.length + 1)))].sort((a, b) => a - b);
          const state = provider.create(format);
          let prev = 0;
          for (const p of [...points, data.length]) {
            state.update(data.subarray(prev, p));
            prev = p;
          }
          expect(toHex(state.digest())).toBe(toHex(hashBytes(format, data, provider)));
        },
      ),
      { numRuns: 200 },
    );
  });
});

describe('pure and node providers agree', () => {
  it('on 1 MiB of varied bytes and on random inputs', () => {
    const big = new Uint8Array(1 << 20);
    for (let i = 0; i < big.length; i++) big[i] = (i * 2654435761) >>> 24;
    for (const format of ['sha1', 'sha256'] as const) {
      expect(toHex(hashBytes(format, big, nodeHash))).toBe(toHex(hashBytes(format, big, pureHash)));
    }
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 2000 }), (data) => {
        expect(toHex(hashBytes('sha1', data, nodeHash))).toBe(toHex(hashBytes('sha1', data, pureHash)));
        expect(toHex(hashBytes('sha256', data, nodeHash))).toBe(toHex(hashBytes('sha256', data, pureHash)));
      }),
      { numRuns: 200 },
    );
  });
});
