// git's ignore rules, as git applies them (dir.c `is_excluded`, `prep_exclude`,
// `last_matching_pattern_from_lists`), for a worktree walk.
//
//   const rules = await loadIgnoreRules(fs, { worktree, gitDir: commonDir, ...ignoreOptionsFromConfig(config), env });
//   // a walk enters directories through the rules and asks per entry:
//   const walk = async (dir: DirRules, names: string[]) => {
//     for (const name of names) {
//       if (isGitDirName(name, rules.ignoreCase)) continue;      // git never looks at `.git`
//       const st = await fs.lstat(abs(dir.path, name));
//       if (st.type === 'directory') {
//         const sub = await dir.enter(name);                       // reads name/.gitignore unless excluded
//         if (sub.excluded) { /* an ignored directory: not captured, listed */ }
//         else await walk(sub, await fs.readdir(abs(sub.path)));
//       } else if (dir.isIgnored(name, false)) { /* ignored, in a directory that is not: hand-kept */ }
//       else { /* untracked and not ignored, unless the index has it */ }
//     }
//   };
//   await walk(rules.root, await fs.readdir(worktree));
//   // or one path at a time (slower): await rules.isIgnored('a/b/c.log', false)
//
// What git does, and this module with it:
// - Sources, in precedence order: the `.gitignore` of the path's directory and of every parent
//   up to the worktree root (the deepest first), then `$GIT_DIR/info/exclude` (the common dir
//   of a linked worktree), then `core.excludesFile` (default `$XDG_CONFIG_HOME/git/ignore`, or
//   `$HOME/.config/git/ignore`). Within one list the last matching pattern wins; the first list
//   that has a match (positive or negative) decides.
// - A directory that is excluded excludes everything beneath it; nothing below it can be
//   re-included, and its .gitignore (and those below it) are not read.
// - A `.gitignore` that is a symlink is not read (git opens it with O_NOFOLLOW since 2.32;
//   checked with git 2.39.5, which warns "unable to access ... Too many levels of symbolic
//   links"): it is reported in `warnings`. info/exclude and core.excludesFile are followed.
//   An info/exclude or excludes file that is a directory makes git die ("cannot use ... as an
//   exclude file"): loadIgnoreRules throws BAD_PATH.
// - File syntax (parse.ts): BOM, CRLF, `#` comments, `\#`, `\!`, trailing spaces unless
//   escaped, `!`, trailing `/`, anchoring by a leading or inner `/`, `**` forms, `[...]` /
//   `[!...]` / `[:class:]`; names and patterns are bytes (non-UTF-8 bytes travel as
//   U+DC80..U+DCFF in path strings, bytes/text.ts).
// - core.ignoreCase: ASCII-only case folding, with wildmatch's quirks (below).
// - TRACKED FILES ARE NEVER IGNORED for git status: these rules answer the pattern question only.
//   A caller classifying a worktree must check the index first (a tracked path is tracked,
//   whatever the patterns say), as `git status` and `git check-ignore` (without --no-index) do.
//
// How: parse.ts reads files as git does; compile.ts reads each pattern with wildmatch's grammar
// and writes it for the `ignore` package in a form it cannot read differently; list.ts asks the
// package one negated pattern run at a time (or compares literal patterns as strings, as git
// does), and this file does what dir.c does around it: the lists and their order, the parent
// directories, the files. Cost (test/ignore/bench.ts, 100,000 files, a 55-pattern root
// .gitignore and 80 nested ones): ~0.35 µs an entry warm, ~0.6 µs cold; entering a directory
// ~5 µs plus reading its .gitignore.
//
// Not covered: a `.gitignore` missing from the worktree but present in the index with the
// skip-worktree bit (sparse checkout: git reads it from the index blob); `core.excludesFile`
// of the form `~user/...` or `%(prefix)/...` (throws UNSUPPORTED); precomposed Unicode
// (core.precomposeUnicode on macOS). Which directories are nested repositories or submodules
// (git does not descend into them) is the walker's business.
//
// ## Differences between the `ignore` package (v7.0.17) and git 2.39, and how they are handled
//
// Each was found against `git check-ignore` / `git status --ignored` (test/ignore/); the
// examples are in test/ignore/package-differences.test.ts, which shows the package's own answer
// next to git's and ours.
//
// 1. Parent directories across files. The package decides a path by its own rules AND its own
//    ignored parents; git decides each parent across all lists first. Root `.gitignore`:
//    `build/`, `sub/.gitignore`: `!build/` → git: `sub/build/x` not ignored (sub/build is
//    re-included, and `build/` does not match the file itself); one package instance per file:
//    ignored. Handled in list.ts: every run of same-sign patterns is given to the package
//    negated, so only "does a pattern match the path itself" is asked of it, and the parent
//    walk, the list order and the sign are done here.
// 2. Bytes, not UTF-16 code units (the package's README says so). `x?y` matches `xéy` in the
//    package, not in git (é is two bytes); ranges over non-ASCII; `É` folds to `é` under the
//    package's `ignorecase`, not in git. Handled: patterns and paths are given to the package
//    as one character per byte, bytes 0x80..0xFF as U+E080..U+E0FF (no case, no special
//    meaning), which also makes non-UTF-8 names and patterns work (compile.ts `matchKey`).
// 3. A run of stars right after the literal prefix is a globstar in git: git compares the
//    prefix up to the first wildcard as a string, then wildmatches the rest, where the run now
//    starts the pattern. `a**/b` matches `ab`, `a/b` and `axy/z/b` in git, only `a/b` in the
//    package (regular stars); `x/a**` matches `x/ab/c` itself in git, not in the package. Handled: expanded into
//    `/ab` + `/a*/**/b` (compile.ts `expand`).
// 4. `**` before an escaped slash is a globstar in git, with no zero-directory case: `**\/c`
//    matches `y/c` and `q/r/c` but not `c`; the package reads it as `*/c` (exactly one
//    directory: `y/c` only). Handled: written as `*/**/c`. (`x\/**/b` is `x/**/b` in git
//    and is written so.)
// 5. core.ignoreCase: wildmatch lowers the text byte but compares an escaped pattern byte and a
//    class member as written, so `v\A` matches neither `vA` nor `va`, `x[A]` matches neither
//    `xA` nor `xa`, and `z[!A]` matches `zA`; the package (RegExp `i`) matches both cases.
//    Handled: a pattern with an escaped uppercase letter is dropped (it can never match), an
//    uppercase single class member is left out (ranges and `[:upper:]` fold in both).
// 6. A pattern ending in CR (a file with CR CR LF line ends: git drops one CR) keeps the other
//    CR in git; the package keeps it when it splits a whole file itself, but strips it as a
//    line end from a pattern handed over alone (`add([{ pattern }])`, how list.ts adds them).
//    Handled: a literal CR is written `[\r]`.
// 7. `ignorecase` defaults to true in the package: always passed explicitly.
import { decodePath } from '../bytes/text.js';
import { ScalpelError } from '../errors/index.js';
import { fsErrorCode, type FileType, type Fs } from '../fs/types.js';
import { joinPath, resolvePath } from '../fs/path.js';
import type { GitConfig } from '../repo/config.js';
import { matchKey } from './compile.js';
import { type ListView, PatternList } from './list.js';
import { parseIgnoreBuffer, type RawPattern } from './parse.js';

export { matchKey } from './compile.js';
export { parseIgnoreBuffer, type RawPattern } from './parse.js';
export { ListView, PatternList } from './list.js';
export { compileMatcher, matcherHere, matcherMatches, wildInstance, type EntryMatcher, type Matcher, type WildMatcher } from './list.js';
export { parsePathPattern } from './parse.js';

export interface IgnoreOptions {
  /** The worktree root (absolute). */
  worktree: string;
  /** The git directory whose `info/exclude` applies: the common dir for a linked worktree. */
  gitDir: string;
  /**
   * core.excludesFile as configured (`~/` is expanded with env.HOME; a relative path is
   * relative to the worktree root, where git runs). undefined: not configured, git's default
   * `$XDG_CONFIG_HOME/git/ignore` or `$HOME/.config/git/ignore`. null or '': none.
   */
  excludesFile?: string | null;
  /** core.ignoreCase (default false). */
  ignoreCase?: boolean;
  /** HOME and XDG_CONFIG_HOME, for core.excludesFile (the library reads no environment itself). */
  env?: { HOME?: string; XDG_CONFIG_HOME?: string };
}

/** What decided a path, as `git check-ignore -v` prints it. */
export interface IgnoreMatch {
  /** The file the pattern comes from. */
  source: string;
  kind: 'gitignore' | 'info/exclude' | 'excludesFile';
  /** 1-based line number. */
  line: number;
  /** The pattern as git prints it (`!` and trailing `/` included, trailing spaces trimmed). */
  pattern: string;
  /** A negative pattern matched last: the path is not ignored. */
  negative: boolean;
  /** The pattern matched this parent directory, not the path itself. */
  directory?: string;
}

/** The rules in force in one directory of the worktree. */
export interface DirRules {
  /** Worktree-relative path ('' for the root). */
  readonly path: string;
  /** This directory is excluded (itself or a parent): everything beneath it is ignored, no .gitignore below it is read. */
  readonly excluded: boolean;
  /**
   * Is the entry `name` of this directory excluded by the patterns? `isDir`: it is a directory
   * (lstat: a symlink to a directory is not one). Always true inside an excluded directory.
   */
  isIgnored(name: string, isDir: boolean): boolean;
  /**
   * The rules of the subdirectory `name`. Reads `name/.gitignore` unless the subdirectory is
   * excluded; `hasGitignore: false` (the walk's readdir saw none) skips the lookup. Cached.
   */
  enter(name: string, hasGitignore?: boolean): Promise<DirRules>;
}

export interface IgnoreRules {
  readonly ignoreCase: boolean;
  /** The worktree root's rules (its .gitignore, info/exclude and the excludes file are read). */
  readonly root: DirRules;
  /** What git would warn about (a symlinked .gitignore, an unreadable file). */
  readonly warnings: readonly string[];
  /** Is the worktree-relative path excluded? Reads the .gitignore files of its directories on first use. */
  isIgnored(rel: string, isDir: boolean): Promise<boolean>;
  /** An ignored file that is not inside an excluded directory (`.env`): one a person keeps by hand. */
  isHandKept(rel: string): Promise<boolean>;
  /** The rules of a worktree-relative directory ('' the root), entering each parent. */
  dir(rel: string): Promise<DirRules>;
  /** What decides the path, as `git check-ignore -v --no-index` reports it; null when no pattern matches. */
  explain(rel: string, isDir: boolean): Promise<IgnoreMatch | null>;
}

/** git never looks at an entry named `.git` (case-insensitively under core.ignoreCase). */
export function isGitDirName(name: string, ignoreCase: boolean): boolean {
  return name === '.git' || (ignoreCase && name.length === 4 && name.toLowerCase() === '.git');
}

/** core.excludesFile and core.ignoreCase from a config (the repository's; git also reads the global ones). */
export function ignoreOptionsFromConfig(config: GitConfig): { excludesFile: string | null | undefined; ignoreCase: boolean } {
  const v = config.get('core.excludesFile');
  if (v === null)
    throw new ScalpelError('BAD_ARGUMENT', 'core.excludesFile has no value', { name: 'core.excludesFile', reason: 'no-value' });
  return { excludesFile: v, ignoreCase: config.getBool('core.ignoreCase', false) };
}

/** The excludes file git reads for these options, or null (git's `setup_standard_excludes`). */
export function excludesFilePath(opts: Pick<IgnoreOptions, 'worktree' | 'excludesFile' | 'env'>): string | null {
  return userFilePath(opts.worktree, opts.excludesFile, opts.env ?? {}, 'ignore', 'core.excludesFile', 'excludes-file-path');
}

/**
 * A per-user pattern file as git finds it: `configured` is the config value (core.excludesFile,
 * core.attributesFile); undefined means git's default `$XDG_CONFIG_HOME/git/<name>`, else
 * `$HOME/.config/git/<name>` (`xdg_config_home`); null or '' none. `~/` is expanded with HOME, a
 * relative path is relative to the worktree root (where git runs). `~user/` and `%(prefix)/`
 * throw UNSUPPORTED with `capability`.
 */
export function userFilePath(
  worktree: string,
  configured: string | null | undefined,
  env: { HOME?: string; XDG_CONFIG_HOME?: string },
  name: string,
  key: string,
  capability: string,
): string | null {
  let p = configured;
  if (p === undefined) {
    if (env.XDG_CONFIG_HOME) p = `${env.XDG_CONFIG_HOME}/git/${name}`;
    else if (env.HOME !== undefined) p = `${env.HOME}/.config/git/${name}`;
    else return null;
  } else if (p === null || p === '') return null;
  else if (p === '~' || p.startsWith('~/')) {
    if (env.HOME === undefined)
      throw new ScalpelError('BAD_ARGUMENT', `cannot expand ${p}: HOME is not set`, { name: key, reason: 'no-home' });
    p = env.HOME + p.slice(1);
  } else if (p.startsWith('~') || p.startsWith('%(prefix)/')) {
    throw new ScalpelError('UNSUPPORTED', `${key} ${p}: only ~/ is expanded`, { capability, path: p });
  }
  return resolvePath(worktree, p);
}

interface ChainEntry {
  readonly list: PatternList;
  /** This directory's path below list.base, as a matchKey with a trailing '/' ('' at the base). */
  readonly prefix: string;
}

function chainEntry(list: PatternList, prefix: string): ChainEntry {
  return { list, prefix };
}

class Rules implements IgnoreRules {
  readonly ignoreCase: boolean;
  readonly warnings: string[] = [];
  root!: Dir;
  readonly worktree: string;
  readonly fs: Fs;
  /** Directories entered so far, by worktree-relative path. */
  readonly dirs = new Map<string, Dir>();
  readonly kinds = new Map<PatternList, IgnoreMatch['kind']>();

  constructor(fs: Fs, worktree: string, ignoreCase: boolean) {
    this.fs = fs;
    this.worktree = worktree;
    this.ignoreCase = ignoreCase;
  }

  list(source: string, base: string, bytes: Uint8Array, kind: IgnoreMatch['kind']): PatternList | null {
    const list = new PatternList(source, base, parseIgnoreBuffer(bytes), this.ignoreCase, (m) => this.warnings.push(m));
    if (list.empty) return null;
    this.kinds.set(list, kind);
    return list;
  }

  /** A directory's .gitignore, read as git reads it (not through a symlink). */
  async gitignore(dir: string): Promise<PatternList | null> {
    const file = joinPath(this.worktree, dir, '.gitignore');
    const st = await this.fs.lstat(file);
    if (!st) return null;
    if (st.type === 'symlink') {
      this.warnings.push(
        `unable to access '${dir ? dir + '/' : ''}.gitignore': Too many levels of symbolic links (git does not follow a symlinked .gitignore)`,
      );
      return null;
    }
    if (st.type !== 'file') return null;
    const bytes = await this.readOrWarn(file);
    return bytes ? this.list(file, dir, bytes, 'gitignore') : null;
  }

  /** info/exclude or the excludes file: followed through symlinks; a directory is fatal, as in git. */
  async globalFile(file: string, kind: IgnoreMatch['kind']): Promise<PatternList | null> {
    const st = await this.fs.stat(file);
    if (!st) return null;
    if (st.type !== 'file')
      throw new ScalpelError('BAD_PATH', `cannot use ${file} as an exclude file`, { path: file, reason: 'exclude-file-not-a-file' });
    const bytes = await this.readOrWarn(file);
    return bytes ? this.list(file, '', bytes, kind) : null;
  }

  /** A pattern file's bytes; one git cannot read is skipped with git's warning, as git skips it. */
  private async readOrWarn(file: string): Promise<Uint8Array | null> {
    try {
      return await this.fs.readFile(file);
    } catch (e) {
      this.warnings.push(`unable to access '${file}': ${fsErrorCode(e) ?? String(e)}`);
      return null;
    }
  }

  dir(rel: string): Promise<Dir> {
    return dirAt(this.root, this.dirs, rel, (d, name) => d.enterDir(name));
  }

  async isIgnored(rel: string, isDir: boolean): Promise<boolean> {
    const { parent, name } = splitRel(rel);
    return (await this.dir(parent)).isIgnored(name, isDir);
  }

  async isHandKept(rel: string): Promise<boolean> {
    const { parent, name } = splitRel(rel);
    const d = await this.dir(parent);
    return !d.excluded && d.isIgnored(name, false);
  }

  async explain(rel: string, isDir: boolean): Promise<IgnoreMatch | null> {
    const parts = rel.split('/').filter((s) => s.length > 0);
    let cur: Dir = this.root;
    for (let i = 0; i < parts.length; i++) {
      const last = i === parts.length - 1;
      const m = cur.explainEntry(parts[i], last ? isDir : true);
      if (!last) {
        if (m && !m.negative) return { ...m, directory: parts.slice(0, i + 1).join('/') };
        cur = await cur.enterDir(parts[i]);
      } else return m;
    }
    return null;
  }
}

/** A worktree-relative path's directory and last name (trailing slashes dropped). */
export function splitRel(rel: string): { parent: string; name: string } {
  let r = rel;
  while (r.endsWith('/')) r = r.slice(0, -1);
  const i = r.lastIndexOf('/');
  return i < 0 ? { parent: '', name: r } : { parent: r.slice(0, i), name: r.slice(i + 1) };
}

/**
 * The directory at worktree-relative `rel`: `root` for '' or '.', the one `entered` already holds,
 * else entered from `root` one name at a time (`enter(dir, name, path)`, `path` the worktree-relative
 * path of the directory entered). Shared by the ignore and the attribute rules.
 */
export async function dirAt<D>(
  root: D,
  entered: ReadonlyMap<string, D>,
  rel: string,
  enter: (dir: D, name: string, path: string) => Promise<D>,
): Promise<D> {
  if (rel === '' || rel === '.') return root;
  const hit = entered.get(rel);
  if (hit) return hit;
  let cur = root;
  let start = 0;
  while (start < rel.length) {
    let end = rel.indexOf('/', start);
    if (end < 0) end = rel.length;
    if (end > start) cur = await enter(cur, rel.slice(start, end), rel.slice(0, end));
    start = end + 1;
  }
  return cur;
}

class Dir implements DirRules {
  readonly path: string;
  readonly excluded: boolean;
  private readonly rules: Rules;
  /** Lists in precedence order: this directory's .gitignore, its parents', info/exclude, the excludes file. */
  private readonly chain: readonly ChainEntry[];
  /** The lists' views for this directory's entries, same order, without those that cannot match here. */
  private readonly views: readonly ListView[];
  private readonly children = new Map<string, Dir>();

  constructor(rules: Rules, path: string, excluded: boolean, chain: readonly ChainEntry[]) {
    this.rules = rules;
    this.path = path;
    this.excluded = excluded;
    this.chain = chain;
    const views: ListView[] = [];
    for (const e of chain) {
      const v = e.list.view(e.prefix);
      if (v) views.push(v);
    }
    this.views = views;
  }

  /** Sign of the deciding match of the entry itself across the lists (1 excluded, -1 re-included, 0 none). */
  private matchEntry(name: string, isDir: boolean): number {
    const views = this.views;
    if (views.length === 0) return 0;
    const key = matchKey(name);
    for (let i = 0; i < views.length; i++) {
      const s = views[i].match(key, isDir);
      if (s !== 0) return s;
    }
    return 0;
  }

  isIgnored(name: string, isDir: boolean): boolean {
    return this.excluded || this.matchEntry(name, isDir) > 0;
  }

  explainEntry(name: string, isDir: boolean): IgnoreMatch | null {
    if (this.excluded) return null;
    const key = matchKey(name);
    for (const e of this.chain) {
      const p = e.list.explain(key, e.prefix + key, isDir);
      if (p) return describe(e.list, p, this.rules.kinds.get(e.list) ?? 'gitignore');
    }
    return null;
  }

  enter(name: string, hasGitignore?: boolean): Promise<DirRules> {
    return this.enterDir(name, hasGitignore);
  }

  async enterDir(name: string, hasGitignore?: boolean): Promise<Dir> {
    const hit = this.children.get(name);
    if (hit) return hit;
    const path = this.path === '' ? name : this.path + '/' + name;
    let child: Dir;
    if (this.excluded || this.matchEntry(name, true) > 0) {
      child = new Dir(this.rules, path, true, []);
    } else {
      const own = hasGitignore === false ? null : await this.rules.gitignore(path);
      const key = matchKey(name);
      const chain: ChainEntry[] = [];
      if (own) chain.push(chainEntry(own, ''));
      for (const e of this.chain) chain.push(chainEntry(e.list, e.prefix + key + '/'));
      child = new Dir(this.rules, path, false, chain);
    }
    this.children.set(name, child);
    this.rules.dirs.set(path, child);
    return child;
  }
}

function describe(list: PatternList, p: RawPattern, kind: IgnoreMatch['kind']): IgnoreMatch {
  // the pattern's bytes as a path string (non-UTF-8 bytes as U+DC80..U+DCFF)
  const pattern = (p.negative ? '!' : '') + decodePath(p.body) + (p.mustBeDir ? '/' : '');
  return { source: list.source, kind, line: p.line, pattern, negative: p.negative };
}

/** Load the rules of a worktree: its root .gitignore, info/exclude and the excludes file. */
export async function loadIgnoreRules(fs: Fs, opts: IgnoreOptions): Promise<IgnoreRules> {
  const rules = new Rules(fs, opts.worktree, opts.ignoreCase ?? false);
  const globals: ChainEntry[] = [];
  const info = await rules.globalFile(joinPath(opts.gitDir, 'info', 'exclude'), 'info/exclude');
  if (info) globals.push(chainEntry(info, ''));
  const xf = excludesFilePath(opts);
  if (xf) {
    const l = await rules.globalFile(xf, 'excludesFile');
    if (l) globals.push(chainEntry(l, ''));
  }
  const own = await rules.gitignore('');
  rules.root = new Dir(rules, '', false, own ? [chainEntry(own, ''), ...globals] : globals);
  return rules;
}

/** An entry of a worktree walk, classified. */
export interface WalkEntry {
  /** Worktree-relative path. */
  path: string;
  type: FileType;
  /** Excluded by the patterns (false for tracked paths: the caller decides that from the index). */
  ignored: boolean;
  /** A directory whose entries the walk listed (absent: true for a directory that is not ignored, false for one that is). */
  entered?: boolean;
}

/**
 * Split a walk's ignored entries into `handKept`, ignored files and symlinks none of whose
 * parent directories is ignored (`.env`, `config.local.json`: what a person keeps by hand),
 * and `ignoredDirs`, the topmost ignored directories (`node_modules`, `dist`: what a capture
 * does not cover). The entries must include the directories the walk went through or stopped
 * at; tracked paths must come with `ignored: false`.
 *
 * Which directories are "ignored": by default those the patterns exclude (so with `out/**`,
 * which excludes what is inside out/ but not out/ itself, the files directly in out/ are
 * hand-kept). With `collapse`, also every directory that holds files and only ignored ones,
 * as `git status --ignored` shows them (`! out/`, `! logs/` for `*.log`): `ignoredDirs` and
 * `handKept` are then exactly that command's `!` entries when nothing is tracked. A directory
 * with no file beneath it (empty, or holding empty directories) is neither; an ignored
 * directory the walk did not enter (`entered` not set) counts as holding ignored files.
 */
export function partitionIgnored(
  entries: Iterable<WalkEntry>,
  opts: { collapse?: boolean } = {},
): { handKept: string[]; ignoredDirs: string[] } {
  const list = [...entries];
  const dirs = new Set<string>();
  if (!opts.collapse) {
    for (const e of list) if (e.ignored && e.type === 'directory') dirs.add(e.path);
  } else {
    const kids = new Map<string, WalkEntry[]>();
    for (const e of list) {
      const i = e.path.lastIndexOf('/');
      const parent = i < 0 ? '' : e.path.slice(0, i);
      let k = kids.get(parent);
      if (!k) kids.set(parent, (k = []));
      k.push(e);
    }
    // 0: no file beneath, 1: files beneath, all ignored, 2: some file beneath is not ignored
    const state = new Map<string, number>();
    const stateOf = (d: WalkEntry): number => {
      const known = state.get(d.path);
      if (known !== undefined) return known;
      const ch = kids.get(d.path);
      let s = 0;
      if (!ch) s = d.ignored && !d.entered ? 1 : 0;
      else {
        for (const c of ch) {
          const cs = c.type === 'directory' ? stateOf(c) : c.ignored ? 1 : 2;
          if (cs > s) s = cs;
        }
      }
      state.set(d.path, s);
      return s;
    };
    for (const e of list) if (e.type === 'directory' && stateOf(e) === 1) dirs.add(e.path);
  }
  const underIgnored = (p: string): boolean => {
    for (let i = p.indexOf('/'); i >= 0; i = p.indexOf('/', i + 1)) if (dirs.has(p.slice(0, i))) return true;
    return false;
  };
  const handKept: string[] = [];
  const ignoredDirs: string[] = [];
  for (const e of list) {
    if (e.type === 'directory') {
      if (dirs.has(e.path) && !underIgnored(e.path)) ignoredDirs.push(e.path);
    } else if (e.ignored && (e.type === 'file' || e.type === 'symlink') && !underIgnored(e.path)) handKept.push(e.path);
  }
  return { handKept, ignoredDirs };
}
