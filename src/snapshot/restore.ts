import { ScalpelError } from '../errors/index.js';
import { encodePath, decodePath } from '../bytes/text.js';
import { joinPath, dirname } from '../fs/path.js';
import { writeFileAtomic, writeChunksAtomic, replaceWithSymlink, mkdirp, pruneEmptyDirs, type Lock } from '../fs/atomic.js';
import { TempLedger } from './temps.js';
import { canStream, readBlobStream } from '../repo/odb-stream.js';
import type { FileStat } from '../fs/types.js';
import { IndexEntry, compareEntries } from '../index/entry.js';
import { untouchedTable, type GitIndex } from '../index/decode.js';
import { encodeIndex, encodeIndexSegmentsParts, type Segment } from '../index/encode.js';
import { readU32 } from '../bytes/reader.js';
import type { IndexExtension, ResolveUndoRecord } from '../index/types.js';
import { invalidateCacheTree, invalidateUntracked } from '../index/edit.js';
import { cacheTreeExtension, invalidateCacheTreeBytes, untouchedCacheTree } from '../index/ext-tree.js';
import { ewahFromBits } from '../index/ewah.js';
import { objectId } from '../object/loose.js';
import type { Repository } from '../repo/repository.js';
import type { ReadIndexResult } from '../repo/index-file.js';
import type { StackEntry } from '../store/stack.js';
import { captureState, sparseDirContaining } from './capture.js';
import { rowsAt, rowsOf, rowsUnder } from '../index/rows.js';
import { checkNoSymlinkParent, compareRel, covers, isAncestor, minimalRoots, parentOf } from '../model/scope.js';
import { describeEntries, describeItem, sameEntries, sameItem, sameReuc, sealCovers, shallowestAbsent, type Manifest, type IndexRecord, type PathState, type ReucRecord, type WorktreeItem } from '../model/state.js';

/** What a restore does to a worktree path; 'prune' removes an empty directory the edit created to hold a declared path. */
export type WorktreeAction = 'write' | 'symlink' | 'mkdir' | 'chmod' | 'delete' | 'prune';

export interface PathPlan {
  path: string;
  worktree: { action: WorktreeAction; from: string; to: string } | null;
  index: { from: string; to: string } | null;
  resolveUndo: { from: string; to: string } | null;
}

export interface Conflict {
  path: string;
  part: 'worktree' | 'index' | 'resolve-undo';
  /** What the seal recorded. */
  expected: string;
  /** What is there now. */
  found: string;
  /** What restore would put there. */
  restoring: string;
  snapshot: string;
}

export interface RestorePlan {
  roots: string[];
  paths: PathPlan[];
  /** Empty directories the edit created to hold a declared path, removed after the scope is restored: deepest first. */
  pruned: string[];
  conflicts: Conflict[];
  indexChanged: boolean;
  /** @internal */
  work: PlanWork;
}

interface PlanWork {
  removals: Array<{ path: string; item: WorktreeItem }>;
  creations: Array<{ path: string; item: WorktreeItem; cur: WorktreeItem | undefined; chmodOnly: boolean }>;
  /** Directories outside the scope that the edit created to hold a root, empty after the restore: deepest first. */
  prune: string[];
  blobs: Map<string, Uint8Array>;
  targetIndex: Map<string, IndexRecord[]>;
  targetReuc: Map<string, ReucRecord | undefined>;
  currentIndex: Map<string, IndexRecord[]>;
  ixPaths: string[];
  changedIndexPaths: string[];
  changedWorktreePaths: string[];
  current: PathState;
}

type Owner = StackEntry;

/**
 * Plan a restore of `chain` (newest first; the last element is the snapshot restored to): for each
 * path in the union of their scopes, the target is what the OLDEST snapshot covering it captured
 * (absent when it covered the path but found nothing). Validates everything a restore needs —
 * paths, parents, blobs, sparse directories — and finds conflicts with seals, without writing.
 */
export async function planRestore(repo: Repository, chain: StackEntry[], read: ReadIndexResult | null, indexStat: FileStat | null = null): Promise<RestorePlan> {
  const index = read?.index ?? null;
  const roots = minimalRoots(chain.flatMap((s) => s.manifest.captured.roots));
  for (const r of roots) {
    await checkNoSymlinkParent(repo.fs, repo.worktree, r);
    if (index) {
      const d = sparseDirContaining(index, r);
      if (d) throw sparse(r, d);
    }
  }
  const current = await captureState(repo, index, roots, { writeObjects: false, indexStat });

  const oldest = (p: string): Owner | undefined => {
    for (let i = chain.length - 1; i >= 0; i--) if (chain[i].manifest.captured.roots.some((r) => covers(r, p))) return chain[i];
    return undefined;
  };
  const newest = (p: string): Owner | undefined => chain.find((s) => s.manifest.captured.roots.some((r) => covers(r, p)));

  const itemsOf = memo((st: PathState) => new Map(st.items.map((i) => [i.path, i] as const)));
  const indexOf = memo((st: PathState) => groupIndex(st.index));
  const reucOf = memo((st: PathState) => new Map(st.reuc.map((r) => [r.path, r] as const)));

  const curItems = itemsOf(current);
  const curIndex = indexOf(current);
  const curReuc = reucOf(current);

  const wtPaths = new Set<string>(curItems.keys());
  const ixPaths = new Set<string>([...curIndex.keys(), ...curReuc.keys()]);
  for (const s of chain) {
    for (const i of s.manifest.captured.items) wtPaths.add(i.path);
    for (const e of s.manifest.captured.index) ixPaths.add(e.path);
    for (const r of s.manifest.captured.reuc) ixPaths.add(r.path);
  }

  const conflicts: Conflict[] = [];
  const plans = new Map<string, PathPlan>();
  const planFor = (p: string): PathPlan => {
    let x = plans.get(p);
    if (!x) plans.set(p, (x = { path: p, worktree: null, index: null, resolveUndo: null }));
    return x;
  };

  // worktree
  const removals: PlanWork['removals'] = [];
  const creations: PlanWork['creations'] = [];
  const changedWorktreePaths: string[] = [];
  // each path goes back to what its oldest snapshot captured; where that puts content below a
  // path that a newer snapshot saw absent or as a file (another session's restore removed the
  // directory in between, say), the older state wins: a path holding something is a directory
  // A snapshot older than a path's owner that saw a directory above its roots absent saw the
  // path absent too when it lies in that directory (an older edit created it): the oldest view wins.
  const absentDirs: Array<{ dir: string; at: number }> = [];
  chain.forEach((s, at) => {
    for (const a of s.manifest.captured.absentParents ?? []) absentDirs.push({ dir: shallowestAbsent(a), at });
  });
  const targets = new Map<string, WorktreeItem | undefined>();
  for (const p of wtPaths) {
    const owner = oldest(p) as Owner;
    const at = chain.indexOf(owner);
    const absentBefore = absentDirs.length > 0 && absentDirs.some((a) => a.at > at && covers(a.dir, p));
    targets.set(p, absentBefore ? undefined : itemsOf(owner.manifest.captured).get(p));
  }
  const inScope = (p: string) => roots.some((r) => covers(r, p));
  for (const [p, t] of [...targets]) {
    if (!t) continue;
    for (let d = parentOf(p); d !== '' && inScope(d); d = parentOf(d)) {
      if (targets.get(d)?.kind !== 'dir') targets.set(d, { path: d, kind: 'dir' });
      wtPaths.add(d);
    }
  }
  for (const p of wtPaths) {
    const tgt = targets.get(p);
    const cur = curItems.get(p);
    const seal = sealOf(newest(p), p);
    if (seal && !sameItem(cur, tgt)) {
      const sealed = itemsOf(seal.state).get(p);
      if (!sameItem(cur, sealed)) {
        conflicts.push({ path: p, part: 'worktree', expected: describeItem(sealed), found: describeItem(cur), restoring: describeItem(tgt), snapshot: (newest(p) as Owner).manifest.id });
      }
    }
    if (sameItem(cur, tgt)) continue;
    changedWorktreePaths.push(p);
    let action: WorktreeAction;
    if (!tgt) action = 'delete';
    else if (tgt.kind === 'dir') action = 'mkdir';
    else if (tgt.kind === 'symlink') action = 'symlink';
    else action = cur && cur.kind === 'file' && cur.oid === tgt.oid ? 'chmod' : 'write';
    planFor(p).worktree = { action, from: describeItem(cur), to: describeItem(tgt) };
    if (cur && (!tgt || (cur.kind !== tgt.kind && (cur.kind === 'dir' || tgt.kind === 'dir')))) removals.push({ path: p, item: cur });
    if (tgt) creations.push({ path: p, item: tgt, cur, chmodOnly: action === 'chmod' });
  }
  removals.sort((a, b) => compareRel(b.path, a.path));
  creations.sort((a, b) => compareRel(a.path, b.path));
  const prune = await prunableDirs(repo, chain, targets, inScope);
  for (const d of prune) planFor(d).worktree = { action: 'prune', from: 'directory', to: 'absent' };

  // directories we would remove must not hold a nested repository (never captured, never touched)
  for (const r of removals) {
    if (r.item.kind !== 'dir') continue;
    if (await repo.fs.lstat(joinPath(repo.worktree, r.path, '.git'))) {
      throw new ScalpelError('REFUSED', `restore would remove '${r.path}', which holds a nested repository (.git); move it away first`, {
        path: r.path,
        reason: 'nested-repository',
        conflicts: [],
      });
    }
  }

  // parents outside the scope must be directories (or absent: they are created)
  for (const c of creations) {
    if (!roots.includes(c.path)) continue;
    let dir = parentOf(c.path);
    while (dir !== '') {
      const st = await repo.fs.lstat(joinPath(repo.worktree, dir));
      if (st && st.type !== 'directory') {
        throw new ScalpelError('REFUSED', `cannot restore '${c.path}': its parent '${dir}' is now a ${st.type}, outside the snapshot's paths`, {
          path: c.path,
          parent: dir,
          reason: 'parent-not-directory',
          conflicts: [],
        });
      }
      if (st) break;
      dir = parentOf(dir);
    }
  }

  // a filesystem without symlinks cannot restore one: refuse now, not halfway (git would need core.symlinks=false)
  if (!repo.fs.capabilities.symlinks) {
    const link = creations.find((c) => c.item.kind === 'symlink');
    if (link) {
      throw new ScalpelError('UNSUPPORTED', `cannot restore the symbolic link '${link.path}': this filesystem (${repo.fs.name}) has no symlinks`, {
        path: link.path,
        capability: 'symlinks',
      });
    }
  }

  // blobs: read and verify every one we will write, before the first write
  const blobs = new Map<string, Uint8Array>();
  const streamed = new Set<string>();
  for (const c of creations) {
    const it = c.item;
    if (it.kind === 'file' && !c.chmodOnly && it.size >= repo.streamThreshold && canStream(repo.odb) && !streamed.has(it.oid)) {
      // large: checked by reading it through once, piece by piece; written the same way later
      try {
        const { size, chunks } = await readBlobStream(repo.odb, it.oid);
        for await (const piece of chunks) void piece;
        if (size !== it.size) throw new ScalpelError('SNAPSHOT_CORRUPT', `size of ${it.oid} differs from the manifest`, { reason: 'size' });
      } catch (e) {
        throw new ScalpelError('SNAPSHOT_CORRUPT', `snapshot is incomplete: the content of '${c.path}' (${it.oid}) cannot be read: ${(e as Error).message}`, {
          path: c.path,
          oid: it.oid,
          reason: 'missing-object',
        });
      }
      streamed.add(it.oid);
      continue;
    }
    if (it.kind === 'file' && !c.chmodOnly && !blobs.has(it.oid)) {
      let obj;
      try {
        obj = await repo.odb.read(it.oid);
      } catch (e) {
        throw new ScalpelError('SNAPSHOT_CORRUPT', `snapshot is incomplete: the content of '${c.path}' (${it.oid}) cannot be read: ${(e as Error).message}`, {
          path: c.path,
          oid: it.oid,
          reason: 'missing-object',
        });
      }
      if (obj.type !== 'blob') throw new ScalpelError('SNAPSHOT_CORRUPT', `snapshot names ${it.oid} for '${c.path}', which is a ${obj.type}`, { path: c.path, oid: it.oid, reason: 'not-a-blob' });
      blobs.set(it.oid, obj.content);
    } else if (it.kind === 'symlink') {
      if (objectId('blob', encodePath(it.target), repo.objectFormat, repo.hash) !== it.oid) {
        throw new ScalpelError('SNAPSHOT_CORRUPT', `snapshot's symlink target for '${c.path}' does not match its id`, { path: c.path, oid: it.oid, reason: 'symlink-mismatch' });
      }
    }
  }

  // index and resolve-undo
  const targetIndex = new Map<string, IndexRecord[]>();
  const targetReuc = new Map<string, ReucRecord | undefined>();
  const changedIndexPaths: string[] = [];
  const sortedIx = [...ixPaths].sort(compareRel);
  for (const p of sortedIx) {
    const owner = oldest(p) as Owner;
    const tgt = indexOf(owner.manifest.captured).get(p) ?? [];
    const cur = curIndex.get(p) ?? [];
    const tgtR = reucOf(owner.manifest.captured).get(p);
    const curR = curReuc.get(p);
    targetIndex.set(p, tgt);
    targetReuc.set(p, tgtR);
    const n = newest(p) as Owner;
    const seal = sealOf(n, p);
    if (!sameEntries(cur, tgt)) {
      changedIndexPaths.push(p);
      planFor(p).index = { from: describeEntries(cur), to: describeEntries(tgt) };
      if (seal) {
        const sealed = indexOf(seal.state).get(p) ?? [];
        if (!sameEntries(cur, sealed)) conflicts.push({ path: p, part: 'index', expected: describeEntries(sealed), found: describeEntries(cur), restoring: describeEntries(tgt), snapshot: n.manifest.id });
      }
    }
    if (!sameReuc(curR, tgtR)) {
      planFor(p).resolveUndo = { from: describeReuc(curR), to: describeReuc(tgtR) };
      if (seal) {
        const sealed = reucOf(seal.state).get(p);
        if (!sameReuc(curR, sealed)) conflicts.push({ path: p, part: 'resolve-undo', expected: describeReuc(sealed), found: describeReuc(curR), restoring: describeReuc(tgtR), snapshot: n.manifest.id });
      }
    }
  }
  // a restored entry must not end up beneath a file entry kept outside the scope (a D/F clash)
  if (index) {
    for (const p of changedIndexPaths) {
      if ((targetIndex.get(p) ?? []).length === 0) continue;
      let dir = parentOf(p);
      while (dir !== '' && !roots.some((r) => covers(r, dir))) {
        if (rowsAt(rowsOf(index), dir).length > 0) {
          throw new ScalpelError('REFUSED', `cannot restore the index entry of '${p}': '${dir}' is now a file in the index, outside the snapshot's paths`, {
            path: p,
            parent: dir,
            reason: 'parent-not-directory',
            conflicts: [],
          });
        }
        dir = parentOf(dir);
      }
    }
  }

  // what someone else changed mid-turn, after the agent's last write (a turn's contested paths):
  // refused like a sealed path changed after the seal, where the restore would change it
  for (const s of chain) {
    for (const c of s.manifest.contested ?? []) {
      const plan = plans.get(c.path);
      if (!plan) continue;
      const part = c.part === 'worktree' ? plan.worktree : c.part === 'index' ? plan.index : plan.resolveUndo;
      if (!part || conflicts.some((x) => x.path === c.path && x.part === c.part)) continue;
      conflicts.push({ path: c.path, part: c.part, expected: `${c.expected} (the agent's last write)`, found: c.found, restoring: part.to, snapshot: s.manifest.id });
    }
  }
  const paths = [...plans.values()].sort((a, b) => compareRel(a.path, b.path));
  return {
    roots,
    paths,
    pruned: prune,
    conflicts,
    indexChanged: changedIndexPaths.length > 0 || paths.some((x) => x.resolveUndo),
    work: { removals, creations, prune, blobs, targetIndex, targetReuc, currentIndex: curIndex, ixPaths: sortedIx, changedIndexPaths, changedWorktreePaths, current },
  };
}

/**
 * Carry out a plan: worktree first (removals deepest first, then creations shallowest first;
 * every file through a temp file and a rename), then the index through the lock the caller
 * holds. Entries for paths whose file this restore wrote, and whose bytes hash to the entry's id,
 * get a fresh lstat; other restored entries get zero stat data so git compares content.
 */
export async function applyRestore(repo: Repository, plan: RestorePlan, read: ReadIndexResult | null, lock: Lock | null, indexStat: FileStat | null): Promise<{ indexWritten: boolean }> {
  const fs = repo.fs;
  const w = plan.work;
  const abs = (p: string) => (p === '' ? repo.worktree : joinPath(repo.worktree, p));

  for (const r of w.removals) {
    const st = await fs.lstat(abs(r.path));
    if (!st) continue;
    if (st.type === 'directory') await fs.rmdir(abs(r.path));
    else await fs.unlink(abs(r.path));
  }

  // temps are made beside the files and links written below: record where, first; and remove
  // what an interrupted earlier run left (its record says where; its directories are real ones,
  // checked when it planned, and the parts of ours that exist were checked while planning)
  const tempDirs = [...new Set(w.creations.filter((c) => c.item.kind !== 'dir' && !c.chmodOnly).map((c) => parentOf(c.path)))];
  const ledger = new TempLedger(fs, joinPath(repo.stateDir, 'restore-temps'), repo.worktree);
  await ledger.sweep(tempDirs.filter((d) => d === '' || !plan.work.creations.some((c) => c.path === d)));
  if (tempDirs.length) await ledger.record(tempDirs);

  const written = new Map<string, { item: WorktreeItem; stat: FileStat | null }>();
  for (const c of w.creations) {
    const a = abs(c.path);
    // a root's parents lie outside the scope: create them if the edit removed them; others are items created above
    if (plan.roots.includes(c.path)) await mkdirp(fs, dirname(a));
    const it = c.item;
    if (it.kind === 'dir') {
      const st = await fs.lstat(a);
      if (!st || st.type !== 'directory') {
        if (st) await fs.unlink(a);
        await fs.mkdir(a);
      }
      continue;
    }
    if (it.kind === 'symlink') {
      await replaceWithSymlink(fs, a, it.target);
      written.set(c.path, { item: it, stat: await fs.lstat(a) });
      continue;
    }
    if (c.chmodOnly) {
      if (fs.capabilities.modes) {
        const st = await fs.lstat(a);
        if (st) await fs.chmod(a, execMode(st.mode & 0o7777, it.mode === 0o100755));
      }
      continue;
    }
    const mode = it.mode === 0o100755 ? 0o755 : 0o644;
    const data = w.blobs.get(it.oid);
    if (data) await writeFileAtomic(fs, a, data, { mode });
    else await writeChunksAtomic(fs, a, (await readBlobStream(repo.odb, it.oid)).chunks, { mode });
    if (fs.capabilities.modes) {
      const st = await fs.lstat(a);
      if (st && ((st.mode & 0o111) !== 0) !== (it.mode === 0o100755)) await fs.chmod(a, execMode(st.mode & 0o7777, it.mode === 0o100755));
    }
    written.set(c.path, { item: it, stat: await fs.lstat(a) });
  }
  if (tempDirs.length) await ledger.clear();
  // checked again as they go: something put into one since the plan keeps it
  if (w.prune.length) await pruneEmptyDirs(fs, w.prune.map(abs), repo.worktree);

  if (!plan.indexChanged || !lock) return { indexWritten: false };
  await repo.writeIndexBytes(lock, buildIndexBytes(repo, plan, read, written, indexStat));
  return { indexWritten: true };
}

function execMode(mode: number, exec: boolean): number {
  if (!exec) return mode & ~0o111;
  return mode | ((mode & 0o444) >> 2);
}

/** The new index: entries outside the scope carried over (smudged when racily clean), the scope's entries replaced. */
function buildIndex(repo: Repository, plan: RestorePlan, read: ReadIndexResult | null, written: Map<string, { item: WorktreeItem; stat: FileStat | null }>, indexStat: FileStat | null): GitIndex {
  const w = plan.work;
  const base: GitIndex = read?.index ?? { version: 2, objectFormat: repo.objectFormat, entries: [], extensions: [], skipHash: false };
  const old = base.entries;
  const covered = new Uint8Array(old.length);
  const oldRows = rowsOf(base);
  for (const r of plan.roots) for (const i of rowsUnder(oldRows, r)) covered[i] = 1;

  // Entries outside the scope are carried over as they are (smudged when racily clean); `fromOld`
  // maps each kept entry to its old position (for the fsmonitor bitmap). No per-entry wrappers:
  // this loop runs over every entry of the index.
  const kept: IndexEntry[] = [];
  const keptFrom: number[] = [];
  for (let i = 0; i < old.length; i++) {
    if (covered[i]) continue;
    kept.push(smudgeIfRacy(old[i], indexStat));
    keptFrom.push(i);
  }

  const scoped: IndexEntry[] = [];
  const oldByPath = new Map<string, number[]>();
  for (let i = 0; i < old.length; i++)
    if (covered[i]) {
      const p = old[i].path;
      let l = oldByPath.get(p);
      if (!l) oldByPath.set(p, (l = []));
      l.push(i);
    }
  for (const p of w.ixPaths) {
    const restored = restoredEntries(w, written, p);
    if (restored === null) for (const i of oldByPath.get(p) ?? []) scoped.push(old[i]);
    else scoped.push(...restored);
  }
  scoped.sort(compareEntries);
  // the scope's entries are few: find where each goes by binary search and splice the carried
  // runs around them (no comparison per carried entry)
  const entries: IndexEntry[] = [];
  const from: number[] = []; // old position of each entry, -1 for the scope's (fsmonitor remap)
  let start = 0;
  for (const e of scoped) {
    let lo = start;
    let hi = kept.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (compareEntries(kept[mid], e) <= 0) lo = mid + 1;
      else hi = mid;
    }
    for (let i = start; i < lo; i++) {
      entries.push(kept[i]);
      from.push(keptFrom[i]);
    }
    entries.push(e);
    from.push(-1);
    start = lo;
  }
  for (let i = start; i < kept.length; i++) {
    entries.push(kept[i]);
    from.push(keptFrom[i]);
  }

  const extensions = editExtensions(plan, base, { length: from.length, at: (i) => from[i] });
  return { version: base.version, objectFormat: base.objectFormat, entries, extensions, skipHash: base.skipHash };
}

/**
 * The extensions after the scope's entries changed, as git edits them: TREE invalidated along
 * each changed path, UNTR along each created or removed path, the FSMN bitmap remapped to the new
 * positions (carried entries keep their bit; the scope's entries are marked dirty), REUC records
 * of the scope replaced, `link` dropped (the index is written whole).
 */
function editExtensions(plan: RestorePlan, base: GitIndex, from: { length: number; at(i: number): number }): IndexExtension[] {
  const w = plan.work;
  let extensions: IndexExtension[] = base.extensions.filter((x) => x.signature !== 'link');
  const touched = [...new Set([...w.changedIndexPaths, ...w.changedWorktreePaths, ...w.prune])].sort(compareRel);
  extensions = extensions.map((x) => {
    if (x.signature === 'TREE' && 'nodes' in x) {
      // as bytes when the nodes were never made (the usual case): no object per tree
      const raw = untouchedCacheTree(x);
      if (raw) return cacheTreeExtension(invalidateCacheTreeBytes(raw.layout, w.changedIndexPaths.map(encodePath)), base.objectFormat);
      let nodes = x.nodes;
      for (const p of w.changedIndexPaths) nodes = invalidateCacheTree(nodes, encodePath(p));
      return { signature: 'TREE', nodes };
    }
    if (x.signature === 'UNTR' && 'cache' in x) {
      let cache = x.cache;
      for (const p of touched) cache = invalidateUntracked(cache, encodePath(p));
      return { signature: 'UNTR', cache };
    }
    if (x.signature === 'FSMN' && 'bitmap' in x) {
      const dirtyOld = new Set(x.bitmap.bits);
      const bits: number[] = [];
      for (let i = 0; i < from.length; i++) {
        const f = from.at(i);
        if (f < 0 || dirtyOld.has(f)) bits.push(i);
      }
      return { ...x, bitmap: ewahFromBits(bits.length ? bits[bits.length - 1] + 1 : 0, bits) };
    }
    return x;
  });
  return withResolveUndo(extensions, plan, base);
}

/**
 * The new index's bytes. On a freshly decoded v2/v3 index nothing is made per entry: the rows
 * outside the scope are copied in runs straight from the old file (a racily clean row is
 * rewritten smudged), and the scope's entries are spliced in where they sort.
 */
function buildIndexBytes(repo: Repository, plan: RestorePlan, read: ReadIndexResult | null, written: Map<string, { item: WorktreeItem; stat: FileStat | null }>, indexStat: FileStat | null): Uint8Array | Uint8Array[] {
  const base = read?.index;
  const t = base ? untouchedTable(base) : null;
  if (!base || !t || base.version === 4 || read?.shared) {
    return encodeIndex(buildIndex(repo, plan, read, written, indexStat), { hash: repo.hash });
  }
  const w = plan.work;
  const rows = rowsOf(base);
  const n = t.count;
  const drop = new Uint8Array(n);
  for (const r of plan.roots) for (const i of rowsUnder(rows, r)) drop[i] = 1;
  const inserted: IndexEntry[] = [];
  for (const p of w.ixPaths) {
    const restored = restoredEntries(w, written, p);
    if (restored === null) for (const i of rowsAt(rows, p)) drop[i] = 0; // unchanged: the old rows stay
    else inserted.push(...restored);
  }
  inserted.sort(compareEntries);
  // rows that may be racily clean are rewritten with size 0 (git's ce_smudge_racily_clean_entry)
  const b = t.bytes;
  const smudged = new Map<number, IndexEntry>();
  if (indexStat) {
    const s = indexStat.mtimeSeconds;
    const ns = indexStat.mtimeNanoseconds;
    for (let i = 0; i < n; i++) {
      if (drop[i]) continue;
      const o = t.off[i];
      const ms = readU32(b, o + 8);
      if (ms < s || (ms === s && readU32(b, o + 12) < ns)) continue;
      if (readU32(b, o + 36) === 0 || readU32(b, o + 24) === 0o160000) continue;
      smudged.set(i, new IndexEntry(t, i).with({ stat: { size: 0 } }));
    }
  }
  // where each inserted entry goes among the rows (path order, then stage)
  const stageOf = (i: number) => (t.flagsWord(i) >> 12) & 3;
  const segments: Segment[] = [];
  const from: number[] = [];
  const wantFrom = base.extensions.some((x) => x.signature === 'FSMN');
  let row = 0;
  const emitRows = (to: number) => {
    let start = row;
    for (let i = row; i < to; i++) {
      if (!drop[i] && !smudged.has(i)) continue;
      if (i > start) segments.push({ t, start, end: i });
      if (!drop[i]) segments.push({ e: smudged.get(i) as IndexEntry });
      start = i + 1;
    }
    if (to > start) segments.push({ t, start, end: to });
    if (wantFrom) for (let i = row; i < to; i++) if (!drop[i]) from.push(i);
    row = to;
  };
  for (const e of inserted) {
    const key = e.pathBytes;
    let lo = row;
    let hi = n;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      const c = rows.compare(mid, key) || stageOf(mid) - e.stage;
      if (c <= 0) lo = mid + 1;
      else hi = mid;
    }
    emitRows(lo);
    segments.push({ e });
    if (wantFrom) from.push(-1);
  }
  emitRows(n);
  const extensions = editExtensions(plan, base, { length: from.length, at: (i) => from[i] });
  const next: GitIndex = { version: base.version, objectFormat: base.objectFormat, entries: [], extensions, skipHash: base.skipHash };
  return encodeIndexSegmentsParts(next, segments, { hash: repo.hash });
}

/**
 * The index entries a restore gives path `p`, or null when they are unchanged and the file was not
 * written (the old entries stay as they are). A restored stage-0 entry for a file written here gets
 * that file's fresh stat data; any other gets zero stat, so git compares content.
 */
function restoredEntries(w: PlanWork, written: Map<string, { item: WorktreeItem; stat: FileStat | null }>, p: string): IndexEntry[] | null {
  const tgt = w.targetIndex.get(p) ?? [];
  const wrote = written.get(p);
  if (!wrote && sameEntries(w.currentIndex.get(p) ?? [], tgt)) return null;
  return tgt.map((rec) => {
    const stat = wrote && wrote.stat && rec.stage === 0 && matches(rec, wrote.item) ? statOf(wrote.stat) : undefined;
    return new IndexEntry({ path: rec.path, oid: rec.oid, mode: rec.mode, stage: rec.stage, flags: rec.flags, stat });
  });
}

/** REUC: records outside the scope kept, the scope's records replaced; sorted by path; the extension dropped when empty. */
function withResolveUndo(extensions: IndexExtension[], plan: RestorePlan, base: GitIndex): IndexExtension[] {
  const w = plan.work;
  if (!plan.paths.some((p) => p.resolveUndo)) return extensions;
  const existing = base.extensions.find((x) => x.signature === 'REUC');
  const records: ResolveUndoRecord[] = [];
  if (existing && 'records' in existing) {
    for (const r of existing.records) if (!plan.roots.some((root) => covers(root, decodePath(r.path)))) records.push(r);
  }
  for (const p of w.ixPaths) {
    const r = w.targetReuc.get(p);
    if (r) records.push({ path: encodePath(r.path), modes: [...r.modes] as [number, number, number], oids: r.oids.map((o) => o ?? undefined) as [string | undefined, string | undefined, string | undefined] });
  }
  records.sort((a, b) => compareRel(decodePath(a.path), decodePath(b.path)));
  const without = extensions.filter((x) => x.signature !== 'REUC');
  if (records.length === 0) return without;
  const reuc: IndexExtension = { signature: 'REUC', records };
  if (existing) return extensions.map((x) => (x.signature === 'REUC' ? reuc : x));
  // git's order: IEOT, link, TREE, REUC, UNTR, FSMN, sdir, EOIE
  const after = new Set(['IEOT', 'link', 'TREE']);
  let at = 0;
  while (at < without.length && after.has(without[at].signature)) at++;
  return [...without.slice(0, at), reuc, ...without.slice(at)];
}

function matches(rec: IndexRecord, it: WorktreeItem): boolean {
  if (it.kind === 'file') return (rec.mode === 0o100644 || rec.mode === 0o100755) && rec.mode === it.mode && rec.oid === it.oid;
  if (it.kind === 'symlink') return rec.mode === 0o120000 && rec.oid === it.oid;
  return false;
}

function statOf(st: FileStat) {
  return {
    ctimeSeconds: st.ctimeSeconds,
    ctimeNanoseconds: st.ctimeNanoseconds,
    mtimeSeconds: st.mtimeSeconds,
    mtimeNanoseconds: st.mtimeNanoseconds,
    dev: st.dev,
    ino: st.ino,
    uid: st.uid,
    gid: st.gid,
    size: st.size >>> 0,
  };
}

/**
 * git's writer smudges entries that may be racily clean (`ce_smudge_racily_clean_entry`): an entry
 * whose mtime is not older than the index file's gets size 0, so the next reader compares content.
 * We do it without looking at the file (always safe; git looks first and smudges fewer).
 */
function smudgeIfRacy(e: IndexEntry, indexStat: FileStat | null): IndexEntry {
  if (!indexStat || e.mode === 0o160000) return e;
  const s = e.mtimeSeconds;
  const ns = e.mtimeNanoseconds;
  const racy = indexStat.mtimeSeconds < s || (indexStat.mtimeSeconds === s && indexStat.mtimeNanoseconds <= ns);
  if (!racy || e.cachedSize === 0) return e;
  return e.with({ stat: { size: 0 } });
}

/**
 * The directories a restore of `chain` removes after putting the scope back (DESIGN I1, "ancestors
 * created to hold it"): above a root, outside every root, absent when the oldest snapshot of the
 * chain with a root beneath it was taken (the oldest captured view wins, as for every path), and
 * empty once the restore is done — holding nothing but such directories. A directory that holds
 * anything (a person's file, an ignored file, a nested repository) stays with what it holds.
 * Deepest first. Costs nothing for roots whose parents existed: only their candidates are read.
 */
async function prunableDirs(repo: Repository, chain: StackEntry[], targets: Map<string, WorktreeItem | undefined>, inScope: (p: string) => boolean): Promise<string[]> {
  const absent = new Map<string, boolean>();
  for (let i = chain.length - 1; i >= 0; i--) {
    const st = chain[i].manifest.captured;
    const existing = new Map((st.absentParents ?? []).map((a) => [a.root, a.existing] as const));
    for (const r of st.roots) {
      const e = existing.get(r);
      for (let d = parentOf(r); d !== ''; d = parentOf(d)) if (!absent.has(d)) absent.set(d, e !== undefined && isAncestor(e, d));
    }
  }
  const candidates = [...absent].filter(([d, a]) => a && !inScope(d)).map(([d]) => d);
  if (candidates.length === 0) return [];
  // directories above something the restore leaves or puts back in the scope
  const held = new Set<string>();
  for (const [p, t] of targets) if (t) for (let d = parentOf(p); d !== '' && !held.has(d); d = parentOf(d)) held.add(d);
  const depth = (p: string) => p.split('/').length;
  candidates.sort((a, b) => depth(b) - depth(a) || compareRel(a, b));
  const empty = new Set<string>();
  for (const d of candidates) {
    if (held.has(d)) continue;
    const at = joinPath(repo.worktree, d);
    const st = await repo.fs.lstat(at);
    if (!st || st.type !== 'directory') continue;
    // what is in the scope goes or stays as `targets` says (held above); anything else stays,
    // unless it is another such directory, judged before this one
    const keeps = (await repo.fs.readdir(at)).some((n) => {
      const c = `${d}/${n}`;
      return !inScope(c) && !empty.has(c);
    });
    if (!keeps) empty.add(d);
  }
  return candidates.filter((d) => empty.has(d));
}

/** The seal of `owner` when it holds `p` (a turn's seal may hold only some of its paths: those its tools finished). */
function sealOf(owner: Owner | undefined, p: string): Manifest['seal'] {
  const seal = owner?.manifest.seal ?? null;
  return sealCovers(seal, p) ? seal : null;
}

function groupIndex(list: readonly IndexRecord[]): Map<string, IndexRecord[]> {
  const m = new Map<string, IndexRecord[]>();
  for (const e of list) {
    let l = m.get(e.path);
    if (!l) m.set(e.path, (l = []));
    l.push(e);
  }
  for (const l of m.values()) l.sort((a, b) => a.stage - b.stage);
  return m;
}

function memo<K extends object, V>(f: (k: K) => V): (k: K) => V {
  const cache = new WeakMap<K, V>();
  return (k) => {
    let v = cache.get(k);
    if (v === undefined) cache.set(k, (v = f(k)));
    return v;
  };
}

function describeReuc(r: ReucRecord | undefined): string {
  if (!r) return 'no resolve-undo record';
  return r.modes.map((m, i) => (m ? `${i + 1}:${m.toString(8)} ${r.oids[i]}` : `${i + 1}:-`)).join(' ');
}

function sparse(path: string, dir: string): ScalpelError {
  return new ScalpelError('SPARSE_PATH', `'${path}' lies inside the sparse-index directory entry '${dir}'; expand it first (git sparse-checkout add ${dir.slice(0, -1)})`, {
    path,
    directory: dir,
  });
}
