/**
 * A hook's tool calls (DESIGN I10: only the agent's change is the agent's). A call is kept in
 * flight from its start to its end (store/calls.ts; a harness without call ids pairs them by
 * input and order); when it finishes, what it captured before it ran joins the turn where the
 * call changed it, and the paths it wrote are sealed as it left them; a call that never runs
 * (denied) leaves nothing; a call whose end is never reported is over at the session's next event.
 */
import { isScalpelError } from '../errors/index.js';
import { joinPath } from '../fs/path.js';
import type { ReadIndexResult } from '../repo/index-file.js';
import { checkSession } from '../store/stack.js';
import { CallsInFlight, type CallInput, type CallRecord } from '../store/calls.js';
import { covers, isAncestor, minimalRoots } from '../model/scope.js';
import { sealed } from '../model/manifest.js';
import {
  contests,
  joinCaptured,
  markOverwritten,
  mergeStates,
  restrictState,
  spineBetween,
  type Manifest,
  type PathState,
} from '../model/state.js';
import { captureNow, readPast, stackOf, type EngineContext } from './context.js';
import { appendLog } from './log-ops.js';
import { openTurnOf, withLists } from './turns.js';

/** A key for a tool call whose harness gives it no id (its after-event is then paired by input and order). */
export function newCallKey(ctx: EngineContext): string {
  return CallsInFlight.newKey(ctx.now().getTime());
}

/**
 * A hook's tool call starts: its kind, input, turn and start time are kept until its end
 * (callEnded, in another process: harnesses give no duration). Best effort (store/calls.ts).
 */
export async function callStarted(ctx: EngineContext, opts: { session: string; rec: CallRecord }): Promise<void> {
  checkSession(opts.session);
  await ctx.calls.start(opts.session, opts.rec);
}

/**
 * The call an after-event ends, forgotten now: the one named `key` (the harness's id), or
 * without one, the newest call in flight without an id whose input is `input` (the same
 * command, or the same paths); null when none is kept. A shell after-event that names no
 * call its input matches takes the one shell call in flight, when there is exactly one.
 */
export async function callEnded(
  ctx: EngineContext,
  opts: { session: string; key?: string; input?: CallInput },
): Promise<CallRecord | null> {
  checkSession(opts.session);
  if (opts.key !== undefined) return ctx.calls.end(opts.session, opts.key);
  const input = opts.input ?? {};
  const found = await ctx.calls.endMatching(opts.session, input);
  if (found || input.command === undefined) return found;
  const shells = (await ctx.calls.pending(opts.session)).filter((r) => !r.byId && r.kind === 'shell');
  return shells.length === 1 ? ctx.calls.end(opts.session, shells[0].key) : null;
}

/**
 * Tool call `call` of the session's open turn finished writing `paths` (worktree-relative):
 * what it captured before it ran joins the turn (the first call to finish decides a path's
 * pre-image), and `paths` are sealed with what they hold now, as the agent left them. A later
 * change by someone else is then told apart (contested, or refused after the turn). Nothing
 * when no turn is open.
 */
export async function callFinished(
  ctx: EngineContext,
  opts: { session: string; call?: string; paths: readonly string[] },
): Promise<{ warnings: string[] }> {
  checkSession(opts.session);
  const stack = stackOf(ctx, opts.session);
  const warnings: string[] = [];
  await stack.locked(async (tx) => {
    const top = await openTurnOf(stack, tx.current);
    if (!top) return;
    // one read of the index for both captures (what the call changed, and its seal)
    const m = await ctx.repo.withIndex({ verify: false }, async (read) => {
      warnings.push(...readPast(read));
      const index = { read };
      let m = top.manifest;
      const mine = opts.call === undefined ? undefined : m.provisional?.find((p) => p.call === opts.call);
      if (mine) {
        // what the call did not change is not the turn's (a failed replace, a write of the same bytes)
        const fresh = restrictState(
          mine.state,
          mine.state.roots.filter((r) => !m.captured.roots.some((o) => covers(o, r))),
        );
        const changed = fresh.roots.length ? await changedRoots(ctx, fresh, warnings, index) : [];
        const captured = changed.length ? joinCaptured(m.captured, restrictState(fresh, changed), { dropUnderAbsent: false }) : m.captured;
        m = withLists({ ...m, captured }, { provisional: (m.provisional ?? []).filter((p) => p !== mine) });
      }
      const sealedNow = await sealOf(ctx, m, opts.paths, warnings, index);
      if (sealedNow) {
        m = sealed(m, ctx.now().toISOString(), sealedNow.state);
        // what someone else had put in a path this call went over is gone: told apart at rewind
        if (m.contested?.length) m = withLists(m, { contested: markOverwritten(m.contested, sealedNow.fresh) });
      }
      return m;
    });
    if (m !== top.manifest) await stack.replace(tx, [top], top, m);
  });
  return { warnings };
}

/** The roots of `state` whose paths hold something else now (worktree, index entries, resolve-undo). Unreadable ones (beneath a symlink now) count as changed. */
async function changedRoots(
  ctx: EngineContext,
  state: PathState,
  warnings: string[],
  index?: { read: ReadIndexResult | null },
): Promise<string[]> {
  let now: PathState;
  try {
    now = await captureNow(ctx, state.roots, warnings, index);
  } catch (e) {
    if (isScalpelError(e, 'BAD_PATH')) return state.roots;
    throw e;
  }
  const differ = contests(state, now).map((c) => c.path);
  return state.roots.filter((r) => differ.some((p) => covers(r, p)));
}

/**
 * `paths` of the turn sealed again with what they hold now (the turn's roots at or beneath
 * them, or the paths beneath its roots), and what was captured for it (`fresh`); null when
 * none is the turn's or they cannot be read.
 */
async function sealOf(
  ctx: EngineContext,
  m: Manifest,
  paths: readonly string[],
  warnings: string[],
  index?: { read: ReadIndexResult | null },
): Promise<{ state: PathState; fresh: PathState } | null> {
  const roots = minimalRoots(paths.filter((p) => m.captured.roots.some((r) => covers(r, p))));
  if (roots.length === 0) return null;
  const { roots: scope, dirs } = await sealScope(ctx, roots, m.seal);
  const fresh = await captureNow(ctx, scope, warnings, index).catch((e: unknown) => {
    if (isScalpelError(e, 'BAD_PATH')) return null;
    throw e;
  });
  if (fresh) return { state: mergeStates(m.seal?.state ?? null, fresh, dirs), fresh };
  // a root beneath a symbolic link now is not sealed (refused at rewind); the others are
  const readable: PathState[] = [];
  for (const r of scope) {
    const one = await captureNow(ctx, [r], warnings, index).catch((e: unknown) => {
      if (isScalpelError(e, 'BAD_PATH')) return null;
      throw e;
    });
    if (one) readable.push(one);
  }
  if (readable.length === 0) return null;
  const some = await captureNow(
    ctx,
    readable.flatMap((x) => x.roots),
    warnings,
    index,
  );
  const spine = dirs.filter((d) => some.roots.some((r) => isAncestor(d, r)));
  return { state: mergeStates(m.seal?.state ?? null, some, spine), fresh: some };
}

/**
 * What to capture to seal `roots` into `seal`: a root inside a sealed root (`src/new.txt` in
 * `src`, sealed absent after `rm -rf src`) with the directories between them, which must be
 * directories now; where one is not, the sealed root is captured again whole.
 */
async function sealScope(
  ctx: EngineContext,
  roots: readonly string[],
  seal: Manifest['seal'],
): Promise<{ roots: string[]; dirs: string[] }> {
  const out: string[] = [];
  const dirs: string[] = [];
  for (const r of roots) {
    const outer = seal?.state.roots.find((o) => isAncestor(o, r));
    if (outer === undefined) {
      out.push(r);
      continue;
    }
    const spine = spineBetween(outer, r);
    let whole = false;
    for (const d of spine) {
      const st = await ctx.repo.fs.lstat(joinPath(ctx.repo.worktree, d));
      if (!st || st.type !== 'directory') {
        whole = true;
        break;
      }
    }
    if (whole) out.push(outer);
    else {
      out.push(r);
      dirs.push(...spine);
    }
  }
  return { roots: minimalRoots(out), dirs: [...new Set(dirs)] };
}

/** The tool calls of `paths` finished: sealed as the agent left them (callFinished without a call). */
export async function sealPaths(ctx: EngineContext, opts: { session: string; paths: readonly string[] }): Promise<{ warnings: string[] }> {
  if (opts.paths.length === 0) return { warnings: [] };
  return callFinished(ctx, opts);
}

/**
 * Tool call `call` will not run (the person denied it): what it captured goes now, as it would
 * when the turn ends, and so does a shell command's baseline.
 */
export async function callAbandoned(ctx: EngineContext, opts: { session: string; call: string }): Promise<void> {
  checkSession(opts.session);
  await ctx.baselines.remove(opts.session, opts.call);
  const stack = stackOf(ctx, opts.session);
  await stack.locked(async (tx) => {
    const top = await openTurnOf(stack, tx.current);
    if (!top?.manifest.provisional?.some((p) => p.call === opts.call)) return;
    await stack.replace(
      tx,
      [top],
      top,
      withLists(top.manifest, { provisional: (top.manifest.provisional ?? []).filter((p) => p.call !== opts.call) }),
    );
  });
}

/**
 * The calls of `session` whose end the harness never reports (CallRecord.unreported: Codex
 * applies a shell heredoc patch itself and sends no PostToolUse) are over once the session's
 * next event comes: what they captured joins the turn, what they wrote is sealed.
 */
export async function finishUnreported(ctx: EngineContext, opts: { session: string }): Promise<{ warnings: string[] }> {
  checkSession(opts.session);
  const warnings: string[] = [];
  for (const rec of await ctx.calls.pending(opts.session)) {
    if (!rec.unreported) continue;
    const call = await ctx.calls.end(opts.session, rec.key);
    if (!call) continue;
    warnings.push(...(await callFinished(ctx, { session: opts.session, call: call.key, paths: call.paths })).warnings);
    // it ran; how it ended the harness does not say
    await appendLog(
      ctx,
      {
        event: 'tool',
        session: opts.session,
        ids: call.turn ? [call.turn] : [],
        paths: [],
        detail: {
          tool: call.tool,
          phase: 'after',
          outcome: 'unknown',
          call: call.key,
          ...(call.byId ? { toolUseId: call.key } : {}),
          durationMs: Math.max(0, ctx.now().getTime() - call.at),
        },
      },
      warnings,
    );
  }
  return { warnings };
}

/** Forget every call of the session in flight and their shell baselines (its turn is over; what a killed tool left goes too). */
export async function forgetCalls(ctx: EngineContext, session: string): Promise<void> {
  checkSession(session);
  await ctx.calls.clear(session);
  await ctx.baselines.clear(session);
}
