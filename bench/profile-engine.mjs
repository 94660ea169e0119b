#!/usr/bin/env node
/**
 * CPU profile of an engine operation, counting only the samples taken while the operation runs.
 *
 *   node bench/profile-engine.mjs --op restore|snapshot|snapshot-nm [--iterations N] [--node-flags "…"]
 *
 *   restore      repo.restore() of 3 paths, worktree + index, in bench/work/engine-restore-100k
 *   snapshot     repo.snapshot() of 3 edited paths, in bench/work/engine-restore-100k (then dropped)
 *   snapshot-nm  repo.snapshot(['node_modules']) with 10 files edited, in bench/work/engine-nm
 *
 * Re-runs itself as `node --cpu-prof --cpu-prof-interval 100 …`. The profiled process recreates
 * the operation's state before every iteration exactly as bench/rows-engine.mjs does (snapshot,
 * edits, `git add`) and records the monotonic time window of each operation; the summary keeps
 * only samples inside those windows, so the untimed preparation (and the git processes it waits
 * for) is left out. V8's profile timestamps and process.hrtime are both CLOCK_MONOTONIC µs.
 * Prints self time by function (dist/ file:line), total time of the library's functions (self and
 * callees), self time by file, and the share of "(idle)" — time the
 * main thread waited for the libuv thread pool (async fs calls) with nothing to run.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { makeRepo, WORK_DIR } from './make-repo.mjs';
import { cliOption } from './lib.mjs';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const ROOT = path.dirname(HERE);
const argv = process.argv.slice(2);
const opt = (name, dflt) => cliOption(name, dflt, argv);
const OP = opt('--op', 'restore');
const N = Number(opt('--iterations', OP === 'snapshot-nm' ? 6 : 40));
const quiet = () => {};

if (process.env.GIT_SCALPEL_PROFILE_CHILD) {
  const E = await import('./rows-engine.mjs');
  const repo100k = await makeRepo({});
  const ctx = { repo: repo100k, root: ROOT };
  const windows = [];
  const times = [];
  const timed = async (fn) => {
    const a = process.hrtime.bigint();
    await fn();
    const b = process.hrtime.bigint();
    windows.push([Number(a / 1000n), Number(b / 1000n)]);
    times.push(Number(b - a) / 1e6);
  };
  if (OP === 'restore' || OP === 'snapshot') {
    const g = await E.group100k(ctx, 'engine-restore-100k', quiet)();
    for (let i = 0; i < N + 3; i++) {
      if (OP === 'restore') {
        await E.dirtyForRestore(g, { snapshot: true });
        await timed(() => g.repo.restore({ session: E.SESSION_RESTORE }));
        E.checkRestored(g, 'restore');
      } else {
        await g.repo.drop({ all: true, session: E.SESSION_SNAPSHOT });
        E.edit(g.dir, g.paths);
        await timed(() => g.repo.snapshot(g.paths, { session: E.SESSION_SNAPSHOT }));
      }
    }
    if (OP === 'snapshot') {
      await g.repo.drop({ all: true, session: E.SESSION_SNAPSHOT });
      E.git(g.dir, ['checkout', '-q', '--', ...g.paths]);
    }
  } else if (OP === 'snapshot-nm') {
    const g = await E.nmGroup(ctx, quiet)();
    for (let i = 0; i < N + 1; i++) {
      await E.nmPrepare(g);
      g.sessions.push(`prof-${i}`);
      await timed(() => g.repo.snapshot(['node_modules'], { session: `prof-${i}` }));
    }
    await E.nmCleanup(g);
  } else {
    throw new Error(`unknown --op ${OP}`);
  }
  const warm = OP === 'snapshot-nm' ? 1 : 3; // the first iterations (JIT warm-up) are not counted
  console.log(
    JSON.stringify({
      windows: windows.slice(warm),
      msPerIteration: times.slice(warm).sort((a, b) => a - b)[Math.floor((times.length - warm) / 2)],
    }),
  );
} else {
  const outDir = path.join(WORK_DIR, 'prof');
  fs.mkdirSync(outDir, { recursive: true });
  const before = new Set(fs.readdirSync(outDir));
  const r = spawnSync(
    process.execPath,
    [
      '--expose-gc',
      ...(opt('--node-flags', '') || '').split(' ').filter(Boolean),
      '--cpu-prof',
      '--cpu-prof-interval',
      '100',
      '--cpu-prof-dir',
      outDir,
      fileURLToPath(import.meta.url),
      ...argv,
    ],
    {
      env: { ...process.env, GIT_SCALPEL_PROFILE_CHILD: '1' },
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'inherit'],
      maxBuffer: 64 << 20,
    },
  );
  if (r.status !== 0) throw new Error(`profiled run exited ${r.status}`);
  const { windows, msPerIteration } = JSON.parse(r.stdout.trim().split('\n').pop());
  console.log(
    `--op ${OP}: ${windows.length} iterations counted, median ${msPerIteration.toFixed(1)} ms per operation (wall, under the profiler)`,
  );
  const made = fs.readdirSync(outDir).filter((f) => f.endsWith('.cpuprofile') && !before.has(f));
  const profFile = path.join(outDir, made[made.length - 1]);
  summarise(JSON.parse(fs.readFileSync(profFile, 'utf8')), profFile, windows);
}

function summarise(prof, profFile, windows) {
  const byId = new Map(prof.nodes.map((n) => [n.id, n]));
  const self = new Map();
  const total = new Map();
  const parent = new Map();
  for (const n of prof.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const keyOf = (cf) => {
    const url = cf.url.startsWith('file:') ? path.relative(ROOT, fileURLToPath(cf.url)) : cf.url;
    return `${cf.functionName || '(anonymous)'}  ${url ? `${url}:${cf.lineNumber + 1}` : ''}`.trim();
  };
  const dt = prof.timeDeltas;
  let t = prof.startTime;
  let w = 0;
  let inWindows = 0;
  let all = 0;
  for (let i = 0; i < prof.samples.length; i++) {
    t += dt[i] ?? 0;
    const us = dt[i + 1] ?? 0; // a sample stands for the interval up to the next one
    all += us;
    while (w < windows.length && t > windows[w][1]) w++;
    if (w >= windows.length || t < windows[w][0]) continue;
    inWindows += us;
    const id = prof.samples[i];
    self.set(id, (self.get(id) ?? 0) + us);
    // total (inclusive) time: every distinct function on the sample's stack
    const seen = new Set();
    for (let n = id; n !== undefined; n = parent.get(n)) {
      const k = keyOf(byId.get(n).callFrame);
      if (seen.has(k)) continue;
      seen.add(k);
      total.set(k, (total.get(k) ?? 0) + us);
    }
  }
  const spanned = windows.reduce((a, [x, y]) => a + (y - x), 0);
  const fn = new Map();
  const files = new Map();
  for (const [id, us] of self) {
    const cf = byId.get(id).callFrame;
    const url = cf.url.startsWith('file:') ? path.relative(ROOT, fileURLToPath(cf.url)) : cf.url;
    const key = keyOf(cf);
    fn.set(key, (fn.get(key) ?? 0) + us);
    const fk = url || cf.functionName;
    files.set(fk, (files.get(fk) ?? 0) + us);
  }
  const pct = (us) => `${((100 * us) / inWindows).toFixed(1).padStart(5)}%`;
  console.log(
    `profile ${path.relative(ROOT, profFile)}: ${(all / 1000).toFixed(0)} ms sampled, ${(inWindows / 1000).toFixed(0)} ms inside the ${windows.length} operation windows ` +
      `(windows span ${(spanned / 1000).toFixed(0)} ms); percentages are of the in-window samples`,
  );
  console.log('\nself time by function:');
  for (const [k, us] of [...fn].sort((a, b) => b[1] - a[1]).slice(0, 30))
    console.log(`  ${pct(us)}  ${(us / 1000).toFixed(0).padStart(6)} ms  ${k}`);
  console.log('\ntotal time (self and callees) by function, library code only:');
  const lib = [...total].filter(([k]) => k.includes('dist/'));
  for (const [k, us] of lib.sort((a, b) => b[1] - a[1]).slice(0, 30))
    console.log(`  ${pct(us)}  ${(us / 1000).toFixed(0).padStart(6)} ms  ${k}`);
  console.log('\nself time by file:');
  for (const [k, us] of [...files].sort((a, b) => b[1] - a[1]).slice(0, 15))
    console.log(`  ${pct(us)}  ${(us / 1000).toFixed(0).padStart(6)} ms  ${k}`);
}
