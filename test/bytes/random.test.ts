import { describe, expect, it } from 'vitest';
import { randomBytes, randomHex } from '../../src/bytes/random.js';

describe('random bytes for temp names', () => {
  it('come in the asked length, differ from draw to draw, also across pool refills', () => {
    const seen = new Set<string>();
    for (let i = 0; i < 2000; i++) {
      const h = randomHex(8); // 2000 × 8 bytes: several 4 KiB refills
      expect(h).toMatch(/^[0-9a-f]{16}$/);
      seen.add(h);
    }
    expect(seen.size).toBe(2000);
    expect(randomBytes(4096).length).toBe(4096);
    expect(() => randomBytes(4097)).toThrow(RangeError);
    // copies, not views of the pool
    const a = randomBytes(16);
    const copy = a.slice();
    randomBytes(4096);
    expect(a).toEqual(copy);
  });
});
