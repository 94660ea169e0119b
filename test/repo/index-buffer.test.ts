import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { nodeFs } from '../../src/fs/node.js';
import { Repository } from '../../src/repo/repository.js';
import { git, makeTempDir, makeTempRepo } from '../helpers/git.js';

describe('node:fs readFileInto', () => {
  const fs = nodeFs();
  const dir = makeTempDir('scalpel-readinto-');
  const file = join(dir, 'f');
  const pattern = (n: number, seed: number) => Uint8Array.from({ length: n }, (_, i) => (i * 31 + seed) & 0xff);

  it('reads the whole file into the given buffer when it fits, and into a new one when not', async () => {
    writeFileSync(file, pattern(1000, 1));
    const first = await fs.readFileInto!(file, null);
    expect(Buffer.from(first.bytes).equals(Buffer.from(pattern(1000, 1)))).toBe(true);
    expect(first.buffer.length).toBeGreaterThan(1000);
    expect(first.bytes.buffer).toBe(first.buffer.buffer);

    writeFileSync(file, pattern(700, 2));
    const again = await fs.readFileInto!(file, first.buffer);
    expect(again.buffer).toBe(first.buffer);
    expect(Buffer.from(again.bytes).equals(Buffer.from(pattern(700, 2)))).toBe(true);

    const big = pattern(first.buffer.length + 5, 3);
    writeFileSync(file, big);
    const grown = await fs.readFileInto!(file, first.buffer);
    expect(grown.buffer).not.toBe(first.buffer);
    expect(Buffer.from(grown.bytes).equals(Buffer.from(big))).toBe(true);
  });

  it('reads an empty file, and a file exactly the size of the buffer', async () => {
    writeFileSync(file, new Uint8Array(0));
    expect((await fs.readFileInto!(file, null)).bytes.length).toBe(0);
    const buf = new Uint8Array(64);
    writeFileSync(file, pattern(64, 4));
    const r = await fs.readFileInto!(file, buf);
    expect(Buffer.from(r.bytes).equals(Buffer.from(pattern(64, 4)))).toBe(true);
  });

  it('a missing file is ENOENT', async () => {
    await expect(fs.readFileInto!(join(dir, 'missing'), null)).rejects.toMatchObject({ code: 'ENOENT' });
  });
});

describe('Repository.withIndex', () => {
  it('reuses one buffer for consecutive reads, and never lends it to an overlapping operation', async () => {
    const dir = makeTempRepo();
    writeFileSync(join(dir, 'a.txt'), 'a\n');
    git(dir, ['add', 'a.txt']);
    const repo = await Repository.open({ fs: nodeFs(), dir });
    const indexFile = join(dir, '.git/index');

    const first = await repo.withIndex({}, async (read) => read!.bytes.buffer);
    const second = await repo.withIndex({}, async (read) => read!.bytes.buffer);
    expect(second).toBe(first);

    await repo.withIndex({}, async (outer) => {
      const before = Buffer.from(outer!.bytes);
      expect(before.equals(readFileSync(indexFile))).toBe(true);
      // another operation in the same process reads a different index meanwhile
      writeFileSync(join(dir, 'b.txt'), 'b\n');
      git(dir, ['add', 'b.txt']);
      await repo.withIndex({}, async (inner) => {
        expect(inner!.bytes.buffer).not.toBe(outer!.bytes.buffer);
        expect(inner!.index.entries.map((e) => e.path)).toEqual(['a.txt', 'b.txt']);
      });
      expect(Buffer.from(outer!.bytes).equals(before)).toBe(true);
      expect(outer!.index.entries.map((e) => e.path)).toEqual(['a.txt']);
    });
  });

  it('checks the trailer unless asked not to', async () => {
    const dir = makeTempRepo();
    writeFileSync(join(dir, 'a.txt'), 'a\n');
    git(dir, ['add', 'a.txt']);
    const indexFile = join(dir, '.git/index');
    const idx = readFileSync(indexFile);
    idx[12 + 4] ^= 1; // ctime nanoseconds: decodable, trailer wrong
    writeFileSync(indexFile, idx);
    const repo = await Repository.open({ fs: nodeFs(), dir });
    await expect(repo.withIndex({}, async () => 0)).rejects.toMatchObject({ code: 'CHECKSUM_MISMATCH', data: { path: indexFile } });
    expect(await repo.withIndex({ verify: false }, async (read) => read!.index.entries.length)).toBe(1);
  });
});
