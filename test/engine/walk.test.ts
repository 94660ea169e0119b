import { mkdirSync, symlinkSync, writeFileSync, chmodSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { nodeFs } from '../../src/fs/node.js';
import type { Fs } from '../../src/fs/types.js';
import { Repository } from '../../src/repo/repository.js';
import { captureState } from '../../src/snapshot/capture.js';
import { git } from '../helpers/git.js';
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
});
