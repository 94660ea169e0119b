// git's attributes, as git 2.39 applies them (attr.c, convert.c), for one question:
// MAY GIT'S CONVERSION MAKE THIS FILE'S WORKTREE BYTES DIFFER FROM ITS BLOB?
//
// A capture that takes a stat-clean file's index blob id as its content (without reading it)
// is right only when the answer is no: under `core.autocrlf`, `text`, `text=auto`, `eol`,
// `ident`, a `filter` driver or `working-tree-encoding`, a stat-clean file can hold CRLF (or
// an expanded `$Id$`, smudged bytes, UTF-16) while its blob holds something else, and a
// restore that writes the blob loses the person's bytes. The answer is conservative: "yes"
// whenever some content would be converted in either direction (a yes costs a read of the
// file; a no is exact for the current attributes and config). See conversion.ts.
//
// One path or a few (a capture):
//
//   const rules = await loadAttributeRules(fs, {
//     worktree, gitDir: commonDir, env,                      // env: HOME, XDG_CONFIG_HOME, GIT_ATTR_NOSYSTEM
//     ...attributeOptionsFromConfig([...globalConfigs, repoConfig]),
//     indexBlob: (rel) => /* the staged blob of rel, or null */,
//   });
//   for (const rel of statCleanPaths) if (await rules.mayConvert(rel)) /* read it: not its index blob */;
//
//   Loading reads (stat or lstat, then a read when present) the root .gitattributes,
//   info/attributes, core.attributesFile and the system file, side by side. A path then costs
//   an lstat of the .gitattributes of each directory above it that this rules object has not
//   entered yet, and a few string tests. Nothing is cached beyond the rules object.
//
// A walk (a shell baseline), entering directories as it goes:
//
//   const walk = async (dir: DirAttributes, names: string[]) => {
//     for (const file of filesOf(names)) if (!dir.none && dir.mayConvert(file)) /* read it */;
//     for (const sub of dirsOf(names)) {
//       const subNames = readdir(sub);
//       await walk(await dir.enter(sub, subNames.includes('.gitattributes')), subNames);
//     }
//   };
//   await walk(rules.root, readdir(root));
//
//   `dir.none` (no file directly in the directory can convert) and `dir.uniform` (every file
//   gets that answer) let a walk skip the per-file call; `rules.none` (no core.autocrlf, no
//   conversion attribute outside the worktree's subdirectories) makes every directory entered
//   with `hasAttributesFile: false` `none`, at the cost of one object. `rules.dir(rel)` gives
//   a directory the walk did not enter (lstat-ing the .gitattributes above it).
//
// What git does, and this module with it:
// - Sources, highest precedence first: `$GIT_DIR/info/attributes` (the common dir of a linked
//   worktree), the `.gitattributes` of the path's directory, of each parent up to the root,
//   core.attributesFile (default `$XDG_CONFIG_HOME/git/attributes`, else
//   `$HOME/.config/git/attributes`), the system file (`$(prefix)/etc/gitattributes`,
//   `/etc/gitattributes` for a distribution's git; skipped when GIT_ATTR_NOSYSTEM is true),
//   the built-in `[attr]binary -diff -merge -text`. Per attribute, the first value found in that
//   order wins; within a file the last matching line wins. See rules.ts for the algorithm
//   (macros included).
// - Macros (`[attr]name ...`) only in the top-level .gitattributes, info/attributes, the global
//   and system files (a deeper file's macro line is ignored with git's message).
// - Patterns as .gitignore's (src/ignore's parser and matchers: wildmatch, `**`, classes,
//   core.ignoreCase's ASCII-only folding, bytes), except: no negative patterns (the line is
//   ignored, with git's warning); a pattern ending in `/` matches only a path given with a
//   trailing slash (`git check-attr dir/`), never a file and never what is inside a directory.
// - A `.gitattributes` that is a symlink is not read (git ≥ 2.32 opens it O_NOFOLLOW; checked
//   with git 2.39.5: "unable to access 'sub/.gitattributes': Too many levels of symbolic
//   links"); git then falls back to the index's blob of that path, and so does this module
//   when the caller gives `indexBlob`. info/attributes, the global and system files are
//   followed. A directory named `.gitattributes` reads as empty; a file of 100 MiB or more is
//   ignored (git's ATTR_MAX_FILE_SIZE), a line of 2048 bytes or more too.
// - git's checkin direction (the default, what `git add`, `git status` and `git check-attr` use):
//   the worktree's .gitattributes, the index's blob when there is none (sparse checkouts, a
//   deleted file). `direction: 'checkout'` reads the index's blob first, as `git checkout`
//   does; a caller can ask both and take "yes" from either (see AttributeOptions.direction).
//
// Not covered (each makes an answer reflect the CURRENT attributes and config only):
// - files checked out under other attributes or another core.autocrlf than today's (git itself
//   then reports them clean; only reading them tells). A caller with the index entry can catch
//   the size-changing cases cheaply: a stat-clean entry caches the worktree size, so a blob
//   whose size differs was converted.
// - `GIT_ATTR_SOURCE` / `attr.tree` (git ≥ 2.40), config includes (GitConfig does not follow
//   them: a filter configured only in an included file is not seen — the loader's default
//   `filterConverts` answers yes for every filter name for that reason).
import { ScalpelError } from '../errors/index.js';
import { fsErrorCode, type Fs } from '../fs/types.js';
import { joinPath } from '../fs/path.js';
import { matchKey } from '../ignore/compile.js';
import { dirAt, splitRel, userFilePath } from '../ignore/index.js';
import type { GitConfig } from '../repo/config.js';
import type { Conversion, ConversionConfig } from './conversion.js';
import { ATTR_MAX_FILE_SIZE, parseAttributesBuffer, type AttrRule, type AttrValue } from './parse.js';
import { AttrFile, collectAll, macroTable, Plan, View, type AttrSourceKind, type ChainEntry, type MacroTable } from './rules.js';

export {
  ATTR_MAX_FILE_SIZE,
  ATTR_MAX_LINE_LENGTH,
  parseAttributesBuffer,
  type AttrParseOptions,
  type AttrRule,
  type AttrState,
  type AttrValue,
} from './parse.js';
export {
  CONVERSION_ATTRIBUTES,
  checkoutEolOf,
  conversionOf,
  crlfActionOf,
  sameEncodingAsUtf8,
  type Conversion,
  type ConversionAttribute,
  type ConversionConfig,
  type ConversionReason,
  type ConversionValues,
  type CrlfAction,
} from './conversion.js';
export { fillAll, macroTable, type AttrSourceKind, type MacroTable } from './rules.js';

/** The built-in attribute file (attr.c `builtin_attr`). */
export const BUILTIN_ATTRIBUTES = '[attr]binary -diff -merge -text\n';

export interface AttributeOptions {
  /** The worktree root (absolute). */
  worktree: string;
  /** The git directory whose `info/attributes` applies: the common dir for a linked worktree. */
  gitDir: string;
  /**
   * core.attributesFile as configured (`~/` expanded with env.HOME; relative to the worktree).
   * undefined: not configured, git's default `$XDG_CONFIG_HOME/git/attributes` or
   * `$HOME/.config/git/attributes`. null or '': none.
   */
  attributesFile?: string | null;
  /**
   * The system attributes file. undefined: `/etc/gitattributes` (a distribution's git, whose
   * prefix is /usr), unless env.GIT_ATTR_NOSYSTEM is true. null: none.
   */
  systemFile?: string | null;
  /** core.ignoreCase (default false). */
  ignoreCase?: boolean;
  /** core.autocrlf (default false). */
  autocrlf?: boolean | 'input';
  /** core.eol (default unset). */
  eol?: 'lf' | 'crlf' | 'native';
  /** The platform's line ending, git's EOL_NATIVE (default 'lf'; 'crlf' for Git for Windows). */
  nativeEol?: 'lf' | 'crlf';
  /**
   * Does the filter driver `name` convert (filter.<name>.clean, .smudge or .process configured,
   * or .required: git then fails rather than leave the bytes as they are)?
   * Default: every name does (conservative: the person's global config may configure it).
   * attributeOptionsFromConfig answers from the configs it is handed.
   */
  filterConverts?: (name: string) => boolean;
  /** HOME, XDG_CONFIG_HOME and GIT_ATTR_NOSYSTEM (the library reads no environment itself). */
  env?: { HOME?: string; XDG_CONFIG_HOME?: string; GIT_ATTR_NOSYSTEM?: string };
  /**
   * The blob of a worktree-relative `.gitattributes` path in the index (stage 0, else stage 2,
   * as git's `read_blob_data_from_index`), or null. git reads it where the worktree has no
   * readable `.gitattributes` (a sparse checkout, a deleted or symlinked file). Called once per
   * directory entered that has no such file; answer synchronously when you can. Without it, the
   * index is not consulted.
   */
  indexBlob?: (rel: string) => Uint8Array | null | Promise<Uint8Array | null>;
  /**
   * 'checkin' (default): the worktree's .gitattributes first, the index's when there is none,
   * as `git add` / `git status` / `git check-attr` read them. 'checkout': the index's first, as
   * `git checkout` reads them. The bytes a checkout wrote followed the index's attributes of
   * that time: when the worktree's and the index's .gitattributes differ (an unstaged edit), a
   * caller that wants both directions asks two rule sets and takes "yes" from either.
   */
  direction?: 'checkin' | 'checkout';
  /**
   * What to do when an attribute file exists but cannot be read (EACCES, EIO...): 'throw'
   * (default) a ScalpelError UNREADABLE naming it; 'converts': warn and answer "may differ" for
   * every file it would apply to (git itself warns and goes on without it).
   */
  onUnreadable?: 'throw' | 'converts';
}

/** The rules in force in one directory of the worktree. */
export interface DirAttributes {
  /** Worktree-relative path ('' for the root). */
  readonly path: string;
  /** Every file directly in this directory gets this answer from mayConvert; undefined: it depends on the name. */
  readonly uniform: boolean | undefined;
  /** No file directly in this directory can be converted (uniform === false). */
  readonly none: boolean;
  /** May git's conversion make the file `name` of this directory differ from its blob? */
  mayConvert(name: string): boolean;
  /** The conversion of the file `name`, with its reasons. */
  conversion(name: string): Conversion;
  /** Every attribute of the file `name`, as `git check-attr -a` lists them (unspecified ones left out). Slow. */
  check(name: string): Map<string, AttrValue>;
  /**
   * The rules of the subdirectory `name`. Reads `name/.gitattributes`; `hasAttributesFile:
   * false` (the walk's readdir of that subdirectory saw none) skips the lstat. Cached.
   */
  enter(name: string, hasAttributesFile?: boolean): Promise<DirAttributes>;
}

export interface AttributeRules {
  readonly ignoreCase: boolean;
  readonly config: ConversionConfig;
  /**
   * Nothing outside the worktree's subdirectories converts: core.autocrlf is false and no line
   * of info/attributes, the root .gitattributes, the global or the system file can set a
   * conversion attribute. Then only a subdirectory's .gitattributes can make a file convert:
   * a path whose directories have none (`mayConvert` finds out with an lstat each), or a walk
   * that saw none, answers no without asking.
   */
  readonly none: boolean;
  /** The worktree root's rules. */
  readonly root: DirAttributes;
  /** The macro definitions in force. */
  readonly macros: MacroTable;
  /** What git would print while reading the files (a symlinked .gitattributes, an invalid name, a macro where none is allowed...). */
  readonly warnings: readonly string[];
  /**
   * The rules of a worktree-relative directory ('' the root), entering each parent the first
   * time (an lstat of its .gitattributes each). `hasAttributesFile(dir)`, when the caller
   * knows (a walk's readdir), answers whether the directory `dir` holds a `.gitattributes`:
   * false skips the lstat, undefined looks.
   */
  dir(rel: string, hasAttributesFile?: (dir: string) => boolean | undefined): Promise<DirAttributes>;
  /** May git's conversion make the worktree-relative file `rel` differ from its blob? (`hasAttributesFile`: as for dir.) */
  mayConvert(rel: string, hasAttributesFile?: (dir: string) => boolean | undefined): Promise<boolean>;
  conversion(rel: string): Promise<Conversion>;
  /** Every attribute of the file `rel`, as `git check-attr -a` lists them. */
  check(rel: string): Promise<Map<string, AttrValue>>;
}

/** The system attributes file git reads (`/etc/gitattributes` for a distribution's git), or null under GIT_ATTR_NOSYSTEM. */
export function systemAttributesFile(env: { GIT_ATTR_NOSYSTEM?: string }): string | null {
  return envBool(env.GIT_ATTR_NOSYSTEM) ? null : '/etc/gitattributes';
}

/** git's boolean of an environment variable (`git_env_bool`): true/yes/on or a non-zero number. */
function envBool(v: string | undefined): boolean {
  if (v === undefined) return false;
  const s = v.trim().toLowerCase();
  if (s === 'true' || s === 'yes' || s === 'on') return true;
  const n = Number(s);
  return s !== '' && Number.isFinite(n) && n !== 0;
}

/**
 * core.attributesFile, core.ignoreCase, core.autocrlf, core.eol and the filter drivers from
 * configs in git's order (system, global, repository, worktree: a later one's value wins).
 *
 * Filters: a driver converts when a config gives it a non-empty clean, smudge or process
 * command, or marks it required (git then fails rather than leave the bytes alone); it does
 * not when a config names it (one of those four keys) with none of that. A driver no config
 * names is taken as converting, unless `complete` says these are all the configs git reads:
 * git-lfs configures `filter.lfs` in the person's global config, which a caller that passed
 * only the repository's would otherwise miss (and restore an LFS pointer over the content).
 */
export function attributeOptionsFromConfig(
  configs: GitConfig | readonly GitConfig[] = [],
  opts: { complete?: boolean } = {},
): Pick<AttributeOptions, 'attributesFile' | 'ignoreCase' | 'autocrlf' | 'eol' | 'filterConverts'> {
  if (!Array.isArray(configs)) configs = [configs as GitConfig];
  const last = (key: string): { config: GitConfig; value: string | null } | undefined => {
    let found: { config: GitConfig; value: string | null } | undefined;
    for (const config of configs) {
      const value = config.get(key);
      if (value !== undefined) found = { config, value };
    }
    return found;
  };
  const af = last('core.attributesFile');
  if (af && af.value === null)
    throw new ScalpelError('BAD_ARGUMENT', 'core.attributesFile has no value', { name: 'core.attributesFile', reason: 'no-value' });
  const ic = last('core.ignoreCase');
  const ac = last('core.autocrlf');
  let autocrlf: boolean | 'input' = false;
  if (ac) autocrlf = ac.value !== null && ac.value.toLowerCase() === 'input' ? 'input' : ac.config.getBool('core.autocrlf', false);
  const e = last('core.eol')?.value?.toLowerCase();
  const eol = e === 'lf' || e === 'crlf' || e === 'native' ? e : undefined;
  const complete = opts.complete ?? false;
  const filterConverts = (name: string): boolean => {
    let named = false;
    for (const k of ['clean', 'smudge', 'process']) {
      const v = last(`filter.${name}.${k}`);
      if (v === undefined) continue;
      named = true;
      // an empty command does nothing (apply_filter); a bare key is an error git dies on
      if (v.value !== '') return true;
    }
    // a required filter without its command makes git add and checkout fail: nothing git wrote, so assume the worst
    const required = last(`filter.${name}.required`);
    if (required !== undefined) {
      named = true;
      if (required.config.getBool(`filter.${name}.required`, false)) return true;
    }
    return !named && !complete;
  };
  return { attributesFile: af?.value, ignoreCase: ic ? ic.config.getBool('core.ignoreCase', false) : false, autocrlf, eol, filterConverts };
}

/** The global attributes file git reads for these options, or null (attr.c `get_home_gitattributes`). */
export function attributesFilePath(opts: Pick<AttributeOptions, 'worktree' | 'attributesFile' | 'env'>): string | null {
  return userFilePath(opts.worktree, opts.attributesFile, opts.env ?? {}, 'attributes', 'core.attributesFile', 'attributes-file-path');
}

/** A file's parsed lines before they are compiled (macros must be known first). */
interface RawFile {
  source: string;
  kind: AttrSourceKind;
  base: string;
  rules: AttrRule[];
  poisoned: boolean;
}

const EMPTY = 'empty' as const;

class Rules implements AttributeRules {
  readonly ignoreCase: boolean;
  readonly config: ConversionConfig;
  readonly warnings: string[] = [];
  readonly fs: Fs;
  readonly opts: AttributeOptions;
  readonly dirs = new Map<string, Dir>();
  root!: Dir;
  plan!: Plan;
  macros!: MacroTable;
  none = false;
  readonly warn = (m: string) => this.warnings.push(m);

  constructor(fs: Fs, opts: AttributeOptions) {
    this.fs = fs;
    this.opts = opts;
    this.ignoreCase = opts.ignoreCase ?? false;
    this.config = {
      autocrlf: opts.autocrlf ?? false,
      eol: opts.eol,
      nativeEol: opts.nativeEol ?? 'lf',
      filterConverts: opts.filterConverts ?? (() => true),
    };
  }

  compile(raw: RawFile): AttrFile {
    return new AttrFile(raw.source, raw.kind, raw.base, raw.rules, this.plan, this.ignoreCase, this.warn, raw.poisoned);
  }

  /** A file that exists and cannot be read: thrown, or (onUnreadable: 'converts') a poisoned empty file. */
  unreadable(path: string, kind: AttrSourceKind, base: string, e: unknown): RawFile {
    const cause = fsErrorCode(e) ?? String(e);
    if ((this.opts.onUnreadable ?? 'throw') === 'throw') {
      throw new ScalpelError('UNREADABLE', `cannot read the attributes file ${path}: ${cause}`, { path, cause });
    }
    this.warn(`unable to access '${path}': ${cause} (every file it applies to is taken as converted)`);
    return { source: path, kind, base, rules: [], poisoned: true };
  }

  /** info/attributes, the global or the system file: followed through symlinks (git's `open`). */
  async outside(path: string, kind: AttrSourceKind): Promise<RawFile | null> {
    const st = await this.fs.stat(path);
    // absent; a directory reads as nothing; a FIFO or socket is not read
    if (!st || st.type !== 'file') return null;
    const bytes = await this.readSized(path, path, st.size, kind, '');
    if (bytes === null || !(bytes instanceof Uint8Array)) return bytes;
    return {
      source: path,
      kind,
      base: '',
      rules: parseAttributesBuffer(bytes, { macros: true, source: path }, this.warn),
      poisoned: false,
    };
  }

  /**
   * The bytes of the attributes file `path` (`shown` in messages) of `size` bytes: null for one
   * git ignores for its size or that went away; the unreadable file's stand-in when it cannot be read.
   */
  private async readSized(
    path: string,
    shown: string,
    size: number,
    kind: AttrSourceKind,
    base: string,
  ): Promise<Uint8Array | RawFile | null> {
    if (size >= ATTR_MAX_FILE_SIZE) {
      this.warn(`ignoring overly large gitattributes file '${shown}'`);
      return null;
    }
    try {
      return await this.fs.readFile(path);
    } catch (e) {
      if (fsErrorCode(e) === 'ENOENT') return null;
      return this.unreadable(path, kind, base, e);
    }
  }

  /**
   * The `.gitattributes` of the worktree-relative directory `dir` ('' the root), as git's
   * `read_attr` finds it in its direction: null when there is none anywhere, EMPTY for one
   * that reads as nothing (a directory).
   */
  async inTree(dir: string, has: boolean | undefined): Promise<RawFile | typeof EMPTY | null> {
    const rel = dir === '' ? '.gitattributes' : `${dir}/.gitattributes`;
    const macros = dir === '';
    if (this.opts.direction === 'checkout') {
      const fromIndex = await this.fromIndex(rel, dir, macros);
      if (fromIndex !== null) return fromIndex;
      return has === false ? null : this.fromWorktree(rel, dir, macros);
    }
    const fromWorktree = has === false ? null : await this.fromWorktree(rel, dir, macros);
    if (fromWorktree !== null) return fromWorktree;
    return this.fromIndex(rel, dir, macros);
  }

  /** git's `read_attr_from_file` with READ_ATTR_NOFOLLOW: null where git's returns NULL (and falls back to the index). */
  async fromWorktree(rel: string, dir: string, macros: boolean): Promise<RawFile | typeof EMPTY | null> {
    const path = joinPath(this.opts.worktree, rel);
    const st = await this.fs.lstat(path);
    if (!st) return null;
    if (st.type === 'symlink') {
      this.warn(`unable to access '${rel}': Too many levels of symbolic links (git does not follow a symlinked .gitattributes)`);
      return null;
    }
    if (st.type === 'directory') return EMPTY;
    if (st.type !== 'file') {
      this.warn(`'${rel}' is not a regular file; not read`);
      return null;
    }
    const bytes = await this.readSized(path, rel, st.size, 'gitattributes', dir);
    if (bytes === null || !(bytes instanceof Uint8Array)) return bytes;
    return {
      source: path,
      kind: 'gitattributes',
      base: dir,
      rules: parseAttributesBuffer(bytes, { macros, source: rel }, this.warn),
      poisoned: false,
    };
  }

  /** git's `read_attr_from_index`. */
  async fromIndex(rel: string, dir: string, macros: boolean): Promise<RawFile | null> {
    if (!this.opts.indexBlob) return null;
    const bytes = await this.opts.indexBlob(rel);
    if (!bytes) return null;
    if (bytes.length >= ATTR_MAX_FILE_SIZE) {
      this.warn(`ignoring overly large gitattributes blob '${rel}'`);
      return null;
    }
    return {
      source: `index:${rel}`,
      kind: 'gitattributes',
      base: dir,
      rules: parseAttributesBuffer(bytes, { macros, source: rel, from: 'blob' }, this.warn),
      poisoned: false,
    };
  }

  dir(rel: string, hasAttributesFile?: (dir: string) => boolean | undefined): Promise<Dir> {
    return dirAt(this.root, this.dirs, rel, (d, name, path) => d.enter(name, hasAttributesFile?.(path)) as Promise<Dir>);
  }

  async mayConvert(rel: string, hasAttributesFile?: (dir: string) => boolean | undefined): Promise<boolean> {
    const { parent, name } = splitRel(rel);
    return (await this.dir(parent, hasAttributesFile)).mayConvert(name);
  }

  async conversion(rel: string): Promise<Conversion> {
    const { parent, name } = splitRel(rel);
    return (await this.dir(parent)).conversion(name);
  }

  async check(rel: string): Promise<Map<string, AttrValue>> {
    const { parent, name } = splitRel(rel);
    return (await this.dir(parent)).check(name);
  }
}

class Dir implements DirAttributes {
  readonly path: string;
  private readonly rules: Rules;
  /** The files in force here, highest precedence first (info/attributes, this directory's, its parents', the global and system files), each with this directory's prefix below its base. */
  private readonly chain: readonly ChainEntry[];
  private readonly view: View;
  /** Index of the info/attributes entry in the chain (0), or -1. */
  private readonly infoAt: number;
  private children: Map<string, Dir> | null = null;

  constructor(rules: Rules, path: string, chain: readonly ChainEntry[], infoAt: number, view: View) {
    this.rules = rules;
    this.path = path;
    this.chain = chain;
    this.infoAt = infoAt;
    this.view = view;
  }

  get uniform(): boolean | undefined {
    return this.view.uniform;
  }

  get none(): boolean {
    return this.view.uniform === false;
  }

  mayConvert(name: string): boolean {
    return this.view.mayConvert(name);
  }

  conversion(name: string): Conversion {
    return this.view.conversion(name);
  }

  check(name: string): Map<string, AttrValue> {
    const all = collectAll(this.chain, matchKey(name), this.rules.macros, this.rules.ignoreCase);
    const out = new Map<string, AttrValue>();
    for (const [k, v] of all) if (v !== null) out.set(k, v);
    return out;
  }

  enter(name: string, hasAttributesFile?: boolean): Promise<DirAttributes> {
    const hit = this.children?.get(name);
    if (hit) return Promise.resolve(hit);
    // nothing to read: no promise chain (a walk enters thousands of directories)
    if (hasAttributesFile === false && !this.rules.opts.indexBlob) return Promise.resolve(this.child(name, null));
    return this.enterDir(name, hasAttributesFile);
  }

  async enterDir(name: string, has?: boolean): Promise<Dir> {
    const hit = this.children?.get(name);
    if (hit) return hit;
    const raw = await this.rules.inTree(this.path === '' ? name : `${this.path}/${name}`, has);
    return this.child(name, raw === null || raw === EMPTY ? null : this.rules.compile(raw));
  }

  /** The subdirectory `name`, whose own .gitattributes (if any) is `own`. */
  private child(name: string, own: AttrFile | null): Dir {
    const hit = this.children?.get(name);
    if (hit) return hit;
    const rules = this.rules;
    const path = this.path === '' ? name : `${this.path}/${name}`;
    let child: Dir;
    if (own === null && this.chain.length === 0) {
      child = new Dir(rules, path, this.chain, -1, this.view);
    } else {
      const key = matchKey(name) + '/';
      const chain: ChainEntry[] = [];
      let infoAt = -1;
      let k = 0;
      if (this.infoAt === 0) {
        chain.push({ file: this.chain[0].file, prefix: this.chain[0].prefix + key });
        infoAt = 0;
        k = 1;
      }
      if (own !== null && (own.rules.length > 0 || own.poisoned)) chain.push({ file: own, prefix: '' });
      for (; k < this.chain.length; k++) chain.push({ file: this.chain[k].file, prefix: this.chain[k].prefix + key });
      const sameView = (own === null || (own.relevant === 0 && !own.poisoned)) && this.view.independent;
      child = new Dir(rules, path, chain, infoAt, sameView ? this.view : new View(rules.plan, chain, rules.ignoreCase));
    }
    (this.children ??= new Map()).set(name, child);
    rules.dirs.set(path, child);
    return child;
  }
}

/** Load the attribute rules of a worktree: the root .gitattributes, info/attributes, core.attributesFile and the system file. */
export async function loadAttributeRules(fs: Fs, opts: AttributeOptions): Promise<AttributeRules> {
  const rules = new Rules(fs, opts);
  const env = opts.env ?? {};
  const systemPath = opts.systemFile === undefined ? systemAttributesFile(env) : opts.systemFile;
  const globalPath = attributesFilePath(opts);
  // four independent reads: side by side (an async filesystem answers them together)
  const [system, global, rootRaw, info] = await Promise.all([
    systemPath ? rules.outside(systemPath, 'system') : null,
    globalPath ? rules.outside(globalPath, 'attributesFile') : null,
    rules.inTree('', undefined),
    rules.outside(joinPath(opts.gitDir, 'info', 'attributes'), 'info/attributes'),
  ]);
  const root = rootRaw === EMPTY ? null : rootRaw;
  const builtin: RawFile = {
    source: '[builtin]',
    kind: 'builtin',
    base: '',
    rules: parseAttributesBuffer(new TextEncoder().encode(BUILTIN_ATTRIBUTES), { macros: true, source: '[builtin]' }),
    poisoned: false,
  };
  // precedence order, highest first
  const stack = [info, root, global, system, builtin].filter((f): f is RawFile => f !== null);
  rules.macros = macroTable(stack.map((f) => f.rules));
  rules.plan = new Plan(rules.macros, rules.config);
  const chain: ChainEntry[] = [];
  let infoAt = -1;
  for (const raw of [info, root, global, system]) {
    if (raw === null) continue;
    const file = rules.compile(raw);
    if (file.rules.length === 0 && !file.poisoned) continue;
    if (raw === info) infoAt = chain.length;
    chain.push({ file, prefix: '' });
  }
  const view = new View(rules.plan, chain, rules.ignoreCase);
  rules.root = new Dir(rules, '', chain, infoAt, view);
  rules.none = !rules.plan.baseConverts && chain.every((e) => e.file.relevant === 0 && !e.file.poisoned);
  return rules;
}
