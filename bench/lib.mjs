/**
 * Benchmark plumbing shared by the row modules: side-by-side timing, statistics, child-process
 * memory probes, machine info and table printing. Plain ESM, no dependencies.
 *
 * `paired` is the median of per-run ratios ours/peer (each pair measured back to back), which
 * drifts less than the ratio of medians when the machine's load changes during a row.
 *
 * A row is
 *   {
 *     name,                        // what is measured (ours)
 *     ours: (prep) => result,      // timed; sync or async
 *     peer?: (prep) => result,     // timed, interleaved with ours (order alternates per run)
 *     peerName?,                   // label of the peer column
 *     prepare?: { ours?, peer? },  // untimed, before each timed call; its value is passed in
 *     check?: { ours?, peer? },    // untimed, after each timed call: (result, prep) => void, throws on a wrong result
 *     ref?,                        // name of another row whose peer median this row's ratio is taken against
 *     target?: number,             // max ratio ours/peer; omitted = informational
 *     note?,
 *     group?,                      // 'codec' | 'engine': selectable with run.mjs --only GROUP
 *     runs?, warmup?,              // this row's own counts (slow rows), instead of run.mjs's --runs/--warmup
 *     setup?: async () => void,    // untimed, once before the row is measured (e.g. build a scratch repo)
 *     measure?: async ({ runs, warmup }) => { ours, peer, paired },  // replaces measureRow for rows
 *                                  // that are not alternating calls (e.g. a capture after 5,000 others)
 *     after?: async () => void,    // untimed, once after the row (clean-up)
 *   }
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createRequire } from 'node:module';

let gc = typeof globalThis.gc === 'function' ? globalThis.gc : null;
export const hasGc = gc !== null;
/** Diagnostic: stop forcing a full GC before each timed call (steady-state numbers). */
export function disableForcedGc() {
  gc = null;
}

/** The value after `name` on the command line (`--runs 5`), or `dflt`. */
export function cliOption(name, dflt, argv = process.argv.slice(2)) {
  const i = argv.indexOf(name);
  return i >= 0 ? argv[i + 1] : dflt;
}

/** Something timed code writes to, so its work cannot be optimised away. */
export const sink = { value: 0 };

export function stats(xs) {
  const s = [...xs].sort((a, b) => a - b);
  const n = s.length;
  const median = n === 0 ? NaN : n % 2 ? s[(n - 1) / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
  return { n, median, min: s[0], max: s[n - 1], mean: s.reduce((a, b) => a + b, 0) / n, samples: xs };
}

/** One timed call (after a forced full GC unless disabled): returns [ms, result]. */
export async function timeCall(fn, prep) {
  return timeOnce(fn, prep);
}

async function timeOnce(fn, prep) {
  if (gc) {
    gc();
    gc();
  }
  const t0 = performance.now();
  let r = fn(prep);
  if (r && typeof r.then === 'function') r = await r;
  return [performance.now() - t0, r];
}

/** Time one row: warm-ups discarded, then `runs` timed calls per side, ours and peer interleaved. */
export async function measureRow(row, { runs, warmup }) {
  const out = { ours: [], peer: [] };
  for (let i = 0; i < warmup + runs; i++) {
    const order = i % 2 === 0 ? ['ours', 'peer'] : ['peer', 'ours'];
    for (const side of order) {
      const fn = row[side];
      if (!fn) continue;
      const prep = row.prepare?.[side] ? await row.prepare[side]() : undefined;
      const [ms, result] = await timeOnce(fn, prep);
      if (row.check?.[side]) row.check[side](result, prep);
      if (i >= warmup) out[side].push(ms);
    }
  }
  const paired = out.ours.length && out.peer.length ? stats(out.ours.map((x, i) => x / out.peer[i])) : null;
  return { ours: out.ours.length ? stats(out.ours) : null, peer: out.peer.length ? stats(out.peer) : null, paired };
}

/** Run `node --expose-gc <script> ...args` in a fresh process; it prints one JSON line last. */
export function runChild(script, args, { cwd } = {}) {
  const r = spawnSync(process.execPath, ['--expose-gc', script, ...args], { cwd, encoding: 'utf8', maxBuffer: 16 << 20 });
  if (r.status !== 0) throw new Error(`${path.basename(script)} ${args.join(' ')} exited ${r.status}: ${r.stderr}`);
  const lines = r.stdout.trim().split('\n');
  return JSON.parse(lines[lines.length - 1]);
}

function cmd(command, args) {
  const r = spawnSync(command, args, { encoding: 'utf8' });
  return r.status === 0 ? r.stdout.trim() : null;
}

export function machineInfo(root) {
  let cpu = os.cpus()[0]?.model ?? 'unknown';
  try {
    const m = /^model name\s*:\s*(.*)$/m.exec(fs.readFileSync('/proc/cpuinfo', 'utf8'));
    if (m) cpu = m[1];
  } catch {
    /* not Linux */
  }
  const require = createRequire(path.join(root, 'package.json'));
  let isogit = 'not installed';
  try {
    isogit = JSON.parse(fs.readFileSync(path.join(path.dirname(require.resolve('isomorphic-git')), 'package.json'), 'utf8')).version;
  } catch {
    /* optional */
  }
  const head = cmd('git', ['-C', root, 'rev-parse', '--short', 'HEAD']);
  const dirty = cmd('git', ['-C', root, 'status', '--porcelain', '--untracked-files=no', '--', 'src']);
  return {
    date: new Date().toISOString(),
    cpu,
    cores: os.cpus().length,
    memoryGiB: +(os.totalmem() / 2 ** 30).toFixed(1),
    os: `${os.type()} ${os.release()} ${os.arch()}`,
    node: process.version,
    v8: process.versions.v8,
    git: (cmd('git', ['--version']) ?? 'not found').replace(/^git version /, ''),
    isomorphicGit: isogit,
    checkout: head ? `${head}${dirty ? ' + uncommitted changes in src/' : ''}` : 'unknown',
    loadavg: os.loadavg().map((x) => +x.toFixed(2)),
    gcExposed: hasGc,
  };
}

export function fmtMs(s) {
  if (!s) return '—';
  const f = (x) => (x >= 100 ? x.toFixed(0) : x >= 10 ? x.toFixed(1) : x.toFixed(2));
  return `${f(s.median)} (${f(s.min)}–${f(s.max)})`;
}

export function fmtMB(bytes) {
  return `${(bytes / 2 ** 20).toFixed(1)} MB`;
}

/** Plain-text table; also valid GitHub markdown. */
export function table(headers, rows, align) {
  const cells = [headers, ...rows].map((r) => r.map((c) => String(c)));
  const w = headers.map((_, i) => Math.max(3, ...cells.map((r) => r[i].length)));
  const line = (r) => '| ' + r.map((c, i) => (align?.[i] === 'r' ? c.padStart(w[i]) : c.padEnd(w[i]))).join(' | ') + ' |';
  const sep = '| ' + w.map((n, i) => (align?.[i] === 'r' ? '-'.repeat(n - 1) + ':' : '-'.repeat(n))).join(' | ') + ' |';
  return [line(cells[0]), sep, ...cells.slice(1).map(line)].join('\n');
}
