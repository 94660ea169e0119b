import { describe, expect, it } from 'vitest';
import { execFileSync, spawnSync } from 'node:child_process';
import { readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { git, gitEnv, makeTempDir } from '../helpers/git.js';
import { gitView, worktreeView } from '../helpers/view.js';
import { personRepo, rm, w } from './scenario.js';
import { openRepository, nodeFs } from '../../src/node.js';

/**
 * DESIGN I6: a restore killed at ANY moment (SIGKILL: no finally block runs, no lock is released)
 * leaves nothing a rerun or git cannot get past. A child process runs the restore through the
 * built package with a filesystem that kills its own process just before its N-th mutating call,
 * for every N; then git must work (no lock left that is not ours to remove) and a rerun must
 * complete the restore exactly, leaving no temp file behind.
 */

const DIST = join(process.cwd(), 'dist/node.js');

const CHILD = `
import { openRepository, nodeFs } from ${JSON.stringify(DIST)};
import { openSync } from 'node:fs';
const [dir, at, torn] = [process.argv[2], Number(process.argv[3]), process.argv[4] === 'torn'];
const inner = nodeFs();
let n = 0;
const exclusive = [];
const MUTATING = new Set(['writeFile', 'rename', 'unlink', 'symlink', 'mkdir', 'rmdir', 'chmod', 'link', 'writeChunks']);
const fs = new Proxy(inner, {
  get(target, key) {
    const v = target[key];
    if (typeof v !== 'function') return v;
    if (!MUTATING.has(key)) return v.bind(target);
    return (...args) => {
      if (key === 'writeFile' && args[2]?.exclusive) exclusive.push(n + 1);
      if (++n === at) {
        // torn: killed inside an exclusive create, after the open made the file and before its
        // content was written (the one moment a single call cannot show)
        if (torn && key === 'writeFile' && args[2]?.exclusive) openSync(args[0], 'wx');
        process.kill(process.pid, 'SIGKILL');
      }
      return v.apply(target, args);
    };
  },
});
const repo = await openRepository({ fs, dir });
await repo.restore();
process.stdout.write(JSON.stringify({ total: n, exclusive }));
`;

function copyRepo(from: string): string {
  const to = join(makeTempDir(), 'repo');
  execFileSync('cp', ['-a', from, to]);
  return to;
}

/** Files of ours a killed run may leave only until the next run: none may remain after it. */
function strays(dir: string): string[] {
  const out: string[] = [];
  const walk = (d: string) => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      const p = join(d, e.name);
      if (e.isDirectory()) walk(p);
      else if (e.name.includes('.scalpel-') || e.name.endsWith('.lock')) out.push(p.slice(dir.length + 1));
    }
  };
  walk(dir);
  return out;
}

describe('a restore killed at every moment', () => {
  it('SIGKILL before each mutating call: git still works, a rerun completes exactly, nothing of ours is left', async () => {
    const template = personRepo();
    const target = worktreeView(template);
    const targetGit = gitView(template);
    const repo = await openRepository({ fs: nodeFs(), dir: template });
    await repo.snapshot(['src', 'README.md', 'newdir']);
    w(template, 'src/app.ts', 'agent rewrote this\n');
    rm(template, 'src/lib/data.bin');
    w(template, 'newdir/deep/two.ts', 'new\n');
    w(template, 'README.md', 'agent\n');
    git(template, ['add', '-A', '--', 'src', 'newdir', 'README.md']);

    const child = join(makeTempDir(), 'child.mjs');
    writeFileSync(child, CHILD);
    const run = (dir: string, at: number, torn = false) =>
      spawnSync(process.execPath, [child, dir, String(at), torn ? 'torn' : ''], { env: gitEnv(), encoding: 'utf8' });
    // how many mutating calls a whole restore makes
    const probe = copyRepo(template);
    const full = run(probe, 0);
    expect(full.status, full.stderr).toBe(0);
    const { total, exclusive } = JSON.parse(full.stdout) as { total: number; exclusive: number[] };
    expect(total).toBeGreaterThan(10);
    // every call, and every exclusive create also torn (the file made, its content not yet written)
    const runs = [...Array.from({ length: total }, (_, i) => ({ at: i + 1, torn: false })), ...exclusive.map((at) => ({ at, torn: true }))];
    expect(exclusive.length).toBeGreaterThan(2);
    expect(worktreeView(probe)).toEqual(target);

    for (const { at, torn } of runs) {
      const dir = copyRepo(template);
      const killed = run(dir, at, torn);
      expect(killed.signal, `call ${at}`).toBe('SIGKILL');
      // git is never blocked for good: either no lock is left, or a rerun of ours takes it away
      const again = await openRepository({ fs: nodeFs(), dir });
      const list = await again.list();
      if (list.length > 0) await again.restore();
      // and the next snapshot and restore take every lock the killed run left, ours to take
      await again.snapshot(['README.md']);
      await again.restore();
      expect(git(dir, ['status', '--porcelain']).length).toBeGreaterThan(0);
      expect(worktreeView(dir), `killed before call ${at}`).toEqual(target);
      expect(gitView(dir), `killed before call ${at}`).toEqual(targetGit);
      expect(strays(join(dir, '.git')), `killed before call ${at}`).toEqual([]);
      expect(
        strays(dir).filter((p) => !p.startsWith('.git/')),
        `killed before call ${at}`,
      ).toEqual([]);
    }
  }, 600_000);
});
