#!/usr/bin/env node
/**
 * `npm run bench` — every benchmark row side by side in one process run, printed as a table.
 *
 *   node --expose-gc bench/run.mjs [--runs N] [--warmup N] [--only codec|engine|TEXT] [--no-memory] [--no-gc] [--json FILE]
 *
 * Each row times our code and its peer interleaved (the order alternates per run), with
 * global.gc() before every timed call, warm-up runs discarded; the table shows medians with
 * min–max. Results are also written as JSON to bench/work/results.json (or --json FILE).
 * Row modules: rows-codec.mjs (group `codec`: index codec) and rows-engine.mjs (group `engine`:
 * snapshot/restore against git, the floor, a deep stack and a real tree) and rows-hooks.mjs (group
 * `hooks`: a harness's hook as a process), rows-apply.mjs (group `apply`) and rows-cold.mjs (group
 * `cold`: a fresh process per call through the root entry, and the command line's start-up), rows-rules.mjs
 * (group `rules`: what each rule of issue 19 costs, with and without it), rows-watch.mjs (group `watch`: a shell baseline in a warm process through the watched-worktree view).
 * `--only codec`, `--only engine`, `--only apply`, `--only hooks`, `--only rules` or `--only cold` runs one group; any other TEXT selects rows whose name or peer contains it.
 * Slow rows carry their own run counts (row.runs / row.warmup), which --runs / --warmup do not change.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { makeRepo, WORK_DIR } from './make-repo.mjs';
import { codecMemory, codecRows } from './rows-codec.mjs';
import { CAPTURES, engineMemory, engineRows } from './rows-engine.mjs';
import { hookRows } from './rows-hooks.mjs';
import { applyRows } from './rows-apply.mjs';
import { coldRows } from './rows-cold.mjs';
import { ruleRows } from './rows-rules.mjs';
import { watchRows } from './rows-watch.mjs';
import { disableForcedGc, fmtMB, fmtMs, hasGc, machineInfo, measureRow, sink, table, cliOption } from './lib.mjs';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const ROOT = path.dirname(HERE);

const argv = process.argv.slice(2);
const opt = (name, dflt) => cliOption(name, dflt, argv);
const RUNS = Number(opt('--runs', 15));
const WARMUP = Number(opt('--warmup', 5));
const ONLY = opt('--only', null);
const JSON_OUT = opt('--json', path.join(WORK_DIR, 'results.json'));
const MEMORY = !argv.includes('--no-memory'); // codec memory: skipped when --only is given; engine memory: kept for --only engine
const FORCE_GC = hasGc && !argv.includes('--no-gc');
if (!FORCE_GC) disableForcedGc();
if (!(RUNS >= 1) || !(WARMUP >= 0)) throw new Error('--runs must be ≥ 1 and --warmup ≥ 0');

const started = performance.now();
const info = machineInfo(ROOT);
console.log('git-scalpel benchmarks');
console.log(`  date      ${info.date}`);
console.log(`  cpu       ${info.cpu} × ${info.cores} cores, ${info.memoryGiB} GiB RAM, ${info.os}`);
console.log(`  versions  node ${info.node} (V8 ${info.v8}), git ${info.git}, isomorphic-git ${info.isomorphicGit}`);
console.log(`  checkout  ${info.checkout}`);
console.log(`  load avg  ${info.loadavg.join(' ')} (1/5/15 min) at start`);
console.log(
  `  method    median of ${RUNS} runs after ${WARMUP} warm-ups, ours and peer interleaved, ${FORCE_GC ? 'global.gc() before each timed call' : hasGc ? 'no forced GC (--no-gc: steady state, GC debt carries over between runs)' : 'NO global.gc (run with --expose-gc)'}`,
);
if (RUNS < 7) console.log('  warning   fewer than 7 runs: medians are noisy');

const repo = await makeRepo({ log: (s) => console.log(s) });
console.log(
  `  repo      ${path.relative(ROOT, repo.dir)}: ${repo.entries} entries, index ${repo.indexBytes} bytes (${fmtMB(repo.indexBytes)}), ` +
    (repo.built ? `built now in ${(repo.ms / 1000).toFixed(1)} s` : `reused (built in ${(repo.stamp.buildMs / 1000).toFixed(1)} s)`),
);
console.log('');

const ctx = { repo, root: ROOT };
const log = (s) => console.log(s);
let rows = [
  ...codecRows(ctx).map((r) => Object.assign(r, { group: 'codec' })),
  ...engineRows(ctx, { log }),
  ...applyRows(ctx, { log }),
  ...hookRows(ctx, { log }),
  ...ruleRows(ctx, { log }),
  ...watchRows(ctx, { log }),
  ...coldRows(ctx, { log }),
];
if (ONLY) rows = rows.filter((r) => r.group === ONLY || `${r.name} ${r.peerName ?? ''}`.includes(ONLY));
const ENGINE_MEMORY = MEMORY && (!ONLY || ONLY === 'engine' || 'peak memory of a restore'.includes(ONLY));

const results = [];
const groupSeconds = {};
for (const row of rows) {
  const t = performance.now();
  const runs = row.runs ?? RUNS;
  const warmup = row.warmup ?? WARMUP;
  if (row.setup) await row.setup();
  process.stdout.write(`  measuring ${row.name}${row.peerName ? ` vs ${row.peerName}` : ''} …`);
  const m = row.measure ? await row.measure({ runs, warmup }) : await measureRow(row, { runs, warmup });
  if (row.after) await row.after();
  const secs = (performance.now() - t) / 1000;
  process.stdout.write(` ${secs.toFixed(1)} s\n`);
  groupSeconds[row.group] = (groupSeconds[row.group] ?? 0) + secs;
  results.push({ row, runs, warmup, seconds: secs, ...m });
}

// ratios: against the row's own peer, or the peer median of the row named by `ref`
const byName = new Map();
for (const r of results) if (r.peer && !byName.has(r.row.name)) byName.set(r.row.name, r);
const lines = results.map((r) => {
  const refRow = r.peer ? r : r.row.ref ? byName.get(r.row.ref) : null;
  const ratio = refRow?.peer && r.ours ? r.ours.median / refRow.peer.median : null;
  // a row's line is a ratio to its peer (target) or, for the hook rows, wall time (targetMs)
  const pass =
    r.row.targetMs !== undefined && r.ours
      ? r.ours.median <= r.row.targetMs
      : r.row.target === undefined || ratio === null
        ? null
        : ratio <= r.row.target;
  r.ratio = ratio;
  r.pass = pass;
  return [
    r.row.name,
    `${r.runs}+${r.row.measure ? '—' : r.warmup}`,
    fmtMs(r.ours),
    r.peer ? r.row.peerName : refRow ? `(${refRow.row.peerName}, above)` : '—',
    r.peer ? fmtMs(r.peer) : '',
    ratio === null ? '—' : `${ratio.toFixed(3)}×${r.paired ? ` (paired ${r.paired.median.toFixed(3)}×)` : ''}`,
    r.row.targetMs !== undefined ? `≤ ${r.row.targetMs} ms` : r.row.target === undefined ? 'info' : `≤ ${r.row.target}×`,
    pass === null ? '' : pass ? 'PASS' : 'FAIL',
  ];
});
console.log('');
console.log(
  `Timing (ms: median (min–max) of the row's runs; runs+warm-ups per row; ratio = median ours / median peer, paired = median of per-run ratios)`,
);
console.log('');
console.log(
  table(['row', 'runs', 'ours ms', 'peer', 'peer ms', 'ratio', 'target', 'result'], lines, ['l', 'r', 'r', 'l', 'r', 'r', 'l', 'l']),
);
for (const r of results) if (r.row.note) console.log(`  ${r.row.name}: ${r.row.note}`);

let memory = null;
let restoreMemory = null;
if (ENGINE_MEMORY) {
  console.log('');
  console.log(
    'Peak memory of a restore (fresh `node --expose-gc bench/child-mem.mjs restore` process per sample, median of 3; baseline = RSS after imports + openRepository + gc)',
  );
  console.log('');
  const t = performance.now();
  restoreMemory = await engineMemory(ctx, { repeat: 3, log });
  groupSeconds.engine = (groupSeconds.engine ?? 0) + (performance.now() - t) / 1000;
  const m = restoreMemory;
  console.log(
    table(
      [
        'row',
        'index file',
        'peak RSS − baseline (samples)',
        '× file',
        'retained heap',
        'retained external',
        'target ≤ 4× file + 40 MB',
        'result',
      ],
      [
        [
          'peak memory of a restore (3 paths, worktree + index)',
          fmtMB(m.fileBytes),
          `${fmtMB(m.peakRssDelta)} (${m.samples.map((x) => (x / 2 ** 20).toFixed(1)).join(', ')})`,
          `${(m.peakRssDelta / m.fileBytes).toFixed(2)}×`,
          fmtMB(m.retainedHeapDelta),
          fmtMB(m.retainedExternalDelta),
          `≤ ${fmtMB(m.limit)}`,
          m.pass ? 'PASS' : 'FAIL',
        ],
      ],
      ['l', 'r', 'r', 'r', 'r', 'r', 'l', 'l'],
    ),
  );
}

if (MEMORY && !ONLY) {
  console.log('');
  console.log(
    'Peak memory (fresh `node --expose-gc bench/child-mem.mjs` process per sample, median of 3; baseline = RSS after imports + gc)',
  );
  console.log('');
  memory = codecMemory({ repo, repeat: 3 });
  const limit = (m) => 4 * m.fileBytes + 40 * 2 ** 20;
  console.log(
    table(
      ['what', 'index file', 'peak RSS − baseline', '× file', 'retained heap', 'retained external', 'restore target ≤ 4× file + 40 MB'],
      memory.map((m) => [
        m.label,
        fmtMB(m.fileBytes),
        fmtMB(m.peakRssDelta),
        `${(m.peakRssDelta / m.fileBytes).toFixed(2)}×`,
        fmtMB(m.retainedHeapDelta),
        fmtMB(m.retainedExternalDelta),
        `${fmtMB(limit(m))}: ${m.peakRssDelta <= limit(m) ? 'within' : 'over'} (info)`,
      ]),
      ['l', 'r', 'r', 'r', 'r', 'r', 'l'],
    ),
  );
}

const total = (performance.now() - started) / 1000;
console.log('');
console.log(
  `time per group: ${Object.entries(groupSeconds)
    .map(([g, x]) => `${g} ${x.toFixed(1)} s`)
    .join(', ')} (engine includes scratch-repo setup; capture row depth BENCH_CAPTURES=${CAPTURES})`,
);
console.log(
  `load avg at end ${os
    .loadavg()
    .map((x) => x.toFixed(2))
    .join(' ')}; total ${total.toFixed(1)} s; sink ${sink.value % 997}`,
);

fs.mkdirSync(path.dirname(JSON_OUT), { recursive: true });
fs.writeFileSync(
  JSON_OUT,
  JSON.stringify(
    {
      info,
      repo: { dir: repo.dir, entries: repo.entries, indexBytes: repo.indexBytes, buildMs: repo.built ? repo.ms : repo.stamp.buildMs },
      runs: RUNS,
      forcedGc: FORCE_GC,
      warmup: WARMUP,
      rows: results.map((r) => ({
        group: r.row.group,
        name: r.row.name,
        runs: r.runs,
        warmup: r.row.measure ? null : r.warmup,
        seconds: r.seconds,
        note: r.row.note ?? null,
        extra: r.row.extra ?? null,
        peer: r.row.peerName ?? null,
        ours: r.ours,
        peerStats: r.peer,
        ratio: r.ratio,
        pairedRatio: r.paired,
        target: r.row.target ?? null,
        targetMs: r.row.targetMs ?? null,
        pass: r.pass,
      })),
      memory,
      restoreMemory,
      groupSeconds,
      totalSeconds: total,
    },
    null,
    2,
  ) + '\n',
);
console.log(`results written to ${path.relative(process.cwd(), JSON_OUT)}`);
// A missed target is reported in the table, not turned into a failing exit code.
