import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { decodeManifest, encodeManifest } from '../../src/model/manifest.js';
import { compareRel } from '../../src/model/scope.js';
import type { IndexRecord, Manifest, PathState, WorktreeItem } from '../../src/model/state.js';
import { git } from '../helpers/git.js';
import { open, personRepo, w } from '../e2e/scenario.js';
import { gitView, worktreeView } from '../helpers/view.js';

const hex = fc.stringMatching(/^[0-9a-f]{40}$/);
const flagsArb = fc.record({ assumeValid: fc.boolean(), skipWorktree: fc.boolean(), intentToAdd: fc.boolean() });

/** A valid path state: a root 'r' holding files, links and directories, and index records of every kind. */
const stateArb: fc.Arbitrary<PathState> = fc
  .uniqueArray(fc.stringMatching(/^[a-z\u00e9]{1,4}$/), { minLength: 1, maxLength: 12 })
  .chain((names) =>
    fc.tuple(
      fc.constant(names),
      fc.array(fc.constantFrom('file', 'exec', 'link', 'dir', 'absent'), { minLength: names.length, maxLength: names.length }),
      fc.array(fc.tuple(hex, fc.nat({ max: 1 << 20 }), fc.constantFrom('clean', 'staged', 'flags', 'conflict', 'none', 'ita')), {
        minLength: names.length,
        maxLength: names.length,
      }),
      fc.array(flagsArb, { minLength: names.length, maxLength: names.length }),
      hex,
    ),
  )
  .map(([names, kinds, data, flags, other]) => {
    const items: WorktreeItem[] = [{ path: 'r', kind: 'dir' }];
    const index: IndexRecord[] = [];
    const none = { assumeValid: false, skipWorktree: false, intentToAdd: false };
    names.forEach((n, i) => {
      const path = `r/${n}`;
      const [oid, size, ix] = data[i];
      const kind = kinds[i];
      let mode = 0o100644;
      if (kind === 'file' || kind === 'exec') {
        mode = kind === 'exec' ? 0o100755 : 0o100644;
        items.push({ path, kind: 'file', mode: mode as 0o100644 | 0o100755, oid, size });
      } else if (kind === 'link') {
        mode = 0o120000;
        items.push({ path, kind: 'symlink', target: `../t${i}`, oid });
      } else if (kind === 'dir') items.push({ path, kind: 'dir' });
      if (ix === 'clean') index.push({ path, stage: 0, mode, oid, flags: none });
      else if (ix === 'staged') index.push({ path, stage: 0, mode, oid: other, flags: none });
      else if (ix === 'flags') index.push({ path, stage: 0, mode, oid, flags: flags[i] });
      else if (ix === 'ita') index.push({ path, stage: 0, mode: 0o100644, oid, flags: { ...none, intentToAdd: true } });
      else if (ix === 'conflict')
        for (const stage of [1, 2, 3] as const) index.push({ path, stage, mode: 0o100644, oid: stage === 2 ? oid : other, flags: none });
    });
    items.sort((a, b) => compareRel(a.path, b.path));
    index.sort((a, b) => compareRel(a.path, b.path) || a.stage - b.stage);
    return {
      roots: ['r'],
      items,
      index,
      reuc: [
        {
          path: 'r/x',
          modes: [0o100644, 0, 0o100755] as [number, number, number],
          oids: [other, null, other] as [string | null, string | null, string | null],
        },
      ],
    };
  });

function manifestOf(captured: PathState, seal: PathState | null): Manifest {
  return {
    format: 'git-scalpel/1',
    id: '20261130-000000-abcdef',
    session: 'default',
    worktreeId: 'main',
    objectFormat: 'sha1',
    label: 'a label',
    createdAt: '2026-11-30T00:00:00.000Z',
    captured,
    seal: seal ? { sealedAt: '2026-11-30T00:00:01.000Z', state: seal } : null,
  };
}

describe('manifest storage', () => {
  it('decode(encode(m)) is m, for every kind of item and index record', () => {
    fc.assert(
      fc.property(stateArb, fc.option(stateArb, { nil: null }), (captured, seal) => {
        const m = manifestOf(captured, seal);
        const text = encodeManifest(m);
        expect(JSON.parse(text).format).toBe('git-scalpel/2');
        expect(decodeManifest(text, 'sha1')).toEqual(m);
      }),
      { numRuns: 300 },
    );
  });

  it('a clean file costs no index record: a large clean scope stores a third of what objects took', () => {
    const items: WorktreeItem[] = [{ path: 'nm', kind: 'dir' }];
    const index: IndexRecord[] = [];
    for (let i = 0; i < 1000; i++) {
      const path = `nm/file-${String(i).padStart(4, '0')}.js`;
      const oid = i.toString(16).padStart(40, '0');
      items.push({ path, kind: 'file', mode: 0o100644, oid, size: i });
      index.push({ path, stage: 0, mode: 0o100644, oid, flags: { assumeValid: false, skipWorktree: false, intentToAdd: false } });
    }
    const m = manifestOf({ roots: ['nm'], items, index, reuc: [] }, null);
    const text = encodeManifest(m);
    expect(JSON.parse(text).captured.index).toEqual([]);
    expect(text.length).toBeLessThan(JSON.stringify(m).length / 2.5);
    expect(decodeManifest(text, 'sha1')).toEqual(m);
  });

  it('the object form (git-scalpel/1) is still read', () => {
    fc.assert(
      fc.property(stateArb, (captured) => {
        const m = manifestOf(captured, null);
        expect(decodeManifest(JSON.stringify(m), 'sha1')).toEqual(m);
      }),
      { numRuns: 50 },
    );
  });

  it('malformed tuples, duplicate records and bad JSON are SNAPSHOT_CORRUPT', () => {
    const good = JSON.parse(encodeManifest(manifestOf({ roots: ['r'], items: [{ path: 'r', kind: 'dir' }], index: [], reuc: [] }, null)));
    const cases: Array<(m: { captured: Record<string, unknown> }) => void> = [
      (m) => (m.captured.items = [['r', 'x']]),
      (m) => (m.captured.items = [['r', 'f', 0o100644, 'a'.repeat(40)]]),
      (m) => (m.captured.items = [{ path: 'r', kind: 'dir' }]),
      (m) => (m.captured.index = [['r', 0, 0o100644, 'a'.repeat(40), 8]]),
      (m) =>
        (m.captured.index = [
          ['r', 0, 0o100644, 'a'.repeat(40), 0],
          ['r', 0, 0o100644, 'b'.repeat(40), 0],
        ]),
      (m) =>
        (m.captured.items = [['r', 'f', 0o100644, 'a'.repeat(40), 1, 1]]) && (m.captured.index = [['r', 0, 0o100644, 'a'.repeat(40), 0]]),
      (m) => (m.captured.reuc = [['r', [1, 2], [null]]]),
      (m) => (m.captured = null as unknown as Record<string, unknown>),
    ];
    for (const edit of cases) {
      const m = structuredClone(good);
      edit(m);
      expect(() => decodeManifest(JSON.stringify(m), 'sha1'), JSON.stringify(m.captured)).toThrow(
        expect.objectContaining({ code: 'SNAPSHOT_CORRUPT' }),
      );
    }
    expect(() => decodeManifest('{"format": "git-scalpel/2", ', 'sha1')).toThrow(expect.objectContaining({ code: 'SNAPSHOT_CORRUPT' }));
  });

  it('absent parents: stored only when there are some, read back, checked as untrusted input', () => {
    const base: PathState = { roots: ['a/b/c', 'r'], items: [], index: [], reuc: [] };
    const plain = JSON.parse(encodeManifest(manifestOf(base, null)));
    expect(plain.captured.parents).toBeUndefined();
    const withRec: PathState = { ...base, absentParents: [{ root: 'a/b/c', existing: '' }] };
    const text = encodeManifest(manifestOf(withRec, null));
    expect(JSON.parse(text).captured.parents).toEqual([['a/b/c', '']]);
    expect(decodeManifest(text, 'sha1').captured.absentParents).toEqual([{ root: 'a/b/c', existing: '' }]);
    expect(decodeManifest(JSON.stringify(plain), 'sha1').captured.absentParents).toBeUndefined();
    const bad: unknown[] = [
      [['a/b/c', 'a/b']], // the parent itself is not an absent parent's deepest existing ancestor
      [['a/b/c', 'x']], // not an ancestor
      [['q/r', '']], // not a root
      [['a/b/c', '../..']], // hostile
      [['a/b/c', '.git']],
      [
        ['a/b/c', ''],
        ['a/b/c', 'a'],
      ], // duplicated
      [['a/b/c']],
      'a/b/c',
    ];
    for (const parents of bad) {
      const m = JSON.parse(text);
      m.captured.parents = parents;
      expect(() => decodeManifest(JSON.stringify(m), 'sha1'), JSON.stringify(parents)).toThrow(
        expect.objectContaining({ code: 'SNAPSHOT_CORRUPT' }),
      );
    }
  });

  it('a snapshot from before absent parents were recorded restores as it did then: the created directories stay', async () => {
    const dir = personRepo();
    const repo = await open(dir);
    const v0 = worktreeView(dir);
    const s = await repo.snapshot(['gen/api/client.ts']);
    const ref = 'refs/scalpel/main/default';
    const stored = JSON.parse(git(dir, ['show', `${ref}:manifest.json`]));
    expect(stored.captured.parents).toEqual([['gen/api/client.ts', '']]);
    delete stored.captured.parents;
    const blob = git(dir, ['hash-object', '-w', '--stdin'], { input: JSON.stringify(stored) }).trim();
    const lines = git(dir, ['ls-tree', ref])
      .trim()
      .split('\n')
      .map((l) => (l.endsWith('\tmanifest.json') ? `100644 blob ${blob}\tmanifest.json` : l));
    const tree = git(dir, ['mktree'], { input: lines.join('\n') + '\n' }).trim();
    git(dir, ['update-ref', ref, git(dir, ['commit-tree', tree, '-m', 'earlier version']).trim(), s.commit]);
    w(dir, 'gen/api/client.ts', 'agent\n');
    const r = await (await open(dir)).restore();
    expect(r.pruned).toEqual([]);
    expect(worktreeView(dir)).toEqual({ ...v0, gen: { type: 'dir' }, 'gen/api': { type: 'dir' } });
  });

  it('a snapshot stored in the object form by an earlier version restores', async () => {
    const dir = personRepo();
    const repo = await open(dir);
    const v0 = { git: gitView(dir), tree: worktreeView(dir) };
    const s = await repo.snapshot(['src', 'README.md']);
    // rewrite the snapshot commit with the manifest as git-scalpel/1 objects
    const shown = await repo.show({ id: s.id });
    const { commit: _c, ...m } = shown;
    void _c;
    const ref = 'refs/scalpel/main/default';
    const blob = git(dir, ['hash-object', '-w', '--stdin'], { input: JSON.stringify(m) }).trim();
    const lines = git(dir, ['ls-tree', ref])
      .trim()
      .split('\n')
      .map((l) => (l.endsWith('\tmanifest.json') ? `100644 blob ${blob}\tmanifest.json` : l));
    const tree = git(dir, ['mktree'], { input: lines.join('\n') + '\n' }).trim();
    const commit = git(dir, ['commit-tree', tree, '-m', 'old form']).trim();
    git(dir, ['update-ref', ref, commit, s.commit]);
    w(dir, 'src/app.ts', 'agent\n');
    git(dir, ['add', 'src']);
    await (await open(dir)).restore();
    expect({ git: gitView(dir), tree: worktreeView(dir) }).toEqual(v0);
  });
});

describe('scope path check', () => {
  it('the fast path accepts exactly what the full check accepts', async () => {
    const { checkScopeRoot } = await import('../../src/model/scope.js');
    const verdict = (p: string) => {
      try {
        checkScopeRoot(p);
        return 'ok';
      } catch (e) {
        return (e as { data?: { reason?: string } }).data?.reason ?? 'error';
      }
    };
    // the full check alone: the same input with a non-ASCII character appended to each component
    // takes the slow path; compare verdicts on the ASCII part
    const slow = (p: string) =>
      verdict(
        p
          .split('/')
          .map((c) => (c === '' || c === '.' || c === '..' || c.toLowerCase() === '.git' ? c : `${c}\u00e9`))
          .join('/'),
      );
    fc.assert(
      fc.property(
        fc.array(fc.constantFrom('a', 'b', '.', '..', '.git', '.GIT', '.gitx', 'x.git', '', '\0', ' ', 'a.b'), {
          minLength: 1,
          maxLength: 5,
        }),
        (parts) => {
          const p = parts.join('/');
          if (p === '') return;
          expect(verdict(p), JSON.stringify(p)).toBe(slow(p));
        },
      ),
      { numRuns: 2000 },
    );
  });
});

describe('sorting by path', () => {
  it('sortByPath orders exactly as compareRel (byte order), with ASCII, UTF-8 and escaped bytes mixed', async () => {
    const { sortByPath, compareRel: cmp } = await import('../../src/model/scope.js');
    const unit = fc.constantFrom(
      'a',
      'b',
      'z',
      '-',
      '.',
      '/',
      '0',
      '\u00e9',
      '\u00ff',
      '\u0100',
      '\ue000',
      '\uffff',
      '\ud83d\ude00',
      '\udc80',
      '\udcff',
    );
    fc.assert(
      fc.property(
        fc.array(
          fc.array(unit, { minLength: 1, maxLength: 6 }).map((u) => u.join('')),
          { maxLength: 40 },
        ),
        (paths) => {
          const items = paths.map((path, i) => ({ path, i }));
          const want = [...items].sort((x, y) => cmp(x.path, y.path) || x.i - y.i).map((x) => x.path);
          expect(sortByPath(items).map((x) => x.path)).toEqual(want);
        },
      ),
      { numRuns: 1000 },
    );
  });
});
