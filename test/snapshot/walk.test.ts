import { mkdirSync, symlinkSync, writeFileSync, chmodSync, utimesSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { nodeFs } from '../../src/fs/node.js';
import type { Fs } from '../../src/fs/types.js';
import { Repository } from '../../src/repo/repository.js';
import { captureState } from '../../src/snapshot/capture.js';
import { git, makeTempRepo } from '../helpers/git.js';
import { personRepo, w } from '../e2e/scenario.js';

/** node:fs without its synchronous calls: capture then walks with promises. */
function asyncOnly(): Fs {
  const { lstatSync: _l, readdirSync: _r, ...rest } = nodeFs();
  void _l;
  void _r;
  return rest;
}

describe('capture walks', () => {
  it('the synchronous walk finds exactly what the promise walk finds', async () => {
    const dir = personRepo();
    // clean, dirty, untracked, ignored, executable, links (dangling too), empty and nested dirs, a nested repository
    w(dir, 'src/app.ts', 'edited\n');
    w(dir, 'src/new/deep/x.ts', 'x\n');
    mkdirSync(join(dir, 'src/empty'));
    writeFileSync(join(dir, 'src/run.sh'), '#!/bin/sh\n');
    chmodSync(join(dir, 'src/run.sh'), 0o755);
    symlinkSync('app.ts', join(dir, 'src/link'));
    symlinkSync('nowhere', join(dir, 'src/dangling'));
    mkdirSync(join(dir, 'src/sub'));
    git(join(dir, 'src/sub'), ['init', '-q']);
    w(dir, 'src/sub/inner.txt', 'not ours\n');
    git(dir, ['add', 'src/new']);
    const states = [];
    for (const fs of [nodeFs(), asyncOnly()]) {
      const repo = await Repository.open({ fs, dir });
      const read = await repo.readIndex();
      states.push(await captureState(repo, read!.index, ['src', 'README.md', 'missing'], { writeObjects: false, indexStat: read!.stat }));
    }
    expect(nodeFs().lstatSync).toBeTypeOf('function');
    expect(states[0].items.length).toBeGreaterThan(8);
    expect(states[0]).toEqual(states[1]);
  });

  it('a file whose stat data matches its index entry is not read, on both walks; a changed one is', async () => {
    const dir = makeTempRepo();
    const files = ['top.txt', 'a/one.txt', 'a/b/two.txt', 'a/b/c/three.txt', 'a-b.txt', 'a.txt', 'z/deep/er/four.txt'];
    for (const f of files) w(dir, f, `content of ${f}\n`);
    git(dir, ['add', '-A']);
    // an hour old, then refreshed: entries are older than the index, so none is racily clean
    const past = new Date(Date.now() - 3600_000);
    for (const f of files) utimesSync(join(dir, f), past, past);
    git(dir, ['update-index', '--refresh']);
    w(dir, 'a/b/two.txt', 'changed, and longer than before\n');
    utimesSync(join(dir, 'a/b/two.txt'), past, past);
    for (const base of [nodeFs(), asyncOnly()]) {
      const reads: string[] = [];
      const fs: Fs = { ...base, readFile: (p: string) => (reads.push(p), base.readFile(p)) };
      const repo = await Repository.open({ fs, dir });
      const read = await repo.readIndex();
      for (const roots of [[''], ['a', 'top.txt', 'z/deep']]) {
        reads.length = 0;
        const st = await captureState(repo, read!.index, roots, { writeObjects: false, indexStat: read!.stat });
        expect(reads.map((p) => p.slice(dir.length + 1))).toEqual(['a/b/two.txt']);
        expect(st.items.filter((i) => i.kind === 'file').length).toBe(roots[0] === '' ? files.length : 5);
      }
    }
  });
});
