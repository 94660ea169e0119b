/**
 * Rewind, the person's undo of whole turns: a restore of a turn and every later one of its
 * session (restore-op.ts, with the rewind's undo saved first), and `rewind --undo`, which brings
 * back what the newest rewind replaced (undo-stack.ts) and puts its turns back on their stack.
 */
import { ScalpelError } from '../errors/index.js';
import { holdsPath } from '../model/narrow.js';
import type { Manifest } from '../model/state.js';
import type { StackEntry } from '../store/stack.js';
import { info, scopeRootsOf, sessionsOf, stackOf, unique, type EngineContext } from './context.js';
import { appendLog } from './log-ops.js';
import { restoreOn } from './restore-op.js';
import { rewindTarget } from './turns.js';
import { rewinds, rewoundRef } from './undo-stack.js';
import type { RestoreReport, RewindOptions, SnapshotInfo } from './types.js';

/**
 * Undo the newest rewind of this worktree (forced or not): what it replaced comes back, and its
 * turns go back on their session's stack when that stack is as the rewind left it. Refuses
 * (REFUSED) when a path it restored changed since, unless `force`, which first saves what is
 * there now (a second `rewindUndo` undoes the forced one).
 */
export async function rewindUndo(
  ctx: EngineContext,
  opts: { dryRun?: boolean; force?: boolean; verifyIndex?: boolean } = {},
): Promise<RestoreReport & { turnsBack: boolean }> {
  const stack = rewinds(ctx);
  const head = await stack.head();
  if (!head) throw new ScalpelError('SNAPSHOT_NOT_FOUND', 'nothing to undo: no rewind of this worktree is kept', { session: null });
  const top = await stack.load(head);
  const report = await restoreOn(ctx, stack, { dryRun: opts.dryRun, force: opts.force, verifyIndex: opts.verifyIndex }, {});
  const r = top.manifest.rewound;
  const warnings = [...report.warnings];
  let turnsBack = false;
  if (!opts.dryRun && r) {
    const session = stackOf(ctx, r.session);
    turnsBack = await session.locked(async (tx) => {
      if (tx.current !== r.to || !r.from) return false;
      await tx.set(r.from);
      return true;
    });
    await ctx.repo.refs.remove(rewoundRef(ctx, top.manifest.id));
    await appendLog(
      ctx,
      {
        event: 'restore',
        session: r.session,
        ids: [top.manifest.id],
        paths: top.manifest.captured.roots,
        detail: { undoRewind: true, turnsBack },
      },
      warnings,
    );
  }
  return { ...report, warnings: unique(warnings), turnsBack };
}

/** The rewinds `rewindUndo` can undo, newest first. */
export async function undoableRewinds(
  ctx: EngineContext,
): Promise<Array<SnapshotInfo & { rewound: NonNullable<Manifest['rewound']> | null }>> {
  return (await rewinds(ctx).walk()).map((e) => ({ ...info(e.manifest, e.commit), rewound: e.manifest.rewound ?? null }));
}

/**
 * Undo a turn and every later one of its session: the newest turn that changed anything, or
 * `turn` (its number in the session, or a snapshot id). Without `session`, the session of the
 * worktree's newest such turn (a harness may give a conversation a new id after a resume).
 * Restore's semantics and refusals. With `paths` (relative to `cwd`, default the worktree):
 * only those paths of the turn and the later ones are taken back, and the turns stay with the
 * rest; without `turn`, the newest turn holding one of them.
 */
export async function rewind(ctx: EngineContext, opts: RewindOptions = {}): Promise<RestoreReport> {
  const picks = opts.paths?.length ? scopeRootsOf(ctx, opts.paths, opts.cwd) : undefined;
  const holds = (e: StackEntry) => !picks || picks.some((p) => holdsPath(e.manifest, p));
  const session = opts.session ?? (await newestTurnSession(ctx, holds, picks));
  const chain = await stackOf(ctx, session).walk();
  const target =
    opts.turn === undefined && picks ? chain.find((e) => e.manifest.turn && holds(e)) : rewindTarget(chain, session, opts.turn);
  if (!target)
    throw new ScalpelError('SNAPSHOT_NOT_FOUND', `nothing to rewind: no turn of session '${session}' holds ${(picks ?? []).join(', ')}`, {
      session,
    });
  return restoreOn(
    ctx,
    stackOf(ctx, session),
    { session, id: target.manifest.id, dryRun: opts.dryRun, force: opts.force, verifyIndex: opts.verifyIndex },
    { rewind: true, ...(picks ? { picks } : {}) },
  );
}

/** The session of the worktree's newest turn that changed anything (and that `holds` says yes to). */
export async function newestTurnSession(
  ctx: EngineContext,
  holds: (e: StackEntry) => boolean = () => true,
  picks?: readonly string[],
): Promise<string> {
  let best: { session: string; at: string } | null = null;
  // a turn that captured something; with paths, one naming them (a command's change in an
  // ignored directory, named and not brought back, is named all the same)
  const wanted = (e: StackEntry) => !!e.manifest.turn && (picks ? holds(e) : e.manifest.captured.roots.length > 0);
  for (const session of await sessionsOf(ctx)) {
    const chain = await stackOf(ctx, session).walk(wanted);
    const e = chain[chain.length - 1];
    if (!e || !wanted(e)) continue;
    if (!best || e.manifest.createdAt > best.at) best = { session, at: e.manifest.createdAt };
  }
  if (!best) {
    const undoable = (await rewinds(ctx).head()) !== null;
    throw new ScalpelError(
      'SNAPSHOT_NOT_FOUND',
      `nothing to rewind: no turn of this worktree ${picks ? `holds ${picks.map((p) => p || '.').join(', ')}` : 'changed anything'}${undoable ? ' (the newest rewind can be undone: rewind --undo)' : ''}`,
      { session: null },
    );
  }
  return best.session;
}
