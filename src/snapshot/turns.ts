/**
 * Turns, in one place (DESIGN "Agent integration"). A turn is one snapshot on the session's stack:
 * a prompt opens it (openTurn), the agent's tool calls extend it (extendTurn: the first capture
 * of a path wins; a call's capture waits in `provisional` until the call finishes, tool-calls.ts),
 * a stop seals it (closeTurn: what is there now, except what the tools sealed when they finished;
 * calls that never finished are settled), a person's change between calls is recorded as
 * contested (recordContests), the session keeps its newest turns (keepTurns) and idle hook
 * sessions go (dropIdleSessions). Then the person's side: the tool calls of each turn from the
 * log (toolCallsByTurn), the list of turns with what rewinding each would do now (listTurns),
 * and which turn a rewind undoes (rewindTarget; rewind.ts rewinds).
 */
import { ScalpelError, isScalpelError } from '../errors/index.js';
import { readHeadWithLog } from '../repo/history.js';
import type { ReadIndexResult } from '../repo/index-file.js';
import type { RefTransaction } from '../repo/refs.js';
import type { ObjectBatch } from '../repo/object-batch.js';
import { checkSession, type SnapshotStack, type StackEntry } from '../store/stack.js';
import { compareRel, covers, isAncestor } from '../model/scope.js';
import { sealed } from '../model/manifest.js';
import { joinPath } from '../fs/path.js';
import {
  contests,
  emptyState,
  joinCaptured,
  mergeStates,
  othersBeneath,
  restrictState,
  spineBetween,
  withoutRoots,
  type Contest,
  type Manifest,
  type PathState,
  type Provisional,
  type TurnRecord,
} from '../model/state.js';
import { captureNow, info, madeThrough, newSnapshot, sessionsOf, stackOf, withWarnings, type EngineContext } from './context.js';
import { appendLog, logDetail, logWarnings, readLog } from './log-ops.js';
import { planRestore } from './restore.js';
import { headCheck } from './restore-op.js';
import { headRefusal } from './refusals.js';
import type { SnapshotInfo, ToolCall, TurnInfo } from './types.js';

/** The session's newest snapshot when it is a turn the agent has not ended. */
export async function openTurnOf(stack: SnapshotStack, head?: string | null): Promise<StackEntry | null> {
  const at = head === undefined ? await stack.head() : head;
  if (!at) return null;
  const top = await stack.load(at);
  return top.manifest.turn && !top.manifest.turn.ended ? top : null;
}

/**
 * A user prompt: end the session's open turn (sealed, so a person's later edit of its paths
 * makes a rewind refuse), then push an empty turn labelled `label`, which the tool calls that
 * follow fill (snapshot with `turn`). Keeps the session's newest turns (`scalpel.keepTurns`,
 * default 100) and drops hook sessions idle for `scalpel.keepIdleDays` (default 30).
 */
export async function openTurn(ctx: EngineContext, opts: { session: string; label: string }): Promise<SnapshotInfo> {
  const session = opts.session;
  checkSession(session);
  const stack = stackOf(ctx, session);
  const head = await readHeadWithLog(ctx.repo);
  const warnings: string[] = [];
  const { manifest, commit, ended } = await stack.locked(async (tx) => {
    const top = tx.current ? await stack.load(tx.current) : null;
    const batch = ctx.repo.odb.batch();
    let parent = tx.current;
    let ended: string | null = null;
    if (top?.manifest.turn && !top.manifest.turn.ended) {
      // the agent never said it stopped (killed, or a harness without a stop event): end it now
      const closed = await sealedTurn(ctx, top, true, warnings);
      parent = await stack.writeCommit(closed, top.parent, undefined, batch);
      ended = top.manifest.id;
    }
    const m = newSnapshot(ctx, session, opts.label, emptyState(), head, {
      turn: { number: (top?.manifest.turn?.number ?? 0) + 1, ended: false },
      made: madeThrough(top?.manifest ?? null),
    });
    const c = await stack.writeCommit(m, parent, undefined, batch);
    await batch.flush();
    await tx.set(c);
    return { manifest: m, commit: c, ended };
  });
  if (ended) await appendLog(ctx, { event: 'turn-end', session, ids: [ended], paths: [], detail: { reason: 'next prompt' } }, warnings);
  await appendLog(
    ctx,
    { event: 'turn-start', session, ids: [manifest.id], paths: [], detail: { label: manifest.label, turn: manifest.turn?.number } },
    warnings,
  );
  await keepTurns(ctx, stack, (manifest.turn as TurnRecord).number, warnings);
  await dropIdleSessions(ctx, session, warnings);
  return withWarnings(info(manifest, commit), warnings);
}

/**
 * The agent stopped (`final`) or a subagent did: seal the open turn, so a person's later edit of
 * its paths makes a rewind refuse. A final stop ends the turn: the next tool call opens a new
 * one. A subagent's leaves it open: the agent goes on, and its next write unseals it. Null when
 * no turn is open.
 */
export async function closeTurn(ctx: EngineContext, opts: { session: string; final: boolean }): Promise<SnapshotInfo | null> {
  checkSession(opts.session);
  const stack = stackOf(ctx, opts.session);
  const warnings: string[] = [];
  const done = await stack.locked(async (tx) => {
    const top = await openTurnOf(stack, tx.current);
    if (!top) return null;
    const manifest = await sealedTurn(ctx, top, opts.final, warnings);
    const { commit } = await stack.replace(tx, [top], top, manifest);
    return info(manifest, commit);
  });
  if (!done) return null;
  await appendLog(
    ctx,
    { event: 'turn-end', session: opts.session, ids: [done.id], paths: done.paths, detail: { final: opts.final } },
    warnings,
  );
  return withWarnings(done, warnings);
}

/**
 * `top` sealed, ended when `final`. What its tools recorded when they finished stays sealed as
 * the agent left it (a path someone else changed since is recorded as contested); every other
 * path is sealed with what it holds now. A path that can no longer be read without going
 * through a symbolic link (a command made its parent one) cannot be sealed: the turn still
 * ends, unsealed, with a warning (a rewind of it refuses that path anyway).
 */
async function sealedTurn(ctx: EngineContext, top: StackEntry, final: boolean, warnings: string[]): Promise<Manifest> {
  const turn = { number: (top.manifest.turn as TurnRecord).number, ended: final };
  try {
    // the calls that never finished: where their paths are as they found them, they changed
    // nothing and their captures go; where not, it cannot be told whether the call ran (and
    // its end was not reported) or someone else changed the path: it joins, contested
    const m = final ? await settleUnfinished(ctx, top.manifest, warnings) : top.manifest;
    const now = await captureNow(ctx, m.captured.roots, warnings);
    const was = m.seal;
    const contested = was ? mergeContests(m.contested ?? [], contests(was.state, now)) : (m.contested ?? []);
    const state = was ? mergeStates(now, was.state) : now;
    return withLists({ ...sealed(m, ctx.now().toISOString(), state), turn }, { contested });
  } catch (e) {
    if (!isScalpelError(e, 'BAD_PATH')) throw e;
    warnings.push(`turn ${turn.number} of session '${top.manifest.session}' ends unsealed: ${e.message}`);
    return withLists({ ...top.manifest, turn }, final ? { provisional: [] } : {});
  }
}

/** `m` without its provisional captures: dropped where their paths are unchanged, joined and contested where not (sealedTurn). */
async function settleUnfinished(ctx: EngineContext, m: Manifest, warnings: string[]): Promise<Manifest> {
  let captured = m.captured;
  let contested = m.contested ?? [];
  for (const p of m.provisional ?? []) {
    const fresh = restrictState(
      p.state,
      p.state.roots.filter((r) => !captured.roots.some((o) => covers(o, r))),
    );
    if (fresh.roots.length === 0) continue;
    const changed = contests(fresh, await captureNow(ctx, fresh.roots, warnings));
    if (changed.length === 0) continue;
    captured = joinCaptured(captured, fresh, { dropUnderAbsent: false });
    contested = mergeContests(
      contested,
      changed.map((c) => ({ ...c, why: 'unfinished' as const })),
    );
  }
  return withLists({ ...m, captured }, { provisional: [], contested });
}

/**
 * Before a shell command: the open turn's sealed paths someone else changed since the agent's
 * tools left them are recorded as contested (what the command then does to them is its own).
 */
export async function recordContests(ctx: EngineContext, session: string, warnings: string[]): Promise<void> {
  const stack = stackOf(ctx, session);
  const top = await openTurnOf(stack);
  if (!top?.manifest.seal) return;
  let now: PathState;
  try {
    now = await captureNow(ctx, top.manifest.seal.state.roots, warnings);
  } catch (e) {
    if (isScalpelError(e, 'BAD_PATH')) return;
    throw e;
  }
  const found = contests(top.manifest.seal.state, now);
  if (found.length === 0) return;
  await stack.locked(async (tx) => {
    const t = await openTurnOf(stack, tx.current);
    if (!t || t.commit !== top.commit) return; // it moved: the next call looks again
    await stack.replace(tx, [t], t, { ...t.manifest, contested: mergeContests(t.manifest.contested ?? [], found) });
  });
}

/**
 * Keep the newest `scalpel.keepTurns` turns. The stack is cut every few turns (a tenth of the
 * limit, at least 5) rather than at every one: cutting re-parents every kept commit, and a
 * turn's numbers tell when the stack may have grown past the limit without walking it.
 */
async function keepTurns(ctx: EngineContext, stack: SnapshotStack, number: number, warnings: string[]): Promise<void> {
  const keep = Math.max(1, ctx.repo.config.getInt('scalpel.keepTurns', 100));
  const slack = Math.max(5, Math.floor(keep / 10));
  if (number <= keep || (number - keep) % slack !== 0) return;
  await stack.locked(async (tx) => {
    const dropped = await stack.truncate(tx, keep);
    if (dropped > 0)
      await appendLog(ctx, { event: 'prune', session: stack.session, ids: [], paths: [], detail: { keepTurns: keep, dropped } }, warnings);
  });
}

/**
 * Drop the turns of hook sessions of this worktree whose newest turn is older than
 * `scalpel.keepIdleDays` (and their log): a conversation nobody came back to. One commit read per session.
 */
async function dropIdleSessions(ctx: EngineContext, except: string, warnings: string[]): Promise<void> {
  const days = ctx.repo.config.getInt('scalpel.keepIdleDays', 30);
  if (days <= 0) return;
  const cutoff = ctx.now().getTime() / 1000 - days * 86400;
  const prefix = `refs/scalpel/${ctx.repo.worktreeId}/`;
  for (const [ref, oid] of await ctx.repo.refs.list(prefix)) {
    const session = ref.slice(prefix.length);
    if (session === except || session.includes('/')) continue;
    const stack = stackOf(ctx, session);
    if ((await stack.commitTime(oid)) >= cutoff) continue;
    const top = await stack.load(oid).catch(() => null);
    if (!top?.manifest.turn) continue; // not a hook session: a person's stack is theirs to prune
    await stack.locked(async (tx) => {
      if (tx.current !== oid) return; // it moved meanwhile: not idle
      await tx.set(null);
    });
    await ctx.events.remove(session);
    await appendLog(ctx, { event: 'drop', session: except, ids: [], paths: [], detail: { idleSession: session, days } }, warnings);
  }
}

/** The session's open turn (the agent has not ended it), or null. */
export async function currentTurn(ctx: EngineContext, session: string): Promise<SnapshotInfo | null> {
  checkSession(session);
  const top = await openTurnOf(stackOf(ctx, session));
  return top ? info(top.manifest, top.commit) : null;
}

/**
 * Add `state` to the open turn `top` (the locked head). A path the turn holds keeps its first
 * capture. With `call`, a tool call's capture, it waits in `provisional` until the call finishes
 * (callFinished); a shell command's changes (`shell`) join at once, found after the command ran.
 * A sealed path someone else changed since the agent's tools left it (its state in `state`,
 * captured just before this call, is not the sealed one) is recorded as contested. The seal
 * stays until the call finishes and seals its paths again.
 */
export async function extendTurn(
  ctx: EngineContext,
  stack: SnapshotStack,
  tx: RefTransaction,
  top: StackEntry,
  state: PathState,
  batch: ObjectBatch,
  more: { call?: string; shell?: { uncovered: string[]; left: string[]; at: string }; logged?: string[] },
  warnings: string[],
): Promise<SnapshotInfo> {
  let m = top.manifest;
  let contested = m.contested ?? [];
  if (m.seal && !more.shell) {
    const rewritten = (p: string) => state.roots.some((r) => covers(r, p));
    contested = mergeContests(contested, contests(m.seal.state, state, rewritten));
    // a capture beneath a sealed root reaches through it: where the way there is not what the
    // seal holds (a sealed file someone overwrote, a sealed directory that is a file now), what
    // changed in that sealed root is someone else's, and the seal taken again after the call
    // must not take it in as the agent's
    const through = await sealedAbove(ctx, m.seal.state, state.roots);
    if (through.length > 0) {
      const now = await captureNow(ctx, through, warnings).catch((e: unknown) => {
        if (isScalpelError(e, 'BAD_PATH')) return null;
        throw e;
      });
      if (now)
        contested = mergeContests(
          contested,
          contests(m.seal.state, now, (p) => through.some((s) => covers(s, p))),
        );
    }
    // a write no call tracks (a library caller's): its paths are unsealed until the turn ends,
    // as nothing will seal them again when it is done
    if (more.call === undefined) {
      const rest = withoutRoots(m.seal.state, state.roots);
      m = { ...m, seal: rest.roots.length ? { sealedAt: m.seal.sealedAt, state: rest } : null };
    }
  }
  let captured = m.captured;
  let provisional = m.provisional ?? [];
  // what someone else put beneath an earlier capture, which this call is about to go over: the
  // pre-image takes it in as found now (whether the call then changes it or not, it was theirs).
  // Only from a capture taken after the seal: a command's baseline taken before another call of
  // the turn ended (parallel calls) holds what that call was still changing, the agent's own
  const seal = top.manifest.seal ?? null;
  const newer = !more.shell || !seal || Date.parse(seal.sealedAt) < Date.parse(more.shell.at);
  const others = newer ? othersBeneath(captured, seal?.state ?? null, state) : null;
  if (others) captured = mergeStates(captured, others);
  if (more.call !== undefined) {
    // only what the turn does not hold yet waits for the call; the rest keeps its first capture
    const fresh = restrictState(
      state,
      state.roots.filter((r) => !captured.roots.some((o) => covers(o, r))),
    );
    if (fresh.roots.length > 0) {
      const call = more.call;
      const mine = provisional.find((p) => p.call === call);
      const joined = mine ? joinCaptured(mine.state, fresh, { dropUnderAbsent: false }) : fresh;
      provisional = [...provisional.filter((p) => p.call !== call), { call, state: joined }];
    }
  } else captured = joinCaptured(captured, state, { dropUnderAbsent: false });
  const union = (a: readonly string[] | undefined, b: readonly string[] | undefined) =>
    [...new Set([...(a ?? []), ...(b ?? [])])].sort(compareRel);
  const uncovered = union(m.uncovered, more.shell?.uncovered);
  const left = union(m.left, more.shell?.left);
  const manifest = withLists({ ...m, captured }, { uncovered, left, contested, provisional });
  const { commit } = await stack.replace(tx, [top], top, manifest, batch);
  const logged = more.logged ?? [];
  await appendLog(
    ctx,
    {
      event: 'extend',
      session: stack.session,
      ids: [manifest.id],
      paths: state.roots,
      ...logDetail(logged),
      ...(more.call !== undefined ? { detail: { call: more.call, ...logWarnings(logged) } } : {}),
    },
    warnings,
  );
  return info(manifest, commit);
}

/**
 * The sealed roots strictly above some of `roots` whose way down to them holds a file or a
 * symbolic link, in the seal or now: the sealed root a file someone may have overwritten, a
 * sealed directory that is a file now. (A directory that appeared or went is told apart when
 * the call's paths are sealed again, or at rewind, as any other path of the sealed root.)
 */
async function sealedAbove(ctx: EngineContext, seal: PathState, roots: readonly string[]): Promise<string[]> {
  const out: string[] = [];
  const kinds = new Map<string, string>(seal.items.map((i) => [i.path, i.kind]));
  const leaf = (k: string | undefined) => k === 'file' || k === 'symlink';
  for (const s of seal.roots) {
    let differs = false;
    for (const r of roots) {
      if (differs || !isAncestor(s, r)) continue;
      for (const d of spineBetween(s, r)) {
        const st = await ctx.repo.fs.lstat(joinPath(ctx.repo.worktree, d));
        const now = st ? (st.type === 'directory' ? 'dir' : st.type) : undefined;
        if (leaf(kinds.get(d)) || leaf(now)) differs = true;
        if (differs || now !== 'dir' || kinds.get(d) !== 'dir') break;
      }
    }
    if (differs) out.push(s);
  }
  return out;
}

/** Does a (partial) seal hold anything at or beneath `root`, or above it? */
export function sealTouches(seal: Manifest['seal'], root: string): boolean {
  return !!seal && seal.state.roots.some((r) => covers(r, root) || covers(root, r));
}

/** Contests, each path and part once (the first record, the agent's state then, stays). */
function mergeContests(a: readonly Contest[], b: readonly Contest[]): Contest[] {
  const out = [...a];
  for (const c of b) if (!out.some((x) => x.path === c.path && x.part === c.part)) out.push(c);
  return out.sort((x, y) => compareRel(x.path, y.path));
}

/** `m` with these lists set, each left out when empty (a manifest holds no empty optional list). */
export function withLists(
  m: Manifest,
  lists: { uncovered?: string[]; left?: string[]; contested?: Contest[]; provisional?: Provisional[] },
): Manifest {
  const out: Manifest = { ...m };
  for (const [key, list] of Object.entries(lists) as Array<[keyof typeof lists, unknown[] | undefined]>) {
    if (list === undefined) continue;
    if (list.length > 0) (out as unknown as Record<string, unknown>)[key] = list;
    else delete out[key];
  }
  return out;
}

// the person's side: what each turn did, and which one a rewind undoes

export type { ToolCall };

/** What the log keeps of a tool call (LogRecord.detail of a 'tool' record). */
export interface ToolDetail {
  tool: string;
  phase: 'before' | 'after';
  command?: string;
  outcome?: string;
  exitCode?: number;
  durationMs?: number;
  call?: string;
  toolUseId?: string;
  via?: 'server' | 'process';
  uncovered?: string[];
  left?: string[];
}

/** A log record as turns reads it (LogRecord, without the engine's import). */
interface Rec {
  at: string;
  event: string;
  ids: string[];
  paths: string[];
  detail?: Record<string, unknown>;
}

const OUTCOMES = new Set(['ok', 'failed', 'unknown', 'denied', 'blocked', 'unprotected']);

/**
 * The tool calls of each turn (by snapshot id), oldest first, one per call: a call's start and
 * end records are joined by its key. `ended(id)`: whether that turn is over (a call with no end
 * then never finished).
 */
export function toolCallsByTurn(log: readonly Rec[], ended: (turn: string) => boolean = () => false): Map<string, ToolCall[]> {
  const out = new Map<string, ToolCall[]>();
  const open = new Map<string, ToolCall>();
  for (const r of log) {
    if (r.event !== 'tool' || r.ids.length === 0 || !r.detail) continue;
    const d = r.detail as Partial<ToolDetail>;
    if (typeof d.tool !== 'string' || (d.phase !== 'before' && d.phase !== 'after')) continue;
    const key = typeof d.call === 'string' ? d.call : typeof d.toolUseId === 'string' ? d.toolUseId : undefined;
    const turn = r.ids[0];
    const known = key !== undefined ? open.get(`${turn}\0${key}`) : undefined;
    if (d.phase === 'after' && known) {
      open.delete(`${turn}\0${key}`);
      known.outcome = OUTCOMES.has(d.outcome as string) ? (d.outcome as ToolCall['outcome']) : 'unknown';
      if (r.paths.length) known.paths = [...new Set([...known.paths, ...r.paths])];
      if (typeof d.exitCode === 'number') known.exitCode = d.exitCode;
      if (typeof d.durationMs === 'number') known.durationMs = d.durationMs;
      if (typeof d.command === 'string' && known.command === undefined) known.command = d.command;
      addNotCaptured(known, d);
      addVia(known, d.via);
      continue;
    }
    const call: ToolCall = { at: r.at, tool: d.tool, outcome: 'running', paths: r.paths };
    if (typeof d.command === 'string') call.command = d.command;
    if (key !== undefined) call.call = key;
    if (typeof d.toolUseId === 'string') call.toolUseId = d.toolUseId;
    if (d.phase === 'after') {
      // an end whose start was not logged
      call.outcome = OUTCOMES.has(d.outcome as string) ? (d.outcome as ToolCall['outcome']) : 'unknown';
      if (typeof d.exitCode === 'number') call.exitCode = d.exitCode;
      if (typeof d.durationMs === 'number') call.durationMs = d.durationMs;
      addNotCaptured(call, d);
    } else if (key !== undefined) open.set(`${turn}\0${key}`, call);
    addVia(call, d.via);
    let list = out.get(turn);
    if (!list) out.set(turn, (list = []));
    list.push(call);
  }
  for (const [turn, list] of out) if (ended(turn)) for (const c of list) if (c.outcome === 'running') c.outcome = 'never-finished';
  return out;
}

/** What a command's end names as changed beyond capture (ToolDetail.uncovered, .left) joins its call's list, once. */
function addNotCaptured(call: ToolCall, d: Partial<ToolDetail>): void {
  const named = [...(Array.isArray(d.uncovered) ? d.uncovered : []), ...(Array.isArray(d.left) ? d.left : [])].filter(
    (p): p is string => typeof p === 'string',
  );
  if (named.length) call.notCaptured = [...new Set([...(call.notCaptured ?? []), ...named])];
}

/** A hook event's path (ToolDetail.via) joins its call's list, once. */
function addVia(call: ToolCall, via: unknown): void {
  if (via !== 'server' && via !== 'process') return;
  if (!call.via) call.via = [via];
  else if (!call.via.includes(via)) call.via.push(via);
}

/**
 * The turn a rewind undoes (with every later one of its session): `which` is its number in the
 * session or a snapshot id (or a prefix of one); without it, the newest turn that changed
 * anything (empty turns above it, prompts the agent has not acted on yet, go with it).
 * `chain` is the session's stack, newest first.
 */
export function rewindTarget(chain: readonly StackEntry[], session: string, which?: string): StackEntry {
  if (which !== undefined) {
    const byNumber = /^\d+$/.test(which) ? chain.find((e) => e.manifest.turn?.number === Number(which)) : undefined;
    const found = byNumber ?? chain.find((e) => e.manifest.id === which || e.manifest.id.startsWith(which));
    if (!found) throw new ScalpelError('SNAPSHOT_NOT_FOUND', `no turn '${which}' in session '${session}'`, { session, id: which });
    return found;
  }
  const found = chain.find((e) => e.manifest.turn && e.manifest.captured.roots.length > 0);
  if (!found)
    throw new ScalpelError('SNAPSHOT_NOT_FOUND', `nothing to rewind: session '${session}' has no turn that changed anything`, { session });
  return found;
}

/**
 * The turns of the worktree's hook sessions (or of `session`), newest first: label, paths, the
 * tool calls the log holds for each, and what rewinding to it would do now (a dry run: would it
 * refuse, and why). Reads the index once per session.
 */
export async function listTurns(ctx: EngineContext, opts: { session?: string } = {}): Promise<TurnInfo[]> {
  const out: TurnInfo[] = [];
  for (const session of opts.session ? [opts.session] : await sessionsOf(ctx)) {
    const chain = await stackOf(ctx, session).walk();
    if (!chain.some((e) => e.manifest.turn)) continue;
    const endedTurns = new Set(chain.filter((e) => e.manifest.turn?.ended).map((e) => e.manifest.id));
    const tools = toolCallsByTurn(await readLog(ctx, session), (id) => endedTurns.has(id));
    const previews = await ctx.repo.withIndex({}, async (read) => {
      const list: Array<TurnInfo['rewind'] | null> = [];
      for (let k = 0; k < chain.length; k++) list.push(chain[k].manifest.turn ? await preview(ctx, chain.slice(0, k + 1), read) : null);
      return list;
    });
    chain.forEach((e, k) => {
      const t = e.manifest.turn;
      if (!t) return;
      out.push({
        ...info(e.manifest, e.commit),
        turn: t.number,
        ended: t.ended,
        tools: tools.get(e.manifest.id) ?? [],
        uncovered: e.manifest.uncovered ?? [],
        left: e.manifest.left ?? [],
        taken: e.manifest.taken ?? [],
        rewind: previews[k] as TurnInfo['rewind'],
      });
    });
  }
  return out.sort((a, b) => (a.createdAt < b.createdAt ? 1 : a.createdAt > b.createdAt ? -1 : b.turn - a.turn));
}

/** What restoring `chain` (newest first) would do now, without writing: a plan and the HEAD check. */
async function preview(ctx: EngineContext, chain: StackEntry[], read: ReadIndexResult | null): Promise<TurnInfo['rewind']> {
  const reasons: string[] = [];
  let changes = 0;
  let pruned = 0;
  try {
    const plan = await planRestore(ctx.repo, chain, read, read?.stat ?? null);
    changes = plan.paths.length;
    pruned = plan.pruned.length;
    for (const c of plan.conflicts) reasons.push(`${c.path} (${c.part}) changed after the turn: sealed ${c.expected}, found ${c.found}`);
  } catch (e) {
    if (!(e instanceof ScalpelError)) throw e;
    reasons.push(e.message.split('\n')[0]);
  }
  const head = await headCheck(ctx, chain[chain.length - 1]);
  if (head && headRefusal(head))
    reasons.push(
      head.complete
        ? `commits made since were pushed (${head.pushed.map((p) => p.ref).join(', ')})`
        : 'HEAD moved and whether its new commits were pushed is unknown',
    );
  return { refused: reasons.length > 0, reasons, changes, pruned, headMoved: head !== null };
}
