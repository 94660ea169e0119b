import { ScalpelError } from '../errors/index.js';
import { decodePath, encodePath } from '../bytes/text.js';
import type { FileStat } from '../fs/types.js';
import type { GitIndex } from '../index/decode.js';
import type { IndexEntry } from '../index/entry.js';
import { rowsAt, rowsOf, rowsUnder, type IndexRows } from '../index/rows.js';
import { isRacy } from '../index/racy.js';
import { MODE_EXECUTABLE, MODE_FILE, MODE_TREE } from '../object/tree.js';
import { objectId } from '../object/loose.js';
import { CHUNK, canStream, hashBlobStream, writeBlobStream } from '../repo/odb-stream.js';
import type { ObjectWriter } from '../repo/odb.js';
import type { Repository } from '../repo/repository.js';
import { checkNoSymlinkParent, compareRel, parentInRun, sortByPath } from '../model/scope.js';
import type { AbsentParents, IndexRecord, PathState, ReucRecord, WorktreeItem } from '../model/state.js';
import { attributesChanged, conversionRules } from './conversions.js';

export interface CaptureOptions {
  /** Write file contents and symlink targets as blobs (snapshot), or only hash them (seal, restore check). */
  writeObjects: boolean;
  /** Where blobs go when `writeObjects` (default the object database, each at once; a snapshot passes its batch). */
  writer?: ObjectWriter;
  /** lstat of the index file when it was read (entries not older than it may be racily clean). */
  indexStat?: FileStat | null;
}

/** How many filesystem calls a walk keeps in flight (a large scope is I/O-bound, not CPU-bound). */
const IN_FLIGHT = 32;

class Limiter {
  private active = 0;
  private readonly waiting: Array<() => void> = [];
  constructor(private readonly max: number) {}
  async run<T>(f: () => Promise<T>): Promise<T> {
    while (this.active >= this.max) await new Promise<void>((r) => this.waiting.push(r));
    this.active++;
    try {
      return await f();
    } finally {
      this.active--;
      this.waiting.shift()?.();
    }
  }
}

/**
 * One capture's walk. A class, with one instance kept for the class's lifetime (Walk.keeper):
 * V8 forgets an object shape once no object has it and throws away the optimized code built on
 * it, so without a survivor every garbage collection between two captures sent the walk of a
 * whole tree (thousands of files) back to the interpreter (seen with --trace-deopt: "weak objects").
 * A static field, not a module constant: in the bundled entry a constant nothing reads is dead as
 * soon as the module has run, and keeps nothing alive.
 */
class Walk {
  /** Rows at or beneath the roots by directory, then by name (-1: several stages), made on first use. */
  byDir: RowsByDir | null = null;
  readonly out: WorktreeItem[] = [];
  /** Directories found holding `.git`: another repository's, captured as directories and not entered. */
  readonly nested: string[] = [];
  /** Items taken from their index entry without reading the file (w.out positions): asked of the attribute rules after the walk. */
  readonly clean: Array<{ at: number; abs: string; st: FileStat }> = [];
  /** Directories walked, and those whose listing holds a `.gitattributes`. */
  readonly walked = new Set<string>();
  readonly withAttributes = new Set<string>();
  readonly rows: IndexRows | null;
  constructor(
    readonly repo: Repository,
    readonly opts: CaptureOptions,
    readonly limit: Limiter,
    readonly index: GitIndex | null,
    readonly roots: readonly string[],
  ) {
    this.rows = index ? rowsOf(index) : null;
  }

  /**
   * @internal survivors that keep the shapes a walk makes (and the code built on them) alive: the
   * walk, its options, the items it records, and what it leaves to read. Never walked or read.
   */
  static readonly keeper = {
    walk: new Walk(null as unknown as Repository, { writeObjects: false, indexStat: null }, new Limiter(1), null, []),
    items: [
      { path: '', kind: 'dir' },
      { path: '', kind: 'file', mode: MODE_FILE, oid: '', size: 0 },
      { path: '', kind: 'symlink', target: '', oid: '' },
    ] satisfies WorktreeItem[],
    rest: { rel: '', abs: '', st: null as FileStat | null },
  };
}

/** Index rows by directory ('' the top), then by name within it; -1 where a path has several stages. */
type RowsByDir = Map<string, Map<string, number>>;

/**
 * Rows at or beneath `roots` by directory and name: a walk looks up each directory once and each
 * file by its name, which is short and already a flat string from readdir (a lookup by the whole
 * path hashed the path, built by concatenation, at about 0.5 µs a file).
 */
function rowsByDir(rows: IndexRows, roots: readonly string[]): RowsByDir {
  const dirs: RowsByDir = new Map();
  let lastDir: string | null = null;
  let names: Map<string, number> | null = null;
  for (const r of roots) {
    for (const i of rowsUnder(rows, r)) {
      const p = rows.path(i);
      // rows are sorted: the rows of one directory mostly follow each other
      const dir = parentInRun(p, lastDir);
      if (dir !== lastDir || names === null) {
        names = dirs.get(dir) ?? null;
        if (names === null) dirs.set(dir, (names = new Map()));
        lastDir = dir;
      }
      const name = dir === '' ? p : p.slice(dir.length + 1);
      names.set(name, names.has(name) ? -1 : i);
    }
  }
  return dirs;
}

/** The rows of directory `dir` by name (null: no row there, or no usable index). */
function rowsIn(w: Walk, dir: string): Map<string, number> | null {
  const rows = w.rows;
  if (!rows || !w.opts.indexStat) return null;
  w.byDir ??= rowsByDir(rows, w.roots);
  return w.byDir.get(dir) ?? null;
}

function splitRel(rel: string): [string, string] {
  const slash = rel.lastIndexOf('/');
  return slash < 0 ? ['', rel] : [rel.slice(0, slash), rel.slice(slash + 1)];
}

/**
 * The state of everything under `roots`: worktree items (walked from each root only, never the
 * whole tree), the index entries at or beneath each root, and their resolve-undo records.
 * A directory holding `.git` inside a scope is another repository (a submodule's checkout): it is
 * captured as a directory; what it holds is neither captured nor touched.
 * A file whose stat data matches its clean, not racily clean, stage-0 index entry is not read:
 * its id is the entry's, as git's own refresh decides (`ie_match_stat`).
 */
export async function captureState(
  repo: Repository,
  index: GitIndex | null,
  roots: readonly string[],
  opts: CaptureOptions,
): Promise<PathState> {
  return (await captureScope(repo, index, roots, opts)).state;
}

/**
 * captureState, and the directories of the scope that hold a repository of their own (`.git`),
 * sorted: what a restore must not remove (it would take that repository's files with it).
 */
export async function captureScope(
  repo: Repository,
  index: GitIndex | null,
  roots: readonly string[],
  opts: CaptureOptions,
): Promise<{ state: PathState; nestedRepos: string[] }> {
  const w = new Walk(repo, opts, new Limiter(IN_FLIGHT), index, roots);
  let absentParents: AbsentParents[] | undefined;
  for (const root of roots) {
    const existing = await checkNoSymlinkParent(repo.fs, repo.worktree, root);
    if (existing !== null) (absentParents ??= []).push({ root, existing });
  }
  const fs = repo.fs;
  if (fs.lstatSync && fs.readdirSync) {
    // synchronous calls: the tree is walked without a promise per file; what must be read
    // (files whose stat data does not match the index, links) is read afterwards, concurrently
    const rest: Array<{ rel: string; abs: string; st: FileStat }> = [];
    for (const root of roots) walkSync(w, root, fs.lstatSync.bind(fs), fs.readdirSync.bind(fs), rest);
    await Promise.all(rest.map(async (r) => w.out.push(await readItem(repo, r.rel, r.abs, r.st, opts, w))));
  } else {
    await Promise.all(roots.map((root) => visit(w, root)));
  }
  await readConverted(w, index);
  const items = sortByPath(w.out);
  const state: PathState = {
    roots: [...roots],
    items,
    index: index ? indexRecordsUnder(index, roots) : [],
    reuc: index ? reucUnder(index, roots) : [],
  };
  // roots come sorted (minimalRoots), so the records are too
  if (absentParents) state.absentParents = absentParents;
  return { state, nestedRepos: w.nested.sort(compareRel) };
}

/**
 * A stat-clean file's content is its index blob only where git's checkout conversion is the
 * identity (DESIGN I10): the files the walk took from the index are asked of git's attribute
 * rules (core.autocrlf, text, eol, ident, filter, working-tree-encoding), and those that may
 * differ are read after all. The rules are loaded only when there is such a file.
 */
async function readConverted(w: Walk, index: GitIndex | null): Promise<void> {
  if (w.clean.length === 0) return;
  // the directories above the files asked about: a .gitattributes there edited since checkout
  // means the file's bytes followed the index's rules, so both are asked
  const dirs = new Set<string>(['']);
  for (const c of w.clean) for (let d = parentDir(w.out[c.at].path); d !== '' && !dirs.has(d); d = parentDir(d)) dirs.add(d);
  const rules = await conversionRules(w.repo, index, { checkoutToo: await attributesChanged(w.repo, index, dirs) });
  if (rules.none && w.withAttributes.size === 0 && w.clean.every((c) => !hasAttributesAbove(w, w.out[c.at].path))) return;
  // what the walk saw: a directory it listed has a .gitattributes or not; others are looked up
  const hint = (dir: string) => (w.withAttributes.has(dir) ? true : w.walked.has(dir) ? false : undefined);
  await Promise.all(
    w.clean.map(async (c) => {
      const rel = w.out[c.at].path;
      if (await rules.mayConvert(rel, hint)) w.out[c.at] = await readItem(w.repo, rel, c.abs, c.st, w.opts, w);
    }),
  );
}

/** Could a directory above `rel` that the walk did not list hold a `.gitattributes`? (Those it listed are known.) */
function hasAttributesAbove(w: Walk, rel: string): boolean {
  for (let d = parentDir(rel); d !== ''; d = parentDir(d)) if (!w.walked.has(d)) return true;
  return false;
}

function parentDir(rel: string): string {
  const i = rel.lastIndexOf('/');
  return i < 0 ? '' : rel.slice(0, i);
}

async function visit(w: Walk, rel: string): Promise<void> {
  const repo = w.repo;
  // rel is already normal (checked as a scope root, or a name from readdir below one)
  const abs = absPath(repo.worktree, rel);
  const st = await w.limit.run(() => repo.fs.lstat(abs));
  if (!st) return;
  let item: WorktreeItem | null = null;
  if (st.type === 'file') {
    const [dir, name] = splitRel(rel);
    item = cleanFileItem(w, rowsIn(w, dir), name, rel, st);
    if (item) w.clean.push({ at: w.out.length, abs, st });
  }
  item ??= await readItem(repo, rel, abs, st, w.opts, w);
  if (rel !== '') w.out.push(item);
  if (item.kind !== 'dir') return;
  const names = await w.limit.run(() => repo.fs.readdir(abs));
  w.walked.add(rel);
  if (names.includes(ATTRIBUTES)) w.withAttributes.add(rel);
  // a directory holding `.git` (a submodule's checkout, a nested repository) belongs to that
  // repository: it is captured as a directory, its content is neither captured nor touched
  if (rel !== '' && names.some(isDotGit)) {
    w.nested.push(rel);
    return;
  }
  await Promise.all(names.filter((n) => !isDotGit(n)).map((n) => visit(w, rel === '' ? n : `${rel}/${n}`)));
}

function absPath(worktree: string, rel: string): string {
  return rel === '' ? worktree : worktree === '/' ? `/${rel}` : `${worktree}/${rel}`;
}

/**
 * visit() with synchronous calls: directories and stat-matched files are recorded as found;
 * anything whose content must be read is left in `rest`. The same items as visit() finds.
 */
function walkSync(
  w: Walk,
  root: string,
  lstat: (p: string) => FileStat | null,
  readdir: (p: string) => string[],
  rest: Array<{ rel: string; abs: string; st: FileStat }>,
): void {
  // three parallel stacks (path, name, the rows of its directory): no object per entry
  const [rootDir, rootName] = splitRel(root);
  const rels = [root];
  const names = [rootName];
  const dirRows = [rowsIn(w, rootDir)];
  while (rels.length > 0) {
    const rel = rels.pop() as string;
    const name = names.pop() as string;
    const here = dirRows.pop() as Map<string, number> | null;
    const abs = absPath(w.repo.worktree, rel);
    const st = lstat(abs);
    if (!st) continue;
    if (st.type === 'directory') {
      if (rel !== '') w.out.push({ path: rel, kind: 'dir' });
      const children = readdir(abs);
      w.walked.add(rel);
      if (children.includes(ATTRIBUTES)) w.withAttributes.add(rel);
      // a directory holding `.git` belongs to another repository (see visit)
      if (rel !== '' && children.some(isDotGit)) {
        w.nested.push(rel);
        continue;
      }
      // pushed in reverse name order, so that they come off the stack in order: the items are
      // then nearly sorted already, and sorting them (sortByPath) takes few comparisons
      children.sort();
      const rowsHere = rowsIn(w, rel);
      for (let k = children.length - 1; k >= 0; k--) {
        const n = children[k];
        if (isDotGit(n)) continue;
        rels.push(rel === '' ? n : `${rel}/${n}`);
        names.push(n);
        dirRows.push(rowsHere);
      }
      continue;
    }
    const clean = st.type === 'file' ? cleanFileItem(w, here, name, rel, st) : null;
    if (clean) {
      w.clean.push({ at: w.out.length, abs, st });
      w.out.push(clean);
    } else rest.push({ rel, abs, st });
  }
}

const ATTRIBUTES = '.gitattributes';

function isDotGit(n: string): boolean {
  return n.length === 4 && n.toLowerCase() === '.git';
}

/**
 * A file whose stat data matches its index entry (found by name among `here`, the rows of its
 * directory): its item, with the entry's id, without reading it. The index's blob exists (git
 * writes a blob before it stages it); a restore reads and checks every blob it needs before its
 * first write, so a damaged repository is refused there.
 */
function cleanFileItem(w: Walk, here: Map<string, number> | null, name: string, rel: string, st: FileStat): WorktreeItem | null {
  const at = here === null ? undefined : here.get(name);
  const known = at === undefined ? null : cleanEntryOid(w, at, st);
  return known === null ? null : { path: rel, kind: 'file', mode: fileMode(st), oid: known, size: st.size };
}

/** The stage-0 entry's id when the file's stat data says it is that entry's content. */
function cleanEntryOid(w: Walk, at: number, st: FileStat): string | null {
  const rows = w.rows;
  if (!rows || !w.opts.indexStat || at < 0) return null;
  const e = rows.entry(at);
  if (e.stage !== 0 || e.assumeValid || e.skipWorktree || e.intentToAdd) return null;
  if (e.mode !== fileMode(st)) return null;
  // git's ie_match_stat; a cached size of 0 is never trusted (git smudges racily clean entries so)
  if (!e.statEquals(st) || st.size >>> 0 === 0) return null;
  // racily clean: written in the same instant as the index, it may have changed unseen
  if (isRacy(e, w.opts.indexStat)) return null;
  return e.oid;
}

/** The git mode of a regular file: executable when any execute bit is set (git's `ce_mode_from_stat`). */
function fileMode(st: FileStat): typeof MODE_FILE | typeof MODE_EXECUTABLE {
  return st.mode & 0o111 ? MODE_EXECUTABLE : MODE_FILE;
}

/** An item from its content: a link read, a file read and hashed (and written when opts.writeObjects). */
export async function readItem(
  repo: Repository,
  rel: string,
  abs: string,
  st: FileStat,
  opts: CaptureOptions,
  w?: Walk,
): Promise<WorktreeItem> {
  const run = <T>(f: () => Promise<T>) => (w ? w.limit.run(f) : f());
  if (st.type === 'directory') return { path: rel, kind: 'dir' };
  if (st.type === 'symlink') {
    const target = await run(() => repo.fs.readlink(abs));
    const bytes = encodePath(target);
    const oid = opts.writeObjects
      ? await run(() => (opts.writer ?? repo.odb).write('blob', bytes))
      : objectId('blob', bytes, repo.objectFormat, repo.hash);
    return { path: rel, kind: 'symlink', target, oid };
  }
  const mode = fileMode(st);
  if (st.type === 'file' && st.size >= repo.streamThreshold && canStream(repo.odb)) {
    // large: never held whole — hashed, then deflated to a loose object, piece by piece
    const fs = repo.fs;
    const open = () => (fs.readChunks as NonNullable<typeof fs.readChunks>)(abs, CHUNK);
    const oid = opts.writeObjects
      ? await writeBlobStream(repo.odb, st.size, open, rel)
      : await hashBlobStream(repo.odb, st.size, open(), rel);
    return { path: rel, kind: 'file', mode, oid, size: st.size };
  }
  if (st.type === 'file') {
    const bytes = await run(() => repo.fs.readFile(abs));
    const oid = opts.writeObjects
      ? await run(() => (opts.writer ?? repo.odb).write('blob', bytes))
      : objectId('blob', bytes, repo.objectFormat, repo.hash);
    return { path: rel, kind: 'file', mode, oid, size: bytes.length };
  }
  throw new ScalpelError('UNSUPPORTED', `cannot capture '${rel}': not a regular file, symbolic link or directory`, {
    path: rel,
    capability: 'file-type',
  });
}

export function toRecord(e: IndexEntry): IndexRecord {
  const path = e.path;
  // a NUL byte decodes to U+0000, and only a NUL byte does
  if (path.indexOf('\0') >= 0) {
    throw new ScalpelError('BAD_ENTRY', `index entry '${path.replace(/\0/g, '\\0')}' has a NUL byte in its path`, {
      path,
      reason: 'nul-in-path',
    });
  }
  return { path, stage: e.stage, mode: e.mode, oid: e.oid, flags: e.flags };
}

export function indexRecordsUnder(index: GitIndex, roots: readonly string[]): IndexRecord[] {
  const rows = rowsOf(index);
  // one root: its rows are already in order and distinct
  if (roots.length === 1) return rowsUnder(rows, roots[0]).map((i) => toRecord(rows.entry(i)));
  const seen = new Set<number>();
  for (const r of roots) for (const i of rowsUnder(rows, r)) seen.add(i);
  return [...seen].sort((a, b) => a - b).map((i) => toRecord(rows.entry(i)));
}

export function reucUnder(index: GitIndex, roots: readonly string[]): ReucRecord[] {
  const out: ReucRecord[] = [];
  for (const x of index.extensions) {
    if (x.signature !== 'REUC' || !('records' in x)) continue;
    for (const r of x.records) {
      const p = decodePath(r.path);
      if (!roots.some((root) => root === '' || p === root || p.startsWith(root + '/'))) continue;
      out.push({
        path: p,
        modes: [...r.modes] as [number, number, number],
        oids: r.oids.map((o) => o ?? null) as [string | null, string | null, string | null],
      });
    }
  }
  return out.sort((a, b) => compareRel(a.path, b.path));
}

/** Sparse-index directory entries ("dir/", mode 040000) that contain `root`: a path inside one cannot be captured. */
export function sparseDirContaining(index: GitIndex, root: string): string | null {
  if (!index.extensions.some((x) => x.signature === 'sdir')) return null;
  const parts = root.split('/');
  for (let i = 1; i <= parts.length; i++) {
    const dir = parts.slice(0, i).join('/') + '/';
    if (dir === root + '/') break;
    const rows = rowsOf(index);
    if (rowsAt(rows, dir).some((k) => rows.entry(k).mode === MODE_TREE)) return dir;
  }
  return null;
}
