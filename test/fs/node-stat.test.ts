import { execFileSync } from 'node:child_process';
import { statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { nodeFs } from '../../src/fs/node.js';
import { makeTempDir } from '../helpers/git.js';

describe('node:fs stat data as git caches it', () => {
  it('seconds and nanoseconds as the kernel keeps them, before 1970 too; ids truncated to 32 bits', async () => {
    const dir = makeTempDir('scalpel-stat-');
    const cases: Array<[string, string, number, number]> = [
      ['old', '1969-12-31 23:59:58.5', 2 ** 32 - 2, 500_000_000],
      ['just-before-a-second', '1969-12-31 23:59:58.9999999', 2 ** 32 - 2, 999_999_900],
      ['epoch', '1970-01-01 00:00:00.000000001', 0, 1],
      ['recent', '2026-01-02 03:04:05.123456789', 1767323045, 123_456_789],
    ];
    const fs = nodeFs();
    for (const [name, when, sec, nsec] of cases) {
      const p = join(dir, name);
      writeFileSync(p, name);
      execFileSync('touch', ['-h', '-d', `${when} UTC`, p]);
      const st = (await fs.lstat(p))!;
      expect([st.mtimeSeconds, st.mtimeNanoseconds], name).toEqual([sec, nsec]);
      const big = statSync(p, { bigint: true });
      expect(st.ino).toBe(Number(big.ino & 0xffffffffn));
      expect(st.dev).toBe(Number(big.dev & 0xffffffffn));
      expect(st.ctimeSeconds).toBe(Number(big.ctimeNs / 1_000_000_000n) >>> 0);
      expect(st.ctimeNanoseconds).toBe(Number(big.ctimeNs % 1_000_000_000n));
      expect(fs.lstatSync!(p)).toEqual(st);
    }
  });
});
