import { execFileSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { randomBytes, randomHex } from '../../src/bytes/random.js';

describe('random bytes for temp names', () => {
  it('come in the asked length and differ from draw to draw, within a process and across processes', () => {
    const seen = new Set<string>();
    for (let i = 0; i < 2000; i++) {
      const h = randomHex(8);
      expect(h).toMatch(/^[0-9a-f]{16}$/);
      seen.add(h);
    }
    expect(seen.size).toBe(2000);
    expect(randomBytes(4096).length).toBe(4096);
    expect(() => randomBytes(4097)).toThrow(RangeError);
    // fresh arrays: a later draw changes no earlier one
    const a = randomBytes(16);
    const copy = a.slice();
    randomBytes(4096);
    expect(a).toEqual(copy);
  });

  it('Math.random, their source, is seeded per process (fresh Node.js processes draw different names)', () => {
    const draws = Array.from({ length: 4 }, () =>
      execFileSync(process.execPath, ['-e', 'process.stdout.write(String(Math.random()) + String(Math.random()))'], { encoding: 'utf8' }),
    );
    expect(new Set(draws).size).toBe(4);
  });
});
