/**
 * Index reads kept by a long-lived caller (src/repo/index-cache.ts, OpenOptions.cache): an
 * unchanged index is not read again, and any write of it (git's, this tool's, a split index's
 * shared part) is seen by the next read. Checked against git's own listing.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { nodeFs } from '../../src/fs/node.js';
import { IndexCache } from '../../src/repo/index-cache.js';
import { Repository } from '../../src/repo/repository.js';
import type { ReadIndexResult } from '../../src/repo/index-file.js';
import { openRepository } from '../../src/snapshot/engine.js';
import { git, makeTempRepo } from '../helpers/git.js';
import '../../src/node.js';

const paths = async (repo: Repository) =>
  ((await repo.readIndex({ verify: false }))?.index.entries ?? []).map((e) => `${e.mode.toString(8)} ${e.oid} ${e.stage}\t${e.path}`);
const lsFiles = (dir: string) =>
  git(dir, ['ls-files', '-s'])
    .split('\n')
    .filter(Boolean)
    .map((l) => l.replace(/ (\d)\t/, ' $1\t'));

function repoWith(files: Record<string, string>): string {
  const dir = makeTempRepo();
  for (const [p, t] of Object.entries(files)) writeFileSync(join(dir, p), t);
  git(dir, ['add', '-A']);
  git(dir, ['commit', '-qm', 'base']);
  return dir;
}

describe('index reads kept while the file is unchanged', () => {
  it('an unchanged index is the same read; git add, git rm --cached and git update-index are each seen by the next read', async () => {
    const dir = repoWith({ 'a.txt': 'a\n', 'b.txt': 'b\n' });
    const cache = new IndexCache<ReadIndexResult>();
    const repo = await Repository.open({ fs: nodeFs(), dir, indexCache: cache });
    const first = await repo.readIndex({ verify: false });
    expect(await repo.readIndex({ verify: false })).toBe(first);
    // another repository object with the same cache: the same read
    const other = await Repository.open({ fs: nodeFs(), dir, indexCache: cache });
    expect(await other.readIndex({ verify: false })).toBe(first);
    // read another way (the checksum checked): a read of its own
    expect(await repo.readIndex({ verify: true })).not.toBe(first);
    for (const step of [
      () => {
        writeFileSync(join(dir, 'c.txt'), 'c\n');
        git(dir, ['add', 'c.txt']);
      },
      () => git(dir, ['rm', '-q', '--cached', 'a.txt']),
      () => git(dir, ['update-index', '--chmod=+x', 'b.txt']),
      () => {
        writeFileSync(join(dir, 'b.txt'), 'b2\n');
        git(dir, ['add', 'b.txt']);
      },
    ]) {
      step();
      expect(await paths(repo)).toEqual(lsFiles(dir));
    }
    expect(cache.stats.files).toBe(1);
  });

  it('a split index: a change of the shared index alone is seen too', async () => {
    const dir = repoWith({ 'a.txt': 'a\n', 'b.txt': 'b\n' });
    git(dir, ['config', 'splitIndex.maxPercentChange', '100']);
    git(dir, ['update-index', '--split-index']);
    const repo = await Repository.open({ fs: nodeFs(), dir, indexCache: new IndexCache<ReadIndexResult>() });
    expect(await paths(repo)).toEqual(lsFiles(dir));
    writeFileSync(join(dir, 'c.txt'), 'c\n');
    git(dir, ['add', 'c.txt']);
    expect(await paths(repo)).toEqual(lsFiles(dir));
    git(dir, ['update-index', '--split-index']);
    expect(await paths(repo)).toEqual(lsFiles(dir));
    git(dir, ['update-index', '--no-split-index']);
    expect(await paths(repo)).toEqual(lsFiles(dir));
  });

  it("the engine with a caller's cache: snapshot, git add, restore; the restore's own write is seen; an index removed and made again", async () => {
    const dir = repoWith({ 'a.txt': 'a\n', 'b.txt': 'b\n' });
    const cache = {};
    const open = () => openRepository({ fs: nodeFs(), dir, cache });
    const inner = async () => ((await open()) as unknown as { ctx: { repo: Repository } }).ctx.repo;
    const before = lsFiles(dir);
    await (await open()).snapshot(['a.txt']);
    writeFileSync(join(dir, 'a.txt'), 'agent\n');
    git(dir, ['add', 'a.txt']);
    expect(await paths(await inner())).toEqual(lsFiles(dir));
    await (await open()).restore();
    expect(lsFiles(dir)).toEqual(before);
    expect(await paths(await inner())).toEqual(before);
    git(dir, ['rm', '-q', '--cached', '-r', '.']);
    expect(await paths(await inner())).toEqual([]);
  });

  it('keeps at most its byte limit, the least recently used index going first', async () => {
    const dirs = [repoWith({ 'a.txt': 'a\n' }), repoWith({ 'b.txt': 'b\n' }), repoWith({ 'c.txt': 'c\n' })];
    const cache = new IndexCache<ReadIndexResult>(300);
    for (const dir of dirs) await (await Repository.open({ fs: nodeFs(), dir, indexCache: cache })).readIndex({ verify: false });
    expect(cache.stats.bytes).toBeLessThanOrEqual(300);
    expect(cache.stats.files).toBeLessThan(3);
  });
});
