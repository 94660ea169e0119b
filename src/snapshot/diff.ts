/**
 * What a turn changed: its paths from their pre-image (what a rewind of the turn puts back) to
 * what they hold now, in the worktree or (`cached`) in the index, as git's diff computes it (the
 * line diff, renames, binary files) with no git process.
 */
import { ScalpelError } from '../errors/index.js';
import { findRenames, hunks as lineHunks, isBinary, countChanges, MAX_SCORE, type Hunk } from '../diff/index.js';
import { joinPath } from '../fs/path.js';
import { MODE_GITLINK, MODE_SYMLINK } from '../object/tree.js';
import { compareRel, covers } from '../model/scope.js';
import { narrowState } from '../model/narrow.js';
import type { IndexRecord, PathState, WorktreeItem } from '../model/state.js';
import type { StackEntry } from '../store/stack.js';
import { captureNow, readPast, scopeRootsOf, stackOf, type EngineContext } from './context.js';
import { newestTurnSession } from './rewind.js';
import { rewindTarget } from './turns.js';
import { rewinds } from './undo-stack.js';
import type { DiffOptions, FileDiff, TurnDiff } from './types.js';

/** One side of a file: git's mode and blob id, and how to read its bytes. */
interface Side {
  mode: number;
  oid: string;
  read: () => Promise<Uint8Array>;
}

/** The diff of a turn (the newest that changed anything, or `opts.turn`), as git would show it. */
export async function turnDiff(ctx: EngineContext, opts: DiffOptions = {}): Promise<TurnDiff> {
  const picks = opts.paths?.length ? scopeRootsOf(ctx, opts.paths, opts.cwd) : undefined;
  const session = opts.session ?? (await newestTurnSession(ctx));
  const chain = await stackOf(ctx, session).walk();
  const entry: StackEntry = rewindTarget(chain, session, opts.turn);
  const m = entry.manifest;
  const before = picks ? narrowState(m.captured, picks) : m.captured;
  const warnings: string[] = [];
  const roots = before.roots;
  const now = roots.length
    ? await ctx.repo.withIndex({ verify: false }, async (read) => {
        warnings.push(...readPast(read));
        return captureNow(ctx, roots, warnings, { read });
      })
    : { roots: [], items: [], index: [], reuc: [] };
  const inPicks = (p: string) => !picks || picks.some((k) => covers(k, p));
  const pairs = opts.cached ? indexPairs(ctx, before, now) : worktreePairs(ctx, { state: before, live: false }, { state: now, live: true });
  const files = await describePairs(
    pairs.filter((x) => inPicks(x.path)),
    opts.context ?? 3,
  );
  const unmerged = opts.cached
    ? [...new Set(now.index.filter((e) => e.stage > 0).map((e) => e.path))].filter(inPicks).sort(compareRel)
    : [];
  return {
    session,
    id: m.id,
    turn: m.turn?.number ?? null,
    label: m.label,
    cached: opts.cached === true,
    files,
    unmerged,
    warnings,
  };
}

/**
 * What `rewind --undo` would bring back: from what the newest rewind's paths hold now to what
 * that rewind replaced (its undo snapshot's pre-image).
 */
export async function undoDiff(ctx: EngineContext, opts: Omit<DiffOptions, 'session' | 'turn'> = {}): Promise<TurnDiff> {
  const stack = rewinds(ctx);
  const head = await stack.head();
  if (!head) throw new ScalpelError('SNAPSHOT_NOT_FOUND', 'nothing to undo: no rewind of this worktree is kept', { session: null });
  const m = (await stack.load(head)).manifest;
  const picks = opts.paths?.length ? scopeRootsOf(ctx, opts.paths, opts.cwd) : undefined;
  const back = picks ? narrowState(m.captured, picks) : m.captured;
  const warnings: string[] = [];
  const now = back.roots.length ? await captureNow(ctx, back.roots, warnings) : { roots: [], items: [], index: [], reuc: [] };
  const pairs = opts.cached ? indexPairs(ctx, now, back) : worktreePairs(ctx, { state: now, live: true }, { state: back, live: false });
  return {
    session: m.rewound?.session ?? m.session,
    id: m.id,
    turn: null,
    label: m.label,
    cached: opts.cached === true,
    files: await describePairs(pairs, opts.context ?? 3),
    unmerged: [],
    warnings,
  };
}

interface Pair {
  path: string;
  old: Side | null;
  new: Side | null;
}

const modeOf = (it: Exclude<WorktreeItem, { kind: 'dir' }>) => (it.kind === 'file' ? it.mode : MODE_SYMLINK);

/**
 * The files (and links) whose kind, mode or content differs between `from` and `to`: a stored
 * state's bytes are read from the object database, a live one's (`live`) from the worktree.
 */
function worktreePairs(ctx: EngineContext, from: { state: PathState; live: boolean }, to: { state: PathState; live: boolean }): Pair[] {
  const oldItems = new Map(from.state.items.filter((i) => i.kind !== 'dir').map((i) => [i.path, i] as const));
  const newItems = new Map(to.state.items.filter((i) => i.kind !== 'dir').map((i) => [i.path, i] as const));
  const side = (it: Exclude<WorktreeItem, { kind: 'dir' }>, live: boolean): Side => {
    const abs = joinPath(ctx.repo.worktree, it.path);
    const read = !live
      ? async () => (await ctx.repo.odb.read(it.oid)).content
      : it.kind === 'symlink'
        ? async () => new TextEncoder().encode(await ctx.repo.fs.readlink(abs))
        : () => ctx.repo.fs.readFile(abs);
    return { mode: modeOf(it), oid: it.oid, read };
  };
  const out: Pair[] = [];
  for (const p of [...new Set([...oldItems.keys(), ...newItems.keys()])].sort(compareRel)) {
    const a = oldItems.get(p) as Exclude<WorktreeItem, { kind: 'dir' }> | undefined;
    const b = newItems.get(p) as Exclude<WorktreeItem, { kind: 'dir' }> | undefined;
    if (a && b && a.kind === b.kind && modeOf(a) === modeOf(b) && a.oid === b.oid) continue;
    const oldSide = a ? side(a, from.live) : null;
    const newSide = b ? side(b, to.live) : null;
    // a file that became a link (or the other way) is a deletion and an addition, as git shows it
    if (oldSide && newSide && (oldSide.mode === MODE_SYMLINK) !== (newSide.mode === MODE_SYMLINK)) {
      out.push({ path: p, old: oldSide, new: null }, { path: p, old: null, new: newSide });
    } else out.push({ path: p, old: oldSide, new: newSide });
  }
  return out;
}

/** The stage-0 index entries of the scope that differ between `before` and `now`. */
function indexPairs(ctx: EngineContext, before: PathState, now: PathState): Pair[] {
  const side = (e: IndexRecord | undefined): Side | null =>
    e
      ? {
          mode: e.mode,
          oid: e.oid,
          read:
            e.mode === MODE_GITLINK
              ? async () => new TextEncoder().encode(`Subproject commit ${e.oid}\n`)
              : async () => (await ctx.repo.odb.read(e.oid)).content,
        }
      : null;
  const stage0 = (s: PathState) => new Map(s.index.filter((e) => e.stage === 0 && !e.flags.intentToAdd).map((e) => [e.path, e] as const));
  const a = stage0(before);
  const b = stage0(now);
  const out: Pair[] = [];
  for (const p of [...new Set([...a.keys(), ...b.keys()])].sort(compareRel)) {
    const x = a.get(p);
    const y = b.get(p);
    if (x && y && x.mode === y.mode && x.oid === y.oid) continue;
    // an entry at a path that is conflicted now is shown as unmerged, not as a change
    if (!y && now.index.some((e) => e.path === p && e.stage > 0)) continue;
    out.push({ path: p, old: side(x), new: side(y) });
  }
  return out;
}

/** Each pair as git shows it: renames found among deletions and additions, then hunks or "binary". */
async function describePairs(pairs: Pair[], context: number): Promise<FileDiff[]> {
  const bytes = new Map<Side, Uint8Array>();
  const read = async (s: Side | null): Promise<Uint8Array> => {
    if (!s) return new Uint8Array(0);
    let b = bytes.get(s);
    if (!b) bytes.set(s, (b = await s.read()));
    return b;
  };
  const deleted = pairs.filter((x) => x.old && !x.new);
  const added = pairs.filter((x) => !x.old && x.new);
  const renames =
    deleted.length && added.length
      ? findRenames(
          await Promise.all(deleted.map(async (x) => ({ path: x.path, data: await read(x.old), mode: x.old?.mode, id: x.old?.oid }))),
          await Promise.all(added.map(async (x) => ({ path: x.path, data: await read(x.new), mode: x.new?.mode, id: x.new?.oid }))),
        )
      : [];
  const paired = new Set<Pair>();
  const out: FileDiff[] = [];
  for (const r of renames) {
    const from = deleted[r.from];
    const to = added[r.to];
    paired.add(from).add(to);
    out.push(await describe(to.path, from.path, from.old, to.new, read, context, Math.floor((r.score * 100) / MAX_SCORE)));
  }
  for (const x of pairs) if (!paired.has(x)) out.push(await describe(x.path, undefined, x.old, x.new, read, context));
  // in git's order: by path (a rename at its new path)
  return out.sort((a, b) => compareRel(a.path, b.path) || (a.old ? 0 : 1) - (b.old ? 0 : 1));
}

async function describe(
  path: string,
  oldPath: string | undefined,
  a: Side | null,
  b: Side | null,
  read: (s: Side | null) => Promise<Uint8Array>,
  context: number,
  similarity?: number,
): Promise<FileDiff> {
  const [x, y] = [await read(a), await read(b)];
  const same = a && b && a.oid === b.oid;
  const binary = !same && (isBinary(x) || isBinary(y));
  const counts = same ? { binary: false as const, added: 0, deleted: 0 } : countChanges(x, y);
  const hunks: Hunk[] = same || binary ? [] : lineHunks(x, y, { context });
  return {
    path,
    ...(oldPath !== undefined ? { oldPath } : {}),
    status: oldPath !== undefined ? 'renamed' : !a ? 'added' : !b ? 'deleted' : 'modified',
    old: a ? { mode: a.mode.toString(8), oid: a.oid } : null,
    new: b ? { mode: b.mode.toString(8), oid: b.oid } : null,
    binary,
    ...(similarity !== undefined ? { similarity } : {}),
    added: counts.binary ? 0 : counts.added,
    deleted: counts.binary ? 0 : counts.deleted,
    ...(counts.binary ? { oldSize: x.length, newSize: y.length } : {}),
    hunks,
  };
}
