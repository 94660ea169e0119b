/**
 * A shell command's two hook steps (DESIGN "Agent integration": shell commands change unknown
 * paths). Before it: git's view of the worktree is kept as a baseline (snapshot/shell.ts takes
 * it, store/baselines.ts keeps it reachable), and the open turn's sealed paths someone else
 * changed are recorded as contested. After it: what it changed since the baseline joins the
 * turn, and what it left is sealed.
 */
import { readHeadWithLog } from '../repo/history.js';
import { checkSession } from '../store/stack.js';
import { covers } from '../model/scope.js';
import { info, madeThrough, newSnapshot, readPast, stackOf, unique, type EngineContext } from './context.js';
import { decodeBaseline, encodeBaseline, shellChanges, takeBaseline } from './shell.js';
import { snapshot } from './stack-verbs.js';
import { sealPaths } from './tool-calls.js';
import { extendTurn, openTurnOf, recordContests } from './turns.js';
import { OUTSIDE_PROMPT, type SnapshotInfo } from './types.js';

/**
 * Before a shell command of the turn: record git's view of the worktree as a baseline (every
 * tracked path, every untracked path git does not ignore, hand-kept ignored files, the whole
 * index; clean tracked files cost a stat), under `key` (the tool call's id). Opens a turn when
 * none is. shellAfter then adds to the turn what the command changed.
 */
export async function shellBefore(
  ctx: EngineContext,
  opts: { session: string; key: string; command: string },
): Promise<{ turn: SnapshotInfo; ignoredDirs: string[]; warnings: string[] }> {
  checkSession(opts.session);
  const warnings: string[] = [];
  await recordContests(ctx, opts.session, warnings);
  const turn = await snapshot(ctx, [], { session: opts.session, turn: true });
  warnings.push(...(turn.warnings ?? []));
  // what this session's turns made from nothing: an ignored directory there is walked (I11)
  const open = (await openTurnOf(stackOf(ctx, opts.session)))?.manifest ?? null;
  const made = madeThrough(open);
  // what someone else changed beneath the turn's paths since the agent's last write there is
  // read whole: the command may go over it, and then it joins the turn's pre-image as found
  const others = (open?.contested ?? []).filter((c) => c.part === 'worktree').map((c) => c.path);
  const batch = ctx.repo.odb.batch();
  const taken = await ctx.repo.withIndex({ verify: false }, async (read) => {
    warnings.push(...readPast(read));
    const t = await takeBaseline(ctx.repo, read, {
      session: opts.session,
      command: opts.command,
      held: turn.paths,
      ...(others.length ? { others } : {}),
      made,
      writer: batch,
      now: ctx.now(),
      view: ctx.view,
    });
    // the pre-images and every object the index names are reachable from a ref before the command runs
    const blobs = t.baseline.entries.flatMap((e) => (e[1] === 'l' ? [e[3]] : e[3] !== null ? [e[3]] : []));
    await ctx.baselines.save(
      opts.session,
      opts.key,
      { json: encodeBaseline(t.baseline), index: t.indexBytes },
      { blobs, index: read?.index ?? null },
      batch,
    );
    return t;
  });
  // what the ignore rules could not read first, as the hooks have always listed them
  return { turn, ignoredDirs: taken.baseline.ignoredDirs, warnings: unique([...taken.warnings, ...warnings]) };
}

/**
 * After the shell command `key`: what it changed since its baseline joins the turn, with the
 * state from before the command (the first capture of a path in a turn wins). Null when no
 * baseline was taken (no before-shell event reached us).
 */
export async function shellAfter(
  ctx: EngineContext,
  opts: { session: string; key: string },
): Promise<{ turn: SnapshotInfo | null; paths: string[]; uncovered: string[]; left: string[]; warnings: string[] } | null> {
  checkSession(opts.session);
  const stored = await ctx.baselines.load(opts.session, opts.key);
  if (!stored) return null;
  const baseline = decodeBaseline(stored.json);
  const warnings: string[] = [];
  const changes = await ctx.repo.withIndex({ verify: false }, async (read) => {
    warnings.push(...readPast(read));
    return shellChanges(ctx.repo, baseline, baseline.indexFile ? stored.index : null, read, ctx.view);
  });
  let turn: SnapshotInfo | null = null;
  if (changes.paths.length > 0 || changes.uncovered.length > 0 || changes.left.length > 0) {
    const stack = stackOf(ctx, opts.session);
    const batch = ctx.repo.odb.batch();
    const shell = { uncovered: changes.uncovered, left: changes.left };
    turn = await stack.locked(async (tx) => {
      const top = await openTurnOf(stack, tx.current);
      // the command's changes are not a new write to contest: the baseline was taken just before it
      if (top) return extendTurn(ctx, stack, tx, top, changes.state, batch, { shell: { ...shell, at: baseline.at } }, warnings);
      // the turn ended while the command ran: the command's changes open one of their own
      const head = await readHeadWithLog(ctx.repo);
      const prev = tx.current ? await stack.load(tx.current) : null;
      const manifest = newSnapshot(ctx, opts.session, OUTSIDE_PROMPT, changes.state, head, {
        turn: { number: (prev?.manifest.turn?.number ?? 0) + 1, ended: false },
        made: madeThrough(prev?.manifest ?? null),
        ...shell,
      });
      const commit = await stack.writeCommit(manifest, tx.current, undefined, batch);
      await batch.flush();
      await tx.set(commit);
      return info(manifest, commit);
    });
  }
  // the command's result is the agent's: what it changed, and every path sealed before it (what
  // it did there, in ignored directories too, happened in the agent's window: contests were
  // looked for just before it ran), sealed as it left them; but not a path someone else had
  // changed (contested): the seal keeps the agent's write there, unless the command changed it
  const open = (await openTurnOf(stackOf(ctx, opts.session)))?.manifest;
  const contestedPaths = (open?.contested ?? []).map((c) => c.path);
  const sealedBefore = (open?.seal?.state.roots ?? []).filter((r) => !contestedPaths.some((c) => covers(r, c) || covers(c, r)));
  if (changes.paths.length || sealedBefore.length)
    warnings.push(...(await sealPaths(ctx, { session: opts.session, paths: [...changes.paths, ...sealedBefore] })).warnings);
  await ctx.baselines.remove(opts.session, opts.key);
  return { turn, paths: changes.paths, uncovered: changes.uncovered, left: changes.left, warnings: unique(warnings) };
}
