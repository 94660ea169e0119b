/**
 * Where a rewind keeps what it replaced (DESIGN I11: every rewind can be undone): the worktree's
 * own stack of undo snapshots, on a ref of its own (never listed as a session), each sealed with
 * what its rewind left, and a ref per rewind keeping the rewound turns reachable. The newest
 * `scalpel.keepRewinds` (default 20) are kept. restore-op.ts writes them, rewind.ts undoes them.
 */
import { SnapshotStack } from '../store/stack.js';
import type { ObjectBatch } from '../repo/object-batch.js';
import { sealed } from '../model/manifest.js';
import type { Manifest } from '../model/state.js';
import { captureNow, type EngineContext } from './context.js';

/** The session name of a rewind's undo snapshots (on their own ref, never listed as a session). */
export const REWINDS = 'rewinds';

/** A pushed undo snapshot, to seal once the rewind is done. */
export interface PushedRewind {
  stack: SnapshotStack;
  commit: string;
  manifest: Manifest;
}

/** The worktree's rewinds that can be undone, newest on top (never a session: not listed as one). */
export function rewinds(ctx: EngineContext): SnapshotStack {
  return new SnapshotStack(ctx.repo, REWINDS, `refs/scalpel-undo/${ctx.repo.worktreeId}/stack`);
}

/** The ref keeping a rewound session's turns reachable while its rewind can be undone. */
export function rewoundRef(ctx: EngineContext, id: string): string {
  return `refs/scalpel-undo/${ctx.repo.worktreeId}/turns/${id}`;
}

/**
 * Push a rewind's undo snapshot (`batch` holds its objects) and keep the rewound turns
 * reachable; the newest `scalpel.keepRewinds` (default 20) are kept.
 */
export async function pushRewind(ctx: EngineContext, m: Manifest, batch: ObjectBatch): Promise<PushedRewind> {
  const stack = rewinds(ctx);
  return stack.locked(async (tx) => {
    const commit = await stack.writeCommit(m, tx.current, undefined, batch);
    await batch.flush();
    if (m.rewound?.from) await ctx.repo.refs.update(rewoundRef(ctx, m.id), m.rewound.from, null).catch(() => undefined);
    await tx.set(commit);
    return { stack, commit, manifest: m };
  });
}

/** Seal the rewind's undo snapshot with what the rewind left (when it is still the newest), and cut the stack to its limit. */
export async function sealRewind(ctx: EngineContext, undo: PushedRewind, roots: readonly string[], warnings: string[]): Promise<void> {
  const keep = Math.max(1, ctx.repo.config.getInt('scalpel.keepRewinds', 20));
  const now = await captureNow(ctx, roots, warnings);
  await undo.stack.locked(async (tx) => {
    if (tx.current === undo.commit) {
      const top = await undo.stack.load(undo.commit);
      await undo.stack.replace(tx, [top], top, sealed(undo.manifest, ctx.now().toISOString(), now));
    }
  });
  await undo.stack.locked(async (tx) => {
    const all = await undo.stack.walk(undefined, tx.current);
    if (all.length <= keep) return;
    await undo.stack.truncate(tx, keep);
    for (const e of all.slice(keep)) await ctx.repo.refs.remove(rewoundRef(ctx, e.manifest.id));
  });
}
