import { ScalpelError } from '../errors/index.js';
import { isHex } from '../bytes/hex.js';
import { MODE_EXECUTABLE, MODE_FILE, MODE_FILE_GROUP_WRITABLE, MODE_GITLINK, MODE_SYMLINK, MODE_TREE } from '../object/tree.js';
import type { ObjectFormat } from '../hash/index.js';
import { checkRefName } from '../repo/refs.js';
import type { HeadState } from '../repo/history.js';
import { checkScopeRoot, compareRel, covers, isAncestor, minimalRoots, parentOf } from './scope.js';

/** The mode of a regular file as git records it: executable or not. */
export type FileMode = typeof MODE_FILE | typeof MODE_EXECUTABLE;

/** The mode git records for a regular file whose st_mode is `statMode` (executable when any x bit is set, as git's `ce_mode_from_stat`). */
export function fileModeOf(statMode: number): FileMode {
  return statMode & 0o111 ? MODE_EXECUTABLE : MODE_FILE;
}

/** What one worktree path holds. A path under a scope root with no item was absent. */
export type WorktreeItem =
  | { path: string; kind: 'file'; mode: FileMode; oid: string; size: number }
  | { path: string; kind: 'symlink'; target: string; oid: string }
  | { path: string; kind: 'dir' };

export interface EntryFlagsRecord {
  assumeValid: boolean;
  skipWorktree: boolean;
  intentToAdd: boolean;
}

/** One index entry of a path (any stage). Stat data is not kept: it is rebuilt by the racy-git rules. */
export interface IndexRecord {
  path: string;
  stage: 0 | 1 | 2 | 3;
  mode: number;
  oid: string;
  flags: EntryFlagsRecord;
}

/** One resolve-undo record (REUC) of a path. */
export interface ReucRecord {
  path: string;
  modes: [number, number, number];
  oids: [string | null, string | null, string | null];
}

/**
 * A scope root whose parent directory did not exist when it was captured, and the deepest ancestor
 * that did ('' the worktree). The directories between the two are what an edit creates to hold the
 * root (`mkdir -p gen/api && write gen/api/client.ts`); a restore removes those that are empty.
 */
export interface AbsentParents {
  root: string;
  existing: string;
}

/**
 * The outermost directory that was absent above a root: the child of its deepest existing ancestor
 * on the way to it. Everything at or beneath it was absent at that capture.
 */
export function shallowestAbsent(a: AbsentParents): string {
  const rest = a.existing === '' ? a.root : a.root.slice(a.existing.length + 1);
  const first = rest.slice(0, rest.indexOf('/') < 0 ? rest.length : rest.indexOf('/'));
  return a.existing === '' ? first : `${a.existing}/${first}`;
}

/**
 * The roots of `s` that held nothing when captured: no worktree item, index record or
 * resolve-undo record at or beneath them (a misspelt path, or one the edit creates).
 */
export function absentRootsOf(s: PathState): string[] {
  const roots = new Set(s.roots);
  const held = new Set<string>(['']);
  // each captured path marks the root above it: a walk up to that root, no further (O(what was captured))
  const mark = (p: string) => {
    for (let q = p; !held.has(q); q = q.slice(0, Math.max(0, q.lastIndexOf('/')))) {
      if (roots.has(q)) return void held.add(q);
      if (q === '') return;
    }
  };
  for (const i of s.items) mark(i.path);
  for (const e of s.index) mark(e.path);
  for (const r of s.reuc) mark(r.path);
  return s.roots.filter((r) => !held.has(r));
}

/**
 * What a capture shows was made after it: the roots that held nothing, and above each root
 * created in a directory that was not there, the outermost such directory. Everything at or
 * beneath one of them came later.
 */
export function madeAfter(s: PathState): string[] {
  return minimalRoots([...absentRootsOf(s), ...(s.absentParents ?? []).map(shallowestAbsent)]);
}

/** A state of no paths (a turn before its first write). */
export function emptyState(): PathState {
  return { roots: [], items: [], index: [], reuc: [] };
}

/** Everything under some scope roots: worktree items, index entries, resolve-undo records. Sorted by path. */
export interface PathState {
  roots: string[];
  items: WorktreeItem[];
  index: IndexRecord[];
  reuc: ReucRecord[];
  /**
   * The roots whose parent was absent at capture, sorted by root. Missing in snapshots made before
   * it was recorded: they restore as they did then, every root's parents taken as existing.
   */
  absentParents?: AbsentParents[];
}

export interface Manifest {
  format: 'git-scalpel/1';
  id: string;
  session: string;
  worktreeId: string;
  objectFormat: ObjectFormat;
  label: string | null;
  createdAt: string;
  /** The pre-image: state of the scope when the snapshot was taken. */
  captured: PathState;
  /** The post-image recorded by `seal`, or null. */
  seal: { sealedAt: string; state: PathState } | null;
  /**
   * HEAD when the snapshot was taken: the branch it named (null when detached) and its commit
   * (null when unborn). A restore compares it with HEAD now, to say what the edit committed and
   * to refuse when that was pushed. Missing in snapshots made before it was recorded.
   */
  head?: HeadState;
  /** Set when the snapshot is an agent's turn (hooks): its number in the session, and whether the agent ended it. */
  turn?: TurnRecord;
  /**
   * What a shell command of the turn removed or changed that no snapshot holds: ignored
   * directories (never captured) and hand-kept ignored files over the size limit. A rewind names
   * them: it cannot bring them back.
   */
  uncovered?: string[];
  /**
   * Paths of a turn that someone else changed after the agent's last write of them and before its
   * next tool call or its stop (a person saving in an editor mid-turn): a rewind refuses them, as
   * it refuses a sealed path changed after the seal.
   */
  contested?: Contest[];
  /**
   * Captures of tool calls that have not finished (a harness's before-event came, its after-event
   * not yet): a call the person denied, or that never ran, changed nothing, so its capture joins
   * the turn only when the call finishes (the first call to finish decides a path's pre-image),
   * and goes when the turn ends without it. Objects are kept reachable like the pre-image's.
   */
  provisional?: Provisional[];
  /**
   * What a shell command of the turn created or changed inside ignored directories that existed
   * before it (never captured): a rewind leaves it in place, and names it.
   */
  left?: string[];
  /**
   * On a turn: the paths this session's turns made from nothing, up to this one's start (each
   * new turn carries its predecessor's, with what that one made). A shell baseline walks an
   * ignored directory among them as it walks any other, so what a command makes or changes
   * there is the turn's, and goes with it. Only a hint of where to look: a path wrongly
   * here costs a walk, never a wrong restore.
   */
  made?: string[];
  /**
   * On a turn: paths a rewind of part of it took back (`rewind TURN -- PATH`). Its roots at or
   * beneath them left it; a root holding one keeps its pre-image there, sealed as the rewind
   * left it.
   */
  taken?: string[];
  /**
   * On a rewind's undo snapshot (its pre-image: what the rewind replaced; its seal: what the
   * rewind left): the session rewound, and its stack's head before and after the rewind, so
   * `rewind --undo` can put the turns back while the stack is as the rewind left it.
   */
  rewound?: { session: string; from: string | null; to: string | null };
}

/** The capture of a tool call `call` still running (or that never ran): its paths' state before it. */
export interface Provisional {
  call: string;
  state: PathState;
}

/** A path's state as the agent's tools left it (`expected`), and what someone else made of it (`found`). */
export interface Contest {
  path: string;
  part: 'worktree' | 'index' | 'resolve-undo';
  expected: string;
  found: string;
  /**
   * 'unfinished': `expected` is the path's state before a tool call whose end was never
   * reported (it may have run, or been denied while someone else changed the path): which of
   * the two made `found` cannot be told. Absent: `expected` is the agent's last write.
   */
  why?: 'unfinished';
  /**
   * A later call of the turn finished with `found` no longer there: the agent's own write went
   * over what someone else had put there. Whatever the path holds now, that is not theirs to
   * get back by the rewind, so it is refused (never taken for a change undone since).
   */
  overwritten?: true;
}

/**
 * A turn: one user prompt and everything the agent did until it stopped. Numbers count up along
 * a session's stack (a rewound turn's number is given again). A turn the agent has not ended
 * takes in every path its tool calls are about to write; an ended one is sealed.
 */
export interface TurnRecord {
  number: number;
  ended: boolean;
}

/** The modes an index record may have: what git writes, and the group-writable file old git wrote. */
const MODES = new Set([MODE_FILE, MODE_EXECUTABLE, MODE_SYMLINK, MODE_GITLINK, MODE_TREE, MODE_FILE_GROUP_WRITABLE]);

/**
 * Validate a manifest read from the repository. It is untrusted input: every path is checked
 * again (no `..` out of the worktree, no absolute path, nothing in `.git`), every id and mode, and the pieces must be consistent (items sorted, unique, covered
 * by the roots). Anything else is SNAPSHOT_CORRUPT.
 */
export function validateManifest(raw: unknown, format: ObjectFormat): Manifest {
  const fail = (reason: string): never => {
    throw new ScalpelError('SNAPSHOT_CORRUPT', `snapshot manifest is corrupt: ${reason}`, { reason });
  };
  const m = raw as Manifest;
  if (!m || typeof m !== 'object') fail('not an object');
  if (m.format !== 'git-scalpel/1') fail(`unknown format ${JSON.stringify(m.format)}`);
  for (const k of ['id', 'session', 'worktreeId', 'createdAt'] as const) if (typeof m[k] !== 'string' || !m[k]) fail(`missing ${k}`);
  if (m.objectFormat !== format) fail(`object format ${String(m.objectFormat)} in a ${format} repository`);
  if (m.label !== null && typeof m.label !== 'string') fail('bad label');
  const hexLen = format === 'sha256' ? 64 : 40;
  const checkState = (s: PathState, what: string) => {
    if (!s || !Array.isArray(s.roots) || !Array.isArray(s.items) || !Array.isArray(s.index) || !Array.isArray(s.reuc))
      fail(`${what}: missing arrays`);
    const inScope = (p: unknown) => {
      if (typeof p !== 'string') fail(`${what}: path is not a string`);
      try {
        checkScopeRoot(p as string);
      } catch (e) {
        fail(`${what}: hostile path ${JSON.stringify(p)} (${(e as Error).message})`);
      }
      if (!s.roots.some((r) => covers(r, p as string))) fail(`${what}: ${JSON.stringify(p)} is outside the snapshot's paths`);
    };
    for (const r of s.roots) {
      if (typeof r !== 'string') fail(`${what}: root is not a string`);
      try {
        checkScopeRoot(r);
      } catch (e) {
        fail(`${what}: hostile path ${JSON.stringify(r)} (${(e as Error).message})`);
      }
    }
    let prev: string | null = null;
    for (const it of s.items) {
      inScope(it.path);
      if (prev !== null && compareRel(prev, it.path) >= 0) fail(`${what}: items not sorted or duplicated at ${JSON.stringify(it.path)}`);
      prev = it.path;
      if (it.kind === 'file') {
        if (it.mode !== MODE_FILE && it.mode !== MODE_EXECUTABLE) fail(`${what}: bad file mode for ${it.path}`);
        if (!isHex(it.oid, hexLen)) fail(`${what}: bad id for ${it.path}`);
        if (!Number.isSafeInteger(it.size) || it.size < 0) fail(`${what}: bad size for ${it.path}`);
      } else if (it.kind === 'symlink') {
        if (typeof it.target !== 'string' || !it.target || it.target.includes('\0')) fail(`${what}: bad symlink target for ${it.path}`);
        if (!isHex(it.oid, hexLen)) fail(`${what}: bad id for ${it.path}`);
      } else if (it.kind !== 'dir') fail(`${what}: unknown kind for ${JSON.stringify((it as { path: unknown }).path)}`);
    }
    if (s.absentParents !== undefined) {
      if (!Array.isArray(s.absentParents)) fail(`${what}: bad absentParents`);
      let prevRoot: string | null = null;
      for (const a of s.absentParents) {
        if (!a || typeof a.root !== 'string' || typeof a.existing !== 'string') fail(`${what}: bad absentParents record`);
        if (!s.roots.includes(a.root)) fail(`${what}: absentParents names ${JSON.stringify(a.root)}, which is not a root`);
        if (prevRoot !== null && compareRel(prevRoot, a.root) >= 0)
          fail(`${what}: absentParents not sorted or duplicated at ${JSON.stringify(a.root)}`);
        prevRoot = a.root;
        try {
          checkScopeRoot(a.existing);
        } catch (e) {
          fail(`${what}: hostile path ${JSON.stringify(a.existing)} (${(e as Error).message})`);
        }
        // the parent itself was absent, so the deepest existing ancestor lies above it
        const parent = a.root.slice(0, Math.max(0, a.root.lastIndexOf('/')));
        if (!isAncestor(a.existing, parent))
          fail(`${what}: ${JSON.stringify(a.existing)} is not an ancestor above the parent of ${JSON.stringify(a.root)}`);
      }
    }
    // every item's parent must be a captured directory, unless the item is a root
    const dirs = new Set(s.items.filter((i) => i.kind === 'dir').map((i) => i.path));
    for (const it of s.items) {
      if (s.roots.includes(it.path)) continue;
      const parent = it.path.slice(0, Math.max(0, it.path.lastIndexOf('/')));
      if (parent === '' ? s.roots.includes('') : dirs.has(parent)) continue;
      fail(`${what}: ${JSON.stringify(it.path)} has no captured parent directory`);
    }
    for (const e of s.index) {
      inScope(e.path);
      if (![0, 1, 2, 3].includes(e.stage)) fail(`${what}: bad stage for ${e.path}`);
      if (!MODES.has(e.mode)) fail(`${what}: bad index mode ${e.mode} for ${e.path}`);
      if (!isHex(e.oid, hexLen)) fail(`${what}: bad index id for ${e.path}`);
      if (
        !e.flags ||
        typeof e.flags.assumeValid !== 'boolean' ||
        typeof e.flags.skipWorktree !== 'boolean' ||
        typeof e.flags.intentToAdd !== 'boolean'
      )
        fail(`${what}: bad flags for ${e.path}`);
    }
    for (const r of s.reuc) {
      inScope(r.path);
      if (!Array.isArray(r.modes) || r.modes.length !== 3 || !Array.isArray(r.oids) || r.oids.length !== 3)
        fail(`${what}: bad resolve-undo record for ${r.path}`);
      for (let i = 0; i < 3; i++) {
        if (!Number.isInteger(r.modes[i]) || r.modes[i] < 0) fail(`${what}: bad resolve-undo mode for ${r.path}`);
        if (r.modes[i] !== 0 && !isHex(r.oids[i] ?? '', hexLen)) fail(`${what}: bad resolve-undo id for ${r.path}`);
      }
    }
  };
  if (m.head !== undefined) {
    const h = m.head as HeadState;
    if (!h || typeof h !== 'object') fail('bad head');
    if (h.commit !== null && !isHex(h.commit, hexLen)) fail('bad head commit');
    if (h.log !== undefined && !(Number.isSafeInteger(h.log) && h.log >= 0)) fail('bad head log size');
    if (h.ref !== null) {
      if (typeof h.ref !== 'string') fail('bad head ref');
      try {
        checkRefName(h.ref);
      } catch {
        fail(`bad head ref ${JSON.stringify(h.ref).slice(0, 120)}`);
      }
    }
  }
  if (m.turn !== undefined) {
    const t = m.turn as TurnRecord;
    if (!t || typeof t !== 'object' || !Number.isSafeInteger(t.number) || t.number < 1 || typeof t.ended !== 'boolean')
      fail('bad turn record');
  }
  for (const key of ['uncovered', 'left', 'made', 'taken'] as const) {
    const list = m[key];
    if (list === undefined) continue;
    if (!Array.isArray(list)) fail(`bad ${key} list`);
    for (const p of list) {
      if (typeof p !== 'string') fail(`${key} path is not a string`);
      try {
        checkScopeRoot(p);
      } catch (e) {
        fail(`hostile path ${JSON.stringify(p)} (${(e as Error).message})`);
      }
    }
  }
  if (m.contested !== undefined) {
    if (!Array.isArray(m.contested)) fail('bad contested list');
    for (const c of m.contested) {
      if (
        !c ||
        typeof c.path !== 'string' ||
        !['worktree', 'index', 'resolve-undo'].includes(c.part) ||
        typeof c.expected !== 'string' ||
        typeof c.found !== 'string' ||
        (c.why !== undefined && c.why !== 'unfinished') ||
        (c.overwritten !== undefined && c.overwritten !== true)
      )
        fail('bad contested record');
      try {
        checkScopeRoot(c.path);
      } catch (e) {
        fail(`hostile path ${JSON.stringify(c.path)} (${(e as Error).message})`);
      }
    }
  }
  if (m.rewound !== undefined) {
    const r = m.rewound;
    const id = (v: unknown) => v === null || (typeof v === 'string' && isHex(v, hexLen));
    if (!r || typeof r.session !== 'string' || !r.session || !id(r.from) || !id(r.to)) fail('bad rewound record');
  }
  if (m.provisional !== undefined) {
    if (!Array.isArray(m.provisional)) fail('bad provisional list');
    for (const pr of m.provisional) {
      if (!pr || typeof pr.call !== 'string' || !pr.call) fail('bad provisional record');
      checkState(pr.state, `provisional state of call ${JSON.stringify(pr.call).slice(0, 80)}`);
    }
  }
  checkState(m.captured, 'captured state');
  if (m.seal !== null) {
    if (!m.seal || typeof m.seal.sealedAt !== 'string') fail('bad seal');
    checkState(m.seal.state, 'sealed state');
  }
  return m;
}

/** Does a (possibly partial) seal hold the path `p`, i.e. did the agent's tools leave a recorded state there? */
export function sealCovers(seal: Manifest['seal'], p: string): boolean {
  return !!seal && seal.state.roots.some((r) => covers(r, p));
}

/**
 * `base` with the roots of `next` replaced by what `next` holds for them (roots, items, index,
 * resolve-undo). A root of `next` may lie inside a root of `base` that was absent, or a file,
 * when `base` was taken (`rm -rf src`, then a write of `src/new.txt`): the directories between
 * them are recorded as directories wherever `next` holds something beneath them, and at `dirs`
 * (directories the caller found there), so the state stays whole.
 */
export function mergeStates(base: PathState | null, next: PathState, dirs: readonly string[] = []): PathState {
  const inNext = (p: string) => next.roots.some((r) => covers(r, p));
  const roots = minimalRoots([...(base?.roots ?? []).filter((r) => !inNext(r)), ...next.roots]);
  const spine = new Set<string>();
  const addSpine = (d: string) => {
    if (d !== '' && !inNext(d) && roots.some((r) => covers(r, d))) spine.add(d);
  };
  for (const d of dirs) addSpine(d);
  for (const it of next.items) for (let d = parentOf(it.path); d !== '' && !spine.has(d); d = parentOf(d)) addSpine(d);
  // the spine is the worktree's: index records at those paths stay as they were
  const keep = <T extends { path: string }>(l: readonly T[]) => l.filter((x) => !inNext(x.path));
  const byPath = (a: { path: string }, b: { path: string }) => compareRel(a.path, b.path);
  const spineItems: WorktreeItem[] = [...spine].map((d) => ({ path: d, kind: 'dir' }));
  const merged: PathState = {
    roots,
    items: [...(base?.items ?? []).filter((x) => !inNext(x.path) && !spine.has(x.path)), ...spineItems, ...next.items].sort(byPath),
    index: [...keep(base?.index ?? []), ...next.index].sort((a, b) => byPath(a, b) || a.stage - b.stage),
    reuc: [...keep(base?.reuc ?? []), ...next.reuc].sort(byPath),
  };
  // each root keeps the record of its parents it was captured with
  const parents = [...(base?.absentParents ?? []).filter((a) => !inNext(a.root)), ...(next.absentParents ?? [])]
    .filter((a) => roots.includes(a.root))
    .sort((a, b) => compareRel(a.root, b.root));
  if (parents.length) merged.absentParents = parents;
  return merged;
}

/** `state` with only what lies under `roots` (a subset of its roots, or paths beneath them). */
export function restrictState(state: PathState, roots: readonly string[]): PathState {
  const inside = (p: string) => roots.some((r) => covers(r, p));
  const out: PathState = {
    roots: [...roots],
    items: state.items.filter((i) => inside(i.path)),
    index: state.index.filter((e) => inside(e.path)),
    reuc: state.reuc.filter((r) => inside(r.path)),
  };
  const parents = (state.absentParents ?? []).filter((a) => roots.includes(a.root));
  if (parents.length) out.absentParents = parents;
  return out;
}

/**
 * The directories from `outer` (a root of a state) down to the parent of `inner` (strictly
 * beneath it), outermost first: what a state of `outer` must show as directories for a state of
 * `inner` to sit inside it.
 */
export function spineBetween(outer: string, inner: string): string[] {
  const out: string[] = [];
  for (let d = parentOf(inner); d !== '' && d !== inner && covers(outer, d); d = parentOf(d)) out.push(d);
  return out.reverse();
}

/**
 * A snapshot's pre-image `old` with `state` joined to it: paths `old` holds keep their first
 * capture, the new ones join with what `state` found. `dropUnderAbsent` (a person's own
 * `snapshot --into`): what lies in a directory that was absent at an earlier capture of `old`
 * (created to hold one of its roots) was absent then too, whatever `state` finds there now. A
 * turn never drops it: its captures are made just before the agent's calls, so what they find
 * in such a directory was put there by someone else (a person's note), and stays theirs; the
 * directories themselves, made to hold the earlier root, stay absent unless they hold such a thing.
 */
export function joinCaptured(old: PathState, state: PathState, opts: { dropUnderAbsent: boolean }): PathState {
  const isNew = (p: string) => !old.roots.some((r) => covers(r, p));
  const absentThen = opts.dropUnderAbsent ? (old.absentParents ?? []).map((a) => shallowestAbsent(a)) : [];
  const wasAbsent = (p: string) => absentThen.length > 0 && absentThen.some((d) => covers(d, p));
  const roots = minimalRoots([...old.roots, ...state.roots]);
  const byPath = (a: { path: string }, b: { path: string }) => compareRel(a.path, b.path);
  // The directories that were absent at an earlier capture, made to hold one of its roots (the
  // agent's write into new directories): absent then, so not part of the pre-image, unless they
  // now hold something else that joins it (someone else's note there needs them to sit in).
  const spine = new Set<string>();
  for (const a of old.absentParents ?? [])
    for (let d = parentOf(a.root); d !== '' && d !== a.existing && covers(a.existing, d); d = parentOf(d)) spine.add(d);
  // The directories above what the earlier capture found, inside the new roots: directories at
  // that capture, whatever stands there now (another session's command may have replaced one
  // with a file since): the joined pre-image shows them as directories, as that capture saw them.
  const above = new Set<string>();
  for (const it of old.items)
    for (let d = parentOf(it.path); d !== '' && isNew(d) && roots.some((r) => covers(r, d)) && !above.has(d); d = parentOf(d)) above.add(d);
  const joining = state.items.filter((i) => isNew(i.path) && !wasAbsent(i.path) && !above.has(i.path));
  const holdsOther = (d: string) => joining.some((i) => !spine.has(i.path) && isAncestor(d, i.path));
  const aboveItems: WorktreeItem[] = [...above].map((d) => ({ path: d, kind: 'dir' }));
  // an index entry there now could not sit beside the entries the earlier capture found beneath it
  const oldIndexAbove = new Set<string>();
  for (const e of old.index) for (let d = parentOf(e.path); d !== '' && !oldIndexAbove.has(d); d = parentOf(d)) oldIndexAbove.add(d);
  const captured: PathState = {
    roots,
    items: [...old.items, ...aboveItems, ...joining.filter((i) => !(i.kind === 'dir' && spine.has(i.path) && !holdsOther(i.path)))].sort(
      byPath,
    ),
    index: [...old.index, ...state.index.filter((e) => isNew(e.path) && !oldIndexAbove.has(e.path))].sort(
      (a, b) => byPath(a, b) || a.stage - b.stage,
    ),
    reuc: [...old.reuc, ...state.reuc.filter((r) => isNew(r.path))].sort(byPath),
  };
  const absentParents = mergeAbsentParents(roots, new Set(old.roots), old.absentParents ?? [], state.absentParents ?? []);
  if (absentParents.length) captured.absentParents = absentParents;
  return captured;
}

/**
 * The absent-parent records of a joined pre-image's roots. A root the old one had keeps its
 * record; a new root that took in earlier ones, whose parent was absent at their capture, takes
 * their record (the first capture wins); any other new root has what its own capture found.
 */
function mergeAbsentParents(
  roots: readonly string[],
  oldRoots: ReadonlySet<string>,
  old: readonly AbsentParents[],
  now: readonly AbsentParents[],
): AbsentParents[] {
  const out: AbsentParents[] = [];
  for (const root of roots) {
    const rec = oldRoots.has(root)
      ? old.find((a) => a.root === root)
      : (old.find((a) => covers(root, a.root) && isAncestor(a.existing, parentOf(root))) ?? now.find((a) => a.root === root));
    if (rec) out.push({ root, existing: rec.existing });
  }
  return out;
}

/**
 * What someone else put beneath the turn's earlier captures since the agent last wrote there, as
 * a later capture of the turn (`state`, taken just before an agent's call) found it: within each
 * root of `state` at or beneath a root of `old`, the paths strictly beneath a root of `old` where
 * `state` holds something and neither the seal nor `old` does (a person's note in a directory the
 * agent's command made, which a later call then changes or removes). `old` says nothing of them
 * (the directory was absent then), so without them a rewind would remove what was someone else's
 * before the agent's call went over it; with them joined (mergeStates) it puts that back. A
 * change of what the seal holds is a contest of the turn's own path, and what `old` holds stays
 * its first capture. Null when there is none, or no seal.
 */
export function othersBeneath(old: PathState, seal: PathState | null, state: PathState): PathState | null {
  if (!seal) return null;
  const inner = state.roots.filter((r) => old.roots.some((o) => covers(o, r)));
  if (inner.length === 0) return null;
  const held = new Set(state.items.map((i) => i.path));
  // where the seal holds something (the agent's file, changed since by someone else) it is a
  // contest of the turn's own path, not something that was there before the agent's call
  const sealed = new Set(seal.items.map((i) => i.path));
  // and where the pre-image holds something, that stays the turn's first capture
  const before = new Set(old.items.map((i) => i.path));
  const theirs = (p: string) => !sealed.has(p) && !before.has(p) && old.roots.some((o) => isAncestor(o, p));
  const paths = contests(seal, state, (p) => inner.some((r) => covers(r, p)))
    .filter((c) => c.part === 'worktree' && held.has(c.path) && theirs(c.path))
    .map((c) => c.path);
  return paths.length ? restrictState(state, minimalRoots(paths)) : null;
}

/** `state` without what lies under `roots` (those paths are about to change again: unsealed). */
export function withoutRoots(state: PathState, roots: readonly string[]): PathState {
  const gone = (p: string) => roots.some((r) => covers(r, p));
  const out: PathState = {
    roots: state.roots.filter((r) => !gone(r)),
    items: state.items.filter((i) => !gone(i.path)),
    index: state.index.filter((e) => !gone(e.path)),
    reuc: state.reuc.filter((r) => !gone(r.path)),
  };
  const parents = (state.absentParents ?? []).filter((a) => !gone(a.root));
  if (parents.length) out.absentParents = parents;
  return out;
}

/**
 * `contested` with each record whose path `now` covers and whose part no longer holds what it
 * found marked `overwritten` (a call of the agent just went over it).
 */
export function markOverwritten(contested: readonly Contest[], now: PathState): Contest[] {
  let changed = false;
  const out = contested.map((c) => {
    if (c.overwritten || c.why === 'unfinished' || !now.roots.some((r) => covers(r, c.path))) return c;
    const here = describePart(c.part, {
      item: now.items.find((i) => i.path === c.path),
      entries: now.index.filter((e) => e.path === c.path),
      reuc: now.reuc.find((r) => r.path === c.path),
    });
    if (here === c.found) return c;
    changed = true;
    return { ...c, overwritten: true as const };
  });
  return changed ? out : [...contested];
}

/** Where `now` differs from `sealed` over `sealed`'s roots (and `scope`): each path and part, as refusals name them. */
export function contests(sealed: PathState, now: PathState, scope: (p: string) => boolean = () => true): Contest[] {
  const out: Contest[] = [];
  const items = (s: PathState) => new Map(s.items.map((i) => [i.path, i] as const));
  const index = (s: PathState) => {
    const m = new Map<string, IndexRecord[]>();
    for (const e of s.index) m.set(e.path, [...(m.get(e.path) ?? []), e]);
    return m;
  };
  const reuc = (s: PathState) => new Map(s.reuc.map((r) => [r.path, r] as const));
  const [ia, ib, xa, xb, ra, rb] = [items(sealed), items(now), index(sealed), index(now), reuc(sealed), reuc(now)];
  const inScope = (p: string) => scope(p) && sealed.roots.some((r) => covers(r, p));
  for (const p of new Set([...ia.keys(), ...ib.keys()])) {
    if (inScope(p) && !sameItem(ia.get(p), ib.get(p)))
      out.push({ path: p, part: 'worktree', expected: describeItem(ia.get(p)), found: describeItem(ib.get(p)) });
  }
  for (const p of new Set([...xa.keys(), ...xb.keys()])) {
    if (inScope(p) && !sameEntries(xa.get(p) ?? [], xb.get(p) ?? []))
      out.push({ path: p, part: 'index', expected: describeEntries(xa.get(p) ?? []), found: describeEntries(xb.get(p) ?? []) });
  }
  for (const p of new Set([...ra.keys(), ...rb.keys()])) {
    if (inScope(p) && !sameReuc(ra.get(p), rb.get(p)))
      out.push({ path: p, part: 'resolve-undo', expected: describeReuc(ra.get(p)), found: describeReuc(rb.get(p)) });
  }
  return out;
}

/** A short text naming a worktree item's state, for plans and refusals ("file 100644 <id>", "absent"). */
export function describeItem(it: WorktreeItem | undefined): string {
  if (!it) return 'absent';
  if (it.kind === 'file') return `file ${it.mode.toString(8)} ${it.oid}`;
  if (it.kind === 'symlink') return `symlink -> ${it.target}`;
  return 'directory';
}

/** A resolve-undo record's state as refusals name it. */
export function describeReuc(r: ReucRecord | undefined): string {
  return r ? 'a resolve-undo record' : 'no resolve-undo record';
}

/** One part of a path's state (worktree item, index entries, resolve-undo record), as refusals and contests name it. */
export function describePart(
  part: Contest['part'],
  at: { item: WorktreeItem | undefined; entries: readonly IndexRecord[]; reuc: ReucRecord | undefined },
): string {
  return part === 'worktree' ? describeItem(at.item) : part === 'index' ? describeEntries(at.entries) : describeReuc(at.reuc);
}

export function sameItem(a: WorktreeItem | undefined, b: WorktreeItem | undefined): boolean {
  if (!a || !b) return a === b;
  if (a.kind !== b.kind) return false;
  if (a.kind === 'file' && b.kind === 'file') return a.mode === b.mode && a.oid === b.oid;
  if (a.kind === 'symlink' && b.kind === 'symlink') return a.target === b.target;
  return true;
}

export function describeEntries(list: readonly IndexRecord[]): string {
  if (list.length === 0) return 'no index entry';
  return list
    .map((e) => {
      const f = [
        e.flags.assumeValid ? 'assume-unchanged' : '',
        e.flags.skipWorktree ? 'skip-worktree' : '',
        e.flags.intentToAdd ? 'intent-to-add' : '',
      ].filter(Boolean);
      return `${e.mode.toString(8).padStart(6, '0')} ${e.oid} ${e.stage}${f.length ? ` (${f.join(',')})` : ''}`;
    })
    .join('; ');
}

export function sameEntries(a: readonly IndexRecord[], b: readonly IndexRecord[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) {
    const x = a[i];
    const y = b[i];
    if (x.stage !== y.stage || x.mode !== y.mode || x.oid !== y.oid) return false;
    if (
      x.flags.assumeValid !== y.flags.assumeValid ||
      x.flags.skipWorktree !== y.flags.skipWorktree ||
      x.flags.intentToAdd !== y.flags.intentToAdd
    )
      return false;
  }
  return true;
}

export function sameReuc(a: ReucRecord | undefined, b: ReucRecord | undefined): boolean {
  if (!a || !b) return a === b;
  return a.modes.every((m, i) => m === b.modes[i] && (m === 0 || a.oids[i] === b.oids[i]));
}
