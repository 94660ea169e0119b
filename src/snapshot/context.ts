/**
 * What every operation of the snapshot engine runs against, and the small helpers they share.
 *
 * An operation (one module per concern: stack-verbs, turns, tool-calls, shell-steps, restore-op,
 * rewind, apply-op, log-ops) is a plain function taking the EngineContext and its options and
 * returning its outcome. The context is made once per ScalpelRepository and never changes, so
 * any number of operations may share it at once; what an operation finds wrong without stopping
 * (an optional index cache left out, a log record that could not be written) goes into a
 * `warnings` list that operation owns and returns in its result.
 */
import { randomHex } from '../bytes/random.js';
import type { Repository } from '../repo/repository.js';
import type { WorktreeView } from '../fs/view.js';
import type { HeadState } from '../repo/history.js';
import { describeDropped, type ReadIndexResult } from '../repo/index-file.js';
import { SnapshotStack } from '../store/stack.js';
import { EventLog } from '../store/log.js';
import { CallsInFlight } from '../store/calls.js';
import { ShellBaselines } from '../store/baselines.js';
import { captureState } from './capture.js';
import { newManifest } from '../model/manifest.js';
import { absentRootsOf, madeAfter, type Manifest, type PathState, type TurnRecord } from '../model/state.js';
import { covers, minimalRoots, toScopeRoot } from '../model/scope.js';
import type { SnapshotInfo } from './types.js';

export interface EngineContext {
  readonly repo: Repository;
  /** The clock (tests pass their own). */
  readonly now: () => Date;
  /** The event log. */
  readonly events: EventLog;
  /** Hook tool calls in flight. */
  readonly calls: CallsInFlight;
  /** Shell baselines in flight. */
  readonly baselines: ShellBaselines;
  /** The worktree's watched view, when a long-lived process keeps one (OpenOptions.views): shell walks ask it. */
  readonly view: WorktreeView | null;
}

export function engineContext(repo: Repository, now: () => Date, view: WorktreeView | null = null): EngineContext {
  return Object.freeze({
    repo,
    now,
    view,
    events: new EventLog(repo.fs, repo.stateDir, now),
    calls: new CallsInFlight(repo.fs, repo.stateDir),
    baselines: new ShellBaselines(repo),
  });
}

export const DEFAULT_SESSION = 'default';

/** The session's stack of snapshots. */
export function stackOf(ctx: EngineContext, session = DEFAULT_SESSION): SnapshotStack {
  return new SnapshotStack(ctx.repo, session);
}

/** The sessions of this worktree (names of their refs). */
export async function sessionsOf(ctx: EngineContext): Promise<string[]> {
  const prefix = `refs/scalpel/${ctx.repo.worktreeId}/`;
  return [...(await ctx.repo.refs.list(prefix)).keys()]
    .map((r) => r.slice(prefix.length))
    .filter((s) => !s.includes('/'))
    .sort();
}

/** The manifest of a new snapshot of `session` in this worktree, made now. */
export function newSnapshot(
  ctx: EngineContext,
  session: string,
  label: string | null,
  captured: PathState,
  head: HeadState,
  more: {
    turn?: TurnRecord;
    uncovered?: string[];
    left?: string[];
    made?: string[];
    provisional?: Manifest['provisional'];
    rewound?: Manifest['rewound'];
  } = {},
): Manifest {
  return newManifest({
    id: randomHex(4),
    session,
    worktreeId: ctx.repo.worktreeId,
    objectFormat: ctx.repo.objectFormat,
    label,
    createdAt: ctx.now().toISOString(),
    captured,
    head,
    ...more,
  });
}

/**
 * What `roots` hold now (nothing written to the object database), from the index as `index`
 * read it (an operation that captures twice reads the index once), or as read now (what that
 * read left out goes to `warnings`, the calling operation's).
 */
export function captureNow(
  ctx: EngineContext,
  roots: readonly string[],
  warnings: string[],
  index?: { read: ReadIndexResult | null },
): Promise<PathState> {
  const capture = (read: ReadIndexResult | null) =>
    captureState(ctx.repo, read?.index ?? null, roots, { writeObjects: false, indexStat: read?.stat ?? null });
  if (index) return capture(index.read);
  return ctx.repo.withIndex({ verify: false }, (read) => {
    warnings.push(...readPast(read));
    return capture(read);
  });
}

/**
 * The optional index caches a read left out (git discards one it cannot read too, and reads on),
 * as warnings for the operation's result and its log record.
 */
export function readPast(read: ReadIndexResult | null): string[] {
  return !read || read.dropped.length === 0 ? [] : read.dropped.map(describeDropped);
}

/** Each warning once, in the order first given (one operation may read the same damaged index twice). */
export function unique(warnings: readonly string[]): string[] {
  return [...new Set(warnings)];
}

/** A snapshot as the API reports it. */
export function info(m: Manifest, commit: string): SnapshotInfo {
  let bytes = 0;
  for (const i of m.captured.items) if (i.kind === 'file') bytes += i.size;
  return {
    id: m.id,
    session: m.session,
    label: m.label,
    createdAt: m.createdAt,
    paths: m.captured.roots,
    sealed: m.seal !== null,
    items: m.captured.items.length,
    entries: m.captured.index.length,
    bytes,
    commit,
    ...absentRoots(m),
  };
}

/** The declared paths that held nothing when captured (no file, no index entry): a misspelt path, or one the edit will create. */
function absentRoots(m: Manifest): { absent?: string[] } {
  const absent = absentRootsOf(m.captured);
  return absent.length ? { absent } : {};
}

/** How many made paths a turn carries at most (its own first, then its predecessors'). */
const MADE_MAX = 256;

/**
 * What the session's turns made from nothing up to the end of `m` (what `m` carried, and what
 * its captures, finished or not, show was made after them): for `m`'s shell baselines, and for
 * the turn after it to carry. None when `m` is not a turn.
 */
export function madeThrough(m: Manifest | null): string[] {
  if (!m?.turn) return [];
  const own = minimalRoots([m.captured, ...(m.provisional ?? []).map((p) => p.state)].flatMap(madeAfter));
  const out = own.slice(0, MADE_MAX);
  for (const p of m.made ?? []) {
    if (out.length >= MADE_MAX) break;
    if (!out.some((o) => covers(o, p))) out.push(p);
  }
  return minimalRoots(out);
}

/** `i` with the operation's warnings, when there are some (each once). */
export function withWarnings(i: SnapshotInfo, warnings: readonly string[]): SnapshotInfo {
  return warnings.length ? { ...i, warnings: unique(warnings) } : i;
}

/** `paths` (relative to `cwd`, default the worktree) as the scope roots they name, outermost only. */
export function scopeRootsOf(ctx: EngineContext, paths: readonly string[], cwd?: string): string[] {
  return minimalRoots(paths.map((p) => toScopeRoot(ctx.repo.worktree, cwd ?? ctx.repo.worktree, p)));
}
