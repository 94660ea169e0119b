/**
 * When a stat-clean file's bytes are its index blob (DESIGN I10): only when git's checkout
 * conversion is the identity for it. Under `core.autocrlf`, `text`, `eol`, `ident`, a `filter`
 * or `working-tree-encoding`, a stat-clean file may hold CRLF (an expanded `$Id$`, smudged
 * bytes) while its blob holds LF: a capture must read it, or a restore writes the blob back and
 * the person's bytes are lost. The rules are git's (src/attributes), read from the repository's
 * config and the person's global ones, loaded only when a capture has a stat-clean file to ask
 * about, once per capture.
 */
import { joinPath } from '../fs/path.js';
import {
  attributeOptionsFromConfig,
  attributesFilePath,
  systemAttributesFile,
  loadAttributeRules,
  type AttributeRules,
  type DirAttributes,
} from '../attributes/index.js';
import { excludesFilePath, ignoreOptionsFromConfig } from '../ignore/index.js';
import { objectId } from '../object/loose.js';
import type { GitIndex } from '../index/decode.js';
import { rowsAt, rowsOf } from '../index/rows.js';
import { GitConfig } from '../repo/config.js';
import type { Repository } from '../repo/repository.js';

/**
 * git's global configs, in the order git reads them (a later one's value wins):
 * `$XDG_CONFIG_HOME/git/config` (or `~/.config/git/config`), then `~/.gitconfig`. Those that do
 * not exist are left out; without HOME and XDG_CONFIG_HOME there are none.
 */
export async function globalConfigs(repo: Repository): Promise<GitConfig[]> {
  const env = repo.env;
  const files = [
    env.XDG_CONFIG_HOME ? joinPath(env.XDG_CONFIG_HOME, 'git', 'config') : env.HOME ? joinPath(env.HOME, '.config', 'git', 'config') : null,
    env.HOME ? joinPath(env.HOME, '.gitconfig') : null,
  ];
  const out: GitConfig[] = [];
  for (const file of files) {
    if (!file) continue;
    const st = await repo.fs.stat(file);
    if (!st || st.type !== 'file') continue;
    out.push(GitConfig.parse(await repo.fs.readFile(file), file));
  }
  return out;
}

/** Every config git reads here, the global ones first (a later one's value wins). */
export async function gitConfigs(repo: Repository): Promise<GitConfig[]> {
  return [...(await globalConfigs(repo)), repo.config];
}

/** core.excludesFile as git resolves it from `configs` (the last one to set it wins; undefined: none does). */
export function excludesFileOf(configs: readonly GitConfig[]): string | null | undefined {
  let excludesFile: string | null | undefined;
  for (const config of configs) {
    const v = ignoreOptionsFromConfig(config).excludesFile;
    if (v !== undefined) excludesFile = v;
  }
  return excludesFile;
}

/**
 * The attribute rules that say whether a stat-clean file may differ from its blob, as git reads
 * them: the worktree's `.gitattributes` (the index's blob where the worktree has none),
 * info/attributes, core.attributesFile, and core.autocrlf / core.eol / the filter drivers from
 * the global configs and the repository's. `checkoutToo`: the index's `.gitattributes` first as
 * well (as a checkout reads them), a file answering yes when either says so.
 */
export async function conversionRules(
  repo: Repository,
  index: GitIndex | null,
  opts: { checkoutToo?: boolean; configs?: readonly GitConfig[] } = {},
): Promise<AttributeRules> {
  const configs = opts.configs ?? (await gitConfigs(repo));
  const rows = index ? rowsOf(index) : null;
  const load = (direction: 'checkin' | 'checkout') =>
    loadAttributeRules(repo.fs, {
      worktree: repo.worktree,
      gitDir: repo.loc.commonDir,
      env: repo.env,
      ...attributeOptionsFromConfig(configs),
      indexBlob: rows
        ? async (rel) => {
            const at = rowsAt(rows, rel);
            const e = at.map((i) => rows.entry(i)).find((x) => x.stage === 0) ?? at.map((i) => rows.entry(i)).find((x) => x.stage === 2);
            if (!e) return null;
            try {
              return (await repo.odb.read(e.oid)).content;
            } catch {
              return null;
            }
          }
        : undefined,
      // an attributes file that cannot be read: every file it might cover is read instead
      onUnreadable: 'converts',
      direction,
    });
  const checkin = await load('checkin');
  return opts.checkoutToo && rows ? eitherRules(checkin, await load('checkout')) : checkin;
}

/**
 * Does a `.gitattributes` of one of `dirs` (worktree-relative) stand in the index other than in
 * the worktree (its stat differs from its entry's: an unstaged edit, or a new one)? Then a
 * stat-clean file there was checked out under other rules than those the worktree says now
 * (the agent's edit of `.gitattributes` took `eol=crlf` away, its CRLF files stay CRLF), and
 * both must be asked (conversionRules' `checkoutToo`).
 */
export async function attributesChanged(repo: Repository, index: GitIndex | null, dirs: Iterable<string>): Promise<boolean> {
  if (!index) return false;
  const rows = rowsOf(index);
  for (const dir of new Set(dirs)) {
    const rel = dir === '' ? '.gitattributes' : `${dir}/.gitattributes`;
    const e = rowsAt(rows, rel)
      .map((i) => rows.entry(i))
      .find((x) => x.stage === 0);
    if (!e) continue;
    const st = await repo.fs.lstat(joinPath(repo.worktree, rel));
    if (!st || st.type !== 'file' || !e.statEquals(st)) return true;
  }
  return false;
}

/**
 * A key naming every input from outside the worktree that a walk's ignore and attribute rules are
 * made of: the configs (the repository's and the global ones, as read), the environment they
 * resolve paths with, and the bytes of info/exclude, the excludes file, info/attributes, the
 * global and the system attributes files. Two walks with one key and one worktree apply the same
 * rules wherever their `.gitignore` and `.gitattributes` files are the same. Null: a path that
 * cannot be resolved (the rules' own loading says why).
 */
export async function outsideRulesKey(repo: Repository, configs: readonly GitConfig[]): Promise<string | null> {
  const env = repo.env;
  const excludesFile = excludesFileOf(configs);
  let files: Array<string | null>;
  try {
    const worktree = repo.worktree;
    files = [
      joinPath(repo.loc.commonDir, 'info', 'exclude'),
      excludesFilePath({ worktree, excludesFile, env }),
      joinPath(repo.loc.commonDir, 'info', 'attributes'),
      attributesFilePath({ worktree, attributesFile: attributeOptionsFromConfig(configs).attributesFile, env }),
      // the repository's environment has no GIT_ATTR_NOSYSTEM: the rules read the system file
      systemAttributesFile({}),
    ];
  } catch {
    return null;
  }
  const parts: string[] = [JSON.stringify([env.HOME ?? null, env.XDG_CONFIG_HOME ?? null])];
  for (const c of configs) parts.push(c.fingerprint());
  for (const f of files) {
    if (!f) {
      parts.push('-');
      continue;
    }
    let bytes: Uint8Array | null = null;
    try {
      const st = await repo.fs.stat(f);
      if (st && st.type === 'file') bytes = await repo.fs.readFile(f);
      else parts.push(st ? st.type : 'none');
    } catch (e) {
      parts.push(`error:${(e as { code?: string }).code ?? ''}`);
    }
    if (bytes) parts.push(objectId('blob', bytes, repo.objectFormat, repo.hash));
  }
  return parts.join('\n');
}

/** Rules answering "may convert" when either `a` or `b` does (the checkin and the checkout direction). */
function eitherRules(a: AttributeRules, b: AttributeRules): AttributeRules {
  return {
    ignoreCase: a.ignoreCase,
    config: a.config,
    none: a.none && b.none,
    root: eitherDir(a.root, b.root),
    macros: a.macros,
    warnings: [...new Set([...a.warnings, ...b.warnings])],
    dir: async (rel, hint) => eitherDir(await a.dir(rel, hint), await b.dir(rel, hint)),
    mayConvert: async (rel, hint) => (await a.mayConvert(rel, hint)) || b.mayConvert(rel, hint),
    conversion: (rel) => a.conversion(rel),
    check: (rel) => a.check(rel),
  };
}

function eitherDir(x: DirAttributes, y: DirAttributes): DirAttributes {
  const uniform = x.uniform === true || y.uniform === true ? true : x.uniform === false && y.uniform === false ? false : undefined;
  return {
    path: x.path,
    uniform,
    none: x.none && y.none,
    mayConvert: (name) => x.mayConvert(name) || y.mayConvert(name),
    conversion: (name) => x.conversion(name),
    check: (name) => x.check(name),
    enter: async (name, has) => eitherDir(await x.enter(name, has), await y.enter(name, has)),
  };
}
