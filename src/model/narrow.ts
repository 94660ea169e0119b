/**
 * Part of a turn: the pre-image of some of its paths (what a rewind of only those paths puts
 * back), and what stays of the turn once they are back (a later rewind of the rest).
 */
import { compareRel, covers, isAncestor, minimalRoots, parentOf } from './scope.js';
import { joinCaptured, mergeStates, restrictState, type AbsentParents, type Manifest, type PathState } from './state.js';

/**
 * `state` narrowed to `picks` (worktree-relative paths): its roots at or beneath a pick, whole,
 * and each pick strictly beneath one of its roots as a root of its own, holding what that root
 * held there (and, when its parent did not exist then, the deepest ancestor that did).
 */
export function narrowState(state: PathState, picks: readonly string[]): PathState {
  const whole = state.roots.filter((r) => picks.some((p) => covers(p, r)));
  const inner: string[] = [];
  for (const p of picks) if (state.roots.some((r) => isAncestor(r, p)) && !whole.some((w) => covers(w, p))) inner.push(p);
  const roots = minimalRoots([...whole, ...inner]);
  const out = restrictState(state, roots);
  const parents: AbsentParents[] = [...(out.absentParents ?? [])];
  const kinds = new Map(state.items.map((i) => [i.path, i.kind] as const));
  for (const p of inner) {
    if (!roots.includes(p)) continue;
    const r = state.roots.find((x) => isAncestor(x, p)) as string;
    // the deepest path above p the root held something at: p's parent existed, or that did
    let existing: string | null = null;
    for (let d = parentOf(p); ; d = parentOf(d)) {
      if (kinds.has(d)) {
        existing = d;
        break;
      }
      if (d === r || d === '') break;
    }
    if (existing === null) existing = state.absentParents?.find((a) => a.root === r)?.existing ?? parentOf(r);
    if (existing !== parentOf(p)) parents.push({ root: p, existing });
  }
  parents.sort((a, b) => compareRel(a.root, b.root));
  const narrowed: PathState = { roots: out.roots, items: out.items, index: out.index, reuc: out.reuc };
  const kept = parents.filter((a) => roots.includes(a.root));
  if (kept.length) narrowed.absentParents = kept;
  return narrowed;
}

/**
 * What `m` names as changed: its roots, and what it could not capture (`uncovered`, `left`: a
 * command's change inside an ignored directory, which a rewind names and does not bring back).
 */
export function namedPaths(m: Manifest): string[] {
  return [...m.captured.roots, ...(m.uncovered ?? []), ...(m.left ?? [])];
}

/** Does `m` name `path` (a root, or a path it could not capture, at, beneath or above it)? */
export function holdsPath(m: Manifest, path: string): boolean {
  return namedPaths(m).some((r) => covers(r, path) || covers(path, r));
}

/** `m` narrowed to `picks`: its pre-image, seal, contests and lists, only there. */
export function narrowManifest(m: Manifest, picks: readonly string[]): Manifest {
  const inPicks = (p: string) => picks.some((x) => covers(x, p));
  const near = (p: string) => inPicks(p) || picks.some((x) => isAncestor(p, x));
  const out: Manifest = {
    ...m,
    captured: narrowState(m.captured, picks),
    seal: m.seal ? { ...m.seal, state: narrowState(m.seal.state, picks) } : null,
  };
  // what no snapshot holds is named where it lies at, beneath or above a pick (an ignored
  // directory a command removed, holding the picked path)
  const lists = {
    uncovered: m.uncovered?.filter(near),
    left: m.left?.filter(near),
    contested: m.contested?.filter((c) => near(c.path)),
  };
  for (const [k, v] of Object.entries(lists) as Array<[keyof typeof lists, unknown[] | undefined]>) {
    if (v?.length) (out as unknown as Record<string, unknown>)[k] = v;
    else delete out[k];
  }
  const provisional = m.provisional?.map((p) => ({ call: p.call, state: narrowState(p.state, picks) })).filter((p) => p.state.roots.length);
  if (provisional?.length) out.provisional = provisional;
  else delete out.provisional;
  return out;
}

/**
 * What `chain` (newest first) puts back at `picks`: each path as the oldest snapshot holding it
 * captured it, as a restore of the chain narrowed to them does.
 */
export function targetOf(chain: readonly Manifest[]): PathState {
  let acc: PathState = { roots: [], items: [], index: [], reuc: [] };
  for (let i = chain.length - 1; i >= 0; i--) acc = joinCaptured(acc, chain[i].captured, { dropUnderAbsent: false });
  return acc;
}

/**
 * What stays of `m` once `picks` are back as `after` says they are (the narrowed chain's
 * target) and the directories `pruned` are gone: its roots at or beneath a pick leave it; a
 * root holding a pick keeps its pre-image there, and its seal there becomes what the rewind
 * left, so a later change of it by someone else is still told apart. `taken` lists the picks.
 */
export function remainderManifest(m: Manifest, picks: readonly string[], after: PathState, pruned: readonly string[]): Manifest {
  const gone = (r: string) => picks.some((p) => covers(p, r));
  const captured = restrictState(
    m.captured,
    m.captured.roots.filter((r) => !gone(r)),
  );
  let seal = m.seal;
  if (seal) {
    let state = restrictState(
      seal.state,
      seal.state.roots.filter((r) => !gone(r)),
    );
    const inner = after.roots.filter((a) => state.roots.some((r) => isAncestor(r, a)));
    if (inner.length) state = mergeStates(state, restrictState(after, inner));
    // an emptied directory the rewind removed is absent now, with nothing beneath it
    const removed = (p: string) => pruned.some((d) => covers(d, p));
    if (pruned.length) state = { ...state, items: state.items.filter((i) => !removed(i.path)) };
    seal = state.roots.length ? { sealedAt: seal.sealedAt, state } : null;
  }
  const inPicks = (p: string) => picks.some((x) => covers(x, p));
  const out: Manifest = { ...m, captured, seal };
  const lists = {
    uncovered: m.uncovered?.filter((p) => !inPicks(p)),
    left: m.left?.filter((p) => !inPicks(p)),
    contested: m.contested?.filter((c) => !inPicks(c.path)),
    taken: [...new Set([...(m.taken ?? []), ...picks.filter((p) => holdsPath(m, p))])].sort(compareRel),
  };
  for (const [k, v] of Object.entries(lists) as Array<[keyof typeof lists, unknown[] | undefined]>) {
    if (v?.length) (out as unknown as Record<string, unknown>)[k] = v;
    else delete out[k];
  }
  const provisional = m.provisional
    ?.map((p) => ({
      call: p.call,
      state: restrictState(
        p.state,
        p.state.roots.filter((r) => !gone(r)),
      ),
    }))
    .filter((p) => p.state.roots.length);
  if (provisional?.length) out.provisional = provisional;
  else delete out.provisional;
  return out;
}
