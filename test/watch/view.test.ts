/**
 * The watched-worktree view on Linux (src/fs/view.ts over src/platform/node-watch.ts, real
 * inotify): every shell walk through it finds what a walk of the disk finds, a write just before
 * a baseline is seen (the barrier), and anything the watcher cannot vouch for (a limit, a lost
 * event queue, a moved root) makes the view rebuild or step aside, never answer stale.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { execFileSync, spawnSync } from 'node:child_process';
import { chmodSync, linkSync, mkdirSync, renameSync, rmSync, symlinkSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createHash } from 'node:crypto';
import { watchWorktrees, type WatchHost } from '../../src/platform/node-watch.js';
import { personRepo, w } from '../e2e/scenario.js';
import { git } from '../helpers/git.js';
import { baselineOf, changesOf, openNode } from './walks.js';
import type { WorktreeView } from '../../src/fs/view.js';
import { openRepository } from '../../src/snapshot/engine.js';
import { nodeFs } from '../../src/fs/node.js';
import type { Repository } from '../../src/repo/repository.js';

const linux = process.platform === 'linux';
const blobId = (s: string) =>
  createHash('sha1')
    .update(`blob ${Buffer.byteLength(s)}\0${s}`)
    .digest('hex');
const hosts: WatchHost[] = [];
afterEach(() => {
  for (const h of hosts.splice(0)) h.close();
});

function host(opts: Parameters<typeof watchWorktrees>[0] = {}): WatchHost {
  const h = watchWorktrees(opts);
  hosts.push(h);
  return h;
}

/** The baseline through the view and through the disk, on the same state: equal, and the view's returned. */
async function same(repo: Repository, view: WorktreeView) {
  const viewed = await baselineOf(repo, view);
  const walked = await baselineOf(repo, null);
  expect(viewed.baseline).toEqual(walked.baseline);
  return viewed;
}

describe.runIf(linux)('the watched-worktree view', () => {
  it('answers from memory after its first walk, and every baseline equals a walk of the disk through edits, removals, renames, new directories, chmod, links and .gitignore edits', async () => {
    const dir = personRepo();
    const repo = await openNode(dir);
    const v = host().view(repo.worktree);
    await same(repo, v);
    const s1 = v.status();
    expect(s1.state).toBe('watching');
    expect(s1.directories).toBeGreaterThanOrEqual(3); // '', src, src/lib (build/ is ignored: not watched)
    expect(s1.listed).toBe(s1.directories);
    const steps: Array<() => void> = [
      () => w(dir, 'src/app.ts', 'changed\n'),
      () => w(dir, 'new/deep/er/file.txt', 'made with its directories\n'),
      () => rmSync(join(dir, 'src/lib'), { recursive: true }),
      () => renameSync(join(dir, 'new'), join(dir, 'renamed')),
      () => chmodSync(join(dir, 'README.md'), 0o755),
      () => symlinkSync('README.md', join(dir, 'renamed/link2')),
      () => w(dir, '.gitignore', '.env\n*.log\n'), // build/ no longer ignored
      () => w(dir, 'build/more.js', 'in a directory no longer ignored\n'),
      () => w(dir, '.gitignore', '.env\nbuild/\nrenamed/\n'),
      () => git(dir, ['add', '-A']),
      () => linkSync(join(dir, 'notes.txt'), join(dir, 'hard-link.txt')),
      () => w(dir, 'hard-link.txt', 'written through the other name\n'),
      () => unlinkSync(join(dir, 'hard-link.txt')),
      () => {
        // a directory replaced by another of the same name, and one by a file
        rmSync(join(dir, 'src'), { recursive: true });
        w(dir, 'src/other.ts', 'a new src\n');
        rmSync(join(dir, 'renamed'), { recursive: true });
        w(dir, 'renamed', 'a file now\n');
      },
    ];
    for (const step of steps) {
      step();
      await same(repo, v);
    }
    const s2 = v.status();
    expect(s2.state).toBe('watching');
    expect(s2.rebuilds).toBe(0);
    expect(s2.events).toBeGreaterThan(10);
  });

  it('a write completed just before a baseline is in it: 1,000 times in a row (the barrier)', async () => {
    const dir = personRepo();
    const repo = await openNode(dir);
    const v = host().view(repo.worktree);
    await baselineOf(repo, v);
    for (let i = 0; i < 1000; i++) {
      const rel = i % 3 === 0 ? 'src/app.ts' : i % 3 === 1 ? 'notes.txt' : `src/lib/n${i % 7}.txt`;
      writeFileSync(join(dir, rel), `write ${i}\n`);
      const { baseline } = await baselineOf(repo, v);
      const e = baseline.entries.find((x) => x[0] === rel);
      expect(e, `${i}: ${rel}`).toBeDefined();
      expect(e?.[1] === 'f' && e[4], `${i}: ${rel}`).toBe(`write ${i}\n`.length);
      expect(e?.[3], `${i}: ${rel}`).toBe(blobId(`write ${i}\n`));
      if (i % 100 === 99) expect(v.status().state).toBe('watching');
    }
  }, 120_000);

  it('files made in a new directory right after it (mkdir -p then writes, by another process) are all seen', async () => {
    const dir = personRepo();
    const repo = await openNode(dir);
    const v = host().view(repo.worktree);
    await baselineOf(repo, v);
    for (let i = 0; i < 30; i++) {
      execFileSync('sh', ['-c', `mkdir -p g${i}/a/b && echo 1 > g${i}/a/b/x && echo 2 > g${i}/a/y && mkdir g${i}/c && : > g${i}/c/z`], {
        cwd: dir,
      });
      const viewed = await same(repo, v);
      expect(viewed.baseline.entries.map((e) => e[0])).toEqual(expect.arrayContaining([`g${i}/a/b/x`, `g${i}/a/y`, `g${i}/c/z`]));
    }
  });

  it("after the command: shellChanges through the view equals the disk's, and so does the baseline after it", async () => {
    const dir = personRepo();
    const repo = await openNode(dir);
    const v = host().view(repo.worktree);
    const before = await same(repo, v);
    execFileSync('sh', ['-c', 'rm -rf src/lib && mkdir -p gen/x && echo a > gen/x/a && mv notes.txt gen/ && chmod +x README.md'], {
      cwd: dir,
    });
    const viewed = await changesOf(repo, before, v);
    const walked = await changesOf(repo, before, null);
    expect(viewed).toEqual(walked);
    expect(viewed.paths).toEqual(expect.arrayContaining(['README.md', 'gen', 'notes.txt', 'src/lib']));
  });

  it('more events in one read of the queue than it can hold (a lost IN_Q_OVERFLOW): the view is invalid, the next walk rebuilds it, and is exact', async () => {
    const dir = personRepo();
    const repo = await openNode(dir);
    const h = host();
    const v = h.view(repo.worktree);
    mkdirSync(join(dir, 'many'));
    w(dir, 'many/seed.txt', 'x\n');
    await baselineOf(repo, v);
    // the event loop is blocked while another process makes 20,000 files: the kernel's queue
    // (max_queued_events, 16,384 by default) overflows and drops the rest
    const r = spawnSync('sh', ['-c', 'i=0; while [ $i -lt 20000 ]; do : > many/f$i; i=$((i+1)); done'], { cwd: dir });
    expect(r.status).toBe(0);
    const viewed = await same(repo, v);
    expect(viewed.baseline.entries.filter((e) => e[0].startsWith('many/'))).toHaveLength(20001);
    const s = v.status();
    expect(s.lastLoss?.reason).toBe('overflow');
    expect(s.rebuilds).toBe(1);
    expect(s.state).toBe('watching');
  }, 120_000);

  it('a watch limit: the view is off (the walks go to the disk) and says why', async () => {
    const dir = personRepo();
    const repo = await openNode(dir);
    const h = host({ maxWatches: 2 });
    const v = h.view(repo.worktree);
    await same(repo, v);
    w(dir, 'src/lib/more.ts', 'more\n');
    await same(repo, v);
    const s = v.status();
    expect(s.state).toBe('off');
    expect(s.reason).toBe('limit');
    expect(s.directories).toBe(0);
    expect(await v.open(repo.worktree)).toBeNull();
    expect(h.status().watches).toBeLessThanOrEqual(1); // the barrier's own
  });

  it('the worktree moved away and another put in its place: rebuilt from the new one', async () => {
    const dir = personRepo();
    const repo = await openNode(dir);
    const v = host().view(repo.worktree);
    await same(repo, v);
    renameSync(dir, `${dir}-moved`);
    execFileSync('cp', ['-a', `${dir}-moved`, dir]);
    w(dir, 'notes.txt', 'only in the copy\n');
    const viewed = await same(repo, v);
    expect(viewed.baseline.entries.find((e) => e[0] === 'notes.txt')?.[4]).toBe('only in the copy\n'.length);
    expect(v.status().lastLoss?.reason).toBe('root-moved');
    rmSync(`${dir}-moved`, { recursive: true, force: true });
  });

  it("the barrier's directory removed (a cleaner of the temporary directory): a new one is made, the view goes on watching", async () => {
    const dir = personRepo();
    const repo = await openNode(dir);
    const h = host();
    const v = h.view(repo.worktree);
    await same(repo, v);
    const first = h.status().barrierDir as string;
    rmSync(first, { recursive: true });
    w(dir, 'notes.txt', 'after the cleaner\n');
    const viewed = await same(repo, v);
    expect(viewed.baseline.entries.find((e) => e[0] === 'notes.txt')?.[4]).toBe('after the cleaner\n'.length);
    expect(h.status().barrierDir).not.toBe(first);
    expect(v.status()).toMatchObject({ state: 'watching', rebuilds: 0 });
  });

  it("the server's seam: openRepository({ views }) walks shellBefore and shellAfter through the worktree's view, and viewStatus tells it", async () => {
    const dir = personRepo();
    const h = host();
    const repo = await openRepository({ fs: nodeFs(), dir, views: h });
    const plain = await openRepository({ fs: nodeFs(), dir });
    expect(plain.viewStatus).toBeNull();
    expect(repo.viewStatus).toMatchObject({ worktree: repo.worktree, state: 'watching', walks: 0 });
    await repo.openTurn({ session: 's', label: 'p' });
    await repo.shellBefore({ session: 's', key: 'k1', command: 'rm -rf src/lib' });
    rmSync(join(dir, 'src/lib'), { recursive: true });
    const after = await repo.shellAfter({ session: 's', key: 'k1' });
    expect(after?.paths).toEqual(['src/lib']);
    expect(repo.viewStatus).toMatchObject({ state: 'watching', walks: 2 });
    expect(h.status().views).toHaveLength(1);
  });

  it('a process with nothing else to wait for does not exit while a barrier waits (its watches are not persistent)', () => {
    const dir = personRepo();
    const script = [
      `import { watchWorktrees } from ${JSON.stringify(new URL('../../src/platform/node-watch.ts', import.meta.url).pathname)};`,
      'const h = watchWorktrees();',
      `const v = h.view(${JSON.stringify(dir)});`,
      `const r = await v.open(${JSON.stringify(dir)});`,
      "console.log(r ? 'reader' : 'none');",
      'h.close();',
    ].join('\n');
    const r = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { encoding: 'utf8' });
    expect(r.stderr).toBe('');
    expect(r.stdout).toBe('reader\n');
    expect(r.status).toBe(0);
  });

  it('another worktree, or a closed view: null (the walk goes to the disk)', async () => {
    const dir = personRepo();
    const repo = await openNode(dir);
    const h = host();
    const v = h.view(repo.worktree);
    expect(h.view(repo.worktree)).toBe(v);
    expect(await v.open(`${repo.worktree}/src`)).toBeNull();
    await same(repo, v);
    h.close();
    expect(v.status().state).toBe('off');
    expect(await v.open(repo.worktree)).toBeNull();
    await same(repo, v);
  });
});
