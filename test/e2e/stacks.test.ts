import { describe, expect, it } from 'vitest';
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, rmSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { git, makeTempRepo } from '../helpers/git.js';
import { gitView, worktreeView } from '../helpers/view.js';
import { open, openWatched, personRepo, w, rm } from './scenario.js';
import type { Repository } from '../../src/repo/repository.js';

/**
 * The agent stages and commits `src`, then it is all thrown away: `git reset --hard HEAD~1`
 * (optionally a branch switch there and back), reflogs expired, `git gc --prune=now`. Whatever
 * only the snapshots still name must survive this.
 */
function agentCommitsThenGc(dir: string, opts: { switchBranches?: boolean } = {}): void {
  git(dir, ['add', 'src']);
  git(dir, ['commit', '-qm', 'agent commit']);
  git(dir, ['reset', '-q', '--hard', 'HEAD~1']);
  if (opts.switchBranches) {
    git(dir, ['checkout', '-qb', 'elsewhere']);
    git(dir, ['checkout', '-q', 'main']);
  }
  git(dir, ['reflog', 'expire', '--expire=now', '--all']);
  git(dir, ['gc', '-q', '--prune=now']);
}

describe('snapshot stacks', () => {
  it('three snapshots with overlapping paths: undo the newest twice, push another, rewind to the first', async () => {
    const dir = personRepo();
    const repo = await open(dir);
    const v0 = { git: gitView(dir), tree: worktreeView(dir) };
    const s1 = await repo.snapshot(['src/app.ts', 'README.md'], { label: 'one' });
    w(dir, 'src/app.ts', 'edit 1\n');
    git(dir, ['add', 'src/app.ts']);
    const v1 = { git: gitView(dir), tree: worktreeView(dir) };
    await repo.snapshot(['src/app.ts', 'src/lib'], { label: 'two' });
    w(dir, 'src/app.ts', 'edit 2\n');
    w(dir, 'src/lib/util.ts', 'edit 2\n');
    const v2 = { git: gitView(dir), tree: worktreeView(dir) };
    await repo.snapshot(['README.md', 'notes.txt'], { label: 'three' });
    w(dir, 'README.md', 'edit 3\n');
    rm(dir, 'notes.txt');
    expect((await repo.list()).map((s) => s.label)).toEqual(['three', 'two', 'one']);
    await repo.restore();
    expect({ git: gitView(dir), tree: worktreeView(dir) }).toEqual(v2);
    await repo.restore();
    expect({ git: gitView(dir), tree: worktreeView(dir) }).toEqual(v1);
    await repo.snapshot(['src/new.ts', 'README.md'], { label: 'four' });
    w(dir, 'src/new.ts', 'edit 4\n');
    w(dir, 'README.md', 'edit 4\n');
    git(dir, ['add', 'src/new.ts']);
    const r = await repo.restore({ id: s1.id });
    expect(r.restored).toHaveLength(2);
    expect({ git: gitView(dir), tree: worktreeView(dir) }).toEqual(v0);
    expect(await repo.list()).toEqual([]);
  });

  it('--into extends a snapshot: the first capture of a path wins', async () => {
    const dir = personRepo();
    const repo = await open(dir);
    const v0 = worktreeView(dir);
    const s = await repo.snapshot(['src/app.ts']);
    w(dir, 'src/app.ts', 'first edit\n');
    await repo.snapshot(['src/app.ts', 'README.md'], { into: s.id });
    w(dir, 'src/app.ts', 'second edit\n');
    w(dir, 'README.md', 'edited\n');
    const list = await repo.list();
    expect(list).toHaveLength(1);
    expect(list[0].paths).toEqual(['README.md', 'src/app.ts']);
    await repo.restore();
    expect(worktreeView(dir)).toEqual(v0);
  });

  it('sessions never see or restore each other', async () => {
    const dir = personRepo();
    const repo = await open(dir);
    const v0 = worktreeView(dir);
    await repo.snapshot(['src/app.ts'], { session: 'agent-a' });
    await repo.snapshot(['README.md'], { session: 'agent-b' });
    w(dir, 'src/app.ts', 'a\n');
    w(dir, 'README.md', 'b\n');
    expect((await repo.list({ session: 'agent-a' })).map((s) => s.paths)).toEqual([['src/app.ts']]);
    await repo.restore({ session: 'agent-b' });
    const t = worktreeView(dir);
    expect(t['README.md']).toEqual(v0['README.md']);
    expect(t['src/app.ts']).not.toEqual(v0['src/app.ts']);
    await expect(repo.restore({ session: 'agent-b' })).rejects.toMatchObject({ code: 'SNAPSHOT_NOT_FOUND' });
    await repo.restore({ session: 'agent-a' });
    expect(worktreeView(dir)).toEqual(v0);
  });

  it('two processes pushing to one session at once never lose a snapshot', async () => {
    const dir = personRepo();
    const bin = join(process.cwd(), 'dist/git-scalpel.cjs');
    const runOne = (i: number) =>
      new Promise<string>((resolve) => {
        const p = spawn(process.execPath, [bin, '-C', dir, 'snapshot', '--label', `p${i}`, `file-${i}.txt`], {
          stdio: ['ignore', 'ignore', 'pipe'],
        });
        let err = '';
        p.stderr.on('data', (d: Buffer) => (err += d.toString()));
        p.on('close', (code) => resolve(code === 0 ? 'ok' : `exit ${code}: ${err.trim()}`));
      });
    const outcomes = await Promise.all(Array.from({ length: 12 }, (_, i) => runOne(i)));
    expect(outcomes).toEqual(Array(12).fill('ok'));
    const repo = await open(dir);
    const labels = (await repo.list()).map((s) => s.label).sort();
    expect(labels).toEqual(Array.from({ length: 12 }, (_, i) => `p${i}`).sort());
    expect(git(dir, ['fsck', '--no-dangling'])).toBe('');
  });

  it('a staged version only the snapshot still names (index/, not worktree/) survives gc --prune=now', async () => {
    const dir = personRepo(); // src/app.ts: one version staged, another in the worktree
    const repo = await open(dir);
    const staged = git(dir, ['rev-parse', ':src/app.ts']).trim();
    const v0 = { git: gitView(dir), tree: worktreeView(dir) };
    await repo.snapshot(['src', 'README.md']); // README.md: the person's unstaged edit, which reset --hard wipes
    expect(git(dir, ['rev-parse', 'refs/scalpel/main/default:worktree/src/app.ts']).trim()).not.toBe(staged);
    expect(git(dir, ['ls-tree', '--name-only', 'refs/scalpel/main/default:index']).split('\n')).toContain(staged);
    w(dir, 'src/app.ts', 'agent\n');
    agentCommitsThenGc(dir);
    expect(git(dir, ['cat-file', '-t', staged]).trim()).toBe('blob');
    await (await open(dir)).restore();
    expect({ git: gitView(dir), tree: worktreeView(dir) }).toEqual(v0);
    expect(git(dir, ['fsck', '--no-dangling', '--strict'])).toBe('');
  });

  it('a path restored from an older snapshot below one a newer snapshot saw absent gets its directory back', async () => {
    const dir = personRepo();
    const repo = await open(dir);
    await repo.snapshot(['pkg'], { session: 'one' }); // pkg absent
    w(dir, 'pkg/a.txt', 'made by the agent\n');
    const withFile = { git: gitView(dir), tree: worktreeView(dir) };
    const first = await repo.snapshot(['pkg/a.txt'], { session: 'two' }); // pkg/a.txt present
    await repo.restore({ session: 'one' }); // pkg removed again
    expect(existsSync(join(dir, 'pkg'))).toBe(false);
    await repo.snapshot(['pkg'], { session: 'two' }); // sees pkg absent
    // undo both of session two, newest first: pkg/a.txt is what the older one captured, so pkg is a directory
    await repo.restore({ session: 'two', id: first.id });
    expect({ git: gitView(dir), tree: worktreeView(dir) }).toEqual(withFile);
  });

  it('survives commits, reset --hard, reflog expiry and gc --prune=now, and packed refs', async () => {
    const dir = personRepo();
    git(dir, ['stash', '-q', '-u']);
    const repo = await open(dir);
    const v0 = { git: gitView(dir), tree: worktreeView(dir) };
    await repo.snapshot(['src', 'README.md']);
    w(dir, 'src/app.ts', 'agent\n');
    w(dir, 'src/brand-new.ts', 'agent\n');
    agentCommitsThenGc(dir, { switchBranches: true });
    git(dir, ['pack-refs', '--all']);
    expect(git(dir, ['count-objects', '-v'])).toMatch(/^count: 0$/m);
    w(dir, 'src/app.ts', 'agent again\n');
    w(dir, 'README.md', 'agent\n');
    git(dir, ['add', 'README.md']);
    // git show can display a pre-image
    expect(git(dir, ['show', 'refs/scalpel/main/default:worktree/src/app.ts'])).toBe(
      'export const a = 1;\nexport const b = 2;\nexport const c = 3;\n',
    );
    await (await open(dir)).restore();
    expect({ git: gitView(dir), tree: worktreeView(dir) }).toEqual(v0);
    expect(git(dir, ['fsck', '--no-dangling', '--strict'])).toBe('');
  });

  it('a snapshot of many new objects is one pack: it survives the same, git gc folds it in, and a restore reads it', async () => {
    const dir = personRepo();
    git(dir, ['stash', '-q', '-u']);
    for (let i = 0; i < 30; i++) w(dir, `gen/d${i % 5}/f${i}.txt`, `untracked ${i}\n`);
    const packs = () => readdirSync(join(dir, '.git/objects/pack')).filter((n) => n.endsWith('.pack'));
    const loose = () => /^count: (\d+)$/m.exec(git(dir, ['count-objects', '-v']))?.[1];
    const before = { packs: packs().length, loose: loose() };
    const repo = await open(dir);
    const v0 = { git: gitView(dir), tree: worktreeView(dir) };
    await repo.snapshot(['gen', 'src', 'README.md']);
    // 30 blobs, 7 trees, the manifest, the snapshot's root tree and its commit: one pack, nothing loose
    expect({ packs: packs().length, loose: loose() }).toEqual({ packs: before.packs + 1, loose: before.loose });
    expect(git(dir, ['count-objects', '-v'])).toMatch(/^in-pack: 40$/m);
    expect(git(dir, ['show', 'refs/scalpel/main/default:worktree/gen/d2/f7.txt'])).toBe('untracked 7\n');
    rmSync(join(dir, 'gen'), { recursive: true });
    w(dir, 'src/app.ts', 'agent\n');
    agentCommitsThenGc(dir);
    expect(packs().length).toBe(1); // everything reachable, the snapshot's objects too, in git's one pack
    w(dir, 'gen/d0/f0.txt', 'agent\n');
    await (await open(dir)).restore();
    expect({ git: gitView(dir), tree: worktreeView(dir) }).toEqual(v0);
    expect(git(dir, ['fsck', '--no-dangling', '--strict'])).toBe('');
  });

  it('git config scalpel.packThreshold sets the line, for the library and the command line alike (0: never a pack)', async () => {
    const dir = personRepo();
    const packs = () => readdirSync(join(dir, '.git/objects/pack')).filter((n) => n.endsWith('.pack')).length;
    const before = packs();
    git(dir, ['config', 'scalpel.packThreshold', '1']);
    execFileSync(process.execPath, [join(process.cwd(), 'dist/git-scalpel.cjs'), '-C', dir, 'snapshot', 'README.md']);
    expect(packs()).toBe(before + 1); // a blob-less snapshot of one file: manifest, trees and commit in one pack
    git(dir, ['config', 'scalpel.packThreshold', '0']);
    for (let i = 0; i < 30; i++) w(dir, `gen/f${i}.txt`, `${i}\n`);
    await (await open(dir)).snapshot(['gen']);
    expect(packs()).toBe(before + 1);
    expect(git(dir, ['show', 'refs/scalpel/main/default:worktree/gen/f29.txt'])).toBe('29\n');
    expect(git(dir, ['fsck', '--no-dangling', '--strict'])).toBe('');
  });
});

describe('housekeeping', () => {
  it('prune --keep N drops the oldest; list, show and log report what happened', async () => {
    const dir = personRepo();
    const repo = await open(dir);
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) {
      w(dir, `notes-${i}.txt`, `${i}\n`);
      ids.push((await repo.snapshot([`notes-${i}.txt`], { label: `turn ${i}` })).id);
    }
    const list = await repo.list();
    expect(list.map((s) => s.id)).toEqual([...ids].reverse());
    expect(list[0]).toMatchObject({ label: 'turn 4', sealed: false, paths: ['notes-4.txt'], items: 1, bytes: 2 });
    const dropped = await repo.prune({ keep: 2 });
    expect(dropped).toEqual([ids[2], ids[1], ids[0]]);
    expect((await repo.list()).map((s) => s.id)).toEqual([ids[4], ids[3]]);
    await expect(repo.show({ id: ids[0] })).rejects.toMatchObject({ code: 'SNAPSHOT_NOT_FOUND' });
    // the pruned snapshots' objects are no longer reachable from the session's ref
    git(dir, ['reflog', 'expire', '--expire=now', '--all']);
    git(dir, ['gc', '-q', '--prune=now']);
    expect(git(dir, ['rev-list', '--count', 'refs/scalpel/main/default']).trim()).toBe('2');
    w(dir, 'notes-4.txt', 'changed\n');
    await repo.seal();
    w(dir, 'notes-4.txt', 'someone else\n');
    await expect(repo.restore()).rejects.toMatchObject({ code: 'REFUSED' });
    await repo.restore({ force: true });
    const events = (await repo.log()).map((r) => r.event);
    expect(events).toEqual(['snapshot', 'snapshot', 'snapshot', 'snapshot', 'snapshot', 'prune', 'seal', 'refused', 'restore']);
    const restoreRecord = (await repo.log()).at(-1);
    expect(restoreRecord?.paths).toEqual(['notes-4.txt']);
  });
});

/** Ids of the trees the repository's object database stores from now on (every write of a snapshot goes through writeNew). */
function treesWritten(inner: Repository): string[] & { stop(): void } {
  const odb = inner.odb;
  const writeNew = odb.writeNew.bind(odb);
  const trees = Object.assign([] as string[], { stop: () => void (odb.writeNew = writeNew) });
  odb.writeNew = async (objects, opts) => {
    for (const o of objects) if (o.type === 'tree') trees.push(o.oid);
    return writeNew(objects, opts);
  };
  return trees;
}

describe("symbolic links named as git's own files", () => {
  it('are kept by id, not at their path (git fsck reports them in any tree): fsck --strict says nothing, gc keeps them, restore brings them back', async () => {
    const dir = personRepo();
    const links: Array<[string, string]> = [
      ['.gitmodules', 'a'],
      ['sub/.gitignore', 'b'],
      ['.GitAttributes', 'c'],
      ['sub/.mailmap', 'd'],
      ['GITMOD~1', 'e'],
      ['.gitignore.', 'f'],
    ];
    for (const [p, target] of links) {
      mkdirSync(join(dir, p, '..'), { recursive: true });
      symlinkSync(`target-${target}`, join(dir, p));
    }
    const v0 = { git: gitView(dir), tree: worktreeView(dir) };
    const repo = await open(dir);
    await repo.snapshot(['.gitmodules', 'sub', '.GitAttributes', 'GITMOD~1', '.gitignore.']);
    for (const [p] of links) rmSync(join(dir, p));
    git(dir, ['gc', '-q', '--prune=now']);
    const fsck = spawnSync('git', ['fsck', '--no-dangling', '--strict'], { cwd: dir, encoding: 'utf8' });
    expect({ code: fsck.status, out: fsck.stdout + fsck.stderr }).toEqual({ code: 0, out: '' });
    const names = git(dir, ['ls-tree', '-r', '--name-only', 'refs/scalpel/main/default']);
    expect(names).not.toMatch(/gitmodules|gitignore|mailmap|GitAttributes|~/);
    for (const [, t] of links) expect(names).toContain(`index/${git(dir, ['hash-object', '--stdin'], { input: `target-${t}` }).trim()}`);
    await (await open(dir)).restore();
    expect({ git: gitView(dir), tree: worktreeView(dir) }).toEqual(v0);
  });
});

describe('snapshot trees reuse the index cache tree where nothing differs', () => {
  it('a clean directory gets the tree git already has; a changed one is written, and both read back right', async () => {
    // more than 64 items in the scope, so the cache tree is consulted
    const dir = personRepo({ before: (d) => Array.from({ length: 80 }, (_, i) => w(d, `pkg/a/f${i}.txt`, `${i}\n`)) });
    git(dir, ['stash', '-q', '-u']);
    git(dir, ['write-tree']); // TREE valid everywhere
    w(dir, 'pkg/b/two.txt', 'untracked, in the scope\n');
    const { repo, inner } = await openWatched(dir);
    const writes = treesWritten(inner);
    await repo.snapshot(['pkg', 'src']);
    writes.stop();
    // worktree/, worktree/pkg, worktree/pkg/b and the root: pkg/a and src come from the cache tree,
    // and index/ is not needed (every id the index entries name is a clean file's, in worktree/)
    expect(writes.length).toBe(4);
    expect(() => git(dir, ['rev-parse', '--verify', '-q', 'refs/scalpel/main/default:index'])).toThrow();
    const ref = 'refs/scalpel/main/default';
    // pkg/a and src are clean: their trees are the index's own
    expect(git(dir, ['rev-parse', `${ref}:worktree/pkg/a`]).trim()).toBe(git(dir, ['rev-parse', 'HEAD:pkg/a']).trim());
    expect(git(dir, ['rev-parse', `${ref}:worktree/src`]).trim()).toBe(git(dir, ['rev-parse', 'HEAD:src']).trim());
    // pkg holds an untracked file: its tree is written and holds it
    expect(git(dir, ['rev-parse', `${ref}:worktree/pkg`]).trim()).not.toBe(git(dir, ['rev-parse', 'HEAD:pkg']).trim());
    expect(git(dir, ['show', `${ref}:worktree/pkg/b/two.txt`])).toBe('untracked, in the scope\n');
    expect(git(dir, ['fsck', '--no-dangling', '--strict'])).toBe('');
    // sealing rewrites the commit, building every tree from the captured files: the same ids
    const withReuse = git(dir, ['rev-parse', `${ref}:worktree`]).trim();
    await repo.seal();
    expect(git(dir, ['rev-parse', `${ref}:worktree`]).trim()).toBe(withReuse);
  });

  it('a whole clean worktree is the commit tree itself; reused trees nested under written ones read back right', async () => {
    const dir = makeTempRepo();
    for (let i = 0; i < 70; i++) w(dir, `a/b/c/f${i}.txt`, `${i}\n`);
    w(dir, 'a/b/d/g.txt', 'g\n');
    w(dir, 'a/h.txt', 'h\n');
    w(dir, 'top.txt', 'top\n');
    git(dir, ['add', '-A']);
    git(dir, ['commit', '-qm', 'base']);
    const ref = 'refs/scalpel/main/default';
    const { repo, inner } = await openWatched(dir);
    const trees = treesWritten(inner);
    await repo.snapshot(['.']);
    expect(git(dir, ['rev-parse', `${ref}:worktree`]).trim()).toBe(git(dir, ['rev-parse', 'HEAD^{tree}']).trim());
    expect(trees.length).toBe(1); // the snapshot's own root; worktree/ is the cache tree's root
    await repo.drop({ all: true });
    // a/b/d dirty: a/b/d, a/b, a, worktree/, index/ (the index's g.txt is no longer the file's) and
    // the snapshot root are written; a/b/c (70 files) is the commit's
    w(dir, 'a/b/d/g.txt', 'changed\n');
    trees.length = 0;
    await repo.snapshot(['.']);
    expect(trees.length).toBe(6);
    trees.stop();
    expect(git(dir, ['rev-parse', `${ref}:worktree/a/b/c`]).trim()).toBe(git(dir, ['rev-parse', 'HEAD:a/b/c']).trim());
    expect(git(dir, ['show', `${ref}:worktree/a/b/d/g.txt`])).toBe('changed\n');
    expect(git(dir, ['show', `${ref}:worktree/a/h.txt`])).toBe('h\n');
    expect(git(dir, ['fsck', '--no-dangling', '--strict'])).toBe('');
    const withReuse = git(dir, ['rev-parse', `${ref}:worktree`]).trim();
    await repo.seal(); // rewrites the commit building every tree from the captured files
    expect(git(dir, ['rev-parse', `${ref}:worktree`]).trim()).toBe(withReuse);
  });

  it('a cache-tree node whose tree object is missing is not reused: the snapshot writes that tree itself', async () => {
    const dir = makeTempRepo();
    for (let i = 0; i < 70; i++) w(dir, `a/f${i}.txt`, `${i}\n`);
    w(dir, 'b/g.txt', 'g\n');
    git(dir, ['add', '-A']);
    const root = git(dir, ['write-tree']).trim(); // TREE valid everywhere, trees written loose, no commit
    const aTree = git(dir, ['rev-parse', `${root}:a`]).trim();
    rmSync(join(dir, '.git/objects', aTree.slice(0, 2), aTree.slice(2)));
    expect(() => git(dir, ['cat-file', '-e', aTree])).toThrow();
    const repo = await open(dir);
    await repo.snapshot(['.']);
    const ref = 'refs/scalpel/main/default';
    expect(git(dir, ['rev-parse', `${ref}:worktree/a`]).trim()).toBe(aTree); // the same tree, written again
    expect(git(dir, ['show', `${ref}:worktree/a/f7.txt`])).toBe('7\n');
    expect(git(dir, ['fsck', '--no-dangling', '--strict'])).toBe('');
  });
});
