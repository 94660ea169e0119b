/**
 * The synchronous whole-tree walk (node:fs with lstatSync/readdirSync: index rows looked up by
 * directory and name, names sorted per directory) finds exactly what the promise walk finds, on
 * random trees on disk whose names sort differently as names and as paths ("a", "a-b", "a.b",
 * "a/…", non-ASCII), with some entries staged (their stat data in the index) and some of those
 * changed afterwards. Both results are in git's path order, each path once.
 */
import { mkdirSync, symlinkSync, utimesSync, writeFileSync, chmodSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { nodeFs } from '../src/fs/node.js';
import type { Fs } from '../src/fs/types.js';
import { Repository } from '../src/repo/repository.js';
import { captureState } from '../src/snapshot/capture.js';
import { compareRel } from '../src/model/scope.js';
import type { PathState } from '../src/model/state.js';
import { ScalpelError } from '../src/errors/index.js';
import { cleanupTempDirs, git, makeTempRepo } from '../test/helpers/git.js';

/** node:fs without its synchronous calls: capture then walks with promises. */
function asyncOnly(): Fs {
  const { lstatSync: _l, readdirSync: _r, ...rest } = nodeFs();
  void _l;
  void _r;
  return rest;
}

const NAMES = ['a', 'a-b', 'a.b', 'a b', 'ab', 'b', '\u00e9', 'e\u0301', 'z'];
const entryArb = fc.record({
  path: fc.array(fc.constantFrom(...NAMES), { minLength: 1, maxLength: 3 }).map((p) => p.join('/')),
  kind: fc.constantFrom('file', 'exec', 'link'),
  staged: fc.boolean(),
  changed: fc.boolean(),
});

describe('the synchronous walk', () => {
  it('finds what the promise walk finds, in path order, with staged and changed files mixed', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(entryArb, { minLength: 1, maxLength: 12 }), fc.constantFrom('', 'a', 'a/a', 'b'), async (entries, root) => {
        const dir = makeTempRepo();
        // keep a path only when no earlier one is it, below it or above it
        const made: typeof entries = [];
        for (const e of entries) {
          if (made.some((m) => m.path === e.path || m.path.startsWith(e.path + '/') || e.path.startsWith(m.path + '/'))) continue;
          made.push(e);
          const abs = join(dir, e.path);
          mkdirSync(join(abs, '..'), { recursive: true });
          if (e.kind === 'link') symlinkSync(`target of ${e.path}`, abs);
          else {
            writeFileSync(abs, `content of ${e.path}\n`);
            chmodSync(abs, e.kind === 'exec' ? 0o755 : 0o644);
          }
        }
        // staged files an hour old (not racily clean: their stat data is trusted), then some changed
        const past = new Date(Date.now() - 3600_000);
        for (const e of made) if (e.kind !== 'link') utimesSync(join(dir, e.path), past, past);
        const staged = made.filter((e) => e.staged).map((e) => e.path);
        if (staged.length) git(dir, ['add', '--', ...staged]);
        for (const e of made)
          if (e.staged && e.changed && e.kind !== 'link') writeFileSync(join(dir, e.path), `changed ${e.path}, longer\n`);
        // a root beneath a symbolic link is refused (BAD_PATH), by both walks alike
        const results: Array<PathState | string> = [];
        for (const fs of [nodeFs(), asyncOnly()]) {
          const repo = await Repository.open({ fs, dir });
          const read = await repo.readIndex();
          try {
            results.push(await captureState(repo, read?.index ?? null, [root], { writeObjects: false, indexStat: read?.stat ?? null }));
          } catch (e) {
            if (!(e instanceof ScalpelError)) throw e;
            results.push(e.code);
          }
        }
        expect(results[0]).toEqual(results[1]);
        cleanupTempDirs();
        if (typeof results[0] === 'string') {
          expect(results[0]).toBe('BAD_PATH');
          return;
        }
        const paths = results[0].items.map((i) => i.path);
        for (let i = 1; i < paths.length; i++) expect(compareRel(paths[i - 1], paths[i])).toBeLessThan(0);
      }),
      { numRuns: 40 },
    );
  });
});
