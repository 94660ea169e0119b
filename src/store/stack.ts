import { ScalpelError } from '../errors/index.js';
import { encodePath, utf8Decode, utf8Encode } from '../bytes/text.js';
import { decodeCommit, encodeCommit, formatIdentity, parseIdentity, type Commit } from '../object/commit.js';
import { decodeTree, encodeTree, MODE_FILE, MODE_GITLINK, MODE_SYMLINK, MODE_TREE, type TreeEntry } from '../object/tree.js';
import { objectId } from '../object/loose.js';
import type { Repository } from '../repo/repository.js';
import type { Manifest, PathState } from '../model/state.js';
import { decodeManifest, encodeManifest } from '../model/manifest.js';
import { compareRel, parentInRun } from '../model/scope.js';
import type { RefTransaction } from '../repo/refs.js';
import type { CacheTreeNode } from '../index/types.js';
import type { ObjectWriter } from '../repo/object-batch.js';

/**
 * Snapshot stacks. Each snapshot is a commit whose tree holds
 *   manifest.json   the manifest (pre-image state, seal, label, times)
 *   worktree/       the captured files and symlinks at their paths (`git show <ref>:worktree/<path>`),
 *                   but a symlink named as git's own files (.gitmodules, .gitignore, .gitattributes,
 *                   .mailmap), which `git fsck` reports in any tree: index/ keeps its target
 *   index/          every blob and tree the captured index entries and resolve-undo records name
 *                   that worktree/ does not hold already (a staged version, a conflict stage)
 * and whose parent is the snapshot below it. The session's ref `refs/scalpel/<worktree>/<session>`
 * points at the newest, so a push writes a few objects and moves one ref, whatever the stack's
 * size, and everything a snapshot needs stays reachable for `git gc`.
 */
export interface StackEntry {
  commit: string;
  parent: string | null;
  manifest: Manifest;
}

const SESSION_RE = /^[A-Za-z0-9_][A-Za-z0-9._-]{0,99}$/;

export function checkSession(session: string): void {
  if (!SESSION_RE.test(session) || session.endsWith('.lock') || session.includes('..')) {
    throw new ScalpelError('BAD_ARGUMENT', `invalid session name '${session}' (letters, digits, '.', '_', '-'; at most 100)`, {
      name: 'session',
      value: session,
    });
  }
}

export class SnapshotStack {
  /**
   * The stack of `session` on `refs/scalpel/<worktree>/<session>`, or on `ref` (a stack that is
   * no session's, such as the rewinds a worktree can undo: never listed as a session).
   */
  constructor(
    private readonly repo: Repository,
    readonly session: string,
    private readonly refName?: string,
  ) {
    checkSession(session);
  }

  get ref(): string {
    return this.refName ?? `refs/scalpel/${this.repo.worktreeId}/${this.session}`;
  }

  head(): Promise<string | null> {
    return this.repo.refs.read(this.ref);
  }

  /**
   * Hold the session's ref lock for a read-modify-write of the stack (other processes on the
   * same session wait, then get REF_LOCKED): `tx.current` is the head, `tx.set` moves it.
   */
  async locked<T>(fn: (tx: RefTransaction) => Promise<T>): Promise<T> {
    const tx = await this.repo.refs.transaction(this.ref);
    try {
      return await fn(tx);
    } finally {
      await tx.release();
    }
  }

  /** Read one snapshot commit and its manifest (validated: stored state is untrusted). */
  async load(commit: string): Promise<StackEntry> {
    const { type, content } = await this.repo.odb.read(commit).catch((e: unknown) => {
      throw corrupt(`snapshot commit ${commit} cannot be read: ${(e as Error).message}`, commit);
    });
    if (type !== 'commit') throw corrupt(`${commit} is a ${type}, not a snapshot commit`, commit);
    const c = decodeCommit(content, this.repo.objectFormat);
    const tree = await this.repo.odb.read(c.tree);
    if (tree.type !== 'tree') throw corrupt(`snapshot ${commit} has no tree`, commit);
    const manifestEntry = decodeTree(tree.content, this.repo.objectFormat).find((e) => utf8Decode(e.name) === 'manifest.json');
    if (!manifestEntry) throw corrupt(`snapshot ${commit} has no manifest.json`, commit);
    const blob = await this.repo.odb.read(manifestEntry.oid);
    let manifest: Manifest;
    try {
      manifest = decodeManifest(utf8Decode(blob.content), this.repo.objectFormat);
    } catch (e) {
      if (e instanceof ScalpelError) e.data.commit = commit;
      throw e;
    }
    if (manifest.session !== this.session || manifest.worktreeId !== this.repo.worktreeId) {
      throw corrupt(`snapshot ${commit} belongs to session ${manifest.session} of worktree ${manifest.worktreeId}`, commit);
    }
    return { commit, parent: c.parents[0] ?? null, manifest };
  }

  /** Snapshots from the newest (`from`, default the head) down, stopping after `stop` returns true (or at the bottom). */
  async walk(stop?: (e: StackEntry) => boolean, from?: string | null): Promise<StackEntry[]> {
    const out: StackEntry[] = [];
    let cur = from === undefined ? await this.head() : from;
    const seen = new Set<string>();
    while (cur) {
      if (seen.has(cur)) throw corrupt(`snapshot chain loops at ${cur}`, cur);
      seen.add(cur);
      const e = await this.load(cur);
      out.push(e);
      if (stop?.(e)) break;
      cur = e.parent;
    }
    return out;
  }

  /** The snapshots from the newest (`from`, default the head) down to the one whose id starts with `id` (inclusive). */
  async downTo(id: string, from?: string | null): Promise<StackEntry[]> {
    if (!id) throw new ScalpelError('BAD_ARGUMENT', 'empty snapshot id', { name: 'id' });
    const list = await this.walk((e) => e.manifest.id === id || e.manifest.id.startsWith(id), from);
    const last = list[list.length - 1];
    if (!last || !(last.manifest.id === id || last.manifest.id.startsWith(id))) {
      throw new ScalpelError('SNAPSHOT_NOT_FOUND', `no snapshot '${id}' in session '${this.session}'`, { session: this.session, id });
    }
    return list;
  }

  /**
   * Write the objects of a snapshot commit with the given parent through `out`; returns the commit
   * id. The ref is not moved: when `out` is a batch, flush it before a ref names the commit.
   * `cacheTree`: the valid nodes of the index's TREE extension by directory ('' the root). A
   * captured directory whose files are exactly its index entries, unchanged, has that tree
   * already: its id is used instead of writing the same tree again (as git reuses its cache tree).
   */
  async writeCommit(
    manifest: Manifest,
    parent: string | null,
    cacheTree: Map<string, CacheTreeNode> | undefined,
    out: ObjectWriter,
  ): Promise<string> {
    const fmt = this.repo.objectFormat;
    const manifestOid = await out.write('blob', utf8Encode(encodeManifest(manifest)));
    const root: TreeEntry[] = [{ mode: MODE_FILE, name: utf8Encode('manifest.json'), oid: manifestOid }];
    const wt = await this.worktreeTree(manifest.captured, cacheTree, out);
    if (wt) root.push({ mode: MODE_TREE, name: utf8Encode('worktree'), oid: wt });
    const ix = await this.indexTree(manifest.captured, out);
    if (ix) root.push({ mode: MODE_TREE, name: utf8Encode('index'), oid: ix });
    // what unfinished tool calls captured (Manifest.provisional) is kept as reachable as the rest
    const pv = manifest.provisional?.length
      ? await this.keepTree(
          manifest.provisional.map((p) => p.state),
          new Set(),
          out,
        )
      : null;
    if (pv) root.push({ mode: MODE_TREE, name: utf8Encode('provisional'), oid: pv });
    const tree = await out.write('tree', encodeTree(root, fmt));
    const when = Math.floor(Date.parse(manifest.createdAt) / 1000);
    const ident = formatIdentity({
      name: 'git-scalpel',
      email: 'git-scalpel@localhost',
      timestamp: Number.isFinite(when) && when >= 0 ? when : 0,
    });
    const label = manifest.label ? `: ${manifest.label.replace(/\n/g, ' ')}` : '';
    const message = `git-scalpel ${this.session} ${manifest.id}${label}\n\n${manifest.captured.roots.map((r) => `  ${r || '.'}`).join('\n')}\n`;
    return out.write('commit', encodeCommit({ tree, parents: parent ? [parent] : [], author: ident, committer: ident, message }));
  }

  /**
   * Replace the snapshot `target` (somewhere in `chain`, newest first, which starts at the head
   * read under `tx`) by `manifest`, re-parenting the snapshots above it, and move the head.
   * Returns the replacement's commit and the new head. The objects go into `batch` (which may
   * already hold a capture's blobs), flushed before the head moves.
   */
  async replace(
    tx: RefTransaction,
    chain: StackEntry[],
    target: StackEntry,
    manifest: Manifest,
    batch = this.repo.odb.batch(),
  ): Promise<{ commit: string; head: string }> {
    const at = chain.indexOf(target);
    if (at < 0 || chain[0].commit !== tx.current)
      throw new ScalpelError('BAD_ARGUMENT', 'snapshot is not in the locked chain', { name: 'target' });
    const commit = await this.writeCommit(manifest, target.parent, undefined, batch);
    let head = commit;
    for (let i = at - 1; i >= 0; i--) head = await this.writeCommit(chain[i].manifest, head, undefined, batch);
    await batch.flush();
    await tx.set(head);
    return { commit, head };
  }

  /** The committer time (seconds) of a snapshot commit: when it was taken. One object read. */
  async commitTime(commit: string): Promise<number> {
    const { type, content } = await this.repo.odb.read(commit);
    if (type !== 'commit') throw corrupt(`${commit} is a ${type}, not a snapshot commit`, commit);
    return parseIdentity(decodeCommit(content, this.repo.objectFormat).committer).timestamp;
  }

  /**
   * Keep the newest `keep` snapshots under `tx` (the head read under the session's lock) and cut
   * the rest off: the kept commits are written again with the same trees and messages, the
   * oldest kept one without a parent, so what was below becomes unreachable (git gc removes it).
   * Only commits are read, not manifests. Returns how many snapshots were cut off.
   */
  async truncate(tx: RefTransaction, keep: number): Promise<number> {
    const kept: Commit[] = [];
    let cur = tx.current;
    const seen = new Set<string>();
    while (cur && kept.length <= keep) {
      if (seen.has(cur)) throw corrupt(`snapshot chain loops at ${cur}`, cur);
      seen.add(cur);
      const { type, content } = await this.repo.odb.read(cur);
      if (type !== 'commit') throw corrupt(`${cur} is a ${type}, not a snapshot commit`, cur);
      const c = decodeCommit(content, this.repo.objectFormat);
      kept.push(c);
      cur = c.parents[0] ?? null;
    }
    if (kept.length <= keep) return 0;
    let dropped = 1;
    for (let below = kept[keep].parents[0] ?? null; below; dropped++) {
      const { content } = await this.repo.odb.read(below);
      below = decodeCommit(content, this.repo.objectFormat).parents[0] ?? null;
    }
    const batch = this.repo.odb.batch();
    let parent: string | null = null;
    for (let i = keep - 1; i >= 0; i--) parent = await batch.write('commit', encodeCommit({ ...kept[i], parents: parent ? [parent] : [] }));
    await batch.flush();
    await tx.set(parent);
    return dropped;
  }

  /** Remove `target` from `chain` (newest first, from the locked head), re-parenting what was above it. */
  async remove(tx: RefTransaction, chain: StackEntry[], target: StackEntry): Promise<string | null> {
    const at = chain.indexOf(target);
    if (at < 0 || chain[0].commit !== tx.current)
      throw new ScalpelError('BAD_ARGUMENT', 'snapshot is not in the locked chain', { name: 'target' });
    let head = target.parent;
    const batch = this.repo.odb.batch();
    for (let i = at - 1; i >= 0; i--) head = await this.writeCommit(chain[i].manifest, head, undefined, batch);
    await batch.flush();
    await tx.set(head);
    return head;
  }

  private async worktreeTree(
    state: PathState,
    cacheTree: Map<string, CacheTreeNode> | undefined,
    out: ObjectWriter,
  ): Promise<string | null> {
    const files: Array<{ path: string; mode: number; oid: string }> = [];
    for (const it of state.items) {
      if (it.kind === 'file') files.push({ path: it.path, mode: it.mode, oid: it.oid });
      else if (it.kind === 'symlink' && !fsckSpecialSymlink(it.path)) files.push({ path: it.path, mode: MODE_SYMLINK, oid: it.oid });
    }
    if (!files.length) return null;
    const reuse = cacheTree ? reusableTrees(files, state, cacheTree) : new Map<string, string>();
    // A valid cache-tree node names a tree git computed; reuse it only when the object is there
    // (git's own WRITE_TREE_REPAIR asks the same), and not above a missing one (a parent tree
    // names its subtrees), so a snapshot never points at a missing tree.
    // (asked all at once: a clean tree of a thousand directories is a thousand lookups)
    const have = await out.existing([...reuse.values()]);
    const missing: string[] = [];
    for (const [dir, oid] of reuse) if (!have.has(oid.toLowerCase())) missing.push(dir);
    for (const dir of missing) for (let d: string | null = dir; d !== null; d = parentDir(d)) reuse.delete(d);
    return this.writeNested(files, reuse, out);
  }

  /**
   * Blobs and trees the index records name, by id, so git gc keeps them; those worktree/ holds
   * already (a clean file's id is its index entry's) are not listed again. Gitlinks are other
   * repositories' commits.
   */
  private async indexTree(state: PathState, out: ObjectWriter): Promise<string | null> {
    const inWorktree = new Set<string>();
    for (const it of state.items) if (it.kind === 'file' || (it.kind === 'symlink' && !fsckSpecialSymlink(it.path))) inWorktree.add(it.oid);
    const special = state.items.filter((it) => it.kind === 'symlink' && fsckSpecialSymlink(it.path));
    return this.keepTree([{ ...state, items: special }], inWorktree, out);
  }

  /**
   * One flat tree naming, by id, every blob and tree `states` name (worktree items, index
   * records, resolve-undo records) but those in `skip`, so git gc keeps them. Gitlinks are other
   * repositories' commits.
   */
  private async keepTree(states: readonly PathState[], skip: ReadonlySet<string>, out: ObjectWriter): Promise<string | null> {
    const byOid = new Map<string, number>();
    const add = (oid: string | null, mode: number) => {
      if (!oid || mode === MODE_GITLINK || mode === 0 || skip.has(oid)) return;
      byOid.set(oid, mode === MODE_TREE ? MODE_TREE : MODE_FILE);
    };
    for (const state of states) {
      for (const it of state.items) if (it.kind !== 'dir') add(it.oid, MODE_FILE);
      for (const e of state.index) add(e.oid, e.mode);
      for (const r of state.reuc) r.modes.forEach((m, i) => add(r.oids[i], m));
    }
    const entries: TreeEntry[] = [];
    const emptyBlob = objectId('blob', new Uint8Array(0), this.repo.objectFormat, this.repo.hash);
    for (const [oid, mode] of byOid) {
      // intent-to-add entries name the empty blob, which git does not write; every other id the
      // index names was written by git before it was staged (checked again, by reading, at restore)
      if (oid === emptyBlob && !(await out.has(oid))) await out.write('blob', new Uint8Array(0));
      entries.push({ mode, name: utf8Encode(oid), oid });
    }
    return entries.length ? out.write('tree', encodeTree(entries, this.repo.objectFormat)) : null;
  }

  private async writeNested(
    files: Array<{ path: string; mode: number; oid: string }>,
    reuse: Map<string, string>,
    out: ObjectWriter,
  ): Promise<string> {
    interface Dir {
      files: TreeEntry[];
      dirs: Map<string, Dir>;
    }
    const root: Dir = { files: [], dirs: new Map() };
    const dirNode = (parts: readonly string[], n: number): Dir => {
      let d = root;
      for (let i = 0; i < n; i++) {
        let next = d.dirs.get(parts[i]);
        if (!next) d.dirs.set(parts[i], (next = { files: [], dirs: new Map() }));
        d = next;
      }
      return d;
    };
    // A file below a directory whose tree is reused (with a cache tree, most of a large clean
    // scope) needs no place in the structure: only that directory does, as an empty node that
    // write() resolves to the reused tree. The outermost reused directory, by directory, cached.
    const topReused = new Map<string, string | null>();
    const placed = new Set<string>();
    const reusedAt = (dir: string): string | null => {
      if (dir === '') return reuse.has('') ? '' : null;
      let v = topReused.get(dir);
      if (v === undefined) {
        const slash = dir.lastIndexOf('/');
        v = reusedAt(slash < 0 ? '' : dir.slice(0, slash)) ?? (reuse.has(dir) ? dir : null);
        topReused.set(dir, v);
      }
      return v;
    };
    // files sorted by path come mostly directory by directory: one decision per run of them
    let runDir: string | null = null;
    let runTop: string | null = null;
    for (const f of files) {
      let top: string | null = null;
      if (reuse.size > 0) {
        const dir = parentInRun(f.path, runDir);
        if (dir !== runDir) {
          runDir = dir;
          runTop = reusedAt(dir);
        }
        top = runTop;
      }
      if (top !== null) {
        if (top !== '' && !placed.has(top)) {
          placed.add(top);
          const p = top.split('/');
          dirNode(p, p.length);
        }
        continue;
      }
      const parts = f.path.split('/');
      dirNode(parts, parts.length - 1).files.push({ mode: f.mode, name: encodePath(parts[parts.length - 1]), oid: f.oid });
    }
    const write = async (d: Dir, path: string): Promise<string> => {
      const known = reuse.get(path);
      if (known) return known;
      const entries = [...d.files];
      for (const [name, sub] of d.dirs)
        entries.push({ mode: MODE_TREE, name: encodePath(name), oid: await write(sub, path ? `${path}/${name}` : name) });
      return out.write('tree', encodeTree(entries, this.repo.objectFormat));
    };
    return write(root, '');
  }
}

/**
 * Directories of the captured files whose content is exactly the index's, with a valid cache-tree
 * node to show for it: every captured file beneath matches its stage-0 index record (mode and id),
 * and their number is the node's entry count (so no index entry beneath is missing either).
 */
function reusableTrees(
  files: Array<{ path: string; mode: number; oid: string }>,
  state: PathState,
  cacheTree: Map<string, CacheTreeNode>,
): Map<string, string> {
  // per directory: files directly in it, and whether one of them differs from the index…
  const count = new Map<string, number>();
  const dirty = new Set<string>();
  // …counted in runs: files sorted by path come mostly directory by directory
  let runDir: string | null = null;
  let runCount = 0;
  let runDirty = false;
  const flush = () => {
    if (runDir === null) return;
    count.set(runDir, (count.get(runDir) ?? 0) + runCount);
    if (runDirty) dirty.add(runDir);
  };
  // files and index records are both sorted by path: matched side by side
  const idx = state.index;
  let j = 0;
  for (const f of files) {
    while (j < idx.length && idx[j].path !== f.path && compareRel(idx[j].path, f.path) < 0) j++;
    let clean = false;
    if (j < idx.length && idx[j].path === f.path) {
      const e = idx[j];
      let k = j + 1;
      while (k < idx.length && idx[k].path === f.path) k++;
      // one record only (no conflict stages); an intent-to-add entry is in the index but not in
      // its trees: never clean here
      clean = k === j + 1 && e.stage === 0 && !e.flags.intentToAdd && e.mode === f.mode && e.oid === f.oid;
      j = k; // consumed: the next file compares with the next record, not with this one
    }
    const dir = parentInRun(f.path, runDir);
    if (dir !== runDir) {
      flush();
      runDir = dir;
      runCount = 0;
      runDirty = false;
    }
    runCount++;
    if (!clean) runDirty = true;
  }
  flush();
  // …then each directory's totals flow to its parent, deepest first
  const dirs = [...count.keys()];
  for (const d of dirs) for (let p = parentDir(d); p !== null && !count.has(p); p = parentDir(p)) count.set(p, 0);
  const keyed = [...count.keys()].map((d) => ({ d, n: depth(d) }));
  const order = keyed.sort((a, b) => b.n - a.n).map((k) => k.d);
  for (const d of order) {
    const p = parentDir(d);
    if (p === null) continue;
    count.set(p, (count.get(p) as number) + (count.get(d) as number));
    if (dirty.has(d)) dirty.add(p);
  }
  // the roots' own tree: only a root that is a directory covering its whole index subtree ('' here stands for the worktree/ tree)
  const out = new Map<string, string>();
  for (const [dir, n] of count) {
    const node = cacheTree.get(dir);
    if (!node || node.entryCount < 0 || !node.oid || dirty.has(dir) || n !== node.entryCount) continue;
    if (!state.roots.some((r) => r === '' || dir === r || dir.startsWith(r + '/'))) continue; // only inside the scope
    out.set(dir, node.oid);
  }
  return out;
}

function parentDir(d: string): string | null {
  if (d === '') return null;
  const slash = d.lastIndexOf('/');
  return slash < 0 ? '' : d.slice(0, slash);
}

function depth(d: string): number {
  if (d === '') return 0;
  let n = 1;
  for (let i = 0; i < d.length; i++) if (d.charCodeAt(i) === 0x2f) n++;
  return n;
}

function corrupt(reason: string, commit: string): ScalpelError {
  return new ScalpelError('SNAPSHOT_CORRUPT', reason, { reason, commit });
}

/**
 * A symbolic link `git fsck` reports wherever a tree holds it (gitmodulesSymlink is an error,
 * gitignoreSymlink, gitattributesSymlink and mailmapSymlink warnings): one named as those files,
 * with git's HFS+ (ignored code points, any case) and NTFS (trailing dots and spaces, streams,
 * 8.3 short names) spellings taken broadly. Its target is kept by id, not at its path.
 */
export function fsckSpecialSymlink(path: string): boolean {
  const name = path.slice(path.lastIndexOf('/') + 1);
  // code points HFS+ ignores in names (git's next_hfs_char)
  const folded = name.replace(/[\u200c-\u200f\u202a-\u202e\u206a-\u206f\ufeff]/g, '').toLowerCase();
  return /^\.(gitmodules|gitignore|gitattributes|mailmap)/.test(folded) || name.includes('~');
}
