/**
 * Watched-worktree rows (group `watch`, issue 22 part 4): a shell command's baseline as the warm
 * server takes it (`shellBefore` in a long-lived process, the repository opened with
 * `OpenOptions.views` from git-scalpel/node's `watchWorktrees()` and an `OpenOptions.cache`, as the
 * server opens it), in the 100,000-file repository,
 * clean and with ten dirty files, against `git status --porcelain=v2 -uall` (process) in the same
 * run (DESIGN's target: ≤ 0.1×). Beside them the same warm process without the view (a walk of the
 * tree), for the share the view removes. Each timed baseline's command is finished untimed
 * (`shellAfter`), as a turn would; the after-step rows time that step instead (info: the target
 * names the baseline).
 */
import fs from 'node:fs';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import { openRepository, watchWorktrees } from 'git-scalpel/node';
import { group100k, git } from './rows-engine.mjs';

const SESSION = 'bench-watch';

export function watchRows(ctx, { log = (s) => console.log(s) } = {}) {
  const get = group100k(ctx, 'engine-snapshot-100k', log);
  let g = null;
  let host = null;
  const repos = {};
  let n = 0;
  const pending = { viewed: null, walked: null };
  const setup = async () => {
    if (g) return;
    g = await get();
    host = watchWorktrees();
    // as the server opens them: with a cache (the filesystem probed once, an index read kept while its file is unchanged)
    repos.viewed = await openRepository({ fs, dir: g.dir, views: host, cache: {} });
    repos.walked = await openRepository({ fs, dir: g.dir, cache: {} });
    const all = git(g.dir, ['ls-files']).split('\n').filter(Boolean);
    g.files = Array.from({ length: 10 }, (_, i) => all[Math.floor(((i + 0.5) / 10) * all.length)]);
    await repos.viewed.openTurn({ session: SESSION, label: 'bench watch' });
    // the view's first walk: every directory watched, every listing and stat read (untimed)
    const t0 = performance.now();
    await before('viewed');
    await finish('viewed');
    log(`  watch: first baseline through the view (watches attached, tree read) ${(performance.now() - t0).toFixed(0)} ms`);
  };
  async function before(which) {
    const key = `bench_${which}_${++n}`;
    pending[which] = key;
    return repos[which].shellBefore({ session: SESSION, key, command: 'npm test' });
  }
  async function finish(which) {
    const key = pending[which];
    pending[which] = null;
    if (key) await repos[which].shellAfter({ session: SESSION, key });
  }
  const status = () => spawnSync('git', ['status', '--porcelain=v2', '-uall'], { cwd: g.dir, encoding: 'utf8', maxBuffer: 1 << 28 });
  const checkStatus = (r) => {
    if (r.status !== 0) throw new Error(`git status: ${r.stderr}`);
  };
  const clean = () => git(g.dir, ['checkout', '-q', '--', '.']);
  const dirty = () => {
    for (let i = 0; i < 10; i++) fs.appendFileSync(path.join(g.dir, g.files[i]), `dirty ${n} ${i}\n`);
  };
  const viewed = (r) => {
    if (!r || !r.turn) throw new Error('no baseline');
    const s = repos.viewed.viewStatus;
    if (!s || s.state !== 'watching') throw new Error(`the view is not watching: ${JSON.stringify(s)}`);
  };
  const rows = [];
  // the dirty rows: ten tracked files the person (or the last command) edited again since the
  // previous baseline, each in its own directory; the index is not rewritten between runs (a
  // `git checkout` per run would make every baseline start from a new index: that is the row of
  // a command that rewrote the index, not of ten dirty files)
  for (const [label, isDirty] of [
    ['clean 100,000-file tree', false],
    ['ten dirty files edited again before each baseline, 100,000 entries', true],
  ]) {
    const prep = async (which) => {
      await finish(which);
      if (isDirty) dirty();
    };
    rows.push(
      {
        group: 'watch',
        name: `shell baseline, server warm (watched view), ${label} (in-process shellBefore)`,
        setup,
        prepare: { ours: () => prep('viewed'), peer: () => (isDirty ? dirty() : undefined) },
        ours: () => before('viewed'),
        check: { ours: viewed, peer: checkStatus },
        peerName: '`git status --porcelain=v2 -uall` (process)',
        peer: status,
        target: 0.1,
        after: async () => {
          await finish('viewed');
          clean();
        },
        runs: 11,
        warmup: 3,
      },
      {
        group: 'watch',
        name: `shell baseline, warm process without a view (a walk), ${label} (in-process shellBefore)`,
        setup,
        prepare: { ours: () => prep('walked'), peer: () => (isDirty ? dirty() : undefined) },
        ours: () => before('walked'),
        check: { peer: checkStatus },
        peerName: '`git status --porcelain=v2 -uall` (process)',
        peer: status,
        after: async () => {
          await finish('walked');
          clean();
        },
        runs: 7,
        warmup: 2,
      },
    );
  }
  // the step after the command (what a PostToolUse of Bash runs): what the command changed since
  // its baseline, a command that changed nothing and one that edited ten tracked files
  for (const [label, isDirty] of [
    ['a command that changed nothing', false],
    ['a command that edited ten files', true],
  ]) {
    rows.push({
      group: 'watch',
      name: `shell after-step, server warm (watched view), ${label}, 100,000 entries (in-process shellAfter)`,
      setup,
      prepare: {
        ours: async () => {
          await finish('viewed');
          await before('viewed');
          if (isDirty) dirty();
        },
        peer: () => (isDirty ? dirty() : undefined),
      },
      ours: () => finish('viewed'),
      check: { peer: checkStatus },
      peerName: '`git status --porcelain=v2 -uall` (process)',
      peer: status,
      after: async () => {
        await finish('viewed');
        clean();
      },
      runs: 11,
      warmup: 3,
    });
  }
  return rows;
}
