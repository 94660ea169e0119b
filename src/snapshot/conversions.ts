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
import { attributeOptionsFromConfig, loadAttributeRules, type AttributeRules } from '../attributes/index.js';
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

/**
 * The attribute rules that say whether a stat-clean file may differ from its blob, as git reads
 * them: the worktree's `.gitattributes` (the index's blob where the worktree has none),
 * info/attributes, core.attributesFile, and core.autocrlf / core.eol / the filter drivers from
 * the global configs and the repository's.
 */
export async function conversionRules(repo: Repository, index: GitIndex | null): Promise<AttributeRules> {
  const configs = [...(await globalConfigs(repo)), repo.config];
  const rows = index ? rowsOf(index) : null;
  return loadAttributeRules(repo.fs, {
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
  });
}
