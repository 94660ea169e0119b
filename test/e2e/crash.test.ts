import { describe, expect, it } from 'vitest';
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, readFileSync, readdirSync, symlinkSync, unlinkSync } from 'node:fs';
import { join } from 'node:path';
import { git, makeTempDir } from '../helpers/git.js';
import { gitView, worktreeView } from '../helpers/view.js';
import { personRepo, rm, w } from './scenario.js';
import { openRepository, nodeFs, decodeIndex } from '../../src/node.js';
import { faultyFs } from '../../src/fs/faulty.js';

/**
 * Crash safety: make the N-th mutating call (write, rename, unlink, symlink, mkdir, rmdir,
 * chmod) of a restore fail, for every N. After each failure no file in the scope is torn (each is
 * its post-edit or its restored content), the index is valid for git, and running the restore
 * again completes it exactly.
 */
function prepare(): { template: string; target: ReturnType<typeof worktreeView>; targetGit: ReturnType<typeof gitView>; scope: string[] } {
  const dir = personRepo();
  const targetTree = worktreeView(dir);
  const targetGit = gitView(dir);
  return { template: dir, target: targetTree, targetGit, scope: ['src', 'README.md', 'link', 'run.sh', 'newdir'] };
}

async function snapshotAndEdit(dir: string, scope: string[]): Promise<void> {
  const repo = await openRepository({ fs: nodeFs(), dir });
  await repo.snapshot(scope);
  w(dir, 'src/app.ts', 'agent rewrote this\n');
  w(dir, 'src/lib/util.ts', 'agent\n');
  rm(dir, 'src/lib/data.bin');
  w(dir, 'src/new/one.ts', 'new\n');
  w(dir, 'newdir/deep/two.ts', 'new\n');
  unlinkSync(join(dir, 'link'));
  w(dir, 'link', 'a file now\n');
  rm(dir, 'README.md');
  symlinkSync('src', join(dir, 'README.md'));
  git(dir, ['add', '-A', '--', 'src', 'newdir', 'link', 'README.md']);
  git(dir, ['update-index', '--chmod=-x', 'run.sh']);
}

function copyRepo(from: string): string {
  const to = join(makeTempDir(), 'repo');
  execFileSync('cp', ['-a', from, to]);
  return to;
}

describe('crash safety of restore', () => {
  it('fails at every mutating call in turn: never torn, index always valid, a rerun completes exactly', async () => {
    const { template, target, targetGit, scope } = prepare();
    await snapshotAndEdit(template, scope);
    const postEdit = worktreeView(template);

    // how many mutating calls does a clean restore make?
    const probe = copyRepo(template);
    const counter = faultyFs(nodeFs(), { failAt: 0 });
    await (await openRepository({ fs: counter, dir: probe })).restore();
    expect(worktreeView(probe)).toEqual(target);
    const total = counter.count;
    expect(total).toBeGreaterThan(15);

    for (let n = 1; n <= total; n++) {
      const dir = copyRepo(template);
      const fs = faultyFs(nodeFs(), { failAt: n });
      const repo = await openRepository({ fs, dir });
      const outcome = await repo.restore().then(
        () => 'completed',
        () => 'failed',
      );
      expect(fs.failed).toBe(true);
      if (outcome === 'completed') {
        // the fault hit a call the restore recovers from (a retried unlink of its own lock)
        expect(worktreeView(dir), `fault at call ${n} was recovered`).toEqual(target);
        expect(gitView(dir)).toEqual(targetGit);
        continue;
      }
      // every path is old or new, never anything else
      const now = worktreeView(dir);
      for (const [p, item] of Object.entries(now)) {
        if (p.includes('.scalpel-tmp-')) continue; // a temp file may survive only if its own unlink failed
        const ok = JSON.stringify(item) === JSON.stringify(postEdit[p]) || JSON.stringify(item) === JSON.stringify(target[p]);
        expect(ok, `call ${n}: ${p} is torn: ${JSON.stringify(item)}`).toBe(true);
      }
      // the index is valid for git and for us, and no lock of ours is left behind
      expect(() => git(dir, ['ls-files', '-s'])).not.toThrow();
      decodeIndex(new Uint8Array(readFileSync(join(dir, '.git/index'))));
      expect(readdirSync(join(dir, '.git')).filter((x) => x.endsWith('.lock'))).toEqual([]);
      // run it again: completes exactly
      await (await openRepository({ fs: nodeFs(), dir })).restore();
      expect(worktreeView(dir), `rerun after fault at call ${n}`).toEqual(target);
      expect(gitView(dir), `rerun after fault at call ${n}`).toEqual(targetGit);
      const leftovers = Object.keys(worktreeView(dir)).filter((p) => p.includes('.scalpel-tmp-'));
      expect(leftovers).toEqual([]);
    }
  }, 240_000);

  it('killed at every point (every later call fails too): a rerun takes over its own stale locks and completes', async () => {
    const { template, target, targetGit, scope } = prepare();
    await snapshotAndEdit(template, scope);
    const counter = faultyFs(nodeFs(), { failAt: 0 });
    await (await openRepository({ fs: counter, dir: copyRepo(template) })).restore();
    const total = counter.count;
    // the killed run's pid: a process that has exited
    const deadPid = spawnSync('true').pid as number;
    for (let n = 1; n <= total; n++) {
      const dir = copyRepo(template);
      const fs = faultyFs(nodeFs(), { failAt: n, after: 'crash' });
      const killed = await openRepository({ fs, dir, proc: { pid: deadPid, isAlive: () => true } });
      await killed.restore().catch(() => undefined);
      // the rerun (a new process) takes over the dead run's locks; if the killed run got as far as
      // popping the snapshot, there is nothing left to do
      const again = await openRepository({ fs: nodeFs(), dir });
      if ((await again.list()).length) await again.restore();
      expect(worktreeView(dir), `rerun after kill at call ${n}`).toEqual(target);
      expect(gitView(dir), `rerun after kill at call ${n}`).toEqual(targetGit);
      expect(readdirSync(join(dir, '.git')).filter((x) => x.endsWith('.lock'))).toEqual([]);
      expect(Object.keys(worktreeView(dir)).filter((p) => p.includes('.scalpel-tmp-'))).toEqual([]);
    }
  }, 240_000);

  it('never takes over a lock it did not create', async () => {
    const { template, scope } = prepare();
    await snapshotAndEdit(template, scope);
    const dir = copyRepo(template);
    const deadPid = spawnSync('true').pid as number;
    // a journal of a dead process of ours naming index.lock, but the lock file there now is git's (another inode)
    const { writeFileSync, mkdirSync, statSync } = await import('node:fs');
    writeFileSync(join(dir, '.git/index.lock'), 'old');
    const st = statSync(join(dir, '.git/index.lock'));
    const { rmSync } = await import('node:fs');
    rmSync(join(dir, '.git/index.lock'));
    mkdirSync(join(dir, '.git/scalpel/journal'), { recursive: true });
    writeFileSync(
      join(dir, `.git/scalpel/journal/${deadPid}.json`),
      JSON.stringify({ pid: deadPid, startedAt: '', locks: [{ path: join(dir, '.git/index.lock'), dev: st.dev, ino: st.ino }] }),
    );
    writeFileSync(join(dir, '.git/tmp-filler'), 'takes the old inode number if the fs reuses it');
    writeFileSync(join(dir, '.git/index.lock'), 'git holds this');
    if (statSync(join(dir, '.git/index.lock')).ino === st.ino) return; // the fs reused the inode: nothing to tell apart
    await expect((await openRepository({ fs: nodeFs(), dir })).restore()).rejects.toMatchObject({ code: 'INDEX_LOCKED' });
    expect(readFileSync(join(dir, '.git/index.lock'), 'utf8')).toBe('git holds this');
  });
});

/** `.idx` files in objects/pack whose `.pack` is missing, and how many packs have both (each verified by git). */
function checkPacks(dir: string): { orphanIdx: string[]; packs: number } {
  const packDir = join(dir, '.git/objects/pack');
  const files = existsSync(packDir) ? readdirSync(packDir) : [];
  const orphanIdx = files.filter((f) => f.endsWith('.idx') && !files.includes(f.replace(/\.idx$/, '.pack')));
  let packs = 0;
  for (const f of files.filter((x) => x.endsWith('.idx') && !orphanIdx.includes(x))) {
    git(dir, ['verify-pack', join(packDir, f)]);
    packs++;
  }
  return { orphanIdx, packs };
}

/** Edit every kind of path in the scope (content, index, deletion, type change), restore, and expect the state before. */
async function editAndRestore(
  dir: string,
  before: { tree: ReturnType<typeof worktreeView>; git: ReturnType<typeof gitView> },
  what: string,
): Promise<void> {
  w(dir, 'src/app.ts', 'agent rewrote this\n');
  rm(dir, 'src/lib/data.bin');
  w(dir, 'newdir/deep/two.ts', 'new\n');
  unlinkSync(join(dir, 'link'));
  w(dir, 'link', 'a file now\n');
  git(dir, ['add', '-A', '--', 'src', 'newdir', 'link']);
  expect(worktreeView(dir)).not.toEqual(before.tree);
  await (await openRepository({ fs: nodeFs(), dir })).restore();
  expect(worktreeView(dir), `${what}: worktree after restore`).toEqual(before.tree);
  expect(gitView(dir), `${what}: git after restore`).toEqual(before.git);
}

describe('crash safety of snapshot', () => {
  for (const after of ['pass', 'crash'] as const) {
    it(`every mutating call of a snapshot that writes a pack fails in turn (after the fault: ${after})`, async () => {
      const { template, scope } = prepare();
      const before = { tree: worktreeView(template), git: gitView(template) };
      expect(before.git.fsck).toBe('0\n');
      expect(git(template, ['for-each-ref', 'refs/scalpel'])).toBe('');

      // a clean snapshot: how many mutating calls, and its objects go into one pack
      const probe = copyRepo(template);
      const counter = faultyFs(nodeFs(), { failAt: 0 });
      await (await openRepository({ fs: counter, dir: probe, packThreshold: 1 })).snapshot(scope);
      const total = counter.count;
      expect(counter.calls.filter((c) => c.op === 'rename' && c.to?.endsWith('.idx')).map((c) => c.to)).toHaveLength(1);
      expect(checkPacks(probe)).toEqual({ orphanIdx: [], packs: 1 });
      expect(total).toBeGreaterThan(4);
      const deadPid = spawnSync('true').pid as number;

      let failures = 0;
      for (let n = 1; n <= total; n++) {
        const dir = copyRepo(template);
        const fs = faultyFs(nodeFs(), { failAt: n, after });
        const repo = await openRepository({ fs, dir, packThreshold: 1, proc: { pid: deadPid, isAlive: () => true } });
        const outcome = await repo.snapshot(scope, { label: `fault ${n}` }).then(
          (info) => info,
          (e: unknown) => e as Error,
        );
        expect(fs.failed).toBe(true);
        const hit = fs.calls.find((c) => c.n === n);
        const what = `fault at call ${n} (${hit?.op} ${hit?.path.slice(dir.length)})`;
        // whatever happened, the worktree and git's view (status, index, fsck) are as they were
        expect(worktreeView(dir), what).toEqual(before.tree);
        expect(gitView(dir), what).toEqual(before.git);
        const scalpelRefs = git(dir, ['for-each-ref', '--format=%(refname) %(objectname)', 'refs/scalpel']);
        expect(checkPacks(dir).orphanIdx, what).toEqual([]);
        if (!(outcome instanceof Error)) {
          // completed (the fault hit a call after the ref moved, e.g. the log): listed, and restorable
          expect(scalpelRefs, what).toContain(outcome.commit);
          const listed = await (await openRepository({ fs: nodeFs(), dir })).list();
          expect(
            listed.map((s) => s.id),
            what,
          ).toEqual([outcome.id]);
          await editAndRestore(dir, before, what);
          continue;
        }
        failures++;
        expect(scalpelRefs, what).toBe('');
        // a rerun (a new process) on a working fs snapshots, and a restore right after brings it all back
        const again = await openRepository({ fs: nodeFs(), dir });
        const info = await again.snapshot(scope);
        expect(
          (await again.list()).map((s) => s.id),
          what,
        ).toEqual([info.id]);
        expect(checkPacks(dir).orphanIdx, what).toEqual([]);
        await editAndRestore(dir, before, `rerun after ${what}`);
        expect(git(dir, ['for-each-ref', 'refs/scalpel']), what).toBe('');
      }
      // the test is not vacuous: most faults make the snapshot fail
      expect(failures).toBeGreaterThan(total / 2);
    }, 120_000);
  }
});
