/**
 * Restore: undo the newest snapshot of a session, or one and every
 * later one, newest first, and pop them. Everything is checked before the first write: HEAD's
 * movement (a pushed commit refuses), the sealed paths (someone else's change refuses), the
 * index lock. `force` saves what is about to be replaced as a new snapshot first; a rewind (how
 * rewind.ts calls it) always saves it, on the worktree's undo stack (undo-stack.ts).
 */
import { ScalpelError, isScalpelError } from '../errors/index.js';
import type { Lock } from '../fs/atomic.js';
import { commitsMadeSince, headMovement, readHead, readHeadWithLog, type HeadMovement } from '../repo/history.js';
import type { ReadIndexResult } from '../repo/index-file.js';
import type { RefTransaction } from '../repo/refs.js';
import type { SnapshotStack, StackEntry } from '../store/stack.js';
import { compareRel, minimalRoots } from '../model/scope.js';
import { holdsPath, narrowManifest, remainderManifest, targetOf } from '../model/narrow.js';
import type { Manifest, TurnRecord } from '../model/state.js';
import { captureState } from './capture.js';
import { newSnapshot, readPast, stackOf, unique, type EngineContext } from './context.js';
import { appendLog, logHead, logWarnings } from './log-ops.js';
import { applyRestore, planRestore } from './restore.js';
import { headRefusal, pushedRefusal, refusal } from './refusals.js';
import { REWINDS, pushRewind, sealRewind, type PushedRewind } from './undo-stack.js';
import type { RestoreOptions, RestoreReport } from './types.js';

/**
 * Undo the newest snapshot of the session (or `id` and every later one, newest first) and
 * remove them from the stack. Refuses (REFUSED, exit 3) when a sealed path changed since its
 * seal, unless `force`, which first saves the current state as a new snapshot.
 */
export async function restore(ctx: EngineContext, opts: RestoreOptions = {}): Promise<RestoreReport> {
  return restoreOn(ctx, stackOf(ctx, opts.session), opts, {});
}

/**
 * restore() on `stack`. `how.rewind`: a rewind, whose every run (forced or not) first saves
 * what it replaces on the worktree's rewind stack, sealed with what it leaves once done, so
 * `rewind --undo` can bring it back. `how.picks` (a rewind only): only those paths
 * (worktree-relative) are taken back, and the snapshots stay on the stack with the rest.
 */
export async function restoreOn(
  ctx: EngineContext,
  stack: SnapshotStack,
  opts: RestoreOptions,
  how: { rewind?: boolean; picks?: readonly string[] },
): Promise<RestoreReport> {
  const session = stack.session;
  if (how.picks && !how.rewind) throw new ScalpelError('BAD_ARGUMENT', 'only a rewind takes back some paths of a turn', { name: 'paths' });
  if (opts.dryRun) {
    const whole = await restoreChain(stack, opts.id, await stack.head());
    const chain = how.picks ? narrowChain(whole, how.picks) : whole;
    // decided as the restore decides: under the index lock it takes (someone else's is
    // INDEX_LOCKED; given back unwritten), the index read as it reads it (the trailer checked
    // only with verifyIndex), HEAD looked at after that
    const dryLock = await ctx.repo.lockIndex();
    const { warnings, head, plan } = await ctx.repo
      .withIndex({ verify: opts.verifyIndex === true }, async (read) => {
        const warnings = readPast(read);
        const head = await headCheck(ctx, chain[chain.length - 1]);
        return { warnings, head, plan: await planRestore(ctx.repo, chain, read, read?.stat ?? null) };
      })
      .finally(() => dryLock.release());
    if (head) warnings.push(...head.warnings);
    return {
      session,
      restored: chain.map((e) => e.manifest.id),
      dryRun: true,
      savedAs: null,
      paths: plan.paths,
      pruned: plan.pruned,
      conflicts: plan.conflicts,
      indexWritten: false,
      warnings,
      head,
      uncovered: listOf(chain, 'uncovered'),
      left: listOf(chain, 'left'),
      ...(how.picks ? { picked: [...how.picks] } : {}),
    };
  }
  return stack.locked(async (tx) => {
    const chain = await restoreChain(stack, opts.id, tx.current);
    const ids = chain.map((e) => e.manifest.id);
    const oldest = chain[chain.length - 1];
    const lock = await ctx.repo.lockIndex().catch(async (e: unknown) => {
      if (e instanceof ScalpelError && e.code === 'INDEX_LOCKED') {
        // the refusal is the outcome: a log record that could not be written goes unsaid
        await appendLog(
          ctx,
          { event: 'refused', session, ids, paths: oldest.manifest.captured.roots, detail: { reason: 'index-locked' } },
          [],
        );
      }
      throw e;
    });
    try {
      // read as git reads it (its trailer unchecked, unless asked): verifying is before anything is planned, let alone written
      return await ctx.repo.withIndex({ verify: opts.verifyIndex === true }, (read) =>
        restoreLocked(ctx, stack, tx, chain, lock, read, opts, how),
      );
    } finally {
      await lock.release();
    }
  });
}

async function restoreLocked(
  ctx: EngineContext,
  stack: SnapshotStack,
  tx: RefTransaction,
  whole: StackEntry[],
  lock: Lock,
  read: ReadIndexResult | null,
  opts: RestoreOptions,
  how: { rewind?: boolean; picks?: readonly string[] },
): Promise<RestoreReport> {
  const session = stack.session;
  const ids = whole.map((e) => e.manifest.id);
  const oldest = whole[whole.length - 1];
  const chain = how.picks ? narrowChain(whole, how.picks) : whole;
  const indexStat = read?.stat ?? null;
  const warnings = readPast(read);
  const verb = how.rewind ? 'rewind' : 'restore';
  // what the edit committed: one ref read when HEAD did not move
  const head = await headCheck(ctx, oldest);
  if (head) warnings.push(...head.warnings);
  if (head && headRefusal(head) && !opts.force) {
    await appendLog(
      ctx,
      {
        event: 'refused',
        session,
        ids,
        paths: oldest.manifest.captured.roots,
        detail: { reason: head.complete ? 'pushed' : 'history-unknown', head: logHead(head), ...logWarnings(warnings) },
      },
      [],
    );
    throw pushedRefusal(head, session, verb);
  }
  const plan = await planRestore(ctx.repo, chain, read, indexStat);
  if (plan.conflicts.length && !opts.force) {
    await appendLog(
      ctx,
      {
        event: 'refused',
        session,
        ids,
        paths: plan.conflicts.map((c) => c.path),
        detail: { conflicts: plan.conflicts, ...logWarnings(warnings) },
      },
      [],
    );
    throw refusal(plan.conflicts, session, verb);
  }
  // a rewind of some paths: the turns stay, each with what it holds besides them (written
  // before the worktree is touched; the ref moves to them once the paths are back)
  let after: string | null = oldest.parent;
  if (how.picks) {
    const target = targetOf(chain.map((e) => e.manifest));
    const batch = ctx.repo.odb.batch();
    for (let i = whole.length - 1; i >= 0; i--)
      after = await stack.writeCommit(remainderManifest(whole[i].manifest, how.picks, target, plan.pruned), after, undefined, batch);
    await batch.flush();
  }
  let saved: Manifest | null = null;
  let savedCommit: string | null = null;
  let undo: PushedRewind | null = null;
  // what the undo puts back: the restored paths, and the directories the restore removes as
  // emptied (made to hold a path that is gone again, they held something before it ran)
  const replaced = plan.pruned.length ? minimalRoots([...plan.roots, ...plan.pruned]) : plan.roots;
  if (how.rewind || opts.force) {
    // what is about to be replaced, stored before the worktree is touched: a failure here
    // leaves everything as it was
    const batch = ctx.repo.odb.batch();
    const state = await captureState(ctx.repo, read?.index ?? null, replaced, { writeObjects: true, indexStat, writer: batch });
    if (how.rewind) {
      const turns = chain.filter((e) => e.manifest.turn).map((e) => (e.manifest.turn as TurnRecord).number);
      const what = turns.length
        ? `turn${turns.length > 1 ? 's' : ''} ${[...turns].reverse().join(', ')} of ${session}`
        : `${ids.join(', ')} of ${session}`;
      saved = newSnapshot(ctx, REWINDS, `before the rewind of ${what}`, state, await readHeadWithLog(ctx.repo), {
        rewound: { session, from: tx.current, to: after },
      });
      undo = await pushRewind(ctx, saved, batch);
    } else {
      saved = newSnapshot(ctx, session, `state before forced restore of ${ids.join(', ')}`, state, await readHeadWithLog(ctx.repo));
      savedCommit = await stack.writeCommit(saved, oldest.parent, undefined, batch);
      await batch.flush();
    }
  }
  const { indexWritten } = await applyRestore(ctx.repo, plan, read, lock, indexStat);
  await tx.set(savedCommit ?? after);
  // the rewind's undo is sealed with what the rewind left: `rewind --undo` refuses when someone changed it since
  const later: string[] = [];
  if (undo) await sealRewind(ctx, undo, replaced, later);
  await appendLog(
    ctx,
    {
      event: 'restore',
      session,
      ids,
      paths: plan.roots,
      detail: {
        savedAs: saved?.id ?? null,
        ...(how.rewind ? { rewind: true } : {}),
        ...(how.picks ? { picked: how.picks } : {}),
        changed: plan.paths.map((p) => p.path),
        pruned: plan.pruned,
        ...(head ? { head: logHead(head) } : {}),
        ...logWarnings(warnings),
      },
    },
    later,
  );
  return {
    session,
    restored: ids,
    dryRun: false,
    savedAs: saved?.id ?? null,
    paths: plan.paths,
    pruned: plan.pruned,
    conflicts: plan.conflicts,
    indexWritten,
    warnings: unique([...warnings, ...later]),
    head,
    uncovered: listOf(chain, 'uncovered'),
    left: listOf(chain, 'left'),
    ...(how.picks ? { picked: [...how.picks] } : {}),
  };
}

/**
 * `chain` narrowed to `picks`: each snapshot with only what it holds there. A pick no snapshot
 * of the chain holds (at, beneath or above it) is a wrong argument, named.
 */
function narrowChain(chain: StackEntry[], picks: readonly string[]): StackEntry[] {
  const holds = (e: StackEntry, p: string) => holdsPath(e.manifest, p);
  for (const p of picks) {
    if (chain.some((e) => holds(e, p))) continue;
    const turns = chain.filter((e) => e.manifest.turn).map((e) => (e.manifest.turn as TurnRecord).number);
    const what = turns.length ? `turn${turns.length > 1 ? 's' : ''} ${[...turns].reverse().join(', ')}` : 'the snapshots restored';
    throw new ScalpelError('BAD_ARGUMENT', `'${p || '.'}' is not a path of ${what} of ${chain[0].manifest.session}`, {
      name: 'paths',
      path: p,
    });
  }
  return chain.map((e) => ({ ...e, manifest: narrowManifest(e.manifest, picks) }));
}

/**
 * How HEAD moved since `oldest` was taken (null: it did not, or the snapshot has no record). A
 * snapshot's HEAD commit that is gone from the repository leaves the answer incomplete.
 */
export async function headCheck(ctx: EngineContext, oldest: StackEntry): Promise<HeadMovement | null> {
  const then = oldest.manifest.head;
  if (!then) return null;
  try {
    // the commits the edit made, by HEAD's reflog (null: it cannot tell; then every commit new
    // since, whatever its date: a clock set back dates a commit before the snapshot, and gc
    // expires its reflog entry by that date)
    const made = await commitsMadeSince(ctx.repo, then);
    const m = await headMovement(ctx.repo, then, undefined, made ? { made } : { undated: true });
    if (m && !m.complete && (await ctx.repo.refs.list('refs/remotes/')).size === 0) return { ...m, complete: true };
    return m;
  } catch (e) {
    if (!(isScalpelError(e, 'OBJECT_NOT_FOUND') && e.data.role === 'from')) throw e;
    const to = await readHead(ctx.repo);
    const remotes = (await ctx.repo.refs.list('refs/remotes/')).size;
    return {
      from: then,
      to,
      branchChanged: then.ref !== to.ref,
      newCommits: [],
      count: 0,
      complete: remotes === 0,
      pushed: [],
      visited: 0,
      warnings: [e.message],
    };
  }
}

async function restoreChain(stack: SnapshotStack, id: string | undefined, head: string | null): Promise<StackEntry[]> {
  const chain = id ? await stack.downTo(id, head) : await stack.walk(() => true, head);
  if (chain.length === 0)
    throw new ScalpelError('SNAPSHOT_NOT_FOUND', `nothing to restore: session '${stack.session}' has no snapshots`, {
      session: stack.session,
    });
  return chain;
}

/** A list the snapshots of `chain` keep (what they could not capture), each path once. */
function listOf(chain: readonly StackEntry[], key: 'uncovered' | 'left'): string[] {
  return [...new Set(chain.flatMap((e) => e.manifest[key] ?? []))].sort(compareRel);
}
