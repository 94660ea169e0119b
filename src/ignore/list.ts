/**
 * One pattern list: the patterns of one file (a .gitignore, info/exclude, core.excludesFile),
 * answering git's question for it — the sign of the LAST pattern that matches a path itself,
 * or undecided (dir.c `last_matching_pattern_from_list`).
 *
 * The `ignore` package matches the patterns that have wildcards. It answers a different
 * question — "is this path ignored by these rules, counting ignored parent directories" —
 * which across several files gives wrong answers: a directory excluded by the root .gitignore
 * and re-included by a deeper one (`build/` at the root, `!build/` in sub/.gitignore) must not
 * make the root's rules exclude sub/build/x. So every pattern is handed to the package
 * NEGATED: a negative rule never ignores, the package never lets a parent decide, and
 * `test(path).unignored` is exactly "the pattern matches the path itself". The list is cut
 * into runs of patterns of one sign (inside a run the order does not matter: any match
 * decides); the last run that matches gives the sign.
 *
 * Speed, for a walk that asks per entry: patterns without wildcards are compared as strings,
 * as git's `match_basename` / `match_pathname` do (`node_modules`, `*.log`, `build/Release`);
 * a wildcard pattern is only asked when the name starts and ends with its literal head and
 * tail; and a walk asks through a `ListView` of one directory, which keeps only the patterns
 * that can match an entry of that directory (`build/Release` only in `build/`, `src/**`
 * only below `src/`), so most entries never need their path built. Against a 55-pattern
 * .gitignore (test/ignore/bench.ts, 100,000 files): the package alone, one regular expression
 * per pattern per path, ~3 µs a path; this, ~0.35 µs an entry warm, ~0.6 µs cold.
 */
import ignore, { type Ignore } from 'ignore';
import type { RawPattern } from './parse.js';
import { analyzePattern, bytesKey } from './compile.js';

const STAR = 0x2a;
const SLASH = 0x2f;
const isGlobSpecial = (c: number) => c === STAR || c === 0x3f || c === 0x5b || c === 0x5c;

/**
 * How one pattern is matched (gitignore and gitattributes files alike: src/attributes uses these
 * too). Keys are matchKey strings, folded to ASCII lower case under ignoreCase.
 */
export type Matcher =
  /** nodir, no wildcard: the basename equals `key` */
  | { kind: 'name'; key: string; dirOnly: boolean }
  /** nodir `*literal`: the basename ends with `key` */
  | { kind: 'suffix'; key: string; dirOnly: boolean }
  /** a path pattern without wildcard: the path below the base equals `key` */
  | { kind: 'path'; key: string; dirOnly: boolean }
  /** anything else: the package; the basename (nodir) or the path below the base starts with `head` and ends with `tail` */
  | WildMatcher;

export interface WildMatcher {
  kind: 'wild';
  basename: boolean;
  head: string;
  tail: string;
  compiled: string[];
  /** The package instance, made on first use (wildInstance). */
  ig: Ignore | null;
}

/**
 * How a matcher applies to the entries of one directory (matcherHere): the entry's name (a
 * matchKey, folded under ignoreCase) equals `key`, ends with `key`, or, for `wild`, starts with
 * `head`, ends with `tail` and is matched by the package as the basename or as the directory's
 * prefix + name.
 */
export type EntryMatcher =
  | { kind: 'name'; key: string; dirOnly: boolean }
  | { kind: 'suffix'; key: string; dirOnly: boolean }
  | { kind: 'wild'; head: string; tail: string; basename: boolean; m: WildMatcher };

const fold = (s: string, ignoreCase: boolean) => (ignoreCase ? s.toLowerCase() : s);

/**
 * The matcher of one parsed pattern (dir.c `match_basename` / `match_pathname` semantics).
 * undefined: git can never match it; null: it could not be compiled (too many globstar expansions).
 */
export function compileMatcher(raw: RawPattern, ignoreCase: boolean): Matcher | null | undefined {
  let body = raw.body;
  let noDir = raw.noDir;
  if (!noDir) {
    // match_pathname drops ONE leading '/' (analyzePattern must not drop another: `//*` matches nothing)
    if (body[0] === SLASH) body = body.subarray(1);
    if (body.length === 0 || body[0] === SLASH) return undefined;
    // `**/x` (x without a slash) is the nodir pattern `x`
    if (body.length > 3 && body[0] === STAR && body[1] === STAR && body[2] === SLASH && body.subarray(3).indexOf(SLASH) < 0) {
      body = body.subarray(3);
      noDir = true;
    }
  }
  let plain = 0;
  while (plain < body.length && !isGlobSpecial(body[plain])) plain++;
  const dirOnly = raw.mustBeDir;
  if (plain === body.length) {
    return { kind: noDir ? 'name' : 'path', key: fold(bytesKey(body), ignoreCase), dirOnly };
  }
  if (noDir && body[0] === STAR) {
    let lit = true;
    for (let i = 1; i < body.length; i++) if (isGlobSpecial(body[i])) lit = false;
    if (lit) return { kind: 'suffix', key: fold(bytesKey(body, 1), ignoreCase), dirOnly };
  }
  const a = analyzePattern(body, noDir, raw.mustBeDir, ignoreCase);
  if (a.compiled === null) return null;
  if (a.compiled.length === 0) return undefined;
  return {
    kind: 'wild',
    basename: noDir,
    head: fold(bytesKey(a.head), ignoreCase),
    tail: fold(bytesKey(a.tail), ignoreCase),
    compiled: a.compiled,
    ig: null,
  };
}

/** A package instance matching any of `compiled` (each given negated: `test().unignored` is "matches"). */
export function packageInstance(compiled: readonly string[], ignoreCase: boolean): Ignore {
  return ignore({ ignorecase: ignoreCase }).add(compiled.map((c) => ({ pattern: '!' + c })));
}

/** The package instance of a wild matcher (made once, kept on it). */
export function wildInstance(m: WildMatcher, ignoreCase: boolean): Ignore {
  return (m.ig ??= packageInstance(m.compiled, ignoreCase));
}

/**
 * The matcher as it applies to the entries of the directory whose path below the pattern's
 * base is `prefix` (a matchKey with a trailing '/', '' at the base; folded under ignoreCase).
 * Null: no entry of that directory can match.
 */
export function matcherHere(m: Matcher, prefix: string): EntryMatcher | null {
  if (m.kind === 'name' || m.kind === 'suffix') return m;
  if (m.kind === 'path') {
    // only the entries of one directory can be that path
    if (!m.key.startsWith(prefix)) return null;
    const name = m.key.slice(prefix.length);
    if (name.length === 0 || name.includes('/')) return null;
    return { kind: 'name', key: name, dirOnly: m.dirOnly };
  }
  if (m.basename) return { kind: 'wild', head: m.head, tail: m.tail, basename: true, m };
  // the path is prefix + name: the head left for the name, or no entry here can match
  let head = m.head;
  if (head.startsWith(prefix)) head = head.slice(prefix.length);
  else if (prefix.startsWith(head)) head = '';
  else return null;
  if (head.includes('/')) return null;
  const tail = m.tail.includes('/') ? '' : m.tail;
  return { kind: 'wild', head, tail, basename: false, m };
}

/**
 * Does the matcher match this path itself (slow: no view, one test)? `name` is its basename and
 * `rel` its path below the pattern's base, both matchKeys (unfolded).
 */
export function matcherMatches(m: Matcher, name: string, rel: string, isDir: boolean, ignoreCase: boolean): boolean {
  if (m.kind === 'wild') {
    const q = m.basename ? name : rel;
    return wildInstance(m, ignoreCase).test(isDir ? q + '/' : q).unignored;
  }
  if (m.dirOnly && !isDir) return false;
  if (m.kind === 'name') return fold(name, ignoreCase) === m.key;
  if (m.kind === 'suffix') return fold(name, ignoreCase).endsWith(m.key);
  return fold(rel, ignoreCase) === m.key;
}

interface Run {
  readonly negative: boolean;
  readonly patterns: Array<{ raw: RawPattern; m: Matcher }>;
  /** The run's basename patterns, the same in every directory (made on first use). */
  base?: ViewRun;
  /** Its path patterns: which can match an entry depends on the directory. */
  paths?: Matcher[];
  /** Its path patterns with neither head nor tail, in one instance. */
  anyPath?: Ignore | null;
}

/** A run, as far as it concerns the entries of one directory. */
interface ViewRun {
  readonly negative: boolean;
  readonly names: Set<string> | null;
  readonly dirNames: Set<string> | null;
  /** `*.ext` suffixes (one dot): the name's extension is looked up */
  readonly exts: Set<string> | null;
  readonly dirExts: Set<string> | null;
  readonly suffixes: readonly string[];
  readonly dirSuffixes: readonly string[];
  /** wildcard patterns: `head` and `tail` here apply to the entry's name */
  readonly wild: readonly WildHere[];
  /** path patterns without wildcard that name an entry of this directory */
  readonly pathNames: Set<string> | null;
  readonly pathDirNames: Set<string> | null;
}

interface WildHere {
  readonly head: string;
  readonly tail: string;
  readonly basename: boolean;
  readonly ig: Ignore;
}

export class PatternList {
  /** Where the patterns come from (a file path), as `git check-ignore -v` names it. */
  readonly source: string;
  /** The worktree-relative directory the patterns are relative to ('' for the root and the global files). */
  readonly base: string;
  readonly patterns: readonly RawPattern[];
  readonly ignoreCase: boolean;
  private readonly runs: Run[];

  constructor(source: string, base: string, patterns: readonly RawPattern[], ignoreCase: boolean, warn: (message: string) => void) {
    this.source = source;
    this.base = base;
    this.patterns = patterns;
    this.ignoreCase = ignoreCase;
    const runs: Run[] = [];
    let cur: Run | null = null;
    for (const raw of patterns) {
      const m = compileMatcher(raw, ignoreCase);
      if (m === null) {
        warn(`${source}:${raw.line}: pattern needs too many globstar expansions; it is not used`);
        continue;
      }
      if (m === undefined) continue; // git can never match it
      if (!cur || cur.negative !== raw.negative) {
        cur = { negative: raw.negative, patterns: [] };
        runs.push(cur);
      }
      cur.patterns.push({ raw, m });
    }
    this.runs = runs;
  }

  /** No pattern of this list can match anything. */
  get empty(): boolean {
    return this.runs.length === 0;
  }

  fold(s: string): string {
    return this.ignoreCase ? s.toLowerCase() : s;
  }

  private instance(compiled: string[]): Ignore {
    return packageInstance(compiled, this.ignoreCase);
  }

  /** The basename part of a run: independent of the directory. */
  private baseOf(run: Run): ViewRun {
    if (run.base) return run.base;
    let names: Set<string> | null = null;
    let dirNames: Set<string> | null = null;
    let exts: Set<string> | null = null;
    let dirExts: Set<string> | null = null;
    const suffixes: string[] = [];
    const dirSuffixes: string[] = [];
    const wild: WildHere[] = [];
    const anyB: string[] = [];
    const anyP: string[] = [];
    const paths: Matcher[] = [];
    for (const { m } of run.patterns) {
      if (m.kind === 'name') {
        if (m.dirOnly) (dirNames ??= new Set()).add(m.key);
        else (names ??= new Set()).add(m.key);
      } else if (m.kind === 'suffix') {
        if (m.key.length > 1 && m.key[0] === '.' && m.key.indexOf('.', 1) < 0) {
          if (m.dirOnly) (dirExts ??= new Set()).add(m.key.slice(1));
          else (exts ??= new Set()).add(m.key.slice(1));
        } else (m.dirOnly ? dirSuffixes : suffixes).push(m.key);
      } else if (m.kind === 'wild' && m.basename) {
        if (m.head === '' && m.tail === '') anyB.push(...m.compiled);
        else wild.push({ head: m.head, tail: m.tail, basename: true, ig: wildInstance(m, this.ignoreCase) });
      } else if (m.kind === 'wild' && m.head === '' && m.tail === '') anyP.push(...m.compiled);
      else paths.push(m);
    }
    if (anyB.length) wild.push({ head: '', tail: '', basename: true, ig: this.instance(anyB) });
    run.paths = paths;
    run.anyPath = anyP.length ? this.instance(anyP) : null;
    run.base = { negative: run.negative, names, dirNames, exts, dirExts, suffixes, dirSuffixes, wild, pathNames: null, pathDirNames: null };
    return run.base;
  }

  private cachedView: ListView | null | undefined;

  /**
   * The list as it applies to the entries of one directory: `prefix` is that directory's path
   * below `base` as a matchKey, with a trailing '/' ('' for the base itself). Null: no pattern
   * can match an entry there.
   */
  view(prefix: string): ListView | null {
    if (this.cachedView !== undefined) return this.cachedView === null ? null : this.cachedView.at(prefix);
    const pf = this.fold(prefix);
    const runs: ViewRun[] = [];
    let dependsOnDir = false;
    for (const run of this.runs) {
      const base = this.baseOf(run);
      const paths = run.paths as Matcher[];
      if (paths.length === 0 && !run.anyPath) {
        if (!isEmpty(base)) runs.push(base);
        continue;
      }
      dependsOnDir = true;
      let pathNames: Set<string> | null = null;
      let pathDirNames: Set<string> | null = null;
      let wild: WildHere[] | null = null;
      for (const m of paths) {
        const h = matcherHere(m, pf);
        if (h === null) continue;
        if (h.kind === 'name') {
          if (h.dirOnly) (pathDirNames ??= new Set()).add(h.key);
          else (pathNames ??= new Set()).add(h.key);
        } else if (h.kind === 'wild') {
          (wild ??= [...base.wild]).push({ head: h.head, tail: h.tail, basename: false, ig: wildInstance(h.m, this.ignoreCase) });
        }
      }
      if (run.anyPath) (wild ??= [...base.wild]).push({ head: '', tail: '', basename: false, ig: run.anyPath });
      const v: ViewRun = wild || pathNames || pathDirNames ? { ...base, wild: wild ?? base.wild, pathNames, pathDirNames } : base;
      if (!isEmpty(v)) runs.push(v);
    }
    const view = runs.length ? new ListView(this, prefix, runs) : null;
    // a list of basename patterns only: one view for every directory
    if (!dependsOnDir) this.cachedView = view;
    return view;
  }

  /** The last pattern matching the path itself (slow: for explanations, not for walks). */
  explain(name: string, rel: string, isDir: boolean): RawPattern | null {
    for (let i = this.runs.length - 1; i >= 0; i--) {
      const run = this.runs[i];
      for (let k = run.patterns.length - 1; k >= 0; k--) {
        const { raw, m } = run.patterns[k];
        if (matcherMatches(m, name, rel, isDir, this.ignoreCase)) return raw;
      }
    }
    return null;
  }
}

/** A PatternList as it applies to the entries of one directory (see PatternList.view). */
export class ListView {
  readonly list: PatternList;
  /** The directory's path below list.base, as a matchKey with a trailing '/' ('' at the base). */
  readonly prefix: string;
  private readonly runs: readonly ViewRun[];
  private readonly ignoreCase: boolean;

  constructor(list: PatternList, prefix: string, runs: readonly ViewRun[]) {
    this.list = list;
    this.prefix = prefix;
    this.runs = runs;
    this.ignoreCase = list.ignoreCase;
  }

  /** The same view for another directory (when nothing in it depends on the directory). */
  at(prefix: string): ListView {
    return prefix === this.prefix ? this : new ListView(this.list, prefix, this.runs);
  }

  /** The sign of the last pattern matching the entry `name` (a matchKey): 1 excluded, -1 re-included, 0 none. */
  match(name: string, isDir: boolean): number {
    const runs = this.runs;
    const nf = this.ignoreCase ? name.toLowerCase() : name;
    let ext: string | null = null;
    for (let i = runs.length - 1; i >= 0; i--) {
      const r = runs[i];
      if (r.names !== null && r.names.has(nf)) return r.negative ? -1 : 1;
      if (isDir && r.dirNames !== null && r.dirNames.has(nf)) return r.negative ? -1 : 1;
      if (r.pathNames !== null && r.pathNames.has(nf)) return r.negative ? -1 : 1;
      if (isDir && r.pathDirNames !== null && r.pathDirNames.has(nf)) return r.negative ? -1 : 1;
      if (r.exts !== null || (isDir && r.dirExts !== null)) {
        if (ext === null) {
          const dot = nf.lastIndexOf('.');
          ext = dot < 0 ? '\u0000' : nf.slice(dot + 1);
        }
        if (r.exts !== null && r.exts.has(ext)) return r.negative ? -1 : 1;
        if (isDir && r.dirExts !== null && r.dirExts.has(ext)) return r.negative ? -1 : 1;
      }
      if (endsWithAny(nf, r.suffixes) || (isDir && endsWithAny(nf, r.dirSuffixes))) return r.negative ? -1 : 1;
      const wild = r.wild;
      for (let k = 0; k < wild.length; k++) {
        const w = wild[k];
        if (!nf.startsWith(w.head) || !nf.endsWith(w.tail)) continue;
        const q = w.basename ? name : this.prefix + name;
        if (w.ig.test(isDir ? q + '/' : q).unignored) return r.negative ? -1 : 1;
      }
    }
    return 0;
  }
}

function isEmpty(r: ViewRun): boolean {
  return !(
    r.names ||
    r.dirNames ||
    r.exts ||
    r.dirExts ||
    r.suffixes.length ||
    r.dirSuffixes.length ||
    r.wild.length ||
    r.pathNames ||
    r.pathDirNames
  );
}

function endsWithAny(s: string, suffixes: readonly string[]): boolean {
  for (let i = 0; i < suffixes.length; i++) if (s.endsWith(suffixes[i])) return true;
  return false;
}
