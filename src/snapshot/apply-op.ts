/**
 * Apply a patch with its rollback armed: every path it touches is
 * snapshotted first, as one snapshot, in the same read of the index under its lock; a patch
 * that does not apply writes nothing; a failed check restores exactly what the patch replaced.
 */
import { ScalpelError } from '../errors/index.js';
import { checkSession } from '../store/stack.js';
import { withCaptured } from '../model/manifest.js';
import { parsePatch } from '../patch/parse.js';
import { encodePath } from '../bytes/text.js';
import { patchPaths, planApply, type ApplyPlan } from './apply.js';
import { DEFAULT_SESSION, stackOf, unique, type EngineContext } from './context.js';
import { appendLog } from './log-ops.js';
import { applyRestore, planRestore } from './restore.js';
import { restore } from './restore-op.js';
import { capture } from './stack-verbs.js';
import type { ApplyOptions, ApplyReport, SnapshotInfo } from './types.js';

/**
 * Apply a patch (git's unified diff, `git diff --binary`, `git format-patch`, or Codex's
 * `*** Begin Patch`; a string is its text as UTF-8) with its rollback armed: every path it touches, both sides of
 * a rename, is snapshotted first as one snapshot; then the patch is written to the worktree
 * (`to: 'index'`: worktree and index, as `git apply --index`; `'cached'`: the index alone).
 * A patch that does not apply writes nothing (BAD_ARGUMENT naming the file and hunk). With
 * `check`, a failure rolls the patch back exactly (a restore) unless `keepOnFailure`.
 */
export async function apply(ctx: EngineContext, patch: Uint8Array | string, opts: ApplyOptions = {}): Promise<ApplyReport> {
  const session = opts.session ?? DEFAULT_SESSION;
  checkSession(session);
  // a string is the patch's text as UTF-8 (names that are not UTF-8 as the library's path strings carry them)
  const files = parsePatch(typeof patch === 'string' ? encodePath(patch) : patch);
  if (files.length === 0) throw new ScalpelError('BAD_ARGUMENT', 'the patch changes no file', { name: 'patch', reason: 'empty' });
  const roots = patchPaths(ctx.repo.worktree, files);
  if (opts.index && opts.cached) throw new ScalpelError('BAD_ARGUMENT', 'index and cached do not go together', { name: 'cached' });
  const to = opts.to ?? (opts.index ? 'index' : opts.cached ? 'cached' : 'worktree');
  const summary = (r: ApplyPlan) => r.files.map((f) => ({ path: f.path, from: f.oldPath, deleted: f.deleted, mode: f.mode }));
  if (opts.dryRun) {
    // decided as apply decides: under the index lock it takes (someone else's is INDEX_LOCKED), given back unwritten
    const dryLock = await ctx.repo.lockIndex();
    try {
      const plan = await ctx.repo.withIndex({ verify: false }, (read) => planApply(ctx.repo, read, files, roots, to, null));
      return { session, snapshot: null, dryRun: true, files: summary(plan), check: null, rolledBack: false };
    } finally {
      await dryLock.release();
    }
  }
  // one read of the index, under its lock: the patch is applied in memory first (a patch that
  // does not apply leaves nothing, not even a snapshot), then the snapshot, then the write. The
  // trailer is not checked, as git apply does not check it.
  const lock = await ctx.repo.lockIndex();
  let snap: SnapshotInfo;
  let plan: ApplyPlan;
  try {
    ({ snap, plan } = await ctx.repo.withIndex({ verify: false }, async (read) => {
      const batch = ctx.repo.odb.batch();
      const p = await planApply(ctx.repo, read, files, roots, to, batch);
      const s = await capture(ctx, roots, read, {
        session,
        label:
          opts.label ??
          `apply: ${files
            .map((f) => f.newPath ?? f.oldPath)
            .join(', ')
            .slice(0, 100)}`,
      });
      await batch.flush();
      const stack = stackOf(ctx, session);
      const manifest = withCaptured((await stack.load(s.commit)).manifest, p.target);
      // the patch is written as a restore to the patched state would write it
      const write = await planRestore(ctx.repo, [{ commit: s.commit, parent: null, manifest }], read, read?.stat ?? null);
      await applyRestore(ctx.repo, write, read, lock, read?.stat ?? null);
      return { snap: s, plan: p };
    }));
  } finally {
    await lock.release();
  }
  const warnings = [...(snap.warnings ?? [])];
  await appendLog(ctx, { event: 'apply', session, ids: [snap.id], paths: roots, detail: { to, files: plan.files.length } }, warnings);
  const done = (check: ApplyReport['check'], rolledBack: boolean): ApplyReport => ({
    session,
    snapshot: snap.id,
    dryRun: false,
    files: summary(plan),
    check,
    rolledBack,
    ...(warnings.length ? { warnings: unique(warnings) } : {}),
  });
  if (!opts.check) return done(null, false);
  const check = await opts.check();
  if (check.code === 0 || opts.keepOnFailure) return done(check, false);
  warnings.push(...(await restore(ctx, { session, id: snap.id })).warnings);
  return done(check, true);
}
