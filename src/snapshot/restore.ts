import { ScalpelError } from '../errors/index.js';
import { encodePath } from '../bytes/text.js';
import { joinPath, dirname } from '../fs/path.js';
import { writeFileAtomic, writeChunksAtomic, replaceWithSymlink, mkdirp, pruneEmptyDirs, type Lock } from '../fs/atomic.js';
import { TempLedger } from './temps.js';
import { canStream, readBlobStream } from '../repo/odb-stream.js';
import type { FileStat, FileType } from '../fs/types.js';
import { IndexEntry } from '../index/entry.js';
import type { GitIndex } from '../index/decode.js';
import { encodeSplice } from '../index/splice.js';
import type { ResolveUndoRecord } from '../index/types.js';
import { rowsAt, rowsOf } from '../index/rows.js';
import { objectId } from '../object/loose.js';
import { MODE_EXECUTABLE, MODE_FILE, MODE_SYMLINK } from '../object/tree.js';
import type { Repository } from '../repo/repository.js';
import type { ReadIndexResult } from '../repo/index-file.js';
import type { StackEntry } from '../store/stack.js';
import { captureScope, sparseDirContaining } from './capture.js';
import { checkNoSymlinkParent, compareRel, covers, isAncestor, minimalRoots, parentOf } from '../model/scope.js';
import {
  describeEntries,
  describeItem,
  describePart,
  describeReuc,
  sameEntries,
  sameItem,
  sameReuc,
  sealCovers,
  shallowestAbsent,
  type Contest,
  type Manifest,
  type IndexRecord,
  type PathState,
  type ReucRecord,
  type WorktreeItem,
} from '../model/state.js';

/**
 * A restore in three steps. GATHER (gatherRestoreFacts) reads what the plan needs from the
 * filesystem and the index into plain data: the scope's current state, and the few facts about
 * its surroundings a restore depends on. PLAN (planFromFacts) is pure and synchronous: from the
 * snapshots and those facts it decides every action, every conflict and every refusal. Then the
 * content the plan writes is read and checked (readContent), and APPLY (applyRestore) writes:
 * worktree first, then the index, with the scope's entries spliced into the bytes read.
 */

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
  /** Content of the files written, by id (read and checked before the first write); absent: streamed. */
  blobs: Map<string, Uint8Array>;
  targetIndex: Map<string, IndexRecord[]>;
  targetReuc: Map<string, ReucRecord | undefined>;
  currentIndex: Map<string, IndexRecord[]>;
  ixPaths: string[];
  changedIndexPaths: string[];
  changedWorktreePaths: string[];
  current: PathState;
}

/**
 * Everything planFromFacts needs, as plain data: the snapshots, the scope's current state, and
 * what the filesystem and the index say around it. Read by gatherRestoreFacts; built by hand in tests.
 */
export interface RestoreFacts {
  /** The snapshots restored, newest first: the last is the one restored to. */
  chain: readonly Manifest[];
  /** The union of their roots (minimalRoots). */
  roots: string[];
  /** What is under the roots now (worktree, index entries, resolve-undo records). */
  current: PathState;
  /** Directories under the roots that hold a repository of their own (`.git`). */
  nestedRepos: ReadonlySet<string>;
  /** Per root: its nearest existing ancestor (below the worktree itself), when that is not a directory. */
  blockedParents: ReadonlyMap<string, { dir: string; type: FileType }>;
  /** Directories outside the roots, above a path some snapshot captured index entries of, at which the index now holds an entry. */
  indexEntriesAbove: ReadonlySet<string>;
  /** The directories a restore might prune (pruneCandidates): the names in each, or null when it is not a directory now. */
  listings: ReadonlyMap<string, readonly string[] | null>;
  /** The filesystem: its name (for messages) and whether it has symlinks. */
  fs: { name: string; symlinks: boolean };
}

/**
 * Plan a restore of `chain` (newest first; the last element is the snapshot restored to): for each
 * path in the union of their scopes, the target is what the OLDEST snapshot covering it captured
 * (absent when it covered the path but found nothing). Validates everything a restore needs —
 * paths, parents, blobs, sparse directories — and finds conflicts with seals, without writing.
 */
export async function planRestore(
  repo: Repository,
  chain: StackEntry[],
  read: ReadIndexResult | null,
  indexStat: FileStat | null = null,
): Promise<RestorePlan> {
  const facts = await gatherRestoreFacts(
    repo,
    chain.map((s) => s.manifest),
    read?.index ?? null,
    indexStat,
  );
  const plan = planFromFacts(facts);
  return { ...plan, work: { ...plan.work, blobs: await readContent(repo, plan.work.creations) } };
}

/**
 * GATHER: the facts planFromFacts needs. Refuses here what makes the scope unreadable: a root
 * beneath a symlinked directory, or inside a sparse-index directory entry.
 */
export async function gatherRestoreFacts(
  repo: Repository,
  chain: readonly Manifest[],
  index: GitIndex | null,
  indexStat: FileStat | null,
): Promise<RestoreFacts> {
  const fs = repo.fs;
  const roots = minimalRoots(chain.flatMap((m) => m.captured.roots));
  for (const r of roots) {
    await checkNoSymlinkParent(fs, repo.worktree, r);
    if (index) {
      const d = sparseDirContaining(index, r);
      if (d) throw sparse(r, d);
    }
  }
  const { state: current, nestedRepos } = await captureScope(repo, index, roots, { writeObjects: false, indexStat });
  const inScope = (p: string) => roots.some((r) => covers(r, p));

  // each root's nearest existing ancestor, when it is not a directory (a restore cannot create the root there)
  const blockedParents = new Map<string, { dir: string; type: FileType }>();
  for (const r of roots) {
    for (let dir = parentOf(r); dir !== ''; dir = parentOf(dir)) {
      const st = await fs.lstat(joinPath(repo.worktree, dir));
      if (!st) continue;
      if (st.type !== 'directory') blockedParents.set(r, { dir, type: st.type });
      break;
    }
  }

  // index entries at directories above the scope's index paths: a restored entry beneath one would clash
  const indexEntriesAbove = new Set<string>();
  if (index) {
    const rows = rowsOf(index);
    const seen = new Set<string>();
    for (const m of chain) {
      for (const e of m.captured.index) {
        for (let dir = parentOf(e.path); dir !== '' && !inScope(dir) && !seen.has(dir); dir = parentOf(dir)) {
          seen.add(dir);
          if (rowsAt(rows, dir).length > 0) indexEntriesAbove.add(dir);
        }
      }
    }
  }

  const listings = new Map<string, readonly string[] | null>();
  for (const d of pruneCandidates(chain, inScope)) {
    const at = joinPath(repo.worktree, d);
    const st = await fs.lstat(at);
    listings.set(d, st && st.type === 'directory' ? await fs.readdir(at) : null);
  }
  return {
    chain,
    roots,
    current,
    nestedRepos: new Set(nestedRepos),
    blockedParents,
    indexEntriesAbove,
    listings,
    fs: { name: fs.name, symlinks: fs.capabilities.symlinks },
  };
}

/**
 * PLAN: every action of the restore from the facts, pure and synchronous. Throws the refusals that
 * no force overrides (a nested repository in the way, a parent that is now a file, a filesystem
 * without symlinks); conflicts with seals are returned, for the caller to refuse or force.
 * The returned plan holds no content yet (`work.blobs` is empty): readContent reads it.
 */
export function planFromFacts(facts: RestoreFacts): RestorePlan {
  const { chain, roots, current } = facts;
  const oldest = (p: string): Manifest | undefined => {
    for (let i = chain.length - 1; i >= 0; i--) if (chain[i].captured.roots.some((r) => covers(r, p))) return chain[i];
    return undefined;
  };
  const newest = (p: string): Manifest | undefined => chain.find((m) => m.captured.roots.some((r) => covers(r, p)));

  const itemsOf = memo((st: PathState) => new Map(st.items.map((i) => [i.path, i] as const)));
  const indexOf = memo((st: PathState) => groupIndex(st.index));
  const reucOf = memo((st: PathState) => new Map(st.reuc.map((r) => [r.path, r] as const)));

  const curItems = itemsOf(current);
  const curIndex = indexOf(current);
  const curReuc = reucOf(current);

  const wtPaths = new Set<string>(curItems.keys());
  const ixPaths = new Set<string>([...curIndex.keys(), ...curReuc.keys()]);
  for (const m of chain) {
    for (const i of m.captured.items) wtPaths.add(i.path);
    for (const e of m.captured.index) ixPaths.add(e.path);
    for (const r of m.captured.reuc) ixPaths.add(r.path);
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
  const absentDirs: Array<{ dir: string; root: string; at: number }> = [];
  chain.forEach((m, at) => {
    for (const a of m.captured.absentParents ?? []) absentDirs.push({ dir: shallowestAbsent(a), root: a.root, at });
  });
  // a directory an older snapshot's edit created to hold its root (`mkdir -p` of a write) was
  // that edit's, whoever captured it since: it goes, unless something that stays is beneath it
  const madeByOlder = (p: string, at: number) => absentDirs.some((a) => a.at > at && covers(a.dir, p) && isAncestor(p, a.root));
  const targets = new Map<string, WorktreeItem | undefined>();
  for (const p of wtPaths) {
    const owner = oldest(p) as Manifest;
    const at = chain.indexOf(owner);
    // a turn's capture is made just before the agent's call: what it found was someone else's
    // (a person's note in a directory an earlier turn created), and stays
    const absentBefore = !owner.turn && absentDirs.length > 0 && absentDirs.some((a) => a.at > at && covers(a.dir, p));
    const item = absentBefore ? undefined : itemsOf(owner.captured).get(p);
    targets.set(p, item?.kind === 'dir' && madeByOlder(p, at) ? undefined : item);
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
        conflicts.push({
          path: p,
          part: 'worktree',
          expected: describeItem(sealed),
          found: describeItem(cur),
          restoring: describeItem(tgt),
          snapshot: (newest(p) as Manifest).id,
        });
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
  // a root whose directories someone removed since the seal (another session's `rm -rf` of the
  // directory above it): making them again to hold what the restore writes there would undo
  // that removal, which is not the restored edit's
  for (const r of roots) {
    const seal = sealOf(newest(r), r);
    if (!seal || !creations.some((c) => covers(r, c.path))) continue;
    const then = seal.state.absentParents?.find((a) => a.root === r)?.existing ?? parentOf(r);
    const nowRec = current.absentParents?.find((a) => a.root === r);
    if (!nowRec || !isAncestor(nowRec.existing, then)) continue;
    const gone = shallowestAbsent(nowRec);
    if (conflicts.some((x) => x.path === gone && x.part === 'worktree')) continue;
    conflicts.push({
      path: gone,
      part: 'worktree',
      expected: 'directory',
      found: 'absent',
      restoring: 'directory',
      snapshot: (newest(r) as Manifest).id,
    });
  }
  removals.sort((a, b) => compareRel(b.path, a.path));
  creations.sort((a, b) => compareRel(a.path, b.path));
  const prune = prunableDirs(chain, targets, inScope, facts.listings);
  for (const d of prune) planFor(d).worktree = { action: 'prune', from: 'directory', to: 'absent' };

  // directories we would remove must not hold a nested repository (never captured, never touched)
  for (const r of removals) {
    if (r.item.kind !== 'dir' || !facts.nestedRepos.has(r.path)) continue;
    throw new ScalpelError('REFUSED', `restore would remove '${r.path}', which holds a nested repository (.git); move it away first`, {
      path: r.path,
      reason: 'nested-repository',
      conflicts: [],
    });
  }

  // parents outside the scope must be directories (or absent: they are created)
  for (const c of creations) {
    const blocked = roots.includes(c.path) ? facts.blockedParents.get(c.path) : undefined;
    if (!blocked) continue;
    throw new ScalpelError(
      'REFUSED',
      `cannot restore '${c.path}': its parent '${blocked.dir}' is now a ${blocked.type}, outside the snapshot's paths (not the edit's to remove, even forced); move it away first, then run this again`,
      {
        path: c.path,
        parent: blocked.dir,
        reason: 'parent-not-directory',
        conflicts: [],
      },
    );
  }

  // a filesystem without symlinks cannot restore one: refuse now, not halfway (git would need core.symlinks=false)
  if (!facts.fs.symlinks) {
    const link = creations.find((c) => c.item.kind === 'symlink');
    if (link) {
      throw new ScalpelError(
        'UNSUPPORTED',
        `cannot restore the symbolic link '${link.path}': this filesystem (${facts.fs.name}) has no symlinks`,
        {
          path: link.path,
          capability: 'symlinks',
        },
      );
    }
  }

  // index and resolve-undo
  const targetIndex = new Map<string, IndexRecord[]>();
  const targetReuc = new Map<string, ReucRecord | undefined>();
  const changedIndexPaths: string[] = [];
  const sortedIx = [...ixPaths].sort(compareRel);
  for (const p of sortedIx) {
    const owner = oldest(p) as Manifest;
    const tgt = indexOf(owner.captured).get(p) ?? [];
    const cur = curIndex.get(p) ?? [];
    const tgtR = reucOf(owner.captured).get(p);
    const curR = curReuc.get(p);
    targetIndex.set(p, tgt);
    targetReuc.set(p, tgtR);
    const n = newest(p) as Manifest;
    const seal = sealOf(n, p);
    if (!sameEntries(cur, tgt)) {
      changedIndexPaths.push(p);
      planFor(p).index = { from: describeEntries(cur), to: describeEntries(tgt) };
      if (seal) {
        const sealed = indexOf(seal.state).get(p) ?? [];
        if (!sameEntries(cur, sealed))
          conflicts.push({
            path: p,
            part: 'index',
            expected: describeEntries(sealed),
            found: describeEntries(cur),
            restoring: describeEntries(tgt),
            snapshot: n.id,
          });
      }
    }
    if (!sameReuc(curR, tgtR)) {
      planFor(p).resolveUndo = { from: describeReucFull(curR), to: describeReucFull(tgtR) };
      if (seal) {
        const sealed = reucOf(seal.state).get(p);
        if (!sameReuc(curR, sealed))
          conflicts.push({
            path: p,
            part: 'resolve-undo',
            expected: describeReucFull(sealed),
            found: describeReucFull(curR),
            restoring: describeReucFull(tgtR),
            snapshot: n.id,
          });
      }
    }
  }
  // a restored entry must not end up beneath a file entry kept outside the scope (a D/F clash)
  for (const p of changedIndexPaths) {
    if ((targetIndex.get(p) ?? []).length === 0) continue;
    for (let dir = parentOf(p); dir !== '' && !inScope(dir); dir = parentOf(dir)) {
      if (!facts.indexEntriesAbove.has(dir)) continue;
      throw new ScalpelError(
        'REFUSED',
        `cannot restore the index entry of '${p}': '${dir}' is now a file in the index, outside the snapshot's paths`,
        {
          path: p,
          parent: dir,
          reason: 'parent-not-directory',
          conflicts: [],
        },
      );
    }
  }

  // what someone else changed mid-turn, after the agent's last write (a turn's contested paths):
  // refused like a sealed path changed after the seal, where the restore would change it, unless
  // the path holds the agent's last write again (the other change was undone since: nothing of
  // anyone else's is there to lose), and no later call of the agent went over that change
  const currentPart = (c: Pick<Contest, 'path' | 'part'>): string =>
    describePart(c.part, { item: curItems.get(c.path), entries: curIndex.get(c.path) ?? [], reuc: curReuc.get(c.path) });
  for (const m of chain) {
    for (const c of m.contested ?? []) {
      const plan = plans.get(c.path);
      const part = plan && (c.part === 'worktree' ? plan.worktree : c.part === 'index' ? plan.index : plan.resolveUndo);
      // what a later call of the agent went over is refused even where the rewind writes nothing:
      // exiting 0 would claim the turn undone, and that change of someone else's is not back
      if (c.overwritten && roots.some((r) => covers(r, c.path))) {
        if (conflicts.some((x) => x.path === c.path && x.part === c.part)) continue;
        conflicts.push({
          path: c.path,
          part: c.part,
          expected: `${c.expected} (the agent's write)`,
          found: `${c.found} (someone else's, then gone under a later call of the turn)`,
          restoring: part ? part.to : currentPart(c),
          snapshot: m.id,
        });
        continue;
      }
      if (!part || currentPart(c) === c.expected) continue;
      const expected =
        c.why === 'unfinished'
          ? `${c.expected} (before a tool call whose end was never reported: it may have run, or someone else changed it)`
          : `${c.expected} (the agent's last write)`;
      // the seal's own refusal of the path says what it found; the contest says what the agent left
      const sealSays = conflicts.find((x) => x.path === c.path && x.part === c.part);
      if (sealSays) {
        if (sealSays.expected === c.expected) sealSays.expected = expected;
        continue;
      }
      conflicts.push({ path: c.path, part: c.part, expected, found: c.found, restoring: part.to, snapshot: m.id });
    }
  }
  // across several snapshots: what one left sealed and the next one found there must agree, or
  // someone changed it in between (a person's edit between two turns), and restoring past the
  // newer one would lose that change
  for (const { raw, ...c } of betweenSnapshots(chain, itemsOf, indexOf, reucOf)) {
    const plan = plans.get(c.path);
    const part = plan && (c.part === 'worktree' ? plan.worktree : c.part === 'index' ? plan.index : plan.resolveUndo);
    if (conflicts.some((x) => x.path === c.path && x.part === c.part)) continue;
    if (part) conflicts.push({ ...c, restoring: part.to });
    // where the restore writes nothing, what someone else left between the two is gone all the
    // same when it is not there now (a later turn of the chain went over it): exiting 0 would
    // claim the turns undone, and that change is not back
    else if (currentPart(c) !== raw) conflicts.push({ ...c, restoring: currentPart(c) });
  }
  const paths = [...plans.values()].sort((a, b) => compareRel(a.path, b.path));
  return {
    roots,
    paths,
    pruned: prune,
    conflicts,
    indexChanged: changedIndexPaths.length > 0 || paths.some((x) => x.resolveUndo),
    work: {
      removals,
      creations,
      prune,
      blobs: new Map(),
      targetIndex,
      targetReuc,
      currentIndex: curIndex,
      ixPaths: sortedIx,
      changedIndexPaths,
      changedWorktreePaths,
      current,
    },
  };
}

/**
 * The content a plan writes, read and checked before the first write: every file's blob (large
 * ones read through once, piece by piece, and streamed again when written), every symlink target
 * against its id. A snapshot whose content is missing or wrong is refused as corrupt.
 */
export async function readContent(repo: Repository, creations: PlanWork['creations']): Promise<Map<string, Uint8Array>> {
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
        throw missingObject(c.path, it.oid, e);
      }
      streamed.add(it.oid);
      continue;
    }
    if (it.kind === 'file' && !c.chmodOnly && !blobs.has(it.oid)) {
      let obj;
      try {
        obj = await repo.odb.read(it.oid);
      } catch (e) {
        throw missingObject(c.path, it.oid, e);
      }
      if (obj.type !== 'blob')
        throw new ScalpelError('SNAPSHOT_CORRUPT', `snapshot names ${it.oid} for '${c.path}', which is a ${obj.type}`, {
          path: c.path,
          oid: it.oid,
          reason: 'not-a-blob',
        });
      blobs.set(it.oid, obj.content);
    } else if (it.kind === 'symlink') {
      if (objectId('blob', encodePath(it.target), repo.objectFormat, repo.hash) !== it.oid) {
        throw new ScalpelError('SNAPSHOT_CORRUPT', `snapshot's symlink target for '${c.path}' does not match its id`, {
          path: c.path,
          oid: it.oid,
          reason: 'symlink-mismatch',
        });
      }
    }
  }
  return blobs;
}

function missingObject(path: string, oid: string, e: unknown): ScalpelError {
  return new ScalpelError(
    'SNAPSHOT_CORRUPT',
    `snapshot is incomplete: the content of '${path}' (${oid}) cannot be read: ${(e as Error).message}`,
    {
      path,
      oid,
      reason: 'missing-object',
    },
  );
}

/**
 * Carry out a plan: worktree first (removals deepest first, then creations shallowest first;
 * every file through a temp file and a rename), then the index through the lock the caller
 * holds. Entries for paths whose file this restore wrote, and whose bytes hash to the entry's id,
 * get a fresh lstat; other restored entries get zero stat data so git compares content.
 */
export async function applyRestore(
  repo: Repository,
  plan: RestorePlan,
  read: ReadIndexResult | null,
  lock: Lock | null,
  indexStat: FileStat | null,
): Promise<{ indexWritten: boolean }> {
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
        if (st) await fs.chmod(a, execMode(st.mode & 0o7777, it.mode === MODE_EXECUTABLE));
      }
      continue;
    }
    const mode = it.mode === MODE_EXECUTABLE ? 0o755 : 0o644;
    const data = w.blobs.get(it.oid);
    if (data) await writeFileAtomic(fs, a, data, { mode });
    else await writeChunksAtomic(fs, a, (await readBlobStream(repo.odb, it.oid)).chunks, { mode });
    // the lstat that checks the mode is the entry's fresh stat data too, unless a chmod follows
    let st = await fs.lstat(a);
    if (fs.capabilities.modes && st && ((st.mode & 0o111) !== 0) !== (it.mode === MODE_EXECUTABLE)) {
      await fs.chmod(a, execMode(st.mode & 0o7777, it.mode === MODE_EXECUTABLE));
      st = await fs.lstat(a);
    }
    written.set(c.path, { item: it, stat: st });
  }
  if (tempDirs.length) await ledger.clear();
  // checked again as they go: something put into one since the plan keeps it
  if (w.prune.length) await pruneEmptyDirs(fs, w.prune.map(abs), repo.worktree);

  if (!plan.indexChanged || !lock) return { indexWritten: false };
  await repo.writeIndexBytes(lock, newIndex(repo, plan, read, written, indexStat));
  return { indexWritten: true };
}

function execMode(mode: number, exec: boolean): number {
  if (!exec) return mode & ~0o111;
  return mode | ((mode & 0o444) >> 2);
}

/**
 * The new index, as the parts of the file: the scope's entries spliced into the index read
 * (index/splice.ts), every other entry carried over as it was (smudged when racily clean).
 */
function newIndex(
  repo: Repository,
  plan: RestorePlan,
  read: ReadIndexResult | null,
  written: Map<string, { item: WorktreeItem; stat: FileStat | null }>,
  indexStat: FileStat | null,
): Uint8Array[] {
  const w = plan.work;
  const base: GitIndex = read?.index ?? { version: 2, objectFormat: repo.objectFormat, entries: [], extensions: [], skipHash: false };
  const keep: string[] = [];
  const entries: IndexEntry[] = [];
  for (const p of w.ixPaths) {
    const restored = restoredEntries(w, written, p);
    if (restored === null) keep.push(p);
    else for (const e of restored) entries.push(e);
  }
  const touched = [...new Set([...w.changedIndexPaths, ...w.changedWorktreePaths, ...w.prune])].sort(compareRel);
  let resolveUndo: ResolveUndoRecord[] | undefined;
  if (plan.paths.some((p) => p.resolveUndo)) {
    resolveUndo = [];
    for (const p of w.ixPaths) {
      const r = w.targetReuc.get(p);
      if (r)
        resolveUndo.push({
          path: encodePath(r.path),
          modes: [...r.modes] as [number, number, number],
          oids: r.oids.map((o) => o ?? undefined) as [string | undefined, string | undefined, string | undefined],
        });
    }
  }
  return encodeSplice(
    base,
    { roots: plan.roots, entries, keep, stamp: indexStat, changed: w.changedIndexPaths, touched, resolveUndo },
    { hash: repo.hash },
  );
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

/** Does the index record say what the restore wrote (so the fresh lstat of it may go into the entry)? */
function matches(rec: IndexRecord, it: WorktreeItem): boolean {
  if (it.kind === 'file') return (rec.mode === MODE_FILE || rec.mode === MODE_EXECUTABLE) && rec.mode === it.mode && rec.oid === it.oid;
  if (it.kind === 'symlink') return rec.mode === MODE_SYMLINK && rec.oid === it.oid;
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
 * The directories above the roots that a restore of `chain` might prune (ancestors an edit
 * created to hold a declared path): outside every root, and absent when the oldest snapshot of the chain with
 * a root beneath them was taken (the oldest captured view wins, as for every path). Deepest first.
 * None for roots whose parents existed, the usual case: then nothing more is read.
 */
export function pruneCandidates(chain: readonly Manifest[], inScope: (p: string) => boolean): string[] {
  const absent = new Map<string, boolean>();
  for (let i = chain.length - 1; i >= 0; i--) {
    const st = chain[i].captured;
    const existing = new Map((st.absentParents ?? []).map((a) => [a.root, a.existing] as const));
    // within one snapshot, absent at any of its captures: a turn's later call that found the
    // directory there (an earlier call of the turn made it) does not make it older
    const here = new Map<string, boolean>();
    for (const r of st.roots) {
      const e = existing.get(r);
      for (let d = parentOf(r); d !== ''; d = parentOf(d)) here.set(d, here.get(d) === true || (e !== undefined && isAncestor(e, d)));
    }
    for (const [d, a] of here) if (!absent.has(d)) absent.set(d, a);
  }
  const candidates = [...absent].filter(([d, a]) => a && !inScope(d)).map(([d]) => d);
  const depth = (p: string) => p.split('/').length;
  return candidates.sort((a, b) => depth(b) - depth(a) || compareRel(a, b));
}

/**
 * Of the candidates, those empty once the restore is done: holding nothing but such directories.
 * A directory that holds anything (a person's file, an ignored file, a nested repository) stays
 * with what it holds; so does one above something the restore leaves or puts back in the scope.
 */
function prunableDirs(
  chain: readonly Manifest[],
  targets: Map<string, WorktreeItem | undefined>,
  inScope: (p: string) => boolean,
  listings: RestoreFacts['listings'],
): string[] {
  const candidates = pruneCandidates(chain, inScope);
  if (candidates.length === 0) return [];
  const held = new Set<string>();
  for (const [p, t] of targets) if (t) for (let d = parentOf(p); d !== '' && !held.has(d); d = parentOf(d)) held.add(d);
  const empty = new Set<string>();
  for (const d of candidates) {
    const names = listings.get(d);
    if (held.has(d) || !names) continue;
    // what is in the scope goes or stays as `targets` says (held above); anything else stays,
    // unless it is another such directory, judged before this one
    const keeps = names.some((n) => {
      const c = `${d}/${n}`;
      return !inScope(c) && !empty.has(c);
    });
    if (!keeps) empty.add(d);
  }
  return candidates.filter((d) => empty.has(d));
}

/**
 * Where an older snapshot of `chain` (newest first) sealed a path and the next newer snapshot
 * covering that path captured something else there: someone changed it between the two (a
 * person's edit between two turns). Each path and part once, at the oldest such pair.
 */
function betweenSnapshots(
  chain: readonly Manifest[],
  itemsOf: (s: PathState) => Map<string, WorktreeItem>,
  indexOf: (s: PathState) => Map<string, IndexRecord[]>,
  reucOf: (s: PathState) => Map<string, ReucRecord>,
): Array<Omit<Conflict, 'restoring'> & { raw: string }> {
  const out: Array<Omit<Conflict, 'restoring'> & { raw: string }> = [];
  if (!chain.some((m, i) => i > 0 && m.seal)) return out;
  const paths = new Set<string>();
  for (const m of chain) {
    for (const st of m.seal ? [m.captured, m.seal.state] : [m.captured]) {
      for (const k of itemsOf(st).keys()) paths.add(k);
      for (const k of indexOf(st).keys()) paths.add(k);
      for (const k of reucOf(st).keys()) paths.add(k);
    }
  }
  for (const p of [...paths].sort(compareRel)) {
    // the snapshots that captured p, oldest first; each sealed one against the next (every pair:
    // a change between the second and third turn counts even where the first pair differs in
    // another part, which the restore may not write)
    const owners = chain.filter((m) => m.captured.roots.some((r) => covers(r, p))).reverse();
    const named = new Set<Conflict['part']>();
    for (let k = 0; k + 1 < owners.length; k++) {
      const older = owners[k];
      const newer = owners[k + 1];
      if (!sealCovers(older.seal, p)) continue;
      const seal = (older.seal as NonNullable<Manifest['seal']>).state;
      const parts: Array<[Conflict['part'], string, string]> = [
        ['worktree', describeItem(itemsOf(seal).get(p)), describeItem(itemsOf(newer.captured).get(p))],
        ['index', describeEntries(indexOf(seal).get(p) ?? []), describeEntries(indexOf(newer.captured).get(p) ?? [])],
        ['resolve-undo', describeReuc(reucOf(seal).get(p)), describeReuc(reucOf(newer.captured).get(p))],
      ];
      for (const [part, expected, got] of parts) {
        if (expected === got || named.has(part)) continue;
        out.push({
          path: p,
          part,
          expected: `${expected} (as snapshot ${older.id} left it)`,
          found: `${got} (what snapshot ${newer.id} found)`,
          snapshot: newer.id,
          raw: got,
        });
        named.add(part);
      }
    }
  }
  return out;
}

/** The seal of `owner` when it holds `p` (a turn's seal may hold only some of its paths: those its tools finished). */
function sealOf(owner: Manifest | undefined, p: string): Manifest['seal'] {
  const seal = owner?.seal ?? null;
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

/** A resolve-undo record in full (each stage's mode and id), for plans and seal refusals. */
function describeReucFull(r: ReucRecord | undefined): string {
  if (!r) return 'no resolve-undo record';
  return r.modes.map((m, i) => (m ? `${i + 1}:${m.toString(8)} ${r.oids[i]}` : `${i + 1}:-`)).join(' ');
}

function sparse(path: string, dir: string): ScalpelError {
  return new ScalpelError(
    'SPARSE_PATH',
    `'${path}' lies inside the sparse-index directory entry '${dir}'; expand it first (git sparse-checkout add ${dir.slice(0, -1)})`,
    {
      path,
      directory: dir,
    },
  );
}
