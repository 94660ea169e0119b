import type { Fs, FsCapabilities } from '../fs/types.js';
import type { ViewStatus, WorktreeView } from '../fs/view.js';
import { joinPath } from '../fs/path.js';
import { toFs } from '../fs/adapt.js';
import { Repository } from '../repo/repository.js';
import { IndexCache } from '../repo/index-cache.js';
import type { ReadIndexResult } from '../repo/index-file.js';
import { discoverRepository } from '../repo/discover.js';
import type { Platform } from '../platform/types.js';
import type { StackEntry } from '../store/stack.js';
import type { LogRecord } from '../store/log.js';
import type { CallInput, CallRecord } from '../store/calls.js';
import { writeTarget } from '../model/scope.js';
import type { Manifest } from '../model/state.js';
import { DEFAULT_SESSION, engineContext, stackOf, type EngineContext } from './context.js';
import * as applying from './apply-op.js';
import * as diffing from './diff.js';
import * as log from './log-ops.js';
import * as restoring from './restore-op.js';
import * as rewinding from './rewind.js';
import * as shell from './shell-steps.js';
import * as verbs from './stack-verbs.js';
import * as calls from './tool-calls.js';
import * as turns from './turns.js';
import {
  OUTSIDE_PROMPT,
  type OpenOptions,
  type SnapshotOptions,
  type SnapshotInfo,
  type RestoreOptions,
  type RestoreReport,
  type TurnInfo,
  type ApplyOptions,
  type ApplyReport,
  type DiffOptions,
  type FileDiff,
  type RewindOptions,
  type TurnDiff,
} from './types.js';

/*
 * The public entry of the snapshot engine: openRepository and ScalpelRepository, whose every
 * method delegates to one operation module of src/snapshot/ (a plain function of the engine
 * context, context.ts, and the method's options, returning its outcome):
 *
 *   stack-verbs.ts   snapshot (push, --into, into a turn), seal, list, show, drop, prune
 *   restore-op.ts    restore: checks first (HEAD, seals, index lock), then writes; force saves
 *   turns.ts         a turn's life (open, extend, seal, retention, idle sessions) and the list of turns
 *   tool-calls.ts    a hook's tool calls: started, ended, finished (joined and sealed), abandoned
 *   shell-steps.ts   a shell command's baseline before it and its changes after it
 *   diff.ts          what a turn changed, as git's diff computes it
 *   rewind.ts        rewind and rewind --undo (undo-stack.ts keeps what a rewind replaced)
 *   apply-op.ts      a patch applied with its rollback armed
 *   log-ops.ts       the event log
 *
 * The object holds nothing that changes: what an operation reads past without stopping comes
 * back in its own result (`warnings`), so one object may serve concurrent calls.
 */

export { OUTSIDE_PROMPT };
export type {
  OpenOptions,
  SnapshotOptions,
  SnapshotInfo,
  RestoreOptions,
  RestoreReport,
  TurnInfo,
  ApplyOptions,
  ApplyReport,
  DiffOptions,
  FileDiff,
  RewindOptions,
  TurnDiff,
  LogRecord,
  StackEntry,
};

/** Open the repository containing `dir` for snapshots and restores. */
export async function openRepository(opts: OpenOptions): Promise<ScalpelRepository> {
  let fs: Fs;
  if (isFsContract(opts.fs)) fs = opts.fs;
  else {
    // find the repository through an unprobed adapter, then probe inside its git dir
    const loc = await discoverRepository(await toFs(opts.fs), opts.dir);
    fs = await probedFs(opts.fs, joinPath(loc.gitDir, 'scalpel', 'probe'), opts.cache);
  }
  const repo = await Repository.open({
    fs,
    dir: opts.dir,
    platform: opts.platform,
    hash: opts.hash,
    zlib: opts.zlib,
    proc: opts.proc,
    streamThreshold: opts.streamThreshold,
    packThreshold: opts.packThreshold,
    env: opts.env,
    indexCache: opts.cache ? indexCacheOf(opts.cache) : undefined,
  });
  return new ScalpelRepository(repo, opts.now ?? (() => new Date()), opts.views?.view(repo.worktree) ?? null);
}

/** Where a caller's `cache` object keeps index reads (a symbol, as PROBES). */
const INDEXES = Symbol('git-scalpel index reads');

/** The index reads kept in a caller-owned `cache`. */
function indexCacheOf(cache: object): IndexCache<ReadIndexResult> {
  const slot = cache as { [INDEXES]?: IndexCache<ReadIndexResult> };
  return (slot[INDEXES] ??= new IndexCache<ReadIndexResult>());
}

/** Where a caller's `cache` object keeps probed filesystems (a symbol: nothing of the caller's is touched). */
const PROBES = Symbol('git-scalpel probed filesystems');

/** Probe a filesystem object, once per caller-owned `cache` when one is given. */
function probedFs(input: unknown, probeDir: string, cache?: object): Promise<Fs> {
  if (!cache) return toFs(input, { probeDir });
  const slot = cache as { [PROBES]?: WeakMap<object, Promise<Fs>> };
  const probed = (slot[PROBES] ??= new WeakMap());
  const key = input as object;
  let p = probed.get(key);
  if (!p) {
    p = toFs(input, { probeDir });
    probed.set(key, p);
    p.catch(() => probed.delete(key));
  }
  return p;
}

function isFsContract(x: unknown): x is Fs {
  return !!x && typeof x === 'object' && 'capabilities' in x && typeof (x as Fs).lstat === 'function';
}

export class ScalpelRepository {
  /** What every operation runs against: made once, never changed, so calls may share this object. */
  private readonly ctx: EngineContext;

  /** @internal Made by openRepository, which finds the repository and probes its filesystem. */
  constructor(repo: Repository, now: () => Date, view: WorktreeView | null = null) {
    this.ctx = engineContext(repo, now, view);
  }

  get worktree(): string {
    return this.ctx.repo.worktree;
  }

  /** The hashing, zlib and process information in use (what openRepository picked for this runtime, with the options' overrides). */
  get platform(): Platform {
    return this.ctx.repo.platform;
  }

  /** What the worktree's watched view is doing (OpenOptions.views), for `server status`; null without one. */
  get viewStatus(): ViewStatus | null {
    return this.ctx.view?.status() ?? null;
  }

  /** The filesystem adapter in use, for diagnostics ('node:fs', 'node-style fs', 'promise fs', 'memfs', 'opfs', …). */
  get fsName(): string {
    return this.ctx.repo.fs.name ?? 'fs';
  }

  /** What the filesystem does (symlinks, modes, exclusive create, ...), as probed when the repository was opened. */
  get capabilities(): FsCapabilities {
    return { ...this.ctx.repo.fs.capabilities };
  }

  /** Where a write to the absolute path `abs` lands, through every symbolic link on the way (`followed`: whether one was). */
  writeTarget(abs: string): Promise<{ path: string; followed: boolean }> {
    return writeTarget(this.ctx.repo.fs, abs);
  }

  /** The repository's git configuration value `name` as read when it was opened (the last one set wins; undefined when unset). */
  configValue(name: string): string | undefined {
    return this.ctx.repo.config.getString(name);
  }

  /**
   * What a turn changed (the newest that changed anything, or `turn`), from its pre-image to what
   * its paths hold now, in the worktree or (`cached`) the index: git's hunks, renames and binary
   * files, computed here (no git process).
   */
  diff(opts: DiffOptions = {}): Promise<TurnDiff> {
    return diffing.turnDiff(this.ctx, opts);
  }

  /** What `rewindUndo` would bring back: from what the newest rewind's paths hold now to what it replaced. */
  undoDiff(opts: Omit<DiffOptions, 'session' | 'turn'> = {}): Promise<TurnDiff> {
    return diffing.undoDiff(this.ctx, opts);
  }

  /** The ref holding the session's stack, newest snapshot first (`git show <ref>:worktree/<path>` shows a pre-image). */
  sessionRef(session = DEFAULT_SESSION): string {
    return stackOf(this.ctx, session).ref;
  }

  // the stack verbs (stack-verbs.ts, restore-op.ts)
  /** Capture exactly `paths` (and everything beneath them): worktree bytes, modes, links, index entries, resolve-undo. */
  snapshot(paths: readonly string[], opts: SnapshotOptions = {}): Promise<SnapshotInfo> {
    return verbs.snapshot(this.ctx, paths, opts);
  }

  /** Record what the edit left in the snapshot's scope, so a later restore can tell a third party's write. */
  seal(opts: { session?: string; id?: string } = {}): Promise<SnapshotInfo> {
    return verbs.seal(this.ctx, opts);
  }

  /**
   * Undo the newest snapshot of the session (or `id` and every later one, newest first) and
   * remove them from the stack. Refuses (REFUSED, exit 3) when a sealed path changed since its
   * seal, unless `force`, which first saves the current state as a new snapshot.
   */
  restore(opts: RestoreOptions = {}): Promise<RestoreReport> {
    return restoring.restore(this.ctx, opts);
  }

  list(opts: { session?: string } = {}): Promise<SnapshotInfo[]> {
    return verbs.list(this.ctx, opts);
  }

  show(opts: { session?: string; id: string }): Promise<Manifest & { commit: string }> {
    return verbs.show(this.ctx, opts);
  }

  /** Remove snapshots from the stack without restoring them (their objects become unreachable). */
  drop(opts: { session?: string; id?: string; all?: boolean }): Promise<string[]> {
    return verbs.drop(this.ctx, opts);
  }

  /** Keep the newest `keep` snapshots of the session; drop the older ones. */
  prune(opts: { session?: string; keep: number }): Promise<string[]> {
    return verbs.prune(this.ctx, opts);
  }

  // turns (turns.ts), a hook's tool calls (tool-calls.ts) and shell commands (shell-steps.ts)
  /**
   * A user prompt: end the session's open turn (sealed, so a person's later edit of its paths
   * makes a rewind refuse), then push an empty turn labelled `label`, which the tool calls that
   * follow fill (snapshot with `turn`). Keeps the session's newest turns (`scalpel.keepTurns`,
   * default 100) and drops hook sessions idle for `scalpel.keepIdleDays` (default 30).
   */
  openTurn(opts: { session: string; label: string }): Promise<SnapshotInfo> {
    return turns.openTurn(this.ctx, opts);
  }

  /**
   * The agent stopped (`final`) or a subagent did: seal the open turn, so a person's later edit of
   * its paths makes a rewind refuse. A final stop ends the turn: the next tool call opens a new
   * one. A subagent's leaves it open: the agent goes on, and its next write unseals it. Null when
   * no turn is open.
   */
  closeTurn(opts: { session: string; final: boolean }): Promise<SnapshotInfo | null> {
    return turns.closeTurn(this.ctx, opts);
  }

  /** The session's open turn (the agent has not ended it), or null. */
  currentTurn(session: string): Promise<SnapshotInfo | null> {
    return turns.currentTurn(this.ctx, session);
  }

  /**
   * The turns of the worktree's hook sessions (or of `session`), newest first: label, paths, the
   * tool calls the log holds for each, and what rewinding to it would do now (a dry run: would it
   * refuse, and why). Reads the index once per session.
   */
  turns(opts: { session?: string } = {}): Promise<TurnInfo[]> {
    return turns.listTurns(this.ctx, opts);
  }

  /** A key for a tool call whose harness gives it no id (its after-event is then paired by input and order). */
  newCallKey(): string {
    return calls.newCallKey(this.ctx);
  }

  /**
   * A hook's tool call starts: its kind, input, turn and start time are kept until its end
   * (callEnded, in another process: harnesses give no duration). Best effort: a record that
   * cannot be written is no error.
   */
  callStarted(opts: { session: string; rec: CallRecord }): Promise<void> {
    return calls.callStarted(this.ctx, opts);
  }

  /**
   * The call an after-event ends, forgotten now: the one named `key` (the harness's id), or
   * without one, the newest call in flight without an id whose input is `input` (the same
   * command, or the same paths); null when none is kept. A shell after-event that names no
   * call its input matches takes the one shell call in flight, when there is exactly one.
   */
  callEnded(opts: { session: string; key?: string; input?: CallInput }): Promise<CallRecord | null> {
    return calls.callEnded(this.ctx, opts);
  }

  /**
   * Tool call `call` of the session's open turn finished writing `paths` (worktree-relative):
   * what it captured before it ran joins the turn (the first call to finish decides a path's
   * pre-image), and `paths` are sealed with what they hold now, as the agent left them. A later
   * change by someone else is then told apart (contested, or refused after the turn). Nothing
   * when no turn is open.
   */
  callFinished(opts: { session: string; call?: string; paths: readonly string[] }): Promise<{ warnings: string[] }> {
    return calls.callFinished(this.ctx, opts);
  }

  /** The tool calls of `paths` finished: sealed as the agent left them (callFinished without a call). */
  sealPaths(opts: { session: string; paths: readonly string[] }): Promise<{ warnings: string[] }> {
    return calls.sealPaths(this.ctx, opts);
  }

  /**
   * Tool call `call` will not run (the person denied it): what it captured goes now, as it would
   * when the turn ends, and so does a shell command's baseline.
   */
  callAbandoned(opts: { session: string; call: string }): Promise<void> {
    return calls.callAbandoned(this.ctx, opts);
  }

  /**
   * The calls of `session` whose end the harness never reports (CallRecord.unreported: Codex
   * applies a shell heredoc patch itself and sends no PostToolUse) are over once the session's
   * next event comes: what they captured joins the turn, what they wrote is sealed.
   */
  finishUnreported(opts: { session: string }): Promise<{ warnings: string[] }> {
    return calls.finishUnreported(this.ctx, opts);
  }

  /** Forget every call of the session in flight and their shell baselines (its turn is over; what a killed tool left goes too). */
  forgetCalls(session: string): Promise<void> {
    return calls.forgetCalls(this.ctx, session);
  }

  /**
   * Before a shell command of the turn: record git's view of the worktree as a baseline (every
   * tracked path, every untracked path git does not ignore, hand-kept ignored files, the whole
   * index; clean tracked files cost a stat), under `key` (the tool call's id). Opens a turn when
   * none is. shellAfter then adds to the turn what the command changed.
   */
  shellBefore(opts: {
    session: string;
    key: string;
    command: string;
  }): Promise<{ turn: SnapshotInfo; ignoredDirs: string[]; warnings: string[] }> {
    return shell.shellBefore(this.ctx, opts);
  }

  /**
   * After the shell command `key`: what it changed since its baseline joins the turn, with the
   * state from before the command (the first capture of a path in a turn wins). Null when no
   * baseline was taken (no before-shell event reached us).
   */
  shellAfter(opts: {
    session: string;
    key: string;
  }): Promise<{ turn: SnapshotInfo | null; paths: string[]; uncovered: string[]; left: string[]; warnings: string[] } | null> {
    return shell.shellAfter(this.ctx, opts);
  }

  // the person's undo of turns (rewind.ts)
  /**
   * Undo a turn and every later one of its session: the newest turn that changed anything, or
   * `turn` (its number in the session, or a snapshot id). Without `session`, the session of the
   * worktree's newest such turn (a harness may give a conversation a new id after a resume).
   * Restore's semantics and refusals. With `paths` (relative to `cwd`, default the worktree):
   * only those paths of the turn and of every later one are taken back, and the turns stay with
   * the rest of their paths; without `turn`, the newest turn holding one of them.
   */
  rewind(opts: RewindOptions = {}): Promise<RestoreReport> {
    return rewinding.rewind(this.ctx, opts);
  }

  /**
   * Undo the newest rewind of this worktree (forced or not): what it replaced comes back, and its
   * turns go back on their session's stack when that stack is as the rewind left it. Refuses
   * (REFUSED) when a path it restored changed since, unless `force`, which first saves what is
   * there now (a second `rewindUndo` undoes the forced one).
   */
  rewindUndo(opts: { dryRun?: boolean; force?: boolean; verifyIndex?: boolean } = {}): Promise<RestoreReport & { turnsBack: boolean }> {
    return rewinding.rewindUndo(this.ctx, opts);
  }

  /** The rewinds `rewindUndo` can undo, newest first. */
  undoableRewinds(): Promise<Array<SnapshotInfo & { rewound: NonNullable<Manifest['rewound']> | null }>> {
    return rewinding.undoableRewinds(this.ctx);
  }

  // the agent's own undo (apply-op.ts) and the log (log-ops.ts)
  /**
   * Apply a patch (git's unified diff, `git diff --binary`, `git format-patch`, or Codex's
   * `*** Begin Patch`; a string is its text as UTF-8) with its rollback armed: every path it touches, both sides of
   * a rename, is snapshotted first as one snapshot; then the patch is written to the worktree
   * (`to: 'index'`: worktree and index, as `git apply --index`; `'cached'`: the index alone).
   * A patch that does not apply writes nothing (BAD_ARGUMENT naming the file and hunk). With
   * `check`, a failure rolls the patch back exactly (a restore) unless `keepOnFailure`.
   */
  apply(patch: Uint8Array | string, opts: ApplyOptions = {}): Promise<ApplyReport> {
    return applying.apply(this.ctx, patch, opts);
  }

  /** Record a tool call or a session event of a hook (the log is best effort, as always). */
  record(rec: Omit<LogRecord, 'at'>): Promise<{ warnings: string[] }> {
    return log.record(this.ctx, rec);
  }

  /** Every snapshot, seal, restore and refusal of the session, oldest first. */
  log(opts: { session?: string } = {}): Promise<LogRecord[]> {
    return log.readLog(this.ctx, opts.session);
  }
}
