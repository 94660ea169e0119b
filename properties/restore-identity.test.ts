import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { openRepository } from '../src/snapshot/engine.js';
import { ScalpelError } from '../src/errors/index.js';
import type { Fs } from '../src/fs/types.js';
import { nodeHash } from '../src/hash/node-crypto.js';
import { ROOT, apply, aboveRoots, coveredBy, newRepo, opArb, pathArb, view, wtOpArb, type Op } from './model.js';

async function ancestorsOutsideAreDirs(fs: Fs, p: string, roots: string[]): Promise<boolean> {
  const parts = p.split('/');
  for (let i = 1; i < parts.length; i++) {
    const anc = parts.slice(0, i).join('/');
    if (coveredBy(roots)(anc)) return true;
    if ((await fs.lstat(`${ROOT}/${anc}`))?.type !== 'directory') return false;
  }
  return true;
}

const scenario = fc.record({
  setup: fc.array(wtOpArb, { minLength: 1, maxLength: 12 }),
  setupIndex: fc.array(opArb, { maxLength: 10 }),
  roots: fc.uniqueArray(pathArb, { minLength: 1, maxLength: 3 }),
  edits: fc.array(opArb, { minLength: 1, maxLength: 14 }),
});

describe('restore is the identity inside the scope and leaves the rest as the edit left it (memfs)', () => {
  it('random trees, index states and edits inside and outside the scope', async () => {
    await fc.assert(
      fc.asyncProperty(scenario, async ({ setup, setupIndex, roots, edits }) => {
        const fs = await newRepo();
        for (const op of [...setup, ...setupIndex]) await apply(fs, op);
        const inScope = coveredBy(roots);
        const above = aboveRoots(roots);
        const repo = await openRepository({ fs, dir: ROOT, hash: nodeHash });
        const before = await view(fs, inScope);
        try {
          await repo.snapshot(roots);
        } catch (e) {
          // a root beneath a symlink is refused at capture (I7): nothing to restore then
          if (e instanceof ScalpelError && e.code === 'BAD_PATH' && e.data.reason === 'symlink-parent') return;
          throw e;
        }
        // the edit works inside the scope; someone else works outside it (never on the scope's parents)
        const inside: Op[] = edits.filter((op) => inScope(op.path));
        const outside: Op[] = edits.filter((op) => !inScope(op.path) && !above(op.path));
        for (const op of [...inside, ...outside]) await apply(fs, op);
        const otherBefore = await view(fs, (p) => !inScope(p));
        try {
          await repo.restore();
        } catch (e) {
          // the one legitimate refusal here: an outside edit made a file out of a root's parent path in the index
          if (e instanceof ScalpelError && e.code === 'REFUSED' && e.data.reason === 'parent-not-directory') return;
          throw e;
        }
        expect(await view(fs, inScope)).toEqual(before);
        expect(await view(fs, (p) => !inScope(p))).toEqual(otherBefore);
        expect(await repo.list()).toEqual([]);
      }),
      { numRuns: 400 },
    );
  });

  it('stacked snapshots: restore ID undoes every later one, each path ending at its oldest captured state', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(wtOpArb, { minLength: 1, maxLength: 10 }),
        fc.array(fc.record({ roots: fc.uniqueArray(pathArb, { minLength: 1, maxLength: 2 }), edits: fc.array(opArb, { minLength: 1, maxLength: 6 }) }), { minLength: 2, maxLength: 4 }),
        async (setup, turns) => {
          const fs = await newRepo();
          for (const op of setup) await apply(fs, op);
          const repo = await openRepository({ fs, dir: ROOT, hash: nodeHash });
          const all = turns.flatMap((t) => t.roots);
          const inScope = coveredBy(all);
          const start = await view(fs, inScope);
          let first: string | undefined;
          for (const t of turns) {
            let s;
            try {
              s = await repo.snapshot(t.roots);
            } catch (e) {
              if (e instanceof ScalpelError && e.code === 'BAD_PATH' && e.data.reason === 'symlink-parent') return;
              throw e;
            }
            first ??= s.id;
            const cover = coveredBy(t.roots);
            // an edit changes only what its snapshot declared: ops that would have to create or
            // replace an ancestor outside the roots are not this edit's to make
            for (const op of t.edits) if (cover(op.path) && (await ancestorsOutsideAreDirs(fs, op.path, t.roots))) await apply(fs, op);
          }
          await repo.restore({ id: first });
          expect(await view(fs, inScope)).toEqual(start);
          expect(await repo.list()).toEqual([]);
        },
      ),
      { numRuns: 200 },
    );
  });
});
