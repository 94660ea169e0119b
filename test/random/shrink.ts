/**
 * Shrinking a failing trace to a few lines: delta debugging (ddmin) over its steps, then one step
 * at a time, then simpler steps (a parallel call split, a forced rewind unforced, shorter texts).
 * A candidate still fails when a replay ends in a hard failure of the same kind. Each replay runs
 * the trace only up to its first hard failure, so candidates get shorter as they go.
 */
import { runTrace, type Failure, type Outcome } from './run.js';
import type { Step, Trace } from './trace.js';

export interface ShrinkResult {
  trace: Trace;
  outcome: Outcome;
  runs: number;
  ms: number;
}

export function shrink(trace: Trace, failure: Failure, opts: { budgetMs: number; log?: (s: string) => void }): ShrinkResult {
  const kind = failure.kind;
  // the same kind, about at least one of the same paths: a shrink does not slip to another bug
  const sameBug = (f: Failure) =>
    f.kind === kind && (!failure.paths?.length || !f.paths?.length || f.paths.some((p) => failure.paths?.includes(p)));
  const t0 = Date.now();
  let runs = 0;
  let best: { trace: Trace; outcome: Outcome } | null = null;
  const fails = (t: Trace): boolean => {
    runs++;
    let o: Outcome;
    try {
      o = runTrace({ sessions: t.sessions, steps: t.steps.slice() });
    } catch (e) {
      opts.log?.(`  replay threw: ${(e as Error).message.split('\n')[0]}`);
      return false;
    }
    if (!o.hard.some(sameBug)) return false;
    best = { trace: o.trace, outcome: o };
    return true;
  };
  const timeLeft = () => Date.now() - t0 < opts.budgetMs;
  if (!fails(trace)) {
    opts.log?.(`  the failure did not reproduce on replay (kind ${kind})`);
    return { trace, outcome: runTrace(trace), runs, ms: Date.now() - t0 };
  }
  let steps = (best as unknown as { trace: Trace }).trace.steps;
  const current = () => (best as unknown as { trace: Trace }).trace.steps;
  // ddmin over the steps
  let n = 2;
  while (steps.length >= 2 && timeLeft()) {
    const size = Math.ceil(steps.length / n);
    let reduced = false;
    for (let i = 0; i < n && timeLeft(); i++) {
      const cand = [...steps.slice(0, i * size), ...steps.slice((i + 1) * size)];
      if (cand.length === steps.length) continue;
      if (fails({ sessions: trace.sessions, steps: cand })) {
        steps = current();
        n = Math.max(n - 1, 2);
        reduced = true;
        opts.log?.(`  ${steps.length} steps`);
        break;
      }
    }
    if (!reduced) {
      if (n >= steps.length) break;
      n = Math.min(steps.length, n * 2);
    }
  }
  // one step at a time, from the end (later steps depend on earlier ones)
  for (let changed = true; changed && timeLeft();) {
    changed = false;
    for (let i = steps.length - 1; i >= 0 && timeLeft(); i--) {
      if (i >= steps.length) continue;
      const cand = [...steps.slice(0, i), ...steps.slice(i + 1)];
      if (fails({ sessions: trace.sessions, steps: cand })) {
        steps = current();
        changed = true;
      }
    }
  }
  // simpler steps, each simplified as far as it goes
  for (let i = 0; i < steps.length && timeLeft(); i++) {
    for (let again = true; again && timeLeft();) {
      again = false;
      for (const simpler of simplify(steps[i])) {
        if (!timeLeft()) break;
        const cand = [...steps.slice(0, i), simpler, ...steps.slice(i + 1)];
        if (fails({ sessions: trace.sessions, steps: cand })) {
          steps = current();
          again = i < steps.length;
          break;
        }
      }
    }
  }
  // fewer sessions: a session none of the steps name
  const used = new Set(steps.flatMap((s) => ('s' in s && s.s !== undefined ? [s.s] : [])));
  const sessions = trace.sessions.filter((s) => used.has(s.name) || !steps.some((x) => x.k === 'rewind' && x.s === undefined));
  const out = best as unknown as { trace: Trace; outcome: Outcome };
  return { trace: { sessions: sessions.length ? sessions : trace.sessions, steps }, outcome: out.outcome, runs, ms: Date.now() - t0 };
}

function simplify(s: Step): Step[] {
  const out: Step[] = [];
  if (s.k === 'call' && s.calls.length > 1) for (const c of s.calls) out.push({ ...s, calls: [c], afterOrder: undefined });
  if (s.k === 'call' && s.afterOrder) out.push({ ...s, afterOrder: undefined });
  if (s.k === 'rewind' && s.force) out.push({ ...s, force: undefined });
  if (s.k === 'rewind' && s.turn !== undefined && s.turn > 1) out.push({ ...s, turn: 1 });
  if (s.k === 'call' && s.calls.length === 1) {
    const c = s.calls[0];
    if (c.tool === 'write' && (c.text?.length ?? 0) > 2 && c.op !== 'edit') out.push({ ...s, calls: [{ ...c, text: 'x\n' }] });
    if (c.tool === 'write' && c.fail) out.push({ ...s, calls: [{ ...c, fail: undefined }] });
  }
  if (s.k === 'start' && s.label) out.push({ k: 'start', s: s.s });
  if ((s.k === 'file' || s.k === 'append') && s.text.length > 2) out.push({ ...s, text: s.text.includes('\r') ? 'x\r\n' : 'x\n' });
  return out;
}
