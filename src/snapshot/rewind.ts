/**
 * Rewind, the person's undo of whole turns: a restore of a turn and every later one of its
 * session (restore-op.ts, with the rewind's undo saved first), and `rewind --undo`, which brings
 * back what the newest rewind replaced (undo-stack.ts) and puts its turns back on their stack.
 */
import { ScalpelError } from '../errors/index.js';
import type { Manifest } from '../model/state.js';
import { info, sessionsOf, stackOf, unique, type EngineContext } from './context.js';
import { appendLog } from './log-ops.js';
import { restoreOn } from './restore-op.js';
import { rewindTarget } from './turns.js';
import { rewinds, rewoundRef } from './undo-stack.js';
import type { RestoreReport, SnapshotInfo } from './types.js';

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
 * Restore's semantics and refusals.
 */
export async function rewind(
  ctx: EngineContext,
  opts: { session?: string; turn?: string; dryRun?: boolean; force?: boolean; verifyIndex?: boolean } = {},
): Promise<RestoreReport> {
  const session = opts.session ?? (await newestTurnSession(ctx));
  const chain = await stackOf(ctx, session).walk();
  const target = rewindTarget(chain, session, opts.turn);
  return restoreOn(
    ctx,
    stackOf(ctx, session),
    { session, id: target.manifest.id, dryRun: opts.dryRun, force: opts.force, verifyIndex: opts.verifyIndex },
    { rewind: true },
  );
}

async function newestTurnSession(ctx: EngineContext): Promise<string> {
  let best: { session: string; at: string } | null = null;
  for (const session of await sessionsOf(ctx)) {
    const chain = await stackOf(ctx, session).walk((e) => !!e.manifest.turn && e.manifest.captured.roots.length > 0);
    const e = chain[chain.length - 1];
    if (!e?.manifest.turn || e.manifest.captured.roots.length === 0) continue;
    if (!best || e.manifest.createdAt > best.at) best = { session, at: e.manifest.createdAt };
  }
  if (!best) {
    const undoable = (await rewinds(ctx).head()) !== null;
    throw new ScalpelError(
      'SNAPSHOT_NOT_FOUND',
      `nothing to rewind: no turn of this worktree changed anything${undoable ? ' (the newest rewind can be undone: rewind --undo)' : ''}`,
      { session: null },
    );
  }
  return best.session;
}
