/**
 * The stack verbs: snapshot (push, or extend with `into`, or capture into the open turn), seal,
 * list, show, drop, prune. Each is a function of the engine context (context.ts) and its
 * options, returning what it reports; restore is restore-op.ts.
 */
import { ScalpelError } from '../errors/index.js';
import { readHeadWithLog } from '../repo/history.js';
import type { ReadIndexResult } from '../repo/index-file.js';
import type { RefTransaction } from '../repo/refs.js';
import type { ObjectBatch } from '../repo/object-batch.js';
import { checkSession, type SnapshotStack, type StackEntry } from '../store/stack.js';
import { cacheTreeByPath } from '../index/ext-tree.js';
import { covers, minimalRoots, toScopeRoot } from '../model/scope.js';
import { sealed, withCaptured } from '../model/manifest.js';
import { emptyState, joinCaptured, type Manifest, type PathState, type TurnRecord } from '../model/state.js';
import { captureState, sparseDirContaining } from './capture.js';
import { DEFAULT_SESSION, info, madeThrough, newSnapshot, readPast, stackOf, withWarnings, type EngineContext } from './context.js';
import { appendLog, logDetail, logWarnings } from './log-ops.js';
import { extendTurn, openTurnOf, sealTouches } from './turns.js';
import { OUTSIDE_PROMPT, type SnapshotInfo, type SnapshotOptions } from './types.js';

/** Capture exactly `paths` (and everything beneath them): worktree bytes, modes, links, index entries, resolve-undo. */
export async function snapshot(ctx: EngineContext, paths: readonly string[], opts: SnapshotOptions = {}): Promise<SnapshotInfo> {
  const session = opts.session ?? DEFAULT_SESSION;
  checkSession(session);
  if (paths.length === 0 && !opts.turn) throw new ScalpelError('BAD_ARGUMENT', 'snapshot needs at least one path', { name: 'paths' });
  const cwd = opts.cwd ?? ctx.repo.worktree;
  const roots = minimalRoots(paths.map((p) => toScopeRoot(ctx.repo.worktree, cwd, p)));
  if (opts.turn) {
    // the usual tool call of a turn writes a path the turn already holds: nothing to capture
    // (looked at without the lock; the capture below decides again under it)
    const top = await openTurnOf(stackOf(ctx, session));
    if (top && roots.every((r) => top.manifest.captured.roots.some((o) => covers(o, r)) && !sealTouches(top.manifest.seal, r)))
      return info(top.manifest, top.commit);
  }
  // Read as git reads it, trailer unchecked: a snapshot writes no index, and restore checks the
  // trailer of the index it is about to rewrite. Structural damage is still a typed error here.
  return ctx.repo.withIndex({ verify: false }, (read) => capture(ctx, roots, read, opts));
}

/** A snapshot of `roots` from the index as `read`; its warnings are what the read left out and a log record that could not be written. */
export async function capture(
  ctx: EngineContext,
  roots: string[],
  read: ReadIndexResult | null,
  opts: SnapshotOptions,
): Promise<SnapshotInfo> {
  const session = opts.session ?? DEFAULT_SESSION;
  const indexStat = read ? read.stat : null;
  if (read) {
    for (const r of roots) {
      const d = sparseDirContaining(read.index, r);
      if (d)
        throw new ScalpelError(
          'SPARSE_PATH',
          `'${r}' lies inside the sparse-index directory entry '${d}'; expand it first (git sparse-checkout add ${d.slice(0, -1)})`,
          { path: r, directory: d },
        );
    }
  }
  // the snapshot's objects are stored together, before the ref names them (one pack when many)
  const batch = ctx.repo.odb.batch();
  const state = await captureState(ctx.repo, read?.index ?? null, roots, { writeObjects: true, indexStat, writer: batch });
  const stack = stackOf(ctx, session);
  const past = readPast(read);
  const warnings = [...past];
  if (opts.into) {
    const into = opts.into;
    return withWarnings(
      await stack.locked(async (tx) =>
        extendSnapshot(ctx, stack, tx, await stack.downTo(into, tx.current), state, opts.label, batch, past, warnings),
      ),
      warnings,
    );
  }
  const head = await readHeadWithLog(ctx.repo);
  // for a scope of a few files, writing their trees costs less than mapping the index's cache tree
  const tree = state.items.length > 64 ? read?.index.extensions.find((x) => x.signature === 'TREE') : undefined;
  const cacheTree = tree && 'nodes' in tree ? cacheTreeByPath(tree.nodes) : undefined;
  // push: one commit on top of the head, under the session's ref lock (concurrent pushes queue up)
  const done = await stack.locked(async (tx): Promise<{ joined: SnapshotInfo } | { manifest: Manifest; commit: string }> => {
    let turn: TurnRecord | undefined;
    let made: string[] = [];
    if (opts.turn) {
      // the decision and the write under one lock: parallel tool calls of a turn join one snapshot
      const top = tx.current ? await stack.load(tx.current) : null;
      if (top && top.manifest.turn && !top.manifest.turn.ended)
        return { joined: await extendTurn(ctx, stack, tx, top, state, batch, { call: opts.call, logged: past }, warnings) };
      turn = { number: (top?.manifest.turn?.number ?? 0) + 1, ended: false };
      made = madeThrough(top?.manifest ?? null);
    }
    const provisional = opts.turn && opts.call !== undefined;
    const manifest = newSnapshot(
      ctx,
      session,
      opts.label ?? (opts.turn ? OUTSIDE_PROMPT : null),
      provisional ? emptyState() : state,
      head,
      { turn, made, ...(provisional ? { provisional: [{ call: opts.call as string, state }] } : {}) },
    );
    const commit = await stack.writeCommit(manifest, tx.current, cacheTree, batch);
    await batch.flush();
    await tx.set(commit);
    return { manifest, commit };
  });
  if ('joined' in done) return withWarnings(done.joined, warnings);
  const { manifest, commit } = done;
  await appendLog(
    ctx,
    {
      event: 'snapshot',
      session,
      ids: [manifest.id],
      paths: roots,
      detail: { label: manifest.label, ...(manifest.turn ? { turn: manifest.turn.number } : {}), ...logWarnings(past) },
    },
    warnings,
  );
  return withWarnings(info(manifest, commit), warnings);
}

/**
 * Add `state` to the oldest snapshot of `chain` (newest first, from the locked head): paths it
 * already holds keep their first capture, what lay in a directory absent at its first capture
 * was absent then too. A person's `snapshot --into`: the seal goes (it is of other paths).
 */
async function extendSnapshot(
  ctx: EngineContext,
  stack: SnapshotStack,
  tx: RefTransaction,
  chain: StackEntry[],
  state: PathState,
  label: string | undefined,
  batch: ObjectBatch,
  logged: string[],
  warnings: string[],
): Promise<SnapshotInfo> {
  const target = chain[chain.length - 1];
  const captured = joinCaptured(target.manifest.captured, state, { dropUnderAbsent: true });
  const manifest: Manifest = { ...withCaptured(target.manifest, captured), label: label ?? target.manifest.label };
  const { commit } = await stack.replace(tx, chain, target, manifest, batch);
  await appendLog(ctx, { event: 'extend', session: stack.session, ids: [manifest.id], paths: state.roots, ...logDetail(logged) }, warnings);
  return info(manifest, commit);
}

/** Record what the edit left in the snapshot's scope, so a later restore can tell a third party's write. */
export async function seal(ctx: EngineContext, opts: { session?: string; id?: string } = {}): Promise<SnapshotInfo> {
  const stack = stackOf(ctx, opts.session);
  return stack.locked(async (tx) => {
    const chain = opts.id ? await stack.downTo(opts.id, tx.current) : await stack.walk(() => true, tx.current);
    const target = chain[chain.length - 1];
    if (!target)
      throw new ScalpelError('SNAPSHOT_NOT_FOUND', `no snapshot to seal in session '${stack.session}'`, { session: stack.session });
    let past: string[] = [];
    const state = await ctx.repo.withIndex({ verify: false }, (read) => {
      past = readPast(read);
      return captureState(ctx.repo, read?.index ?? null, target.manifest.captured.roots, {
        writeObjects: false,
        indexStat: read?.stat ?? null,
      });
    });
    const manifest = sealed(target.manifest, ctx.now().toISOString(), state);
    const { commit } = await stack.replace(tx, chain, target, manifest);
    const warnings = [...past];
    await appendLog(ctx, { event: 'seal', session: stack.session, ids: [manifest.id], paths: state.roots, ...logDetail(past) }, warnings);
    return withWarnings(info(manifest, commit), warnings);
  });
}

export async function list(ctx: EngineContext, opts: { session?: string } = {}): Promise<SnapshotInfo[]> {
  return (await stackOf(ctx, opts.session).walk()).map((e) => info(e.manifest, e.commit));
}

export async function show(ctx: EngineContext, opts: { session?: string; id: string }): Promise<Manifest & { commit: string }> {
  const chain = await stackOf(ctx, opts.session).downTo(opts.id);
  const e = chain[chain.length - 1];
  return { ...e.manifest, commit: e.commit };
}

/** Remove snapshots from the stack without restoring them (their objects become unreachable). */
export async function drop(ctx: EngineContext, opts: { session?: string; id?: string; all?: boolean }): Promise<string[]> {
  const stack = stackOf(ctx, opts.session);
  if (!opts.all && !opts.id) throw new ScalpelError('BAD_ARGUMENT', 'drop needs an id or all', { name: 'id' });
  return stack.locked(async (tx) => {
    if (opts.all) {
      const all = await stack.walk(undefined, tx.current);
      if (all.length) await tx.set(null);
      const ids = all.map((e) => e.manifest.id);
      await appendLog(ctx, { event: 'drop', session: stack.session, ids, paths: [] }, []);
      return ids;
    }
    const chain = await stack.downTo(opts.id as string, tx.current);
    const target = chain[chain.length - 1];
    await stack.remove(tx, chain, target);
    await appendLog(ctx, { event: 'drop', session: stack.session, ids: [target.manifest.id], paths: target.manifest.captured.roots }, []);
    return [target.manifest.id];
  });
}

/** Keep the newest `keep` snapshots of the session; drop the older ones. */
export async function prune(ctx: EngineContext, opts: { session?: string; keep: number }): Promise<string[]> {
  if (!Number.isInteger(opts.keep) || opts.keep < 0)
    throw new ScalpelError('BAD_ARGUMENT', `keep must be a whole number, got ${opts.keep}`, { name: 'keep' });
  const stack = stackOf(ctx, opts.session);
  return stack.locked(async (tx) => {
    const all = await stack.walk(undefined, tx.current);
    if (all.length <= opts.keep) return [];
    const dropped = all.slice(opts.keep).map((e) => e.manifest.id);
    let parent: string | null = null;
    const batch = ctx.repo.odb.batch();
    for (let i = opts.keep - 1; i >= 0; i--) parent = await stack.writeCommit(all[i].manifest, parent, undefined, batch);
    await batch.flush();
    await tx.set(parent);
    await appendLog(ctx, { event: 'prune', session: stack.session, ids: dropped, paths: [] }, []);
    return dropped;
  });
}
