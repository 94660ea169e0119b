import { ScalpelError } from '../errors/index.js';
import { encodePath, utf8Decode, utf8Encode } from '../bytes/text.js';
import type { FileStat, Fs } from '../fs/types.js';
import type { ViewReader, WorktreeView } from '../fs/view.js';
import { joinPath } from '../fs/path.js';
import { toHex } from '../bytes/hex.js';
import { randomHex } from '../bytes/random.js';
import { oidLength } from '../hash/index.js';
import { decodeIndex, type GitIndex } from '../index/decode.js';
import type { IndexEntry } from '../index/entry.js';
import { compareBytes, equalBytes } from '../bytes/compare.js';
import { rowsOf, rowsUnder, type IndexRows } from '../index/rows.js';
import { objectId } from '../object/loose.js';
import type { ObjectWriter } from '../repo/object-batch.js';
import { MODE_EXECUTABLE, MODE_FILE, MODE_GITLINK, MODE_SYMLINK, MODE_TREE } from '../object/tree.js';
import type { Repository } from '../repo/repository.js';
import type { GitConfig } from '../repo/config.js';
import { isGitDirName, loadIgnoreRules, type DirRules, type IgnoreRules } from '../ignore/index.js';
import type { AttributeRules, DirAttributes } from '../attributes/index.js';
import { attributesChanged, conversionRules, excludesFileOf, gitConfigs, outsideRulesKey } from './conversions.js';
import { ignoreOptionsFromConfig } from '../ignore/index.js';
import { indexRecordsUnder, reucUnder } from './capture.js';
import { compareRel, covers, isAncestor, minimalRoots, parentOf, sortByPath } from '../model/scope.js';
import { fileModeOf, type AbsentParents, type FileMode, type PathState, type WorktreeItem } from '../model/state.js';

/**
 * Shell commands (issue 12, DESIGN "Agent integration"). A command changes paths nobody
 * declares, so before it runs the turn records git's view of the worktree — every tracked path,
 * every untracked path git does not ignore, the ignored files a person keeps by hand (`.env`, up
 * to `scalpel.shellIgnoredMax` bytes, 1 MiB by default) and the whole index — as a *baseline*;
 * after it, what differs from the baseline is what the command changed, and exactly those paths
 * join the turn with their state from before the command. Clean tracked files cost a stat: their
 * bytes are the index's blobs, already in the object database, and the index itself is kept as
 * a copy of its file. Ignored directories (node_modules, dist, build output) are not captured:
 * the baseline lists them, and what a command removed of them is named as not brought back.
 */

/** What one walk of the worktree found besides its files (which it hands to a visitor as it goes). */
interface WalkResult {
  /** Every directory walked (not ignored, or holding tracked paths, or one of the turn's own). */
  dirs: Set<string>;
  /** Ignored directories not walked (holding no tracked path), the topmost ones. */
  ignoredDirs: string[];
  /** Directories holding `.git`: other repositories, neither walked nor touched. */
  nested: string[];
}

/**
 * A walk's visitor: a file or symlink git sees (tracked, untracked, or hand-kept ignored), and
 * its directory's attribute rules when the walk follows them (`name`: its name there).
 */
type Visit = (rel: string, st: FileStat, handKept: boolean, attrs: DirAttributes | null, name: string) => void;

/** One entry of a baseline that is not a clean tracked file: its state before the command. */
type BaselineEntry =
  /** [path, 'f', mode, oid | null (not read: the turn holds it already), size, stat key] */
  [string, 'f', number, string | null, number, string] | [string, 'l', string, string, string];

export interface ShellBaseline {
  format: 'git-scalpel-shell/2';
  session: string;
  command: string;
  at: string;
  /** The index file as it was, copied beside the baseline (null: there was none). */
  indexFile: string | null;
  /** Non-clean files and links, with what they held. */
  entries: BaselineEntry[];
  dirs: string[];
  ignoredDirs: string[];
  /**
   * Tracked paths (any stage) that held no file or symlink: deleted by the person, or made a
   * directory. A command that leaves them so changed nothing there, whatever the index says.
   */
  absent: string[];
  /** Hand-kept ignored files over the size limit: not captured. */
  tooLarge: string[];
  nested: string[];
  /**
   * Ignored directories the session's turns made from nothing, small enough to list: walked as
   * any other directory (their files as hand-kept ignored ones), so what the command does in
   * them is the turn's (I11).
   */
  own: string[];
  /**
   * What the ignored directories and the other repositories' checkouts held (their `.git` left
   * out), where there were few enough entries to list (`scalpel.shellIgnoredList`, 2,000 a
   * directory): [directory, [[path, stat key], ...]], or [directory, null, its own stat key]
   * when it held more. Never read: only told apart after.
   */
  ignoredListings: Array<[string, Array<[string, string]>] | [string, null, string]>;
  /**
   * Names the walk that took it through a watched view, whose records the process keeps: the walk
   * after the command, in that process, takes from them the directories nothing happened in since.
   */
  walk?: string;
}

/** What a baseline's walk through a view stood on, kept by the view for the walk after the command. */
interface WalkAfter {
  /** The rules' sources outside the worktree (outsideRulesKey) when it was taken. */
  outside: string | null;
  /** The record in effect for each directory it walked. */
  records: Map<string, DirRecord>;
}

/** What a command changed, from its baseline: the paths, their state before it, what could not be captured. */
export interface ShellChanges {
  paths: string[];
  state: PathState;
  /** Ignored directories, files in them and oversized hand-kept files that existed before and are gone or changed, and other repositories' checkouts gone: not brought back by a rewind. */
  uncovered: string[];
  /** What the command created or changed inside ignored directories that existed before (never captured): left in place by a rewind. */
  left: string[];
}

/** A key of the stat fields a change shows in (git's ie_match_stat, with nanoseconds). */
function statKey(st: FileStat): string {
  return `${st.size}:${st.mtimeSeconds}.${st.mtimeNanoseconds}:${st.ctimeSeconds}.${st.ctimeNanoseconds}:${st.ino}:${st.mode}`;
}

/**
 * The ignore rules git applies here. core.excludesFile usually lives in the person's global
 * config (`~/.gitconfig`, `$XDG_CONFIG_HOME/git/config`), read here as git reads them, the
 * repository's own setting winning.
 */
async function rulesOf(repo: Repository, configs: readonly GitConfig[]): Promise<IgnoreRules> {
  const excludesFile = excludesFileOf(configs);
  const { ignoreCase } = ignoreOptionsFromConfig(repo.config);
  return loadIgnoreRules(repo.fs, { worktree: repo.worktree, gitDir: repo.loc.commonDir, excludesFile, ignoreCase, env: repo.env });
}

/**
 * What a walk through a view keeps of one directory, to take again at a later walk while nothing
 * it was derived from changed: the view's mark of the directory is the same (no event touched its
 * listing or the entries' lstat the view keeps), the entries the view does not keep stat as they
 * did, it is walked as (or not as) the turn's own again, the rules above it are the same, and so
 * is every other input (the memo's key: the index's bytes and stat, the configs, the rule files
 * outside the worktree).
 */
interface DirRecord {
  mark: object;
  /** Walked as (beneath) an ignored directory of the turn's own. */
  mine: boolean;
  /** It holds another repository's `.git`: not walked. */
  nested: boolean;
  /** Its listing had a `.gitignore`, a `.gitattributes`. */
  gitignore: boolean;
  attributes: boolean;
  /**
   * Its rule files (`.gitignore`, `.gitattributes`) and the lstat the view kept of each: the same
   * objects at a later walk mean no event touched them since, so what is beneath follows the same
   * rules. Null: one was not kept (what is beneath is walked again whenever this one is).
   */
  rules: Array<[string, FileStat | null]> | null;
  /** Entries whose lstat the view did not keep: [name, stat key ('d': a directory; '': nothing there)]. */
  unkept: Array<[string, string]>;
  /** Files and links given to the visitor: [name, lstat, hand-kept]. */
  visits: Array<[string, FileStat, boolean]>;
  /** Rows of the tracked files the memo's `clean` took, unvisited. */
  clean: number[];
  /**
   * Subdirectories: [name, 0: walked; 1: ignored, holding no tracked path (walked when the turn's
   * own), its path] (the path made once: a string whose hash the maps and sets it keys keep).
   */
  subdirs: Array<[string, 0 | 1, string]>;
}

/** A walk's memory across walks through one view, for the inputs its key names. */
interface WalkMemo {
  /** The record of a directory the walk may take again (its mark decides). */
  get(rel: string): DirRecord | undefined;
  /** The record in effect for a directory walked: taken again, or made anew. */
  use(rel: string, rec: DirRecord, made: boolean): void;
  /**
   * A tracked file whose visit would only mark it found (clean: its bytes are its blob): the row
   * to mark, marked; else -1 (it is visited). Depends on nothing but the memo key's inputs and the
   * arguments.
   */
  clean(rel: string, st: FileStat, attrs: DirAttributes | null, name: string): number;
  /** The rows a recorded directory's clean files mark found. */
  found(rows: readonly number[]): void;
  /** The row a record's clean file `rel` is named by (the index the records were made with). */
  row(rel: string): number | undefined;
}

/** `make`'s promise, made on the first call. */
function once<T>(make: () => Promise<T>): () => Promise<T> {
  let p: Promise<T> | null = null;
  return () => (p ??= make());
}

/** `make`'s promise, made on the first call with that call's argument. */
function onceWith<A, T>(make: (a: A) => Promise<T>): (a: A) => Promise<T> {
  let p: Promise<T> | null = null;
  return (a) => (p ??= make(a));
}

/** The same rule files, each with the very lstat the view kept then (no event touched it since)? */
function sameRules(a: DirRecord['rules'], b: DirRecord['rules']): boolean {
  if (!a || !b || a.length !== b.length) return false;
  return a.every(([n, st], i) => n === b[i][0] && st === b[i][1]);
}

/**
 * Do the entries the view did not keep stat as they did when `rec` was made (a directory: still
 * one)? Those it keeps now leave the list: an event about them from here on changes the mark.
 */
function unkeptSame(rec: DirRecord, rel: string, reader: ViewReader, skip?: ReadonlySet<string>): boolean {
  let nowKept = 0;
  for (const [name, key] of rec.unkept) {
    if (skip?.has(name)) continue;
    const st = reader.stat(rel, name, rel === '' ? name : `${rel}/${name}`);
    if ((st ? (st.type === 'directory' ? 'd' : statKey(st)) : '') !== key) return false;
    if (reader.kept(rel, name)) nowKept++;
  }
  if (nowKept > 0) rec.unkept = rec.unkept.filter(([name]) => !reader.kept(rel, name));
  return true;
}

/**
 * The entries of directory `rel` an event touched since `old` was made, when they are few (a
 * quarter of its names at most) and none is a rule file or a repository's `.git` (those decide
 * what the others are), the rule files above were the same (`old.rules` vouched) and the entries
 * the view does not keep stat as they did: `old` less those entries holds for the rest. Null:
 * walk it whole.
 */
function fewChanged(old: DirRecord, rel: string, names: readonly string[], reader: ViewReader, ignoreCase: boolean): Set<string> | null {
  if (old.rules === null) return null;
  const changed = reader.changed(rel, old.mark);
  if (changed === null || changed.length * 4 > names.length) return null;
  for (const n of changed)
    if (isGitignoreName(n, ignoreCase) || isAttributesName(n, ignoreCase) || isGitDirName(n, ignoreCase)) return null;
  const few = new Set(changed);
  return unkeptSame(old, rel, reader, few) ? few : null;
}

/**
 * Walk the worktree as `git status --untracked-files=all --ignored` sees it: `.git` never, an
 * ignored directory only when the index has paths beneath it (a tracked file is tracked whatever
 * the patterns say) or `own` says it is the turn's (made by it from nothing: everything in it is
 * then visited, as hand-kept ignored files), a directory holding `.git` (a nested repository, a
 * submodule's checkout) not. Files go to `visit` as they are found: a 100,000-file tree is not
 * held as stat objects. With a watched-worktree view's reader (src/fs/view.ts), the names and
 * stats come from it: from memory where its watcher vouches nothing changed, else from the disk;
 * with a `memo` too, a directory nothing changed in since the last walk is taken from its record
 * (its files' visits, its clean rows, its subdirectories), not visited entry by entry.
 */
async function walk(
  repo: Repository,
  index: TrackedPaths,
  rules: IgnoreRules,
  visit: Visit,
  attributes: AttributeRules | null = null,
  own: (dir: string) => boolean | Promise<boolean> = () => false,
  reader: ViewReader | null = null,
  memo: WalkMemo | null = null,
): Promise<WalkResult> {
  const fs = repo.fs;
  const out: WalkResult = { dirs: new Set(), ignoredDirs: [], nested: [] };
  const root = repo.worktree;
  const abs = (rel: string) => (rel === '' ? root : root === '/' ? `/${rel}` : `${root}/${rel}`);
  const lstat = fs.lstatSync ? (fs.lstatSync.bind(fs) as (p: string) => FileStat | null) : null;
  const readdir = fs.readdirSync ? (fs.readdirSync.bind(fs) as (p: string) => string[]) : null;
  // a directory's rules, ignore and attribute, are entered when first asked for: a directory
  // taken from its record asks for neither (unless a file of it is visited, or a directory
  // beneath it is read again); its attribute rules are entered knowing from its listing whether
  // it has a .gitattributes (the first asker's hint)
  // `mine`: the directory is (beneath) an ignored one of the turn's own, walked whole; `fresh`: the
  // rule files of a directory above it may have changed since the records beneath were made
  interface Item {
    rel: string;
    rules: () => Promise<DirRules>;
    attrs: (hasAttributes: boolean | undefined) => Promise<DirAttributes | null>;
    mine: boolean;
    fresh: boolean;
  }
  const hint = (rel: string, is: (n: string, ic: boolean) => boolean) => reader?.held(rel)?.some((n) => is(n, rules.ignoreCase));
  const child = (parent: Item, rel: string, name: string, mine: boolean, fresh: boolean, sub?: DirRules): Item => ({
    rel,
    rules: sub ? () => Promise.resolve(sub) : once(async () => (await parent.rules()).enter(name, hint(rel, isGitignoreName))),
    attrs: onceWith(async (has: boolean | undefined) => (await parent.attrs(hint(parent.rel, isAttributesName)))?.enter(name, has) ?? null),
    mine,
    fresh,
  });
  const stack: Item[] = [
    {
      rel: '',
      rules: () => Promise.resolve(rules.root),
      attrs: () => Promise.resolve(attributes?.root ?? null),
      mine: false,
      fresh: false,
    },
  ];
  // what a record says of its directory's entries, given as a walk of them would: its files'
  // visits, its clean rows found, its subdirectories. A subdirectory whose record holds (its mark
  // is the same, it was made walked as it is walked now: as the turn's own or not, the entries the
  // view does not keep stat as they did) is given from its record in turn, in this loop: no look
  // at its listing, no turn of the walk's own loop; any other is pushed, walked as the loop walks
  const replay = async (top: Item, rec: DirRecord, m: WalkMemo, r: ViewReader) => {
    // a directory given from its record needs an Item (its rules, its attributes) only when a file
    // of it is visited or a subdirectory of it is pushed: made then, from its parent's
    interface Lazy {
      rel: string;
      name: string;
      mine: boolean;
      parent: Lazy | null;
      item: Item | null;
    }
    const itemOf = (l: Lazy): Item => (l.item ??= child(itemOf(l.parent as Lazy), l.rel, l.name, l.mine, false));
    // no destructuring of arrays in this loop: unoptimized, each one allocates an iterator (measured)
    const todo: Array<{ at: Lazy; d: DirRecord }> = [{ at: { rel: top.rel, name: '', mine: top.mine, parent: null, item: top }, d: rec }];
    while (todo.length > 0) {
      const next = todo.pop() as { at: Lazy; d: DirRecord };
      const at = next.at;
      const d = next.d;
      const rel = at.rel;
      const mine = at.mine;
      if (d !== rec) m.use(rel, d, false);
      if (d.nested) {
        out.nested.push(rel);
        continue;
      }
      const visits = d.visits;
      if (visits.length) {
        const attrs = await itemOf(at).attrs(d.attributes);
        for (let i = 0; i < visits.length; i++) {
          const v = visits[i];
          visit(rel === '' ? v[0] : `${rel}/${v[0]}`, v[1], v[2], attrs, v[0]);
        }
      }
      if (d.clean.length) m.found(d.clean);
      const subdirs = d.subdirs;
      for (let i = 0; i < subdirs.length; i++) {
        const e = subdirs[i];
        const name = e[0];
        const kind = e[1];
        const path = e[2];
        if (kind === 1 && !(await own(path))) {
          out.ignoredDirs.push(path);
          continue;
        }
        out.dirs.add(path);
        const subMine = mine || kind === 1;
        const k = kind === 0 ? m.get(path) : undefined;
        if (k && k.mark === r.mark(path) && k.mine === subMine && (k.unkept.length === 0 || unkeptSame(k, path, r)))
          todo.push({ at: { rel: path, name, mine: subMine, parent: at, item: null }, d: k });
        else stack.push(child(itemOf(at), path, name, subMine, false));
      }
    }
  };
  while (stack.length > 0) {
    const item = stack.pop() as Item;
    const { rel, mine, fresh } = item;
    const names = reader ? reader.names(rel) : readdir ? readdir(abs(rel)) : await fs.readdir(abs(rel));
    // taken before anything else is read of it: an event after this changes the mark
    const mark = memo && reader ? reader.mark(rel) : null;
    const old = mark && memo ? memo.get(rel) : undefined;
    if (old && reader && memo && old.mark === mark && old.mine === mine && !fresh && unkeptSame(old, rel, reader)) {
      // nothing it was derived from changed: its record, not its entries
      memo.use(rel, old, false);
      if (old.nested) out.nested.push(rel);
      else await replay(item, old, memo, reader);
      continue;
    }
    // a few of its entries changed, nothing else it was derived from: the record less those
    // entries is given as it was, and those entries are walked as a directory's are below
    const few = old && reader && memo && mark && old.mine === mine && !fresh ? fewChanged(old, rel, names, reader, rules.ignoreCase) : null;
    let rec: DirRecord | null;
    let list = names;
    let freshBelow: boolean;
    let hasAttributes: boolean;
    if (few && old && mark && memo && reader) {
      // the clean rows of the changed entries go (a copy either way: the changed entries' rows join it)
      const drop = new Set<number>();
      if (old.clean.length)
        for (const n of few) {
          const row = memo.row(rel === '' ? n : `${rel}/${n}`);
          if (row !== undefined) drop.add(row);
        }
      rec = {
        ...old,
        mark,
        unkept: old.unkept.filter(([n]) => !few.has(n)),
        visits: old.visits.filter(([n]) => !few.has(n)),
        clean: drop.size ? old.clean.filter((row) => !drop.has(row)) : old.clean.slice(),
        subdirs: old.subdirs.filter(([n]) => !few.has(n)),
      };
      if (rec.nested) {
        memo.use(rel, rec, true);
        out.nested.push(rel);
        continue;
      }
      await replay(item, rec, memo, reader);
      list = names.filter((n) => few.has(n));
      hasAttributes = rec.attributes;
      // its rule files are the same, and so are those above it (not fresh): the records beneath hold
      freshBelow = false;
    } else {
      let gitignore = false;
      hasAttributes = false;
      let nested = false;
      const ruleNames: string[] = [];
      for (const n of names) {
        const g = isGitignoreName(n, rules.ignoreCase);
        const a = !g && isAttributesName(n, rules.ignoreCase);
        if (g || a) ruleNames.push(n);
        gitignore ||= g;
        hasAttributes ||= a;
        nested ||= rel !== '' && isGitDirName(n, rules.ignoreCase);
      }
      if (nested) {
        out.nested.push(rel);
        if (mark && memo)
          memo.use(
            rel,
            {
              mark,
              mine,
              nested,
              gitignore,
              attributes: hasAttributes,
              rules: [],
              unkept: [],
              visits: [],
              clean: [],
              subdirs: [],
            },
            true,
          );
        continue;
      }
      let ruleStats: DirRecord['rules'] = null;
      if (mark && reader) {
        ruleStats = [];
        for (const n of ruleNames) {
          ruleStats.push([n, reader.stat(rel, n, rel === '' ? n : `${rel}/${n}`)]);
          if (!reader.kept(rel, n)) ruleStats = null;
          if (!ruleStats) break;
        }
      }
      rec = mark
        ? { mark, mine, nested, gitignore, attributes: hasAttributes, rules: ruleStats, unkept: [], visits: [], clean: [], subdirs: [] }
        : null;
      // what is beneath follows this directory's rule files: its records hold while they are the same
      freshBelow = fresh || !rec || !old || !sameRules(old.rules, rec.rules);
    }
    const here = await item.rules();
    const attrs = await item.attrs(hasAttributes);
    for (const name of list) {
      if (isGitDirName(name, rules.ignoreCase)) continue;
      const path = rel === '' ? name : `${rel}/${name}`;
      const st = reader ? reader.stat(rel, name, path) : lstat ? lstat(abs(path)) : await fs.lstat(abs(path));
      if (rec && reader && !reader.kept(rel, name)) rec.unkept.push([name, st ? (st.type === 'directory' ? 'd' : statKey(st)) : '']);
      if (!st) continue;
      if (st.type === 'directory') {
        const sub = await here.enter(name, hint(path, isGitignoreName));
        let ours = mine;
        if (sub.excluded && !index.dirs.has(path) && !index.rows.has(path) && !mine) {
          rec?.subdirs.push([name, 1, path]);
          if (!(await own(path))) {
            out.ignoredDirs.push(path);
            continue;
          }
          ours = true;
        } else rec?.subdirs.push([name, 0, path]);
        out.dirs.add(path);
        stack.push(child(item, path, name, ours, freshBelow, sub));
        continue;
      }
      let handKept: boolean;
      if (index.rows.has(path)) {
        const row = memo ? memo.clean(path, st, attrs, name) : -1;
        if (row >= 0) {
          rec?.clean.push(row);
          continue;
        }
        handKept = false;
      } else if (mine) handKept = true;
      else if (!here.excluded) handKept = here.isIgnored(name, false);
      // untracked inside an ignored directory that holds tracked paths: ignored
      else continue;
      visit(path, st, handKept, attrs, name);
      rec?.visits.push([name, st, handKept]);
    }
    if (rec && memo) memo.use(rel, rec, true);
  }
  return out;
}

function isGitignoreName(n: string, ignoreCase: boolean): boolean {
  return n === '.gitignore' || (ignoreCase && n.length === 10 && n.toLowerCase() === '.gitignore');
}

function isAttributesName(n: string, ignoreCase: boolean): boolean {
  return n === '.gitattributes' || (ignoreCase && n.length === 14 && n.toLowerCase() === '.gitattributes');
}

/** The index's paths: the row of each path's stage-0 entry (or first stage), and every directory above one. */
interface TrackedPaths {
  rows: Map<string, number>;
  zero: Map<string, number>;
  dirs: Set<string>;
  /** Each path's first row (the values of `rows`), in index order. */
  first: Int32Array;
  /** The rows of stage 0 (the values of `zero`), in index order. */
  zeroRows: Int32Array;
  /** The directories ('' the root) whose `.gitattributes` the index has. */
  attributeDirs: string[];
  table: IndexRows | null;
}

/**
 * trackedPaths, kept by the view across walks for an index it has seen: the maps name paths and
 * row numbers, which depend only on the index's bytes, named by their trailing checksum and
 * length (as git's own caches trust the checksum); the table is this read's. Not kept for an
 * index without a checksum (index.skipHash), nor without a view.
 */
function trackedPathsOf(
  index: GitIndex | null,
  bytes: Uint8Array | null | undefined,
  reader: ViewReader | null,
  hashLength: number,
): TrackedPaths {
  const bytesKey = indexBytesKey(bytes, hashLength);
  if (!index || !reader || !bytesKey) return trackedPaths(index);
  const key = `tracked:${bytesKey}`;
  const kept = reader.remember(key, () => {
    const t = trackedPaths(index);
    return { rows: t.rows, zero: t.zero, dirs: t.dirs, first: t.first, zeroRows: t.zeroRows, attributeDirs: t.attributeDirs };
  });
  return { ...kept, table: rowsOf(index) };
}

/** Do two indexes name the same paths (what a walk enters and visits depends on those alone)? */
function samePaths(a: TrackedPaths, b: TrackedPaths): boolean {
  if (a.rows.size !== b.rows.size) return false;
  for (const p of a.rows.keys()) if (!b.rows.has(p)) return false;
  return true;
}

/** The index file's bytes named by their trailing checksum and length, or null (none, or index.skipHash). */
function indexBytesKey(bytes: Uint8Array | null | undefined, hashLength: number): string | null {
  if (!bytes || bytes.length < hashLength) return null;
  const trailer = bytes.subarray(bytes.length - hashLength);
  return trailer.every((b) => b === 0) ? null : `${bytes.length}:${toHex(trailer)}`;
}

/**
 * The memo key of a baseline's walk (see WalkMemo): every input a directory's record depends on
 * besides the directory itself and the rule files above it. The index (its bytes, and its stat:
 * the racy-clean rule compares its mtime), whether the checkout direction of the attributes is
 * asked too, and the rules' sources outside the worktree. Null: not kept (no checksum, or a rule
 * file's path that cannot be resolved).
 */
function walkMemoKey(
  read: { bytes: Uint8Array; stat: FileStat },
  outside: string | null,
  checkoutToo: boolean,
  hashLength: number,
): string | null {
  const index = indexBytesKey(read.bytes, hashLength);
  if (index === null || outside === null) return null;
  return `walk:${index}:${statKey(read.stat)}:${checkoutToo ? 1 : 0}\n${outside}`;
}

function trackedPaths(index: GitIndex | null): TrackedPaths {
  const rows = new Map<string, number>();
  const zero = new Map<string, number>();
  const dirs = new Set<string>();
  const table = index ? rowsOf(index) : null;
  const first: number[] = [];
  const zeroRows: number[] = [];
  const attributeDirs = new Set<string>();
  if (table) {
    let lastDir: string | null = null;
    for (let i = 0; i < table.count; i++) {
      const e = table.entry(i);
      const p = e.path;
      if (!rows.has(p)) {
        rows.set(p, i);
        first.push(i);
      }
      if (e.stage === 0) {
        zero.set(p, i);
        zeroRows.push(i);
      }
      const dir = parentOf(p);
      if (p === '.gitattributes' || p.endsWith('/.gitattributes')) attributeDirs.add(dir);
      if (dir === lastDir) continue;
      lastDir = dir;
      for (let d = dir; d !== '' && !dirs.has(d); d = parentOf(d)) dirs.add(d);
    }
  }
  return { rows, zero, dirs, first: Int32Array.from(first), zeroRows: Int32Array.from(zeroRows), attributeDirs: [...attributeDirs], table };
}

/**
 * The stage-0 entry's id when `st` says the file is that entry's content (as capture's clean
 * check), or the link's target is (git's ie_match_stat treats a symlink's lstat as a file's).
 */
function cleanOid(e: IndexEntry | undefined, st: FileStat, indexStat: FileStat | null): string | null {
  if (!e || !indexStat || e.stage !== 0 || e.assumeValid || e.skipWorktree || e.intentToAdd || !sameKind(e.mode, st)) return null;
  if (!e.statEquals(st) || st.size >>> 0 === 0) return null;
  const ms = e.mtimeSeconds;
  if (indexStat.mtimeSeconds < ms || (indexStat.mtimeSeconds === ms && indexStat.mtimeNanoseconds <= e.mtimeNanoseconds)) return null;
  return e.oid;
}

/** Does `st` hold what an entry of `mode` names: a file of that mode, or a symlink? */
function sameKind(mode: number, st: FileStat): boolean {
  return st.type === 'symlink' ? mode === MODE_SYMLINK : st.type === 'file' && mode === fileModeOf(st.mode);
}

export interface BaselineOptions {
  session: string;
  command: string;
  /** Paths the turn already holds: their bytes need not be read again (the first capture wins). */
  held: readonly string[];
  /** Paths beneath `held` someone else changed since the agent's last write there: read all the same. */
  others?: readonly string[];
  /** What the session's turns made from nothing (an ignored directory there is the turn's own). */
  made?: readonly string[];
  /** Where blobs go (a batch, flushed before the command runs). */
  writer: ObjectWriter;
  now: Date;
  /** A watched-worktree view: the walk asks it instead of the disk (the same baseline, see walkWith). */
  view?: WorktreeView | null;
}

/**
 * `run` with the view's reader when the view can vouch (and the repository's filesystem is the
 * one it watches with), else with none (the walk asks the filesystem): the same result either way.
 */
async function withReader<T>(
  repo: Repository,
  view: WorktreeView | null | undefined,
  run: (reader: ViewReader | null) => Promise<T>,
): Promise<T> {
  const reader = view && repo.fs.name === 'node:fs' ? await view.open(repo.worktree) : null;
  try {
    return await run(reader);
  } finally {
    reader?.release();
  }
}

type Baseline = { baseline: ShellBaseline; indexBytes: Uint8Array | null; warnings: string[] };

/** Record the baseline before a shell command: returns it, with the index bytes to keep beside it. */
export async function takeBaseline(
  repo: Repository,
  read: { index: GitIndex; bytes: Uint8Array; stat: FileStat } | null,
  opts: BaselineOptions,
): Promise<Baseline> {
  return withReader(repo, opts.view, (reader) => baselineWith(repo, read, opts, reader));
}

async function baselineWith(
  repo: Repository,
  read: { index: GitIndex; bytes: Uint8Array; stat: FileStat } | null,
  opts: BaselineOptions,
  reader: ViewReader | null,
): Promise<Baseline> {
  // the configs are read once: the key and the rules are made of the same ones
  const configs = await gitConfigs(repo);
  // the rule files read before the rules are: a change in between gives the next baseline another key
  const outside = reader && read ? await outsideRulesKey(repo, configs) : null;
  const rules = await rulesOf(repo, configs);
  const idx = trackedPathsOf(read?.index ?? null, read?.bytes, reader, oidLength(repo.objectFormat));
  const max = Math.max(0, repo.config.getInt('scalpel.shellIgnoredMax', 1 << 20));
  const others = opts.others ?? [];
  const held = (p: string) => opts.held.some((r) => covers(r, p)) && !others.some((o) => covers(o, p));
  const tooLarge: string[] = [];
  // files whose content is not the index's: read after the walk
  const toRead: Array<{ rel: string; st: FileStat }> = [];
  // the tracked paths the walk found as files or links (by their first row)
  const found = new Uint8Array(idx.table?.count ?? 0);
  // a stat-clean file is its index blob only where no eol conversion or filter applies (DESIGN I10)
  const checkoutToo = read ? await attributesChanged(repo, read.index, idx.attributeDirs) : false;
  const attributes = read ? await conversionRules(repo, read.index, { checkoutToo, configs }) : null;
  const listMax = Math.max(0, repo.config.getInt('scalpel.shellIgnoredList', 2000));
  const made = opts.made ?? [];
  const own: string[] = [];
  // an ignored directory the turn made is walked when it is small enough to list (a dependency
  // tree an install made is not: listed by its own stat key as any large ignored directory)
  const isOwn = async (dir: string) => {
    if (!made.some((m) => covers(m, dir))) return false;
    if ((await listIgnored(repo, dir, listMax))[1] === null) return false;
    own.push(dir);
    return true;
  };
  // a tracked file whose bytes are its stage-0 blob: nothing to read (its first row, else -1)
  const cleanRow = (rel: string, st: FileStat, attrs: DirAttributes | null, name: string): number => {
    const z = idx.zero.get(rel);
    if (z === undefined || !idx.table || !cleanOid(idx.table.entry(z), st, read?.stat ?? null)) return -1;
    // a link's target is its blob whatever the attributes say (no conversion applies to it)
    if (st.type === 'file' && attrs !== null && !attrs.none && attrs.mayConvert(name)) return -1;
    return idx.rows.get(rel) ?? -1;
  };
  // through a view, what each directory gave is kept for the next baseline with the same inputs;
  // by one walk at a time (two at once could leave a directory's record from one beside its
  // subdirectories' from the other, across a change of its rule files): another walks without
  const memoKey = reader && read ? walkMemoKey(read, outside, checkoutToo, oidLength(repo.objectFormat)) : null;
  const slot = reader && memoKey ? reader.remember(memoKey, () => ({ dirs: new Map<string, DirRecord>(), busy: false })) : null;
  // the records this walk stands on, for the walk after the command (WalkAfter)
  const inUse = new Map<string, DirRecord>();
  const memo: WalkMemo | null =
    slot && !slot.busy
      ? {
          get: (rel) => slot.dirs.get(rel),
          use: (rel, rec, made) => {
            if (made) slot.dirs.set(rel, rec);
            inUse.set(rel, rec);
          },
          clean: (rel, st, attrs, name) => {
            const row = cleanRow(rel, st, attrs, name);
            if (row >= 0) found[row] = 1;
            return row;
          },
          found: (rows) => {
            for (let i = 0; i < rows.length; i++) found[rows[i]] = 1;
          },
          row: (rel) => idx.rows.get(rel),
        }
      : null;
  if (memo && slot) slot.busy = true;
  const w = await walk(
    repo,
    idx,
    rules,
    (rel, st, handKept, attrs, name) => {
      const row = idx.rows.get(rel);
      if (row !== undefined) {
        found[row] = 1;
        if (cleanRow(rel, st, attrs, name) >= 0) return;
      }
      if (handKept && st.type === 'file' && st.size > max) tooLarge.push(rel);
      else if (st.type === 'file' || st.type === 'symlink') toRead.push({ rel, st });
    },
    attributes,
    isOwn,
    reader,
    memo,
  ).then(
    (r) => {
      if (memo && slot) slot.busy = false;
      return r;
    },
    (e: unknown) => {
      // a walk that stopped part way may have left a directory's record made under rules the
      // records beneath it were not: none is taken again
      if (memo && slot) {
        slot.busy = false;
        slot.dirs.clear();
      }
      throw e;
    },
  );
  const entries: BaselineEntry[] = [];
  for (const { rel, st } of toRead) {
    const abs = joinPath(repo.worktree, rel);
    if (st.type === 'symlink') {
      const target = await repo.fs.readlink(abs);
      entries.push([rel, 'l', target, await opts.writer.write('blob', encodePath(target)), statKey(st)]);
      continue;
    }
    const mode = fileModeOf(st.mode);
    if (held(rel)) entries.push([rel, 'f', mode, null, st.size, statKey(st)]);
    else {
      const bytes = await repo.fs.readFile(abs);
      entries.push([rel, 'f', mode, await opts.writer.write('blob', bytes), bytes.length, statKey(st)]);
    }
  }
  entries.sort((x, y) => compareRel(x[0], y[0]));
  // in path order, not the walk's (a record patched walks its changed entries last)
  w.ignoredDirs.sort(compareRel);
  w.nested.sort(compareRel);
  const ignoredListings: ShellBaseline['ignoredListings'] = [];
  for (const d of [...w.ignoredDirs, ...w.nested]) ignoredListings.push(await listIgnored(repo, d, listMax));
  const baseline: ShellBaseline = {
    format: 'git-scalpel-shell/2',
    session: opts.session,
    command: opts.command,
    at: opts.now.toISOString(),
    indexFile: read ? 'index' : null,
    entries,
    dirs: [...w.dirs].sort(compareRel),
    ignoredDirs: w.ignoredDirs,
    absent: absentTracked(idx, found),
    tooLarge: tooLarge.sort(compareRel),
    nested: w.nested,
    own: own.sort(compareRel),
    ignoredListings,
  };
  if (memo && reader && memoKey) {
    // what each directory gave, as this walk found it, for the walk after the command
    baseline.walk = randomHex(8);
    const kept: WalkAfter = { outside, records: inUse };
    reader.remember(`after:${baseline.walk}`, () => kept);
  }
  return { baseline, indexBytes: read ? read.bytes : null, warnings: [...rules.warnings] };
}

/**
 * The tracked paths the walk did not find as a file or link, of those a worktree holds (not a
 * gitlink, not skip-worktree, not a sparse directory entry).
 */
function absentTracked(idx: TrackedPaths, found: Uint8Array): string[] {
  const table = idx.table;
  if (!table) return [];
  const out: string[] = [];
  // indexed: a typed array's iterator costs ~20 ns a row here, 2 ms at 100,000 entries
  const first = idx.first;
  for (let i = 0; i < first.length; i++) {
    const row = first[i];
    if (found[row]) continue;
    const p = table.path(row);
    const z = idx.zero.get(p);
    const e = table.entry(z ?? row);
    if (e.mode === MODE_GITLINK || e.mode === MODE_TREE || (z !== undefined && e.skipWorktree)) continue;
    out.push(p);
  }
  return out.sort(compareRel);
}

/**
 * What ignored directory `dir` holds, by path and stat key ('d' for a directory), walked until
 * `max` entries; past that, only the directory's own stat key (it is too large to list).
 */
async function listIgnored(
  repo: Repository,
  dir: string,
  max: number,
): Promise<[string, Array<[string, string]>] | [string, null, string]> {
  const fs = repo.fs;
  const abs = (rel: string) => joinPath(repo.worktree, rel);
  const self = await fs.lstat(abs(dir));
  const selfKey = self ? statKey(self) : '';
  const out: Array<[string, string]> = [];
  const stack = [dir];
  while (stack.length > 0) {
    const d = stack.pop() as string;
    let names: string[];
    try {
      names = fs.readdirSync ? fs.readdirSync(abs(d)) : await fs.readdir(abs(d));
    } catch {
      continue;
    }
    for (const n of names) {
      // another repository's own store is not its checkout (a commit there changes nothing here)
      if (isGitDirName(n, false)) continue;
      if (out.length >= max) return [dir, null, selfKey];
      const rel = `${d}/${n}`;
      const st = fs.lstatSync ? fs.lstatSync(abs(rel)) : await fs.lstat(abs(rel));
      if (!st) continue;
      if (st.type === 'directory') {
        out.push([rel, 'd']);
        stack.push(rel);
      } else out.push([rel, statKey(st)]);
    }
  }
  return [dir, out.sort((a, b) => compareRel(a[0], b[0]))];
}

export function encodeBaseline(b: ShellBaseline): Uint8Array {
  return utf8Encode(JSON.stringify(b));
}

export function decodeBaseline(bytes: Uint8Array): ShellBaseline {
  let b: ShellBaseline;
  try {
    b = JSON.parse(utf8Decode(bytes)) as ShellBaseline;
  } catch (e) {
    throw new ScalpelError('SNAPSHOT_CORRUPT', `shell baseline is not JSON: ${(e as Error).message}`, { reason: 'baseline-json' });
  }
  const format = (b as { format?: unknown } | null)?.format;
  if (
    !b ||
    (format !== 'git-scalpel-shell/2' && format !== 'git-scalpel-shell/1') ||
    !Array.isArray(b.entries) ||
    !Array.isArray(b.dirs) ||
    !Array.isArray(b.ignoredDirs)
  ) {
    throw new ScalpelError('SNAPSHOT_CORRUPT', 'shell baseline is malformed', { reason: 'baseline-shape' });
  }
  // a baseline an older version took before the command (it knew no absent paths, listed nothing)
  return {
    ...b,
    format: 'git-scalpel-shell/2',
    absent: Array.isArray(b.absent) ? b.absent : [],
    tooLarge: Array.isArray(b.tooLarge) ? b.tooLarge : [],
    nested: Array.isArray(b.nested) ? b.nested : [],
    own: Array.isArray(b.own) ? b.own : [],
    ignoredListings: Array.isArray(b.ignoredListings) ? b.ignoredListings : [],
    walk: typeof b.walk === 'string' ? b.walk : undefined,
  };
}

/**
 * The paths whose index entries (any stage: mode, id, flags) or resolve-undo record differ
 * between two indexes. Both are sorted the same way: one merge walk, ids compared as bytes.
 */
function indexDiff(a: GitIndex | null, b: GitIndex | null, out: Set<string>): void {
  const ra = a ? rowsOf(a) : null;
  const rb = b ? rowsOf(b) : null;
  const na = ra?.count ?? 0;
  const nb = rb?.count ?? 0;
  let i = 0;
  let j = 0;
  while (i < na || j < nb) {
    if (i >= na) {
      out.add((rb as IndexRows).path(j++));
      continue;
    }
    if (j >= nb) {
      out.add((ra as IndexRows).path(i++));
      continue;
    }
    const x = (ra as IndexRows).entry(i);
    const y = (rb as IndexRows).entry(j);
    const c = compareBytes(x.pathBytes, y.pathBytes) || x.stage - y.stage;
    if (c < 0) {
      out.add(x.path);
      i++;
    } else if (c > 0) {
      out.add(y.path);
      j++;
    } else {
      if (
        x.mode !== y.mode ||
        x.flagsWord !== y.flagsWord ||
        x.skipWorktree !== y.skipWorktree ||
        x.intentToAdd !== y.intentToAdd ||
        !equalBytes(x.oidBytes, y.oidBytes)
      )
        out.add(x.path);
      i++;
      j++;
    }
  }
  const ua = new Map((a ? reucUnder(a, ['']) : []).map((r) => [r.path, JSON.stringify(r)] as const));
  const ub = new Map((b ? reucUnder(b, ['']) : []).map((r) => [r.path, JSON.stringify(r)] as const));
  for (const [p, v] of ua) if (ub.get(p) !== v) out.add(p);
  for (const p of ub.keys()) if (!ua.has(p)) out.add(p);
}

/**
 * What the command changed since `baseline`: every path whose worktree state, index entries or
 * resolve-undo record differs, with the state before the command (for the turn), and what of
 * the uncaptured part (ignored directories, oversized hand-kept files, other repositories) it
 * touched. A tracked path that held nothing before (a person's unstaged deletion) and holds
 * nothing now did not change, whatever the index says of it.
 */
export async function shellChanges(
  repo: Repository,
  baseline: ShellBaseline,
  oldIndexBytes: Uint8Array | null,
  now: { index: GitIndex; stat: FileStat; bytes?: Uint8Array } | null,
  view?: WorktreeView | null,
): Promise<ShellChanges> {
  return withReader(repo, view, (reader) => changesWith(repo, baseline, oldIndexBytes, now, reader));
}

async function changesWith(
  repo: Repository,
  baseline: ShellBaseline,
  oldIndexBytes: Uint8Array | null,
  now: { index: GitIndex; stat: FileStat; bytes?: Uint8Array } | null,
  reader: ViewReader | null,
): Promise<ShellChanges> {
  const fs: Fs = repo.fs;
  const hashLength = oidLength(repo.objectFormat);
  // the index as the baseline kept it: the one read now when their bytes are the same (its checksum)
  const sameIndex = !!now?.bytes && !!oldIndexBytes && indexBytesKey(oldIndexBytes, hashLength) === indexBytesKey(now.bytes, hashLength);
  const old = sameIndex
    ? (now?.index ?? null)
    : oldIndexBytes
      ? decodeIndex(oldIndexBytes, { objectFormat: repo.objectFormat, verifyChecksum: false, lenient: true, hash: repo.hash })
      : null;
  const oldIdx = trackedPathsOf(old, oldIndexBytes, reader, hashLength);
  const nowIdx = trackedPathsOf(now?.index ?? null, now?.bytes, reader, hashLength);
  // the baseline's walk through this view, in this process: a directory whose mark is still the
  // one its record had then is as the baseline found it (when the rules outside the worktree and
  // the index's paths, which decide what the walk enters, are the same too)
  const kept = reader && baseline.walk ? reader.recall<WalkAfter>(`after:${baseline.walk}`) : undefined;
  const configs = await gitConfigs(repo);
  const outside = kept ? await outsideRulesKey(repo, configs) : null;
  const after = kept && outside !== null && kept.outside === outside && (sameIndex || samePaths(oldIdx, nowIdx)) ? kept : undefined;
  const rules = await rulesOf(repo, configs);
  const before = new Map(baseline.entries.map((e) => [e[0], e] as const));
  const absent = new Set(baseline.absent);
  const tooLarge = new Set(baseline.tooLarge);
  const changed = new Set<string>();
  // a path beneath a directory the baseline did not walk (ignored, another repository) is not
  // ours to judge; one that took the place of such a directory is (it is new, and git sees it)
  const ignoredBefore = (p: string) => baseline.ignoredDirs.some((d) => isAncestor(d, p)) || baseline.nested.some((d) => isAncestor(d, p));
  // what the walk leaves to read: files whose stat moved (the content decides)
  const toHash: Array<{ rel: string; st: FileStat; oid: string }> = [];
  // the baseline's entries seen, and the old index's rows (clean at the baseline) seen
  const seen = new Set<string>();
  const seenRows = new Uint8Array(oldIdx.table?.count ?? 0);
  const own = new Set(baseline.own);
  const memo: WalkMemo | null = after
    ? {
        get: (rel) => after.records.get(rel),
        use: () => undefined,
        // every file of a directory read again is visited (compared with what the baseline saw)
        clean: () => -1,
        // a clean file of a directory as the baseline found it: still its old index entry
        found: (rows) => {
          for (let i = 0; i < rows.length; i++) seenRows[rows[i]] = 1;
        },
        // the records are the baseline's: their rows are the old index's
        row: (rel) => oldIdx.rows.get(rel),
      }
    : null;
  const w = await walk(
    repo,
    nowIdx,
    rules,
    (rel, st) => {
      const e = before.get(rel);
      if (e) {
        seen.add(rel);
        if (e[1] === 'l') {
          if (st.type !== 'symlink') changed.add(rel);
          else if (statKey(st) !== e[4]) toHash.push({ rel, st, oid: e[3] });
          return;
        }
        if (st.type !== 'file' || e[2] !== fileModeOf(st.mode)) changed.add(rel);
        else if (statKey(st) !== e[5]) {
          // the turn holds it already (no id was taken): it just joins again
          if (e[3] === null) changed.add(rel);
          else toHash.push({ rel, st, oid: e[3] });
        }
        return;
      }
      const z = oldIdx.zero.get(rel);
      if (z !== undefined && oldIdx.table && !absent.has(rel) && !ignoredBefore(rel)) {
        const x = oldIdx.table.entry(z);
        if (x.mode === MODE_GITLINK) return;
        if (x.skipWorktree) {
          // not in the worktree before (a sparse checkout's): the command put it there
          changed.add(rel);
          return;
        }
        // clean at the baseline (it has no entry of its own): the old index entry is what it held
        seenRows[z] = 1;
        if (!sameKind(x.mode, st)) changed.add(rel);
        else if (!x.statEquals(st)) toHash.push({ rel, st, oid: x.oid });
        return;
      }
      // new since the baseline
      if (!tooLarge.has(rel) && !ignoredBefore(rel)) changed.add(rel);
    },
    null,
    (dir) => own.has(dir),
    reader,
    memo,
  );
  // a path the walk no longer sees because the command made it ignored (an edit of .gitignore)
  // is gone only if it is: its state decides, as for any other
  const ignoredNow = (p: string) => w.ignoredDirs.some((d) => covers(d, p));
  for (const [p, e] of before) {
    if (seen.has(p) || !ignoredNow(p)) continue;
    const st = await fs.lstat(joinPath(repo.worktree, p));
    if (!st) continue;
    seen.add(p);
    if (e[1] === 'l') {
      if (st.type !== 'symlink') changed.add(p);
      else if (statKey(st) !== e[4]) toHash.push({ rel: p, st, oid: e[3] });
    } else if (st.type !== 'file' || e[2] !== fileModeOf(st.mode) || e[3] === null) changed.add(p);
    else if (statKey(st) !== e[5]) toHash.push({ rel: p, st, oid: e[3] });
  }
  for (const t of toHash) {
    const abs = joinPath(repo.worktree, t.rel);
    const bytes = t.st.type === 'symlink' ? encodePath(await fs.readlink(abs)) : await fs.readFile(abs);
    if (objectId('blob', bytes, repo.objectFormat, repo.hash) !== t.oid) changed.add(t.rel);
  }
  // what was there and is gone
  for (const p of before.keys()) if (!seen.has(p)) changed.add(p);
  if (oldIdx.table) {
    const zeroRows = oldIdx.zeroRows;
    for (let i = 0; i < zeroRows.length; i++) {
      const z = zeroRows[i];
      if (seenRows[z]) continue;
      const p = oldIdx.table.path(z);
      if (seen.has(p) || before.has(p) || absent.has(p) || ignoredBefore(p)) continue;
      const x = oldIdx.table.entry(z);
      if (x.mode === MODE_GITLINK || x.skipWorktree) continue;
      changed.add(p);
    }
  }
  const dirsBefore = new Set(baseline.dirs);
  const ignoredThen = new Set(baseline.ignoredDirs);
  // a directory that was ignored and no longer is (the command edited .gitignore) is the same
  // directory: not the command's, nor what it held (told below, as for any ignored directory)
  for (const d of w.dirs) if (!dirsBefore.has(d) && !ignoredBefore(d) && !ignoredThen.has(d)) changed.add(d);
  // one made ignored is gone from the walk, not from the disk
  for (const d of dirsBefore)
    if (!w.dirs.has(d) && !(ignoredNow(d) && (await fs.lstat(joinPath(repo.worktree, d)))?.type === 'directory')) changed.add(d);
  // an ignored directory the command made from nothing (a build's `dist/`) is the turn's: the
  // rewind removes it; one that was there is not captured, what happened in it is told below
  for (const d of w.ignoredDirs) if (!ignoredThen.has(d) && !dirsBefore.has(d) && !ignoredBefore(d)) changed.add(d);
  if (!sameIndex) indexDiff(old, now?.index ?? null, changed);

  // what was not captured and is not as it was
  const uncovered: string[] = [];
  const left: string[] = [];
  const listMax = Math.max(0, repo.config.getInt('scalpel.shellIgnoredList', 2000));
  const listed = new Set<string>();
  for (const l of baseline.ignoredListings) {
    const d = l[0];
    listed.add(d);
    const st = await fs.lstat(joinPath(repo.worktree, d));
    if (!st || st.type !== 'directory') {
      uncovered.push(d);
      continue;
    }
    if (l[1] === null) {
      // too large to list: its own entries changed (made, removed, renamed), or not
      if (statKey(st) !== l[2]) left.push(d);
      continue;
    }
    const then = new Map(l[1]);
    const nowList = await listIgnored(repo, d, Math.max(listMax, then.size) * 2);
    if (nowList[1] === null) {
      // it grew past listing: what was there is checked one by one, the rest is named as a whole
      left.push(d);
      for (const [p, key] of then) {
        const cur = await fs.lstat(joinPath(repo.worktree, p));
        if (!cur || (key === 'd' ? cur.type !== 'directory' : statKey(cur) !== key)) uncovered.push(p);
      }
      continue;
    }
    const current = new Map(nowList[1]);
    for (const [p, key] of then) {
      const cur = current.get(p);
      if (cur === undefined || (cur !== key && !(key === 'd' && cur === 'd'))) uncovered.push(p);
    }
    for (const p of current.keys()) if (!then.has(p)) left.push(p);
  }
  const currentIgnored = new Set(w.ignoredDirs);
  for (const d of baseline.ignoredDirs) if (!listed.has(d) && !currentIgnored.has(d) && !w.dirs.has(d)) uncovered.push(d);
  for (const p of baseline.tooLarge) if (!(await fs.lstat(joinPath(repo.worktree, p)))) uncovered.push(p);
  // another repository's checkout gone (rm -rf vendor): its work is not ours to bring back
  const nestedNow = new Set(w.nested);
  for (const d of baseline.nested) if (!nestedNow.has(d)) uncovered.push(d);
  const paths = minimalRoots([...changed].filter((p) => !tooLarge.has(p)));
  return {
    paths,
    state: await stateBefore(repo, baseline, old, oldIdx.zero, paths),
    uncovered: minimalRoots(uncovered),
    left: minimalRoots(left),
  };
}

/** The state of `roots` before the command, from the baseline and the index as it was (`oldZero`: its stage-0 paths). */
async function stateBefore(
  repo: Repository,
  baseline: ShellBaseline,
  old: GitIndex | null,
  oldZero: ReadonlyMap<string, number>,
  roots: string[],
): Promise<PathState> {
  const absent = new Set(baseline.absent);
  const inRoots = (p: string) => roots.some((r) => covers(r, p));
  const items: WorktreeItem[] = [];
  const seen = new Set<string>();
  for (const e of baseline.entries) {
    if (!inRoots(e[0])) continue;
    seen.add(e[0]);
    if (e[1] === 'l') items.push({ path: e[0], kind: 'symlink', target: e[2], oid: e[3] });
    else if (e[3] !== null) items.push({ path: e[0], kind: 'file', mode: e[2] as FileMode, oid: e[3], size: e[4] });
  }
  const dirs = new Set(baseline.dirs);
  for (const d of baseline.dirs) if (inRoots(d)) items.push({ path: d, kind: 'dir' });
  // an ignored directory the command removed or replaced was a directory: a rewind makes it
  // again, empty (what it held is named as not brought back; another repository's checkout is
  // among `dirs` already)
  for (const d of baseline.ignoredDirs) if (inRoots(d) && !dirs.has(d)) items.push({ path: d, kind: 'dir' });
  if (old) {
    // clean tracked files (no baseline entry): what the old index says, a link's target from its blob
    const rows = rowsOf(old);
    for (const r of roots) {
      for (const i of rowsUnder(rows, r)) {
        const e = rows.entry(i);
        const p = e.path;
        if (
          e.stage !== 0 ||
          seen.has(p) ||
          absent.has(p) ||
          e.skipWorktree ||
          e.mode === MODE_GITLINK ||
          baseline.ignoredDirs.some((d) => covers(d, p))
        )
          continue;
        if (p !== r && !dirs.has(parentOf(p))) continue; // its directory was not there: it was not either
        seen.add(p);
        if (e.mode === MODE_SYMLINK) {
          const blob = await repo.odb.read(e.oid);
          items.push({ path: p, kind: 'symlink', target: utf8Decode(blob.content), oid: e.oid });
        } else if (e.mode === MODE_FILE || e.mode === MODE_EXECUTABLE)
          items.push({ path: p, kind: 'file', mode: e.mode, oid: e.oid, size: e.cachedSize });
      }
    }
  }
  const state: PathState = {
    roots,
    items: sortByPath(items),
    index: old ? indexRecordsUnder(old, roots) : [],
    reuc: old ? reucUnder(old, roots) : [],
  };
  // roots the command created in directories that were not there: the deepest ancestor that was
  // (a file counts: nothing was beneath it, and it is not a directory a restore would remove)
  const files = new Set(baseline.entries.map((e) => e[0]));
  const existed = (p: string) => dirs.has(p) || files.has(p) || (oldZero.has(p) && !absent.has(p));
  const absentParents: AbsentParents[] = [];
  for (const r of roots) {
    const parent = parentOf(r);
    if (parent === '' || existed(parent)) continue;
    let d = parentOf(parent);
    while (d !== '' && !existed(d)) d = parentOf(d);
    absentParents.push({ root: r, existing: d });
  }
  if (absentParents.length) state.absentParents = absentParents;
  return state;
}
