import { describe, expect, it } from 'vitest';
import { planFromFacts, pruneCandidates, type RestoreFacts } from '../../src/snapshot/restore.js';
import { minimalRoots } from '../../src/model/scope.js';
import {
  describeItem,
  type IndexRecord,
  type Manifest,
  type PathState,
  type ReucRecord,
  type WorktreeItem,
} from '../../src/model/state.js';
import { isScalpelError } from '../../src/errors/index.js';

/** The pure plan on hand-built facts: no filesystem, no object database, no index file. */

const A = 'a'.repeat(40);
const B = 'b'.repeat(40);
const C = 'c'.repeat(40);

const file = (path: string, oid: string, mode: 0o100644 | 0o100755 = 0o100644): WorktreeItem => ({
  path,
  kind: 'file',
  mode,
  oid,
  size: 3,
});
const dir = (path: string): WorktreeItem => ({ path, kind: 'dir' });
const link = (path: string, target: string): WorktreeItem => ({ path, kind: 'symlink', target, oid: C });
const NO_FLAGS = { assumeValid: false, skipWorktree: false, intentToAdd: false };
const entry = (path: string, oid: string, stage: 0 | 1 | 2 | 3 = 0): IndexRecord => ({ path, stage, mode: 0o100644, oid, flags: NO_FLAGS });

function state(roots: string[], parts: Partial<PathState> = {}): PathState {
  return { roots, items: [], index: [], reuc: [], ...parts };
}

function manifest(id: string, captured: PathState, extra: Partial<Manifest> = {}): Manifest {
  return {
    format: 'git-scalpel/1',
    id,
    session: 'default',
    worktreeId: 'main',
    objectFormat: 'sha1',
    label: null,
    createdAt: '2025-01-01T00:00:00.000Z',
    captured,
    seal: null,
    ...extra,
  };
}

/** Facts for `chain` (newest first) with the scope holding `current` now; nothing unusual around it unless `over` says so. */
function facts(chain: Manifest[], current: Partial<PathState>, over: Partial<RestoreFacts> = {}): RestoreFacts {
  const roots = minimalRoots(chain.flatMap((m) => m.captured.roots));
  return {
    chain,
    roots,
    current: state(roots, current),
    nestedRepos: new Set(),
    blockedParents: new Map(),
    indexEntriesAbove: new Set(),
    listings: new Map(),
    fs: { name: 'test-fs', symlinks: true },
    ...over,
  };
}

function refusal(f: () => unknown): { code: string; data: Record<string, unknown> } {
  try {
    f();
  } catch (e) {
    if (isScalpelError(e)) return { code: e.code, data: e.data };
    throw e;
  }
  throw new Error('expected a refusal');
}

function deepFreeze<T>(x: T): T {
  if (x && typeof x === 'object' && !Object.isFrozen(x)) {
    Object.freeze(x);
    if (x instanceof Map) for (const [k, v] of x) (deepFreeze(k), deepFreeze(v));
    else if (x instanceof Set) for (const v of x) deepFreeze(v);
    else for (const v of Object.values(x)) deepFreeze(v);
  }
  return x;
}

describe('restore plan (pure, from gathered facts)', () => {
  it('puts a changed file back, changes nothing that already matches, and leaves the index alone when it matches', () => {
    const snap = manifest('s1', state(['a.txt', 'b.txt'], { items: [file('a.txt', A), file('b.txt', B)], index: [entry('a.txt', A)] }));
    const plan = planFromFacts(facts([snap], { items: [file('a.txt', B), file('b.txt', B)], index: [entry('a.txt', A)] }));
    expect(plan.roots).toEqual(['a.txt', 'b.txt']);
    expect(plan.paths).toEqual([
      {
        path: 'a.txt',
        worktree: { action: 'write', from: describeItem(file('a.txt', B)), to: describeItem(file('a.txt', A)) },
        index: null,
        resolveUndo: null,
      },
    ]);
    expect(plan.work.creations.map((c) => c.path)).toEqual(['a.txt']);
    expect(plan.work.removals).toEqual([]);
    expect(plan.indexChanged).toBe(false);
    expect(plan.conflicts).toEqual([]);
    expect(plan.work.blobs.size).toBe(0); // content is read after the plan (readContent)
  });

  it('only the executable bit differs: chmod, no write', () => {
    const snap = manifest('s1', state(['run.sh'], { items: [file('run.sh', A, 0o100755)] }));
    const plan = planFromFacts(facts([snap], { items: [file('run.sh', A, 0o100644)] }));
    expect(plan.paths[0].worktree?.action).toBe('chmod');
    expect(plan.work.creations[0].chmodOnly).toBe(true);
  });

  it('deletes what the edit created and brings back a removed directory, parents first, removals deepest first', () => {
    const snap = manifest('s1', state(['src'], { items: [dir('src'), dir('src/lib'), file('src/lib/x.ts', A)] }));
    const plan = planFromFacts(facts([snap], { items: [file('src', B)] }));
    expect(plan.work.removals.map((r) => r.path)).toEqual(['src']);
    expect(plan.work.creations.map((c) => [c.path, c.item.kind])).toEqual([
      ['src', 'dir'],
      ['src/lib', 'dir'],
      ['src/lib/x.ts', 'file'],
    ]);
    const created = manifest('s2', state(['gen'], { items: [] }));
    const back = planFromFacts(facts([created], { items: [dir('gen'), dir('gen/a'), file('gen/a/b.ts', A)] }));
    expect(back.work.removals.map((r) => r.path)).toEqual(['gen/a/b.ts', 'gen/a', 'gen']);
    expect(back.paths.map((p) => p.worktree?.action)).toEqual(['delete', 'delete', 'delete']);
  });

  it('the oldest snapshot of the chain decides what a path goes back to', () => {
    const older = manifest('old', state(['a.txt'], { items: [file('a.txt', A)] }));
    const newer = manifest('new', state(['a.txt'], { items: [file('a.txt', B)] }));
    const plan = planFromFacts(facts([newer, older], { items: [file('a.txt', C)] }));
    expect(plan.work.creations.map((c) => c.item)).toEqual([file('a.txt', A)]);
  });

  it('finds conflicts with the seal (worktree, index, resolve-undo), and none where the path is as sealed', () => {
    const reuc: ReucRecord = { path: 'a.txt', modes: [0o100644, 0o100644, 0], oids: [A, B, null] };
    const sealed = state(['a.txt'], { items: [file('a.txt', B)], index: [entry('a.txt', B)], reuc: [] });
    const snap = manifest('s1', state(['a.txt'], { items: [file('a.txt', A)], index: [entry('a.txt', A)], reuc: [reuc] }), {
      seal: { sealedAt: '2025-01-01T00:01:00.000Z', state: sealed },
    });
    const asSealed = planFromFacts(facts([snap], { items: [file('a.txt', B)], index: [entry('a.txt', B)] }));
    expect(asSealed.conflicts).toEqual([]);
    expect(asSealed.indexChanged).toBe(true);
    expect(asSealed.paths[0].resolveUndo).not.toBeNull();

    const someoneElse = planFromFacts(
      facts([snap], { items: [file('a.txt', C)], index: [entry('a.txt', C)], reuc: [{ ...reuc, oids: [C, B, null] }] }),
    );
    expect(someoneElse.conflicts.map((c) => [c.path, c.part, c.snapshot])).toEqual([
      ['a.txt', 'worktree', 's1'],
      ['a.txt', 'index', 's1'],
      ['a.txt', 'resolve-undo', 's1'],
    ]);
    expect(someoneElse.conflicts[0]).toMatchObject({
      expected: describeItem(file('a.txt', B)),
      found: describeItem(file('a.txt', C)),
      restoring: describeItem(file('a.txt', A)),
    });
  });

  it("refuses a turn's contested path where the restore would change it", () => {
    const snap = manifest('t1', state(['a.txt', 'b.txt'], { items: [file('a.txt', A), file('b.txt', A)] }), {
      contested: [
        { path: 'a.txt', part: 'worktree', expected: 'file 100644 ' + B, found: 'file 100644 ' + C },
        { path: 'b.txt', part: 'worktree', expected: 'file 100644 ' + B, found: 'file 100644 ' + A },
      ],
    });
    const plan = planFromFacts(facts([snap], { items: [file('a.txt', C), file('b.txt', A)] }));
    expect(plan.conflicts.map((c) => c.path)).toEqual(['a.txt']);
    expect(plan.conflicts[0].expected).toContain("(the agent's last write)");
  });

  it('refuses to remove a directory that holds a nested repository', () => {
    const snap = manifest('s1', state(['vendor'], { items: [] }));
    const current = { items: [dir('vendor'), dir('vendor/lib')] };
    expect(planFromFacts(facts([snap], current)).work.removals.map((r) => r.path)).toEqual(['vendor/lib', 'vendor']);
    const r = refusal(() => planFromFacts(facts([snap], current, { nestedRepos: new Set(['vendor/lib']) })));
    expect(r).toMatchObject({ code: 'REFUSED', data: { path: 'vendor/lib', reason: 'nested-repository' } });
    // a nested repository the restore keeps is no reason to refuse
    const kept = manifest('s2', state(['vendor'], { items: [dir('vendor'), dir('vendor/lib')] }));
    expect(planFromFacts(facts([kept], current, { nestedRepos: new Set(['vendor/lib']) })).paths).toEqual([]);
  });

  it('refuses a root whose parent outside the scope is now a file, only when it must be created', () => {
    const snap = manifest('s1', state(['conf/app.json'], { items: [file('conf/app.json', A)] }));
    const blocked = new Map([['conf/app.json', { dir: 'conf', type: 'file' as const }]]);
    const r = refusal(() => planFromFacts(facts([snap], {}, { blockedParents: blocked })));
    expect(r).toMatchObject({ code: 'REFUSED', data: { path: 'conf/app.json', parent: 'conf', reason: 'parent-not-directory' } });
    const gone = manifest('s2', state(['conf/app.json'], { items: [] }));
    expect(planFromFacts(facts([gone], {}, { blockedParents: blocked })).paths).toEqual([]);
  });

  it('refuses a restored index entry beneath a file entry kept outside the scope', () => {
    const snap = manifest('s1', state(['lib/x.ts'], { index: [entry('lib/x.ts', A)] }));
    expect(planFromFacts(facts([snap], {})).work.changedIndexPaths).toEqual(['lib/x.ts']);
    const r = refusal(() => planFromFacts(facts([snap], {}, { indexEntriesAbove: new Set(['lib']) })));
    expect(r).toMatchObject({ code: 'REFUSED', data: { path: 'lib/x.ts', parent: 'lib', reason: 'parent-not-directory' } });
  });

  it('a filesystem without symlinks cannot restore one: refused before anything is written', () => {
    const snap = manifest('s1', state(['ln'], { items: [link('ln', 'target')] }));
    expect(planFromFacts(facts([snap], {})).paths[0].worktree?.action).toBe('symlink');
    const r = refusal(() => planFromFacts(facts([snap], {}, { fs: { name: 'opfs', symlinks: false } })));
    expect(r).toMatchObject({ code: 'UNSUPPORTED', data: { path: 'ln', capability: 'symlinks' } });
  });

  it('prunes the empty directories the edit created to hold a root, deepest first, and keeps one holding anything else', () => {
    const snap = manifest('s1', state(['gen/api/client.ts'], { items: [], absentParents: [{ root: 'gen/api/client.ts', existing: '' }] }));
    const chain = [snap];
    const current = { items: [file('gen/api/client.ts', A)] };
    expect(pruneCandidates(chain, (p) => p === 'gen/api/client.ts')).toEqual(['gen/api', 'gen']);
    const empty = new Map([
      ['gen/api', ['client.ts']],
      ['gen', ['api']],
    ]);
    const plan = planFromFacts(facts(chain, current, { listings: empty }));
    expect(plan.pruned).toEqual(['gen/api', 'gen']);
    expect(plan.paths.map((p) => [p.path, p.worktree?.action])).toEqual([
      ['gen', 'prune'],
      ['gen/api', 'prune'],
      ['gen/api/client.ts', 'delete'],
    ]);
    const personal = new Map([
      ['gen/api', ['client.ts']],
      ['gen', ['api', 'notes.md']],
    ]);
    expect(planFromFacts(facts(chain, current, { listings: personal })).pruned).toEqual(['gen/api']);
    // not a directory any more (or gone): nothing to prune
    expect(
      planFromFacts(
        facts(chain, current, {
          listings: new Map([
            ['gen/api', null],
            ['gen', ['api']],
          ]),
        }),
      ).pruned,
    ).toEqual([]);
    // parents that existed at capture are never candidates
    expect(pruneCandidates([manifest('s2', state(['gen/api/client.ts']))], () => false)).toEqual([]);
  });

  it('plans index and resolve-undo changes: conflict stages and their record come back, a staged file goes back', () => {
    const reuc: ReucRecord = { path: 'm.txt', modes: [0o100644, 0o100644, 0o100644], oids: [A, B, C] };
    const snap = manifest(
      's1',
      state(['m.txt', 's.txt'], {
        items: [file('m.txt', A), file('s.txt', A)],
        index: [entry('m.txt', A, 1), entry('m.txt', B, 2), entry('m.txt', C, 3), entry('s.txt', A)],
        reuc: [],
      }),
    );
    const plan = planFromFacts(
      facts([snap], { items: [file('m.txt', A), file('s.txt', A)], index: [entry('m.txt', B), entry('s.txt', B)], reuc: [reuc] }),
    );
    expect(plan.indexChanged).toBe(true);
    expect(plan.work.changedIndexPaths).toEqual(['m.txt', 's.txt']);
    expect(plan.work.targetIndex.get('m.txt')?.map((e) => e.stage)).toEqual([1, 2, 3]);
    expect(plan.work.targetReuc.get('m.txt')).toBeUndefined();
    expect(plan.paths.map((p) => [p.path, p.worktree, !!p.index, !!p.resolveUndo])).toEqual([
      ['m.txt', null, true, true],
      ['s.txt', null, true, false],
    ]);
    // only the resolve-undo record differs: the index is still written
    const onlyReuc = planFromFacts(
      facts([snap], { items: [file('m.txt', A), file('s.txt', A)], index: snap.captured.index, reuc: [reuc] }),
    );
    expect(onlyReuc.work.changedIndexPaths).toEqual([]);
    expect(onlyReuc.indexChanged).toBe(true);
  });

  it('is pure: frozen facts plan the same twice', () => {
    const snap = manifest(
      's1',
      state(['gen/a.ts', 'x'], { items: [file('x', A)], index: [entry('x', A)], absentParents: [{ root: 'gen/a.ts', existing: '' }] }),
    );
    const f = deepFreeze(
      facts([snap], { items: [file('gen/a.ts', B), dir('x')], index: [entry('x', B)] }, { listings: new Map([['gen', ['a.ts']]]) }),
    );
    const one = planFromFacts(f);
    const two = planFromFacts(f);
    expect(two).toEqual(one);
    expect(one.pruned).toEqual(['gen']);
    expect(one.work.removals.map((r) => r.path)).toEqual(['x', 'gen/a.ts']);
  });
});
