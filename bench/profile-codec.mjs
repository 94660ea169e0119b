#!/usr/bin/env node
/**
 * CPU profile of the codec row (read + decode + visit + encode), summarised by self time.
 *
 *   node bench/profile-codec.mjs [--iterations N] [--pure] [--part full|decode|visit|encode] [--gc] [--node-flags "…"]
 *
 * --node-flags "…" passes extra flags to the profiled node (e.g. "--no-turbo-inlining" to charge
 * inlined getters to themselves instead of their caller).
 * --gc forces a full GC before every iteration, as bench/run.mjs does between timed runs (the
 * forced GCs themselves then show up under "(garbage collector)" too; compare with and without).
 *
 * Re-runs itself as `node --cpu-prof --cpu-prof-interval 100 …` on the benchmark repository's
 * index, then reads the .cpuprofile (kept under bench/work/prof/) and prints the hottest
 * functions by self time with their dist/ file and line, plus totals per file.
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

if (process.env.GIT_SCALPEL_PROFILE_CHILD) {
  // the profiled process, through the root entry as users import it (and as bench/run.mjs does):
  // dist/git-scalpel-node.cjs, a bundle, not the unbundled dist/node.js (V8 treats the two
  // differently, e.g. which module-level constants stay alive)
  const { decodeIndex, encodeIndex, pureHash } = await import('git-scalpel');
  const { readBytes, visit } = await import('./rows-codec.mjs');
  const file = process.env.GIT_SCALPEL_PROFILE_CHILD;
  const n = Number(opt('--iterations', 60));
  const part = opt('--part', 'full');
  const o = argv.includes('--pure') ? { hash: pureHash } : undefined;
  let sink = 0;
  const t0 = performance.now();
  const forceGc = argv.includes('--gc');
  for (let i = 0; i < n; i++) {
    if (forceGc) globalThis.gc();
    if (part === 'full') {
      const index = decodeIndex(readBytes(file), o);
      sink += visit(index);
      sink += encodeIndex(index, o).length;
    } else if (part === 'decode') {
      sink += decodeIndex(readBytes(file), o).entries.length;
    } else if (part === 'visit') {
      sink += visit(decodeIndex(readBytes(file), o));
    } else if (part === 'encode') {
      sink += encodeIndex(decodeIndex(readBytes(file), o), o).length;
    }
  }
  console.log(JSON.stringify({ sink, msPerIteration: (performance.now() - t0) / n }));
} else {
  const repo = await makeRepo({ log: (s) => console.log(s) });
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
    { env: { ...process.env, GIT_SCALPEL_PROFILE_CHILD: repo.indexPath }, encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] },
  );
  if (r.status !== 0) throw new Error(`profiled run exited ${r.status}`);
  const { msPerIteration } = JSON.parse(r.stdout.trim().split('\n').pop());
  console.log(`${argv.join(' ') || '(defaults)'}: ${msPerIteration.toFixed(1)} ms per iteration (wall, under the profiler)`);
  const made = fs.readdirSync(outDir).filter((f) => f.endsWith('.cpuprofile') && !before.has(f));
  const profFile = path.join(outDir, made[made.length - 1]);
  summarise(JSON.parse(fs.readFileSync(profFile, 'utf8')), profFile);
}

function summarise(prof, profFile) {
  const byId = new Map(prof.nodes.map((n) => [n.id, n]));
  const self = new Map();
  const dt = prof.timeDeltas;
  for (let i = 0; i < prof.samples.length; i++) {
    const id = prof.samples[i];
    self.set(id, (self.get(id) ?? 0) + (dt[i] ?? 0));
  }
  const total = [...self.values()].reduce((a, b) => a + b, 0);
  const fn = new Map();
  const files = new Map();
  for (const [id, us] of self) {
    const cf = byId.get(id).callFrame;
    const url = cf.url.startsWith('file:') ? path.relative(ROOT, fileURLToPath(cf.url)) : cf.url;
    const key = `${cf.functionName || '(anonymous)'}  ${url ? `${url}:${cf.lineNumber + 1}` : ''}`.trim();
    fn.set(key, (fn.get(key) ?? 0) + us);
    const fk = url || cf.functionName;
    files.set(fk, (files.get(fk) ?? 0) + us);
  }
  const pct = (us) => `${((100 * us) / total).toFixed(1).padStart(5)}%`;
  console.log(`profile ${path.relative(ROOT, profFile)}: ${(total / 1000).toFixed(0)} ms sampled`);
  console.log('\nself time by function:');
  for (const [k, us] of [...fn].sort((a, b) => b[1] - a[1]).slice(0, 25))
    console.log(`  ${pct(us)}  ${(us / 1000).toFixed(0).padStart(6)} ms  ${k}`);
  console.log('\nself time by file:');
  for (const [k, us] of [...files].sort((a, b) => b[1] - a[1]).slice(0, 12))
    console.log(`  ${pct(us)}  ${(us / 1000).toFixed(0).padStart(6)} ms  ${k}`);
}
