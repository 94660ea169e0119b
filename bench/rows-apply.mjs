/**
 * Apply rows (group `apply`, issue 13), in the 100,000-entry repository: `repo.apply(patch, { to:
 * 'index' })` of a 3-file patch in-process against `git apply --index` as a process; and the
 * loop with a failing check (apply, then the rollback; the check itself costs nothing here)
 * against what the same loop costs with git: `git stash create`, `git apply --index`, `git
 * checkout <stash> -- <paths>` (a tree with one unrelated edit, so that stash create has
 * something to record).
 */
import fs from 'node:fs';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import { group100k, git } from './rows-engine.mjs';

const SESSION = 'bench-apply';

export function applyRows(ctx, { log = (s) => console.log(s) } = {}) {
  const get = group100k(ctx, 'engine-restore-100k', log);
  let g = null;
  let patch = null;
  let other = null;
  const setup = async () => {
    g = await get();
    git(g.dir, ['checkout', '-q', '--', ...g.paths]);
    for (const p of g.paths) fs.appendFileSync(path.join(g.dir, p), 'a line the patch adds\n');
    patch = Buffer.from(git(g.dir, ['diff', '--binary', '--', ...g.paths]));
    git(g.dir, ['checkout', '-q', '--', ...g.paths]);
    const all = git(g.dir, ['ls-files']).split('\n').filter(Boolean);
    other = all[Math.floor(all.length / 3)];
  };
  const clean = async () => {
    git(g.dir, ['reset', '-q', '--', ...g.paths]);
    git(g.dir, ['checkout', '-q', '--', ...g.paths]);
    await g.repo.drop({ all: true, session: SESSION });
  };
  const applied = (yes) => () => {
    for (const p of g.paths) {
      const has = fs.readFileSync(path.join(g.dir, p), 'utf8').includes('a line the patch adds');
      if (has !== yes) throw new Error(`${p}: the patch is ${has ? '' : 'not '}there`);
    }
  };
  const gitApply = () => spawnSync('git', ['apply', '--index'], { cwd: g.dir, input: patch, encoding: 'utf8' });
  return [
    {
      group: 'apply',
      name: 'apply --index, a 3-file patch, 100,000 entries (in-process)',
      setup,
      prepare: { ours: clean, peer: clean },
      ours: () => g.repo.apply(patch, { session: SESSION, to: 'index' }),
      check: {
        ours: applied(true),
        peer: (r) => {
          if (r.status !== 0) throw new Error(`git apply --index: ${r.stderr}`);
          applied(true)();
        },
      },
      peerName: '`git apply --index` (process)',
      peer: gitApply,
      target: 1.0,
      after: clean,
    },
    {
      group: 'apply',
      name: 'apply + rollback (failing check), 3 files, 100,000 entries (in-process)',
      setup,
      prepare: {
        ours: async () => {
          await clean();
          fs.appendFileSync(path.join(g.dir, other), 'an unrelated edit\n');
        },
        peer: async () => {
          await clean();
          fs.appendFileSync(path.join(g.dir, other), 'an unrelated edit\n');
        },
      },
      ours: () => g.repo.apply(patch, { session: SESSION, to: 'index', check: async () => ({ code: 1, output: '' }) }),
      check: {
        ours: (r) => {
          if (!r.rolledBack) throw new Error('not rolled back');
          applied(false)();
        },
        peer: (r) => {
          if (r.status !== 0) throw new Error(`git rollback: ${r.stderr}`);
          applied(false)();
        },
      },
      peerName: '`git stash create` + `git apply --index` + `git checkout <stash> -- paths` (processes)',
      peer: () => {
        const stash = spawnSync('git', ['stash', 'create'], { cwd: g.dir, encoding: 'utf8' });
        const id = stash.stdout.trim();
        const a = gitApply();
        if (a.status !== 0) return a;
        return spawnSync('git', ['checkout', id, '--', ...g.paths], { cwd: g.dir, encoding: 'utf8' });
      },
      target: 1.0,
      after: async () => {
        await clean();
        git(g.dir, ['checkout', '-q', '--', other]);
      },
    },
  ];
}
