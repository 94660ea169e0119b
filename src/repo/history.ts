/**
 * Where HEAD is, and what happened to it since a snapshot: the commits an edit made (I2) and
 * whether any of them was pushed (I5: then a restore must refuse, since a silent local revert
 * would leave the remote holding the broken version).
 *
 * Cost is the point. A restore asks this every time, and HEAD usually has not moved: that
 * answer costs reading HEAD and the branch it names, never an object. When HEAD did move, the
 * walk is bounded by time: only commits whose committer date is no older than the snapshot's
 * commit are entered (older ones were not made since the snapshot), so an agent's three commits
 * on top of a 100,000-commit history cost a handful of commit reads, and a hard cap turns a
 * runaway walk into `complete: false` instead of a hang. With a commit-graph file, parents,
 * dates and generation numbers come from it and no object is inflated for the commits it holds;
 * it is loaded only once a walk grows past a few dozen commits (`commitGraphAfter`), because
 * loading it reads and checks the whole file, which costs more than a short walk's few reads.
 *
 * Reading refs follows git's files backend: HEAD and the per-worktree refs (refs/worktree/,
 * refs/bisect/, refs/rewritten/) live in the worktree's own git dir, every other ref in the
 * common dir, loose first, then packed-refs; symbolic refs are followed up to git's
 * SYMREF_MAXDEPTH (5). Nothing here writes.
 */
import { isHex } from '../bytes/hex.js';
import { decodePath, utf8Decode } from '../bytes/text.js';
import { isScalpelError, ScalpelError } from '../errors/index.js';
import { joinPath } from '../fs/path.js';
import { fsErrorCode } from '../fs/types.js';
import { commitLinks } from '../object/commit.js';
import { CommitGraph, parseCommitGraphLayer, type CommitGraphLayer } from '../object/commit-graph.js';
import { checkRefName } from './refs.js';
import type { Repository } from './repository.js';

/** What this module reads of a repository. */
export type HistoryRepo = Pick<Repository, 'fs' | 'loc' | 'refs' | 'odb' | 'objectFormat' | 'config' | 'hash'>;

/** HEAD at one moment: the branch it names (null when detached) and the commit (null when that branch is unborn). */
export interface HeadState {
  ref: string | null;
  commit: string | null;
  /**
   * The size in bytes of HEAD's reflog (`logs/HEAD` of the worktree) then: the entries after it
   * are what moved HEAD since (commitsMadeSince). Absent when there was no reflog (or in
   * snapshots made before it was recorded).
   */
  log?: number;
}

export interface PushedCommits {
  /** A remote-tracking ref, e.g. `refs/remotes/origin/main`. */
  ref: string;
  /** The new commits it reaches, newest first (in `newCommits` order). */
  commits: string[];
}

export interface HeadMovement {
  from: HeadState;
  to: HeadState;
  /** HEAD names another branch than it did (or went from a branch to detached, or back). */
  branchChanged: boolean;
  /**
   * Commits reachable from `to.commit` and not from `from.commit`, newest first, made since the
   * snapshot: commits with a committer date older than the snapshot's commit (or `since`) are
   * not counted (switching to an old branch makes none). Empty when `to.commit` is null.
   */
  newCommits: string[];
  count: number;
  /**
   * False when the walk stopped at `maxCommits`: newCommits and pushed are then what was found
   * before the stop — they may miss commits (and, the snapshot's side not being fully painted,
   * list some that are not new) — and a caller deciding whether it is safe to restore must
   * treat the answer as unknown.
   */
  complete: boolean;
  /** Each remote-tracking ref that reaches any new commit, and which ones (sorted by ref name). */
  pushed: PushedCommits[];
  /** Commits examined (from the commit-graph or read as objects) by both walks. */
  visited: number;
  /** What was ignored on the way, e.g. a commit-graph file that does not parse (git warns and ignores it). */
  warnings: string[];
}

export interface HeadMovementOptions {
  /** Stop after examining this many commits and report complete: false. Default 100,000. */
  maxCommits?: number;
  /**
   * Snapshot time, seconds since the epoch: commits with an older committer date were not made
   * since the snapshot either, even when newer than the snapshot's commit (a branch committed
   * between that commit and the snapshot, then merged by the edit). Raises the bound, never lowers it.
   */
  since?: number;
  /**
   * How to use the repository's commit-graph: 'verify' (default) checks each file's trailing
   * hash before trusting it, 'trust' does as git does (no hash check, structure still
   * validated), 'off' reads every commit from the object database.
   */
  commitGraph?: 'verify' | 'trust' | 'off';
  /**
   * Commits read as objects before the commit-graph is loaded (default 64). Loading it reads and
   * checks the whole file — about 2 ms per 10,000 commits — while a short walk (an edit's few
   * commits) costs a few object reads; a long walk loads it and reads the rest from it.
   */
  commitGraphAfter?: number;
  /**
   * The commits the edit made (commitsMadeSince, from HEAD's reflog): then these are the new
   * commits, whatever their dates say, and only they are looked for on remote-tracking refs
   * (a pull's fast-forward to someone else's pushed commits is no push of the edit's). Without
   * it: the commits reachable from HEAD now and not then, dated no older than the snapshot's.
   */
  made?: readonly string[];
  /**
   * Without `made`: every commit reachable from HEAD now and not then, whatever its date (no
   * bound by the snapshot's commit or `since`). For when HEAD's reflog cannot tell which commits
   * were made since (rewritten, or entries expired): a commit made with a clock set back is
   * dated before the snapshot, and `git gc` expires its reflog entry by that date, so dates
   * cannot be trusted either.
   */
  undated?: boolean;
}

const SYMREF_MAXDEPTH = 5;
const PER_WORKTREE_PREFIXES = ['refs/worktree/', 'refs/bisect/', 'refs/rewritten/'];
const DEFAULT_MAX_COMMITS = 100_000;
const DEFAULT_GRAPH_AFTER = 64;
/** Annotated tags peeled on a remote-tracking ref's way to its commit (a tag of a tag of …). */
const MAX_PEEL = 10;

function hexLengthOf(repo: HistoryRepo): 40 | 64 {
  return repo.objectFormat === 'sha256' ? 64 : 40;
}

function badRef(name: string, path: string, message: string, reason = 'bad-ref'): ScalpelError {
  return new ScalpelError('BAD_OBJECT', `${name} (${path}): ${message}`, { ref: name, path, reason });
}

type LooseRef = { kind: 'symbolic'; target: string } | { kind: 'direct'; oid: string };

/** A file's bytes, or null when it is not there. */
async function readIfThere(repo: HistoryRepo, path: string): Promise<Uint8Array | null> {
  try {
    return await repo.fs.readFile(path);
  } catch (e) {
    if (isMissing(e)) return null;
    throw e;
  }
}

function isMissing(e: unknown): boolean {
  const c = fsErrorCode(e);
  return c === 'ENOENT' || c === 'ENOTDIR';
}

/** A symbolic ref's target, checked as git's check_refname_format would (HEAD's must be under refs/). */
function checkTarget(name: string, path: string, target: string): string {
  try {
    checkRefName(target);
  } catch (e) {
    if (isScalpelError(e, 'BAD_ARGUMENT'))
      throw badRef(name, path, `points at an invalid ref name ${JSON.stringify(target.slice(0, 200))}`);
    throw e;
  }
  return target;
}

/**
 * One loose ref file, not followed: null when there is none (a directory in its place is no
 * ref either: `refs/heads/a` when `refs/heads/a/b` exists). A symlink whose target starts
 * with `refs/` is a symbolic ref, as git's files backend still reads one.
 */
async function readLooseRef(repo: HistoryRepo, path: string, name: string): Promise<LooseRef | null> {
  const st = await repo.fs.lstat(path);
  if (!st || st.type === 'directory') return null;
  if (st.type === 'symlink') {
    const link = await repo.fs.readlink(path);
    if (link.startsWith('refs/')) return { kind: 'symbolic', target: checkTarget(name, path, link) };
  }
  // null: removed between the lstat and the read (a concurrent update renames over it, a delete unlinks it)
  const bytes = await readIfThere(repo, path);
  if (!bytes) return null;
  const text = utf8Decode(bytes);
  if (text.startsWith('ref:')) {
    const target = text.slice(4).trim();
    return { kind: 'symbolic', target: checkTarget(name, path, target) };
  }
  // git's parse_loose_ref_contents: an id, then nothing or whitespace
  const hexLen = hexLengthOf(repo);
  const oid = text.slice(0, hexLen);
  const rest = text.slice(hexLen);
  if (!isHex(oid, hexLen) || (rest.length > 0 && !/^\s/.test(rest))) {
    throw badRef(name, path, `holds neither an object id nor "ref: <name>": ${JSON.stringify(text.slice(0, 80))}`);
  }
  return { kind: 'direct', oid: oid.toLowerCase() };
}

function checkRefBackend(repo: HistoryRepo): void {
  const storage = repo.config.getString('extensions.refStorage');
  if (storage !== undefined && storage.toLowerCase() !== 'files') {
    throw new ScalpelError('UNSUPPORTED', `refs stored as ${storage} cannot be read (only the files backend)`, {
      capability: `refStorage=${storage}`,
    });
  }
}

/**
 * HEAD of this worktree: `{ ref: 'refs/heads/x', commit }` on a branch (commit null when the
 * branch is unborn), `{ ref: null, commit }` when detached. The ref named is the last of a
 * symbolic chain, the branch `git status` reports. Reads HEAD and the branch's loose file, or
 * packed-refs when there is none. Errors: NOT_A_REPOSITORY (`no-head`), BAD_OBJECT (`bad-ref`:
 * HEAD or a ref holds garbage or names an invalid ref; `symref-loop`: more than 5 levels),
 * UNSUPPORTED (a ref backend other than files).
 */
export async function readHead(repo: HistoryRepo): Promise<HeadState> {
  checkRefBackend(repo);
  const headPath = joinPath(repo.loc.gitDir, 'HEAD');
  const head = await readLooseRef(repo, headPath, 'HEAD');
  if (!head) throw new ScalpelError('NOT_A_REPOSITORY', `no HEAD file in ${repo.loc.gitDir}`, { path: headPath, reason: 'no-head' });
  if (head.kind === 'direct') return { ref: null, commit: head.oid };
  let name = head.target;
  // HEAD was the first of git's SYMREF_MAXDEPTH reads
  for (let depth = 1; depth < SYMREF_MAXDEPTH; depth++) {
    const perWorktree = PER_WORKTREE_PREFIXES.some((p) => name.startsWith(p));
    const path = joinPath(perWorktree ? repo.loc.gitDir : repo.loc.commonDir, name);
    const loose = await readLooseRef(repo, path, name);
    if (loose?.kind === 'symbolic') {
      name = loose.target;
      continue;
    }
    if (loose) return { ref: name, commit: loose.oid };
    // per-worktree refs are never packed (git's pack-refs leaves them loose)
    if (perWorktree) return { ref: name, commit: null };
    const packed = await readPacked(repo, name);
    return { ref: name, commit: packed };
  }
  throw badRef(name, joinPath(repo.loc.commonDir, name), `symbolic refs nest deeper than ${SYMREF_MAXDEPTH} levels`, 'symref-loop');
}

/** readHead, with the size of HEAD's reflog at that moment (HeadState.log). */
export async function readHeadWithLog(repo: HistoryRepo): Promise<HeadState> {
  const head = await readHead(repo);
  const st = await repo.fs.lstat(joinPath(repo.loc.gitDir, 'logs', 'HEAD'));
  return st && st.type === 'file' ? { ...head, log: st.size } : head;
}

/** Reflog messages of HEAD moves that make no commit: a switch, a reset, a fast-forward, a rebase's start and end. */
const MOVES_ONLY = [
  /^checkout: /,
  /^reset: /,
  /^[^:]*: [Ff]ast-forward/,
  /^(pull --rebase|rebase( -i| -m)?) \((start|finish|abort|skip)\)/,
  /^branch: /,
  /^clone: /,
  /^fetch\b/,
  /^update by push/,
];

/**
 * The commits HEAD's reflog says were made since `then` was taken (its entries after
 * `then.log` bytes, each entry's new commit when its message is not a mere move: a commit, an
 * amend, a merge commit, a cherry-pick, a revert, a rebase's picks), newest first. A pull's
 * fast-forward to someone else's commits makes none; a commit made on a clock set in the past
 * is still one (the entries are told by position, not time). Null when the reflog cannot tell:
 * none recorded then, or the file was rewritten since (expired, shorter, its entry at that
 * point not the snapshot's commit).
 */
export async function commitsMadeSince(repo: HistoryRepo, then: HeadState): Promise<string[] | null> {
  if (then.log === undefined) return null;
  const bytes = await readIfThere(repo, joinPath(repo.loc.gitDir, 'logs', 'HEAD'));
  if (!bytes) return null;
  if (bytes.length < then.log || (then.log > 0 && bytes[then.log - 1] !== 0x0a)) return null;
  const hexLen = hexLengthOf(repo);
  const parse = (line: string) => {
    const m = /^([0-9a-f]+) ([0-9a-f]+) [^\t]*\t?(.*)$/.exec(line);
    return m && m[1].length === hexLen && m[2].length === hexLen ? { old: m[1], new: m[2], message: m[3] } : null;
  };
  const before = decodePath(bytes.subarray(0, then.log))
    .split('\n')
    .filter((l) => l !== '');
  const last = before.length ? parse(before[before.length - 1]) : null;
  const zero = '0'.repeat(hexLen);
  // the entry at that point must be where HEAD then was (an unborn HEAD has none)
  if (before.length > 0 && (!last || last.new !== (then.commit ?? zero))) return null;
  const made: string[] = [];
  for (const line of decodePath(bytes.subarray(then.log)).split('\n')) {
    if (line === '') continue;
    const e = parse(line);
    if (!e) return null;
    if (e.new === e.old || e.new === zero || MOVES_ONLY.some((r) => r.test(e.message))) continue;
    if (!made.includes(e.new)) made.push(e.new);
  }
  return made.reverse();
}

async function readPacked(repo: HistoryRepo, name: string): Promise<string | null> {
  let oid: string | null;
  try {
    oid = await repo.refs.read(name);
  } catch (e) {
    // a loose symbolic ref appeared since we looked: the packed value is shadowed, the ref is not ours to chase now
    if (isScalpelError(e, 'UNSUPPORTED')) return null;
    throw e;
  }
  if (oid !== null && !isHex(oid, hexLengthOf(repo)))
    throw badRef(
      name,
      joinPath(repo.loc.commonDir, 'packed-refs'),
      `packed-refs holds no object id for it: ${JSON.stringify(oid.slice(0, 80))}`,
    );
  return oid;
}

function checkHeadState(name: string, s: unknown, hexLen: number): HeadState {
  const st = s as HeadState | null;
  const ok =
    st !== null &&
    typeof st === 'object' &&
    (st.ref === null || typeof st.ref === 'string') &&
    (st.commit === null || (typeof st.commit === 'string' && st.commit.length === hexLen && /^[0-9a-f]+$/.test(st.commit))) &&
    (st.log === undefined || (Number.isSafeInteger(st.log) && st.log >= 0));
  if (!ok)
    throw new ScalpelError('BAD_ARGUMENT', `${name} is not a HeadState ({ ref: string | null, commit: lowercase object id | null })`, {
      name,
      reason: 'bad-head-state',
      value: s,
    });
  return st;
}

// ───────────────────────────────────────────────────────────────────────────── commit-graph

/**
 * The repository's commit-graph, as git's prepare_commit_graph finds it: the single file
 * `objects/info/commit-graph`, else the chain in `objects/info/commit-graphs/`. What does not
 * parse is ignored with a warning (git warns and walks without it); of a chain, the layers
 * that load from the base up are used, as git keeps the prefix it could load. Null when there
 * is none, when `core.commitGraph` is false, or when the repository is shallow (git then
 * ignores the graph, whose parents would disagree with the shallow boundary).
 */
export async function loadCommitGraph(
  repo: HistoryRepo,
  opts: { verify?: boolean } = {},
): Promise<{ graph: CommitGraph | null; warnings: string[] }> {
  const warnings: string[] = [];
  const none = { graph: null, warnings };
  let enabled = true;
  try {
    enabled = repo.config.getBool('core.commitGraph', true);
  } catch {
    warnings.push('core.commitGraph is not a boolean; using the commit-graph as git does by default');
  }
  if (!enabled) return none;
  const verifyChecksum = opts.verify !== false;
  const infoDir = joinPath(repo.loc.commonDir, 'objects', 'info');
  const readIfFile = async (path: string): Promise<Uint8Array | null> => {
    try {
      const st = await repo.fs.lstat(path);
      if (!st || st.type !== 'file') return null;
      return await repo.fs.readFile(path);
    } catch (e) {
      if (isMissing(e)) return null;
      warnings.push(`cannot read ${path}: ${(e as Error).message}`);
      return null;
    }
  };
  const single = joinPath(infoDir, 'commit-graph');
  const bytes = await readIfFile(single);
  if (bytes) {
    try {
      const layer = parseCommitGraphLayer(bytes, repo.objectFormat, { verifyChecksum, hash: repo.hash });
      return { graph: new CommitGraph([layer]), warnings };
    } catch (e) {
      if (!(e instanceof ScalpelError)) throw e;
      warnings.push(`ignoring ${single}: ${e.message}`);
    }
  }
  const graphsDir = joinPath(infoDir, 'commit-graphs');
  const chainPath = joinPath(graphsDir, 'commit-graph-chain');
  const chain = await readIfFile(chainPath);
  if (!chain) return none;
  const hexLen = hexLengthOf(repo);
  const layers: CommitGraphLayer[] = [];
  let below = 0;
  for (const line of decodePath(chain).split('\n')) {
    const name = line.trim();
    if (name === '') continue;
    if (!isHex(name, hexLen)) {
      warnings.push(`ignoring the rest of ${chainPath}: ${JSON.stringify(name.slice(0, 80))} is not a graph name`);
      break;
    }
    const path = joinPath(graphsDir, `graph-${name.toLowerCase()}.graph`);
    const layerBytes = await readIfFile(path);
    if (!layerBytes) {
      warnings.push(`commit-graph chain ${chainPath}: ${path} is missing; using the ${layers.length} layers below it`);
      break;
    }
    try {
      const layer = parseCommitGraphLayer(layerBytes, repo.objectFormat, { verifyChecksum, hash: repo.hash, baseCount: below });
      if (layer.checksum !== name.toLowerCase())
        throw new ScalpelError('BAD_OBJECT', `its checksum is ${layer.checksum}`, { reason: 'base' });
      if (layer.bases.length !== layers.length || layer.bases.some((b, j) => b !== layers[j].checksum)) {
        throw new ScalpelError('BAD_OBJECT', 'its BASE chunk does not list the layers below it in the chain', { reason: 'base' });
      }
      layers.push(layer);
      below += layer.count;
    } catch (e) {
      if (!(e instanceof ScalpelError)) throw e;
      warnings.push(`ignoring ${path} and the layers above it: ${e.message}`);
      break;
    }
  }
  return layers.length > 0 ? { graph: new CommitGraph(layers), warnings } : none;
}

// ───────────────────────────────────────────────────────────────────────────── walks

/** Paint colours (git's PARENT1/PARENT2): reachable from the snapshot's commit, from HEAD now. */
const FROM = 1;
const TO = 2;
const BOTH = FROM | TO;

interface Node {
  oid: string;
  parents: string[];
  /** Committer date, seconds. */
  date: number;
  /** Topological level from the commit-graph; 0 when unknown. */
  gen: number;
  inGraph: boolean;
  flags: number;
  /** The flags already handed to the parents: a node is expanded again only when it gained one. */
  expanded: number;
  /** Entries of this node in the queue. */
  queued: number;
}

/** Raised inside a walk when it examined maxCommits commits; turned into complete: false. */
class CapReached {}

/** Max-heap of nodes: newer committer date first, then higher generation (unknown ranks as newest, as git's GENERATION_NUMBER_INFINITY), then first queued. */
class NodeQueue {
  private readonly nodes: Node[] = [];
  private readonly seqs: number[] = [];
  private seq = 0;

  get size(): number {
    return this.nodes.length;
  }

  peek(): Node {
    return this.nodes[0];
  }

  private before(i: number, j: number): boolean {
    const a = this.nodes[i];
    const b = this.nodes[j];
    if (a.date !== b.date) return a.date > b.date;
    const ga = a.gen > 0 ? a.gen : Infinity;
    const gb = b.gen > 0 ? b.gen : Infinity;
    if (ga !== gb) return ga > gb;
    return this.seqs[i] < this.seqs[j];
  }

  private swap(i: number, j: number): void {
    const n = this.nodes[i];
    this.nodes[i] = this.nodes[j];
    this.nodes[j] = n;
    const s = this.seqs[i];
    this.seqs[i] = this.seqs[j];
    this.seqs[j] = s;
  }

  push(n: Node): void {
    this.nodes.push(n);
    this.seqs.push(this.seq++);
    for (let i = this.nodes.length - 1; i > 0;) {
      const up = (i - 1) >> 1;
      if (!this.before(i, up)) break;
      this.swap(i, up);
      i = up;
    }
  }

  pop(): Node {
    const top = this.nodes[0];
    const last = this.nodes.length - 1;
    this.swap(0, last);
    this.nodes.pop();
    this.seqs.pop();
    for (let i = 0; ;) {
      const l = 2 * i + 1;
      const r = l + 1;
      let best = i;
      if (l < this.nodes.length && this.before(l, best)) best = l;
      if (r < this.nodes.length && this.before(r, best)) best = r;
      if (best === i) break;
      this.swap(i, best);
      i = best;
    }
    return top;
  }
}

const EMPTY: readonly number[] = [];

/** Sorted union of two sorted index lists, sharing an input when the other adds nothing. */
function union(a: readonly number[], b: readonly number[]): readonly number[] {
  if (a === b || b.length === 0) return a;
  if (a.length === 0) return b;
  const out: number[] = [];
  let i = 0;
  let j = 0;
  while (i < a.length || j < b.length) {
    const x = i < a.length ? a[i] : Infinity;
    const y = j < b.length ? b[j] : Infinity;
    if (x <= y) {
      out.push(x);
      i++;
      if (x === y) j++;
    } else {
      out.push(y);
      j++;
    }
  }
  if (out.length === a.length) return a;
  if (out.length === b.length) return b;
  return out;
}

class Walker {
  readonly nodes = new Map<string, Node>();
  visited = 0;
  readonly warnings: string[] = [];
  /** Commits first reached from `to` alone, in the order the paint walk took them (see newCommits). */
  found: Node[] = [];
  /** What pushed() has worked out so far (kept when the cap stops it). */
  readonly pushedSoFar: PushedCommits[] = [];
  private graph: CommitGraph | null | undefined;
  private shallow: Set<string> | undefined;
  private readonly hexLen: 40 | 64;

  constructor(
    private readonly repo: HistoryRepo,
    private readonly maxCommits: number,
    private readonly graphMode: 'verify' | 'trust' | 'off',
    private readonly graphAfter: number,
  ) {
    this.hexLen = hexLengthOf(repo);
  }

  /** The shallow list, read once before the first commit: shallow commits have no parents here, as in git. */
  private async prepareShallow(): Promise<Set<string>> {
    if (this.shallow) return this.shallow;
    const shallowPath = joinPath(this.repo.loc.commonDir, 'shallow');
    const shallow = new Set<string>();
    if (await this.repo.fs.lstat(shallowPath)) {
      for (const line of decodePath(await this.repo.fs.readFile(shallowPath)).split('\n'))
        if (line.trim()) shallow.add(line.trim().toLowerCase());
    }
    this.shallow = shallow;
    return shallow;
  }

  /**
   * The commit-graph, loaded once the walk has examined `graphAfter` commits: the file is read
   * and checked whole, which costs more than the few commit reads of a short walk. Commits
   * already examined learn their generation from it, so what the pushed walk concludes from
   * "in the graph or not" holds for every commit.
   */
  private async prepareGraph(): Promise<CommitGraph | null> {
    if (this.graph !== undefined) return this.graph;
    const shallow = await this.prepareShallow();
    if (this.graphMode === 'off' || shallow.size > 0) {
      this.graph = null;
      return null;
    }
    const { graph, warnings } = await loadCommitGraph(this.repo, { verify: this.graphMode === 'verify' });
    this.graph = graph;
    this.warnings.push(...warnings);
    if (graph) {
      // a queued node's generation may change here: only the tie-break between equal dates,
      // so the queue's head is still the newest commit queued
      for (const n of this.nodes.values()) {
        const pos = graph.find(n.oid);
        if (pos >= 0) {
          n.inGraph = true;
          n.gen = graph.generation(pos);
        }
      }
    }
    return graph;
  }

  /** The commit `oid`, from the commit-graph or the object database; annotated tags are peeled when `peel`, else a non-commit is BAD_OBJECT. */
  async load(oid: string, peel = false): Promise<Node | null> {
    const known = this.nodes.get(oid);
    if (known) return known;
    if (this.visited >= this.maxCommits) throw new CapReached();
    const graph = this.visited >= this.graphAfter ? await this.prepareGraph() : (this.graph ?? null);
    const shallow = await this.prepareShallow();
    this.visited++;
    if (graph) {
      const pos = graph.find(oid);
      if (pos >= 0) {
        const node = this.node(
          oid,
          graph.parents(pos).map((p) => graph.oid(p)),
          graph.date(pos),
          graph.generation(pos),
          true,
        );
        return node;
      }
    }
    let id = oid;
    for (let depth = 0; ; depth++) {
      const obj = await this.repo.odb.read(id);
      if (obj.type === 'commit') {
        const links = commitLinks(obj.content, this.hexLen);
        const parents = shallow.has(id) ? [] : links.parents;
        const node = this.node(id, parents, links.date, 0, false);
        if (id !== oid) this.nodes.set(oid, node);
        return node;
      }
      if (!peel)
        throw new ScalpelError('BAD_OBJECT', `${oid} is a ${obj.type}, not a commit`, { oid, reason: 'not-a-commit', type: obj.type });
      if (obj.type !== 'tag' || depth >= MAX_PEEL) return null;
      const m = /^object ([0-9a-f]+)\n/.exec(decodePath(obj.content.subarray(0, 200)));
      if (!m || m[1].length !== this.hexLen)
        throw new ScalpelError('BAD_OBJECT', `tag ${id} names no object`, { oid: id, reason: 'bad-tag' });
      id = m[1];
      const peeled = this.nodes.get(id);
      if (peeled) return peeled;
      if (graph && graph.find(id) >= 0) {
        const node = await this.load(id);
        if (node) this.nodes.set(oid, node);
        return node;
      }
    }
  }

  private node(oid: string, parents: string[], date: number, gen: number, inGraph: boolean): Node {
    const n: Node = { oid, parents, date, gen, inGraph, flags: 0, expanded: 0, queued: 0 };
    this.nodes.set(oid, n);
    return n;
  }

  async commit(oid: string): Promise<Node> {
    return (await this.load(oid)) as Node;
  }

  /**
   * reachable(to) \ reachable(from) among commits dated `bound` or later, newest first: a
   * two-colour paint walk (git's paint_down_to_common) in committer-date order. A commit older
   * than the bound is never entered. The walk ends when every queued commit carries both
   * colours and none of them is as new as the oldest commit found only from `to` (a commit
   * already reported as new can then no longer be reached from `from` through the queue,
   * barring clock skew), or when the queue is empty.
   */
  async paint(from: Node | null, to: Node, bound: number): Promise<Node[]> {
    this.found = [];
    const queue = new NodeQueue();
    let nonstale = 0;
    const enqueue = (n: Node): void => {
      n.queued++;
      if (n.flags !== BOTH) nonstale++;
      queue.push(n);
    };
    const addFlags = (n: Node, f: number): void => {
      const was = n.flags;
      n.flags |= f;
      if (was !== BOTH && n.flags === BOTH) nonstale -= n.queued;
    };
    if (to.date >= bound) {
      addFlags(to, TO);
      enqueue(to);
    }
    if (from && from.date >= bound) {
      addFlags(from, FROM);
      enqueue(from);
    }
    const found = this.found;
    let oldestNew = Infinity;
    while (queue.size > 0) {
      if (nonstale === 0 && !(queue.peek().date >= oldestNew)) break;
      const n = queue.pop();
      n.queued--;
      if (n.flags !== BOTH) nonstale--;
      if (n.flags === TO && n.expanded === 0) {
        found.push(n);
        if (n.date < oldestNew) oldestNew = n.date;
      }
      const f = n.flags;
      if (n.expanded === f) continue;
      n.expanded = f;
      for (const p of n.parents) {
        const pn = await this.commit(p);
        if (pn.date < bound || (pn.flags & f) === f) continue;
        addFlags(pn, f);
        enqueue(pn);
      }
    }
    return found.filter((n) => n.flags === TO);
  }

  /**
   * For each remote-tracking ref, the new commits it reaches. From each tip, only commits as new
   * as the oldest new commit are entered (and, with generation numbers, none below the lowest
   * generation among them: such a commit cannot reach any of them); commits painted from the
   * snapshot's side reach none. What a commit reaches is remembered across refs as the new
   * commits where the walk first met them, so many refs over the same recent history cost one
   * walk of it; a new commit reaches the new commits below it, added from their parent links.
   */
  async pushed(newNodes: Node[], remotes: Map<string, string>): Promise<PushedCommits[]> {
    const index = new Map<Node, number>();
    newNodes.forEach((n, i) => index.set(n, i));
    let minDate = Infinity;
    let minGen = Infinity;
    for (const n of newNodes) {
      if (n.date < minDate) minDate = n.date;
      // a commit outside the graph cannot be reached from inside it (a graph holds its commits' parents)
      const g = n.inGraph ? n.gen : Infinity;
      if (g < minGen) minGen = g;
    }
    const memo = new Map<Node, readonly number[]>();
    const settled = (n: Node): readonly number[] | undefined => {
      const m = memo.get(n);
      if (m) return m;
      const i = index.get(n);
      if (i !== undefined) return [i];
      if (n.flags & FROM) return EMPTY;
      if (n.date < minDate) return EMPTY;
      if (n.inGraph && n.gen > 0 && n.gen < minGen) return EMPTY;
      return undefined;
    };
    const reach = async (tip: Node): Promise<readonly number[]> => {
      const first = settled(tip);
      if (first) return first;
      const stack: { node: Node; next: number; acc: readonly number[] }[] = [{ node: tip, next: 0, acc: EMPTY }];
      const open = new Set<Node>([tip]);
      for (;;) {
        const top = stack[stack.length - 1];
        if (top.next < top.node.parents.length) {
          const p = await this.commit(top.node.parents[top.next++]);
          const v = settled(p);
          if (v) top.acc = union(top.acc, v);
          else if (!open.has(p)) {
            // a cycle cannot happen in real history; a damaged graph must not hang the walk
            open.add(p);
            stack.push({ node: p, next: 0, acc: EMPTY });
          }
          continue;
        }
        stack.pop();
        open.delete(top.node);
        memo.set(top.node, top.acc);
        if (stack.length === 0) return top.acc;
        const below = stack[stack.length - 1];
        below.acc = union(below.acc, top.acc);
      }
    };

    const stamp = new Int32Array(newNodes.length).fill(-1);
    const out = this.pushedSoFar;
    const names = [...remotes.keys()].sort();
    for (let k = 0; k < names.length; k++) {
      const ref = names[k];
      let tip: Node | null;
      try {
        tip = await this.load(remotes.get(ref)!, true);
      } catch (e) {
        if (isScalpelError(e, 'OBJECT_NOT_FOUND')) {
          throw new ScalpelError('OBJECT_NOT_FOUND', `remote-tracking ref ${ref} points at a missing object: ${e.message}`, {
            ...e.data,
            ref,
          });
        }
        throw e;
      }
      if (!tip) continue;
      const entries = await reach(tip);
      if (entries.length === 0) continue;
      const reached = [...entries];
      for (const i of reached) stamp[i] = k;
      for (let t = 0; t < reached.length; t++) {
        for (const p of newNodes[reached[t]].parents) {
          const pn = this.nodes.get(p);
          const j = pn === undefined ? undefined : index.get(pn);
          if (j !== undefined && stamp[j] !== k) {
            stamp[j] = k;
            reached.push(j);
          }
        }
      }
      reached.sort((a, b) => a - b);
      out.push({ ref, commits: reached.map((i) => newNodes[i].oid) });
    }
    return out;
  }
}

/** The commits the edit made, as the walker's nodes (one gone from the repository since, after an amend and a gc, is left out). */
async function madeNodes(walker: Walker, made: readonly string[]): Promise<Node[]> {
  const out: Node[] = [];
  for (const oid of made) {
    try {
      out.push(await walker.commit(oid));
    } catch (e) {
      if (!isScalpelError(e, 'OBJECT_NOT_FOUND')) throw e;
    }
  }
  return out;
}

/**
 * How HEAD moved between `then` (recorded at snapshot time) and `now` (default: read now).
 * Null when the commit is the same — then nothing but HEAD (and its branch) was read, and no
 * object. Otherwise the new commits (see HeadMovement.newCommits for the time bound) and, for
 * every remote-tracking ref (`refs/remotes/**`, loose and packed; symbolic ones such as
 * `refs/remotes/origin/HEAD` are skipped, they name another listed ref), which of them it
 * reaches. Errors: BAD_ARGUMENT (a malformed HeadState), OBJECT_NOT_FOUND (the snapshot's
 * commit, a commit on the way, or a remote-tracking ref's object is missing), BAD_OBJECT (not a
 * commit, or a commit git could not parse either), and readHead's.
 */
export async function headMovement(
  repo: HistoryRepo,
  then: HeadState,
  now?: HeadState,
  opts: HeadMovementOptions = {},
): Promise<HeadMovement | null> {
  const hexLen = hexLengthOf(repo);
  const from = checkHeadState('then', then, hexLen);
  const to = now === undefined ? await readHead(repo) : checkHeadState('now', now, hexLen);
  if (from.commit === to.commit) return null;
  const maxCommits = opts.maxCommits ?? DEFAULT_MAX_COMMITS;
  if (!Number.isInteger(maxCommits) || maxCommits < 1)
    throw new ScalpelError('BAD_ARGUMENT', `maxCommits must be a positive integer, got ${maxCommits}`, {
      name: 'maxCommits',
      value: maxCommits,
    });
  if (opts.since !== undefined && !Number.isFinite(opts.since))
    throw new ScalpelError('BAD_ARGUMENT', `since must be a number of seconds, got ${opts.since}`, { name: 'since', value: opts.since });
  const mode = opts.commitGraph ?? 'verify';
  if (mode !== 'verify' && mode !== 'trust' && mode !== 'off')
    throw new ScalpelError('BAD_ARGUMENT', `commitGraph must be verify, trust or off, got ${String(mode)}`, {
      name: 'commitGraph',
      value: mode,
    });

  const result: HeadMovement = {
    from,
    to,
    branchChanged: from.ref !== to.ref,
    newCommits: [],
    count: 0,
    complete: true,
    pushed: [],
    visited: 0,
    warnings: [],
  };
  if (to.commit === null) return result;

  const graphAfter = opts.commitGraphAfter ?? DEFAULT_GRAPH_AFTER;
  if (!Number.isInteger(graphAfter) || graphAfter < 0)
    throw new ScalpelError('BAD_ARGUMENT', `commitGraphAfter must be a non-negative integer, got ${graphAfter}`, {
      name: 'commitGraphAfter',
      value: graphAfter,
    });
  const walker = new Walker(repo, maxCommits, mode, graphAfter);
  try {
    let fromNode: Node | null = null;
    if (from.commit !== null) {
      try {
        fromNode = await walker.commit(from.commit);
      } catch (e) {
        if (isScalpelError(e, 'OBJECT_NOT_FOUND')) {
          throw new ScalpelError('OBJECT_NOT_FOUND', `the snapshot's HEAD commit ${from.commit} is no longer in the repository`, {
            oid: from.commit,
            role: 'from',
          });
        }
        throw e;
      }
    }
    const toNode = await walker.commit(to.commit);
    let bound = fromNode && !opts.undated ? fromNode.date : -Infinity;
    if (opts.since !== undefined && !opts.undated) bound = Math.max(bound, Math.floor(opts.since));
    const found = opts.made ? await madeNodes(walker, opts.made) : await walker.paint(fromNode, toNode, bound);
    result.newCommits = found.map((n) => n.oid);
    result.count = found.length;
    if (found.length > 0) {
      const remotes = await repo.refs.list('refs/remotes/');
      if (remotes.size > 0) result.pushed = await walker.pushed(found, remotes);
    }
  } catch (e) {
    if (!(e instanceof CapReached)) throw e;
    result.complete = false;
    if (result.count === 0) {
      // stopped inside the paint walk: what it had found from `to` alone so far
      result.newCommits = walker.found.filter((n) => n.flags === TO).map((n) => n.oid);
      result.count = result.newCommits.length;
    }
    result.pushed = walker.pushedSoFar;
  }
  result.visited = walker.visited;
  result.warnings = walker.warnings;
  return result;
}
