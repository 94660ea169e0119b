import { ScalpelError, isScalpelError } from '../errors/index.js';
import { utf8Decode, utf8Encode } from '../bytes/text.js';
import { randomHex } from '../bytes/random.js';
import { fsErrorCode, type Fs } from '../fs/types.js';
import { joinPath } from '../fs/path.js';
import { mkdirp, type Lock } from '../fs/atomic.js';
import type { HashProvider } from '../hash/index.js';
import type { ZlibProvider } from '../object/zlib.js';
import { Repository } from '../repo/repository.js';
import { discoverRepository } from '../repo/discover.js';
import { headMovement, readHead, type HeadMovement } from '../repo/history.js';
import type { ProcessInfo } from '../repo/journal.js';
import { describeDropped, type ReadIndexResult } from '../repo/index-file.js';
import type { RefTransaction } from '../repo/refs.js';
import type { ObjectBatch } from '../repo/odb.js';
import { toFs } from '../fs/adapt.js';
import { SnapshotStack, cacheTreeByPath, checkSession, type StackEntry } from '../store/stack.js';
import { captureState, sparseDirContaining } from './capture.js';
import { applyRestore, planRestore, type Conflict, type PathPlan } from './restore.js';
import { compareRel, covers, isAncestor, minimalRoots, parentOf, toScopeRoot } from './scope.js';
import { shallowestAbsent, type AbsentParents, type Manifest, type PathState } from './state.js';

export interface OpenOptions {
  /**
   * The filesystem: the Fs contract (git-scalpel/node's `nodeFs()`), a node-style fs module,
   * memfs, or an isomorphic-git-style promise fs. Anything but the contract is adapted, and what
   * it really does (symlinks, modes, exclusive create, rename of symlinks) is probed once in
   * `.git/scalpel/probe`.
   */
  fs: Fs | unknown;
  /** Any directory of the worktree; the repository is found upwards from it. */
  dir: string;
  hash?: HashProvider;
  zlib?: ZlibProvider;
  /** Clock, for tests. */
  now?: () => Date;
  /** Process information for recovering this tool's own locks after a crash (default: Node's, from git-scalpel/node). */
  proc?: ProcessInfo;
  /** Files at least this large are streamed, never held whole in memory (default 16 MiB). */
  streamThreshold?: number;
  /**
   * A snapshot (or seal, extend, prune) that writes at least this many new objects stores them
   * as one pack in `objects/pack` instead of as loose objects (default: git config
   * `scalpel.packThreshold`, else 16; Infinity: always loose). git's own `gc` folds such packs
   * together, as it does fetched ones.
   */
  packThreshold?: number;
}

export interface SnapshotOptions {
  session?: string;
  label?: string;
  /** Extend this snapshot instead of pushing a new one: paths it already holds keep their first capture. */
  into?: string;
  /** Directory relative paths are resolved from (default: the worktree root). */
  cwd?: string;
}

export interface SnapshotInfo {
  id: string;
  session: string;
  label: string | null;
  createdAt: string;
  /** The scope roots, worktree-relative ('' is the whole worktree). */
  paths: string[];
  sealed: boolean;
  /** Worktree items, index entries and bytes captured. */
  items: number;
  entries: number;
  bytes: number;
  commit: string;
  /** Problems read past (an optional index cache git would discard too); only when there are some. */
  warnings?: string[];
}

export interface RestoreOptions {
  session?: string;
  id?: string;
  dryRun?: boolean;
  force?: boolean;
}

export interface RestoreReport {
  session: string;
  /** The snapshots undone, newest first. */
  restored: string[];
  dryRun: boolean;
  /** With force: the snapshot holding what was there before, now on top of the stack. */
  savedAs: string | null;
  paths: PathPlan[];
  /** Empty directories the edit created to hold a declared path (each also in `paths`, action 'prune'): deepest first. */
  pruned: string[];
  conflicts: Conflict[];
  indexWritten: boolean;
  /** Problems read past: an optional index cache (TREE, UNTR, FSMN, EOIE, IEOT) that does not decode, left out as git leaves it out. */
  warnings: string[];
  /**
   * How HEAD moved since the (oldest restored) snapshot: the edit committed, switched branches,
   * reset. Null when it did not move, or the snapshot predates the record. The restore never
   * moves HEAD or a branch (I2); it refuses when a commit made since was pushed (I5).
   */
  head: HeadMovement | null;
}

export interface LogRecord {
  at: string;
  event: 'snapshot' | 'extend' | 'seal' | 'restore' | 'refused' | 'drop' | 'prune';
  session: string;
  ids: string[];
  paths: string[];
  detail?: Record<string, unknown>;
}

const DEFAULT_SESSION = 'default';

/** Open the repository containing `dir` for snapshots and restores. */
export async function openRepository(opts: OpenOptions): Promise<ScalpelRepository> {
  let fs: Fs;
  if (isFsContract(opts.fs)) fs = opts.fs;
  else {
    // find the repository through an unprobed adapter, then probe inside its git dir
    const loc = await discoverRepository(await toFs(opts.fs), opts.dir);
    fs = await probedFs(opts.fs, joinPath(loc.gitDir, 'scalpel', 'probe'));
  }
  const repo = await Repository.open({ fs, dir: opts.dir, hash: opts.hash, zlib: opts.zlib, proc: opts.proc, streamThreshold: opts.streamThreshold, packThreshold: opts.packThreshold });
  return new ScalpelRepository(repo, opts.now ?? (() => new Date()));
}

const probed = new WeakMap<object, Promise<Fs>>();

/** Probe a filesystem object once per process. */
function probedFs(input: unknown, probeDir: string): Promise<Fs> {
  const key = input as object;
  let p = probed.get(key);
  if (!p) {
    p = toFs(input, { probeDir });
    probed.set(key, p);
    p.catch(() => probed.delete(key));
  }
  return p;
}

function isFsContract(x: unknown): x is Fs {
  return !!x && typeof x === 'object' && 'capabilities' in x && typeof (x as Fs).lstat === 'function';
}

export class ScalpelRepository {
  constructor(
    readonly repo: Repository,
    private readonly now: () => Date,
  ) {}

  get worktree(): string {
    return this.repo.worktree;
  }

  private stack(session = DEFAULT_SESSION): SnapshotStack {
    return new SnapshotStack(this.repo, session);
  }

  /** Capture exactly `paths` (and everything beneath them): worktree bytes, modes, links, index entries, resolve-undo. */
  async snapshot(paths: readonly string[], opts: SnapshotOptions = {}): Promise<SnapshotInfo> {
    const session = opts.session ?? DEFAULT_SESSION;
    checkSession(session);
    if (paths.length === 0) throw new ScalpelError('BAD_ARGUMENT', 'snapshot needs at least one path', { name: 'paths' });
    this.repo.odb.forgetKnown();
    const cwd = opts.cwd ?? this.repo.worktree;
    const roots = minimalRoots(paths.map((p) => toScopeRoot(this.repo.worktree, cwd, p)));
    // Read as git reads it, trailer unchecked: a snapshot writes no index, and restore checks the
    // trailer of the index it is about to rewrite. Structural damage is still a typed error here.
    return this.repo.withIndex({ verify: false }, (read) => this.capture(roots, read, opts));
  }

  private async capture(roots: string[], read: ReadIndexResult | null, opts: SnapshotOptions): Promise<SnapshotInfo> {
    const session = opts.session ?? DEFAULT_SESSION;
    const indexStat = read ? read.stat : null;
    if (read) {
      for (const r of roots) {
        const d = sparseDirContaining(read.index, r);
        if (d) throw new ScalpelError('SPARSE_PATH', `'${r}' lies inside the sparse-index directory entry '${d}'; expand it first (git sparse-checkout add ${d.slice(0, -1)})`, { path: r, directory: d });
      }
    }
    // the snapshot's objects are stored together, before the ref names them (one pack when many)
    const batch = this.repo.odb.batch();
    const state = await captureState(this.repo, read?.index ?? null, roots, { writeObjects: true, indexStat, writer: batch });
    const stack = this.stack(session);
    const warnings = this.readPast(read);
    if (opts.into) return withWarnings(await this.extend(stack, opts.into, state, opts.label, batch, warnings), warnings);
    const manifest: Manifest = {
      format: 'git-scalpel/1',
      id: newId(),
      session,
      worktreeId: this.repo.worktreeId,
      objectFormat: this.repo.objectFormat,
      label: opts.label ?? null,
      createdAt: this.now().toISOString(),
      captured: state,
      seal: null,
      head: await readHead(this.repo),
    };
    // push: one commit on top of the head, under the session's ref lock (concurrent pushes queue up)
    // for a scope of a few files, writing their trees costs less than mapping the index's cache tree
    const tree = state.items.length > 64 ? read?.index.extensions.find((x) => x.signature === 'TREE') : undefined;
    const cacheTree = tree && 'nodes' in tree ? cacheTreeByPath(tree.nodes) : undefined;
    const commit = await stack.locked(async (tx) => {
      const c = await stack.writeCommit(manifest, tx.current, cacheTree, batch);
      await batch.flush();
      await tx.set(c);
      return c;
    });
    await this.appendLog({ event: 'snapshot', session, ids: [manifest.id], paths: roots, detail: { label: manifest.label, ...logWarnings(warnings) } });
    return withWarnings(info(manifest, commit), warnings);
  }

  private async extend(stack: SnapshotStack, id: string, state: PathState, label: string | undefined, batch: ObjectBatch, warnings: string[]): Promise<SnapshotInfo> {
    return stack.locked(async (tx) => {
      const chain = await stack.downTo(id, tx.current);
      const target = chain[chain.length - 1];
      const old = target.manifest.captured;
      const isNew = (p: string) => !old.roots.some((r) => covers(r, p));
      // the first capture of a path wins: what lay in a directory that was absent then (created to
      // hold an earlier root) was absent too, whatever a wider root finds there now
      const absentThen = (old.absentParents ?? []).map((a) => shallowestAbsent(a));
      const wasAbsent = (p: string) => absentThen.some((d) => covers(d, p));
      const roots = minimalRoots([...old.roots, ...state.roots]);
      const captured: PathState = {
        roots,
        items: [...old.items, ...state.items.filter((i) => isNew(i.path) && !wasAbsent(i.path))],
        index: [...old.index, ...state.index.filter((e) => isNew(e.path))],
        reuc: [...old.reuc, ...state.reuc.filter((r) => isNew(r.path))],
      };
      const absentParents = mergeAbsentParents(roots, new Set(old.roots), old.absentParents ?? [], state.absentParents ?? []);
      if (absentParents.length) captured.absentParents = absentParents;
      const byPath = (a: { path: string }, b: { path: string }) => compareRel(a.path, b.path);
      captured.items.sort(byPath);
      captured.index.sort((a, b) => byPath(a, b) || a.stage - b.stage);
      captured.reuc.sort(byPath);
      const manifest: Manifest = { ...target.manifest, captured, seal: null, label: label ?? target.manifest.label };
      const { commit } = await stack.replace(tx, chain, target, manifest, batch);
      await this.appendLog({ event: 'extend', session: stack.session, ids: [manifest.id], paths: state.roots, ...logDetail(warnings) });
      return info(manifest, commit);
    });
  }

  /** Record what the edit left in the snapshot's scope, so a later restore can tell a third party's write. */
  async seal(opts: { session?: string; id?: string } = {}): Promise<SnapshotInfo> {
    this.repo.odb.forgetKnown();
    const stack = this.stack(opts.session);
    return stack.locked(async (tx) => {
      const chain = opts.id ? await stack.downTo(opts.id, tx.current) : await stack.walk(() => true, tx.current);
      const target = chain[chain.length - 1];
      if (!target) throw new ScalpelError('SNAPSHOT_NOT_FOUND', `no snapshot to seal in session '${stack.session}'`, { session: stack.session });
      let warnings: string[] = [];
      const state = await this.repo.withIndex({ verify: false }, (read) => {
        warnings = this.readPast(read);
        return captureState(this.repo, read?.index ?? null, target.manifest.captured.roots, { writeObjects: false, indexStat: read?.stat ?? null });
      });
      const manifest: Manifest = { ...target.manifest, seal: { sealedAt: this.now().toISOString(), state } };
      const { commit } = await stack.replace(tx, chain, target, manifest);
      await this.appendLog({ event: 'seal', session: stack.session, ids: [manifest.id], paths: state.roots, ...logDetail(warnings) });
      return withWarnings(info(manifest, commit), warnings);
    });
  }

  /**
   * Undo the newest snapshot of the session (or `id` and every later one, newest first) and
   * remove them from the stack. Refuses (REFUSED, exit 3) when a sealed path changed since its
   * seal, unless `force`, which first saves the current state as a new snapshot.
   */
  async restore(opts: RestoreOptions = {}): Promise<RestoreReport> {
    this.repo.odb.forgetKnown();
    const stack = this.stack(opts.session);
    const session = stack.session;
    if (opts.dryRun) {
      const chain = await this.restoreChain(stack, opts.id, await stack.head());
      // the trailer is checked as the restore itself would check it
      let warnings: string[] = [];
      const head = await this.headCheck(chain[chain.length - 1]);
      const plan = await this.repo.withIndex({}, (read) => {
        warnings = this.readPast(read);
        return planRestore(this.repo, chain, read, read?.stat ?? null);
      });
      if (head) warnings.push(...head.warnings);
      return { session, restored: chain.map((e) => e.manifest.id), dryRun: true, savedAs: null, paths: plan.paths, pruned: plan.pruned, conflicts: plan.conflicts, indexWritten: false, warnings, head };
    }
    return stack.locked(async (tx) => {
      const chain = await this.restoreChain(stack, opts.id, tx.current);
      const ids = chain.map((e) => e.manifest.id);
      const oldest = chain[chain.length - 1];
      const lock = await this.repo.lockIndex().catch(async (e: unknown) => {
        if (e instanceof ScalpelError && e.code === 'INDEX_LOCKED') {
          await this.appendLog({ event: 'refused', session, ids, paths: oldest.manifest.captured.roots, detail: { reason: 'index-locked' } });
        }
        throw e;
      });
      try {
        // verified before anything is planned, let alone written: a corrupt index is never rewritten
        return await this.repo.withIndex({ verify: true }, (read) => this.restoreLocked(stack, tx, chain, lock, read, opts));
      } finally {
        await lock.release();
      }
    });
  }

  private async restoreLocked(stack: SnapshotStack, tx: RefTransaction, chain: StackEntry[], lock: Lock, read: ReadIndexResult | null, opts: RestoreOptions): Promise<RestoreReport> {
    const session = stack.session;
    const ids = chain.map((e) => e.manifest.id);
    const oldest = chain[chain.length - 1];
    const indexStat = read?.stat ?? null;
    const warnings = this.readPast(read);
    // what the edit committed: one ref read when HEAD did not move
    const head = await this.headCheck(oldest);
    if (head) warnings.push(...head.warnings);
    if (head && headRefusal(head) && !opts.force) {
      await this.appendLog({ event: 'refused', session, ids, paths: oldest.manifest.captured.roots, detail: { reason: head.complete ? 'pushed' : 'history-unknown', head: logHead(head), ...logWarnings(warnings) } });
      throw pushedRefusal(head, session);
    }
    const plan = await planRestore(this.repo, chain, read, indexStat);
    if (plan.conflicts.length && !opts.force) {
      await this.appendLog({ event: 'refused', session, ids, paths: plan.conflicts.map((c) => c.path), detail: { conflicts: plan.conflicts, ...logWarnings(warnings) } });
      throw refusal(plan.conflicts, session);
    }
    let saved: Manifest | null = null;
    let savedCommit: string | null = null;
    if (opts.force) {
      const batch = this.repo.odb.batch();
      const state = await captureState(this.repo, read?.index ?? null, plan.roots, { writeObjects: true, indexStat, writer: batch });
      saved = {
        format: 'git-scalpel/1',
        id: newId(),
        session,
        worktreeId: this.repo.worktreeId,
        objectFormat: this.repo.objectFormat,
        label: `state before forced restore of ${ids.join(', ')}`,
        createdAt: this.now().toISOString(),
        captured: state,
        seal: null,
        head: await readHead(this.repo),
      };
      savedCommit = await stack.writeCommit(saved, oldest.parent, undefined, batch);
      // stored before the worktree is touched: a failure here leaves everything as it was
      await batch.flush();
    }
    const { indexWritten } = await applyRestore(this.repo, plan, read, lock, indexStat);
    await tx.set(savedCommit ?? oldest.parent);
    await this.appendLog({ event: 'restore', session, ids, paths: plan.roots, detail: { savedAs: saved?.id ?? null, changed: plan.paths.map((p) => p.path), pruned: plan.pruned, ...(head ? { head: logHead(head) } : {}), ...logWarnings(warnings) } });
    return { session, restored: ids, dryRun: false, savedAs: saved?.id ?? null, paths: plan.paths, pruned: plan.pruned, conflicts: plan.conflicts, indexWritten, warnings, head };
  }

  /**
   * How HEAD moved since `oldest` was taken (null: it did not, or the snapshot has no record). A
   * snapshot's HEAD commit that is gone from the repository leaves the answer incomplete.
   */
  private async headCheck(oldest: StackEntry): Promise<HeadMovement | null> {
    const then = oldest.manifest.head;
    if (!then) return null;
    try {
      const m = await headMovement(this.repo, then);
      if (m && !m.complete && (await this.repo.refs.list('refs/remotes/')).size === 0) return { ...m, complete: true };
      return m;
    } catch (e) {
      if (!(isScalpelError(e, 'OBJECT_NOT_FOUND') && e.data.role === 'from')) throw e;
      const to = await readHead(this.repo);
      const remotes = (await this.repo.refs.list('refs/remotes/')).size;
      return { from: then, to, branchChanged: then.ref !== to.ref, newCommits: [], count: 0, complete: remotes === 0, pushed: [], visited: 0, warnings: [e.message] };
    }
  }

  private async restoreChain(stack: SnapshotStack, id: string | undefined, head: string | null): Promise<StackEntry[]> {
    const chain = id ? await stack.downTo(id, head) : await stack.walk(() => true, head);
    if (chain.length === 0) throw new ScalpelError('SNAPSHOT_NOT_FOUND', `nothing to restore: session '${stack.session}' has no snapshots`, { session: stack.session });
    return chain;
  }

  async list(opts: { session?: string } = {}): Promise<SnapshotInfo[]> {
    return (await this.stack(opts.session).walk()).map((e) => info(e.manifest, e.commit));
  }

  async show(opts: { session?: string; id: string }): Promise<Manifest & { commit: string }> {
    const chain = await this.stack(opts.session).downTo(opts.id);
    const e = chain[chain.length - 1];
    return { ...e.manifest, commit: e.commit };
  }

  /** Remove snapshots from the stack without restoring them (their objects become unreachable). */
  async drop(opts: { session?: string; id?: string; all?: boolean }): Promise<string[]> {
    this.repo.odb.forgetKnown();
    const stack = this.stack(opts.session);
    if (!opts.all && !opts.id) throw new ScalpelError('BAD_ARGUMENT', 'drop needs an id or all', { name: 'id' });
    return stack.locked(async (tx) => {
      if (opts.all) {
        const all = await stack.walk(undefined, tx.current);
        if (all.length) await tx.set(null);
        const ids = all.map((e) => e.manifest.id);
        await this.appendLog({ event: 'drop', session: stack.session, ids, paths: [] });
        return ids;
      }
      const chain = await stack.downTo(opts.id as string, tx.current);
      const target = chain[chain.length - 1];
      await stack.remove(tx, chain, target);
      await this.appendLog({ event: 'drop', session: stack.session, ids: [target.manifest.id], paths: target.manifest.captured.roots });
      return [target.manifest.id];
    });
  }

  /** Keep the newest `keep` snapshots of the session; drop the older ones. */
  async prune(opts: { session?: string; keep: number }): Promise<string[]> {
    this.repo.odb.forgetKnown();
    if (!Number.isInteger(opts.keep) || opts.keep < 0) throw new ScalpelError('BAD_ARGUMENT', `--keep must be a whole number, got ${opts.keep}`, { name: 'keep' });
    const stack = this.stack(opts.session);
    return stack.locked(async (tx) => {
      const all = await stack.walk(undefined, tx.current);
      if (all.length <= opts.keep) return [];
      const dropped = all.slice(opts.keep).map((e) => e.manifest.id);
      let parent: string | null = null;
      const batch = this.repo.odb.batch();
      for (let i = opts.keep - 1; i >= 0; i--) parent = await stack.writeCommit(all[i].manifest, parent, undefined, batch);
      await batch.flush();
      await tx.set(parent);
      await this.appendLog({ event: 'prune', session: stack.session, ids: dropped, paths: [] });
      return dropped;
    });
  }

  /** Every snapshot, seal, restore and refusal of the session, oldest first. */
  async log(opts: { session?: string } = {}): Promise<LogRecord[]> {
    return this.readLog(opts.session ?? DEFAULT_SESSION);
  }

  private logDir(session: string): string {
    return joinPath(this.repo.stateDir, 'log', session);
  }

  /**
   * One small file per event (names sort by time): appending never rewrites a growing file.
   * Best effort: the log records what happened, it never decides whether it happens, so a failed
   * append is reported in `warnings` instead of failing a snapshot or restore that is done.
   */
  private async appendLog(rec: Omit<LogRecord, 'at'>): Promise<void> {
    try {
      const at = this.now().toISOString();
      const dir = this.logDir(rec.session);
      if (!this.logDirs.has(dir)) {
        await mkdirp(this.repo.fs, dir);
        this.logDirs.add(dir);
      }
      // a new file written once: a record cut short by a crash is skipped when the log is read
      const name = `${at.replace(/[:.]/g, '-')}-${newId()}.json`;
      const data = utf8Encode(JSON.stringify({ at, ...rec }));
      try {
        await this.repo.fs.writeFile(joinPath(dir, name), data, { mode: 0o644, exclusive: true });
      } catch (e) {
        if (fsErrorCode(e) !== 'ENOENT') throw e;
        await mkdirp(this.repo.fs, dir); // the log directory was removed meanwhile
        await this.repo.fs.writeFile(joinPath(dir, name), data, { mode: 0o644, exclusive: true });
      }
    } catch (e) {
      this.warnings.push(`could not append to the log: ${(e as Error).message}`);
    }
  }

  private readonly logDirs = new Set<string>();

  /** Problems that did not stop an operation (a log record that could not be written). Cleared by takeWarnings(). */
  private warnings: string[] = [];

  /**
   * The optional index caches a read left out (git discards them too: DESIGN "Read what git
   * reads"), as warnings: kept for takeWarnings() and returned for the report and the log.
   */
  private readPast(read: ReadIndexResult | null): string[] {
    if (!read || read.dropped.length === 0) return [];
    const list = read.dropped.map(describeDropped);
    this.warnings.push(...list);
    return list;
  }

  takeWarnings(): string[] {
    return this.warnings.splice(0);
  }

  private async readLog(session: string): Promise<LogRecord[]> {
    checkSession(session);
    const dir = this.logDir(session);
    if (!(await this.repo.fs.lstat(dir))) return [];
    const names = (await this.repo.fs.readdir(dir)).filter((n) => n.endsWith('.json')).sort();
    const out: LogRecord[] = [];
    for (const n of names) {
      try {
        out.push(JSON.parse(utf8Decode(await this.repo.fs.readFile(joinPath(dir, n)))) as LogRecord);
      } catch {
        // a record cut short by a crash is skipped, not fatal
      }
    }
    return out;
  }
}

function refusal(conflicts: Conflict[], session: string): ScalpelError {
  const lines = conflicts.map((c) => `  ${c.path} (${c.part}): sealed ${c.expected}, found ${c.found}`);
  return new ScalpelError(
    'REFUSED',
    `restore refused: ${conflicts.length} path(s) changed after the snapshot was sealed (someone else wrote them):\n${lines.join('\n')}\n` +
      `Nothing was written. To overwrite them anyway, run restore again with --force; their current state is saved first as a new snapshot on session '${session}', so the forced restore can be undone with another restore.`,
    { conflicts, session },
  );
}

/** Does HEAD's movement make a restore unsafe (I5): commits made since were pushed, or that cannot be told? */
export function headRefusal(h: HeadMovement): boolean {
  return h.pushed.length > 0 || !h.complete;
}

function short(oid: string): string {
  return oid.slice(0, 12);
}

function pushedRefusal(h: HeadMovement, session: string): ScalpelError {
  const lines = h.pushed.map((p) => `  ${p.ref}: ${p.commits.map(short).join(', ')}`);
  const why = h.complete
    ? `${h.pushed.length === 1 ? 'a remote-tracking ref holds' : `${h.pushed.length} remote-tracking refs hold`} commits made since the snapshot:\n${lines.join('\n')}\n` +
      'Putting the files back here would leave the remote holding the version being undone; that is for the people sharing the branch to decide (git revert, or rewriting the remote).'
    : `HEAD moved from ${h.from.commit ? short(h.from.commit) : 'an unborn branch'} to ${h.to.commit ? short(h.to.commit) : 'an unborn branch'} and the commits in between could not all be examined (${h.warnings[0] ?? 'the walk stopped at its limit'}), so whether they were pushed is unknown.`;
  return new ScalpelError('REFUSED', `restore refused: ${why}\nNothing was written. To restore the paths anyway (HEAD and branches stay where they are), run restore again with --force; the current state is saved first as a new snapshot on session '${session}'.`, {
    reason: h.complete ? 'pushed' : 'history-unknown',
    pushed: h.pushed,
    head: { from: h.from, to: h.to, count: h.count },
    session,
    conflicts: [],
  });
}

/** HEAD's movement as the log keeps it. */
function logHead(h: HeadMovement): Record<string, unknown> {
  return { from: h.from, to: h.to, count: h.count, complete: h.complete, pushed: h.pushed.map((p) => p.ref) };
}

function withWarnings(i: SnapshotInfo, warnings: string[]): SnapshotInfo {
  return warnings.length ? { ...i, warnings } : i;
}

/** A log record's detail naming what was read past, or nothing. */
function logWarnings(warnings: string[]): { warnings?: string[] } {
  return warnings.length ? { warnings } : {};
}

function logDetail(warnings: string[]): { detail?: Record<string, unknown> } {
  return warnings.length ? { detail: { warnings } } : {};
}

function info(m: Manifest, commit: string): SnapshotInfo {
  let bytes = 0;
  for (const i of m.captured.items) if (i.kind === 'file') bytes += i.size;
  return {
    id: m.id,
    session: m.session,
    label: m.label,
    createdAt: m.createdAt,
    paths: m.captured.roots,
    sealed: m.seal !== null,
    items: m.captured.items.length,
    entries: m.captured.index.length,
    bytes,
    commit,
  };
}

/**
 * The absent-parent records of an extended snapshot's roots. A root the snapshot had keeps its
 * record; a new root that took in earlier ones, whose parent was absent at their capture, takes
 * their record (the first capture wins); any other new root has what its own capture found.
 */
function mergeAbsentParents(roots: readonly string[], oldRoots: ReadonlySet<string>, old: readonly AbsentParents[], now: readonly AbsentParents[]): AbsentParents[] {
  const out: AbsentParents[] = [];
  for (const root of roots) {
    const rec = oldRoots.has(root)
      ? old.find((a) => a.root === root)
      : (old.find((a) => covers(root, a.root) && isAncestor(a.existing, parentOf(root))) ?? now.find((a) => a.root === root));
    if (rec) out.push({ root, existing: rec.existing });
  }
  return out;
}

function newId(): string {
  return randomHex(4);
}

export type { StackEntry };
