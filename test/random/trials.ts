/**
 * Running random trials: seeds, budgets, and what a failure prints (the seed, the failure, the
 * shrunk sequence as code for regressions.test.ts, the command that replays it).
 *
 * Environment:
 *   RANDOM_RUNS=N        trials to run (default: the caller's)
 *   RANDOM_BUDGET_MS=N   stop starting trials after this long
 *   RANDOM_SEED=S        run exactly this seed (a failure's seed), nothing else
 *   RANDOM_TRACE=FILE    replay (and shrink) the trace in FILE: the JSON a failure saves, or the
 *                        printed sequence (from `const A = agent(...)` to `]));`)
 *   RANDOM_OUT=DIR       where a failure's trace is saved as JSON (default: $TMPDIR/git-scalpel-random)
 *   RANDOM_BASE=S        the first seed (seeds are BASE, BASE+1, ...)
 *   RANDOM_STEPS=N       main steps per trial (a path/step limit for a replay)
 *   RANDOM_SHRINK_MS=N   time for shrinking a failure (0: do not shrink)
 *   RANDOM_STRICT=1      soft failures (unjustified refusals) fail too
 *   RANDOM_ALL=1         generate every trigger, also those of known open bugs (known.ts)
 *   RANDOM_GATES=a,b     the gates in force instead of known.ts's list
 *   RANDOM_UNDO=0|1      force `rewind --undo` off or on (default: when the usage mentions it)
 *   RANDOM_SERVER=0|1|odd hook events through the warm server's client (cli.ts Transport): none, all,
 *                        or the odd seeds (the long run's default; a failure's replay line says which)
 *   RANDOM_VERBOSE=1     print every step
 *   RANDOM_LOG=FILE      append progress to FILE as it goes
 */
import { appendFileSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Generator, sessionsFor } from './gen.js';
import { currentTransport, setTransport, transportFor } from './cli.js';
import { runTrace, type Failure, type Outcome } from './run.js';
import { shrink } from './shrink.js';
import { parseTrace, traceText, type Trace } from './trace.js';

export interface TrialsReport {
  trials: number;
  ms: number;
  failed: Array<{ seed: number; failure: Failure; report: string }>;
  soft: Array<{ seed: number; failure: Failure }>;
  hookCalls: number;
  steps: number;
  rewinds: Outcome['rewinds'];
}

function num(v: string | undefined, d: number): number {
  return v === undefined || v === '' ? d : Number(v);
}

/** console.log, and RANDOM_LOG's file as it goes (vitest shows a test's output when it ends) */
function defaultLog(s: string): void {
  console.log(s);
  if (process.env.RANDOM_LOG) appendFileSync(process.env.RANDOM_LOG, s + '\n');
}

export function runTrials(
  defaults: { runs: number; budgetMs: number; base: number; shrinkMs: number; shortTrials?: boolean; server?: '0' | '1' | 'odd' },
  log: (s: string) => void = defaultLog,
): TrialsReport {
  const t0 = Date.now();
  const single = process.env.RANDOM_SEED;
  const runs = single !== undefined ? 1 : num(process.env.RANDOM_RUNS, defaults.runs);
  const budget = num(process.env.RANDOM_BUDGET_MS, defaults.budgetMs);
  const base = single !== undefined ? Number(single) : num(process.env.RANDOM_BASE, defaults.base);
  const shrinkMs = num(process.env.RANDOM_SHRINK_MS, defaults.shrinkMs);
  const stepsLimit = process.env.RANDOM_STEPS ? Number(process.env.RANDOM_STEPS) : undefined;
  const report: TrialsReport = {
    trials: 0,
    ms: 0,
    failed: [],
    soft: [],
    hookCalls: 0,
    steps: 0,
    rewinds: { done: 0, refused: 0, forced: 0, undone: 0, paths: 0 },
  };
  const replay: Trace | null = process.env.RANDOM_TRACE ? parseTrace(readFileSync(process.env.RANDOM_TRACE, 'utf8')) : null;
  for (let k = 0; k < (replay ? 1 : runs) && (k === 0 || Date.now() - t0 < budget); k++) {
    const seed = (base + k) >>> 0;
    const mainSteps = stepsLimit ?? (defaults.shortTrials ? 8 + (seed % 9) : undefined);
    const gen = new Generator(seed, { steps: mainSteps });
    setTransport(transportFor(seed, defaults.server ?? '0'));
    const via = currentTransport() === 'server' ? ' (through the server)' : '';
    const trace = replay ?? { sessions: sessionsFor(seed), steps: [] };
    const o = runTrace(trace, { next: replay ? undefined : (w) => gen.next(w), verbose: process.env.RANDOM_VERBOSE === '1' });
    report.trials++;
    report.hookCalls += o.hookCalls;
    report.steps += o.trace.steps.length;
    for (const key of Object.keys(report.rewinds) as Array<keyof Outcome['rewinds']>) report.rewinds[key] += o.rewinds[key];
    for (const f of o.failures.filter((x) => x.soft)) {
      report.soft.push({ seed, failure: f });
      if (process.env.RANDOM_LOG)
        appendFileSync(process.env.RANDOM_LOG, `soft finding, seed ${seed}, step ${f.step}: ${f.kind}\n${f.text}\n`);
    }
    const hard = o.hard[0];
    log(
      `${replay ? 'replay' : `seed ${seed}`}${via}: ${o.trace.steps.length} steps, ${o.hookCalls} hook calls, ${o.rewinds.done} rewinds done, ${o.rewinds.refused} refused, ${(o.ms / 1000).toFixed(1)} s${hard ? `: FAILED (${hard.kind})` : o.failures.length ? `: ${o.failures.length} soft finding(s) (${o.failures.map((f) => f.kind).join(', ')})` : ''}`,
    );
    if (!hard) continue;
    const outDir = process.env.RANDOM_OUT ?? join(tmpdir(), 'git-scalpel-random');
    mkdirSync(outDir, { recursive: true });
    const saved = join(outDir, `${replay ? 'replay' : `seed-${seed}`}-${hard.kind}.json`);
    writeFileSync(saved, JSON.stringify(o.trace, null, 1));
    const lines = [`seed ${seed} failed: ${hard.kind} at step ${hard.step} (the trace: ${saved})`, hard.text];
    log(lines.join('\n'));
    lines.length = 0;
    if (shrinkMs > 0) {
      const s = shrink(o.trace, hard, { budgetMs: shrinkMs, log: process.env.RANDOM_VERBOSE === '1' ? log : undefined });
      const again = s.outcome.hard.find((f) => f.kind === hard.kind) ?? hard;
      lines.push(
        '',
        `shrunk in ${s.runs} replays (${(s.ms / 1000).toFixed(0)} s) from ${o.trace.steps.length} to ${s.trace.steps.length} steps:`,
        traceText(s.trace),
        '',
        `its failure: ${again.kind} at step ${again.step}`,
        again.text,
      );
    } else {
      lines.push('', 'the sequence (not shrunk):', traceText(o.trace));
    }
    lines.push(
      '',
      `replay: ${replay ? '' : `RANDOM_SEED=${seed}${mainSteps !== undefined ? ` RANDOM_STEPS=${mainSteps}` : ''}${via ? ' RANDOM_SERVER=1' : ''} npm run test:random (this generator), or `}${via ? 'RANDOM_SERVER=1 ' : ''}RANDOM_TRACE=${saved} npm run test:random`,
    );
    log(lines.join('\n'));
    report.failed.push({
      seed,
      failure: hard,
      report: [`seed ${seed} failed: ${hard.kind} at step ${hard.step} (the trace: ${saved})`, hard.text, ...lines].join('\n'),
    });
  }
  report.ms = Date.now() - t0;
  return report;
}
