#!/usr/bin/env node
/**
 * `npm run bench:scale` — how restore and snapshot of 3 paths grow with the index: the same
 * rows at 10,000, 100,000 and 1,000,000 entries, each against git at the same size, and the peak
 * memory of one restore against the line DESIGN.md sets (≤ 4× the index file + 40 MB).
 *
 *   node --expose-gc bench/scale.mjs [--sizes 10000,100000,1000000] [--runs N] [--json FILE]
 *
 * Each size has its own repository under bench/work/scale-<n>/ made by make-repo.mjs (a fast-import
 * stream, `git reset --hard`, a refresh: ~2,000 directories per 100,000 files), reused while its
 * stamp matches; 1,000,000 files take a few minutes and ~5 GB of disk the first time. Ours is the
 * root entry as a user imports it (`git-scalpel`, node:fs passed in), warm, in this process; git is a
 * process per call, as always. Not part of `npm run bench` (the 1M build alone is minutes).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { openRepository } from 'git-scalpel';
import { makeRepo, WORK_DIR } from './make-repo.mjs';
import { cliOption, fmtMB, fmtMs, machineInfo, measureRow, runChild, stats, table } from './lib.mjs';
import {
  checkRestored,
  checkStashCreate,
  dirtyForRestore,
  edit,
  git,
  gitRestore,
  spreadPaths,
  SESSION_RESTORE,
  SESSION_SNAPSHOT,
  stashCreate,
} from './rows-engine.mjs';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const ROOT = path.dirname(HERE);
const argv = process.argv.slice(2);
const SIZES = String(cliOption('--sizes', '10000,100000,1000000', argv))
  .split(',')
  .map(Number);
const RUNS = Number(cliOption('--runs', 7, argv));
const JSON_OUT = cliOption('--json', path.join(WORK_DIR, 'scale.json'), argv);
if (SIZES.some((n) => !(Number.isInteger(n) && n >= 100)) || !(RUNS >= 1)) throw new Error('--sizes: whole numbers ≥ 100; --runs ≥ 1');

const info = machineInfo(ROOT);
console.log('git-scalpel scale');
console.log(`  date      ${info.date}`);
console.log(`  cpu       ${info.cpu} × ${info.cores} cores, ${info.memoryGiB} GiB RAM, ${info.os}`);
console.log(`  versions  node ${info.node}, git ${info.git}`);
console.log(`  load avg  ${info.loadavg.join(' ')} at start`);
console.log('');

const results = [];
for (const files of SIZES) {
  const dir = path.join(WORK_DIR, `scale-${files}`);
  const t0 = performance.now();
  const built = await makeRepo({ files, dirs: Math.max(5, Math.round(files / 50)), dir, log: (s) => console.log(`  ${s}`) });
  console.log(
    `  scale-${files}: ${built.built ? 'built' : 'reused'}, ${built.entries} entries, index ${fmtMB(built.indexBytes)} in ${((performance.now() - t0) / 1000).toFixed(1)} s`,
  );
  // a clean start: no stacks or stashes of an earlier run
  fs.rmSync(path.join(dir, '.git', 'scalpel'), { recursive: true, force: true });
  fs.rmSync(path.join(dir, '.git', 'refs', 'scalpel'), { recursive: true, force: true });
  git(dir, ['reset', '-q', '--hard', 'HEAD']);
  git(dir, ['update-index', '-q', '--refresh']);
  const paths = spreadPaths(dir, [0.01, 0.5, 0.99]);
  const g = { dir, paths, originals: paths.map((q) => fs.readFileSync(path.join(dir, q))), repo: await openRepository({ fs, dir }) };
  const runs = files >= 1_000_000 ? Math.min(RUNS, 5) : RUNS;
  const warmup = files >= 1_000_000 ? 1 : 2;

  const restore = await measureRow(
    {
      prepare: { ours: () => dirtyForRestore(g, { snapshot: true }), peer: () => dirtyForRestore(g, { snapshot: false }) },
      ours: () => g.repo.restore({ session: SESSION_RESTORE }),
      peer: () => gitRestore(g),
      check: {
        ours: (rep) => {
          if (!rep.indexWritten) throw new Error('restore wrote no index');
          checkRestored(g, 'restore');
        },
        peer: (res) => {
          if (res.status !== 0) throw new Error(`git restore: ${res.stderr}`);
          checkRestored(g, 'git restore');
        },
      },
    },
    { runs, warmup },
  );
  const snapshot = await measureRow(
    {
      prepare: {
        ours: async () => {
          await g.repo.drop({ all: true, session: SESSION_SNAPSHOT });
          edit(dir, paths);
        },
        peer: () => edit(dir, paths),
      },
      ours: () => g.repo.snapshot(paths, { session: SESSION_SNAPSHOT }),
      peer: () => stashCreate(dir),
      check: {
        ours: (i) => {
          if (i.items !== 3) throw new Error(`snapshot captured ${i.items} items`);
        },
        peer: checkStashCreate,
      },
    },
    { runs, warmup },
  );
  await g.repo.drop({ all: true, session: SESSION_SNAPSHOT });
  git(dir, ['checkout', '-q', '--', ...paths]);
  // peak memory of one restore, in a fresh process (bench/child-mem.mjs), median of 3
  const mem = [];
  for (let i = 0; i < 3; i++) {
    await dirtyForRestore(g, { snapshot: true });
    mem.push(runChild(path.join(HERE, 'child-mem.mjs'), ['restore', dir, SESSION_RESTORE]));
    checkRestored(g, 'restore (child process)');
  }
  const peak = stats(mem.map((m) => m.peakRssDelta)).median;
  const limit = 4 * built.indexBytes + 40 * 2 ** 20;
  results.push({ files, entries: built.entries, indexBytes: built.indexBytes, runs, warmup, restore, snapshot, peak, limit });
  console.log(
    `  scale-${files}: restore ${restore.ours.median.toFixed(1)} ms vs git ${restore.peer.median.toFixed(1)} ms; snapshot ${snapshot.ours.median.toFixed(1)} ms vs git stash create ${snapshot.peer.median.toFixed(1)} ms; peak ${fmtMB(peak)}`,
  );
}

console.log('');
console.log('Restore and snapshot of 3 paths by index size (ms: median (min–max); ratio = median ours / median git)');
console.log('');
console.log(
  table(
    [
      'entries',
      'index',
      'runs',
      'restore',
      'git restore',
      'ratio (≤ 0.7×)',
      'snapshot',
      'git stash create',
      'ratio (≤ 0.05×)',
      'peak RSS of a restore',
      'line: 4× index + 40 MB',
    ],
    results.map((r) => [
      r.entries.toLocaleString('en-US'),
      fmtMB(r.indexBytes),
      `${r.runs}+${r.warmup}`,
      fmtMs(r.restore.ours),
      fmtMs(r.restore.peer),
      `${(r.restore.ours.median / r.restore.peer.median).toFixed(3)}×`,
      fmtMs(r.snapshot.ours),
      fmtMs(r.snapshot.peer),
      `${(r.snapshot.ours.median / r.snapshot.peer.median).toFixed(3)}×`,
      fmtMB(r.peak),
      `${fmtMB(r.limit)}: ${r.peak <= r.limit ? 'within' : 'OVER'}`,
    ]),
    ['r', 'r', 'r', 'r', 'r', 'r', 'r', 'r', 'r', 'r', 'l'],
  ),
);
console.log(
  `load avg at end ${os
    .loadavg()
    .map((x) => x.toFixed(2))
    .join(' ')}`,
);
fs.mkdirSync(path.dirname(JSON_OUT), { recursive: true });
fs.writeFileSync(JSON_OUT, JSON.stringify({ info, results }, null, 2) + '\n');
console.log(`results written to ${path.relative(process.cwd(), JSON_OUT)}`);
