import { ScalpelError } from '../errors/index.js';
import { utf8Decode } from '../bytes/text.js';
import type { Fs } from '../fs/types.js';
import { dirname, joinPath, resolvePath } from '../fs/path.js';
import { GitConfig } from './config.js';
import { checkObjectFormat, type ObjectFormat } from '../hash/index.js';

export interface RepoLocation {
  /** Top of the working tree. */
  worktree: string;
  /** This worktree's git dir (holds index, HEAD); `.git`, or `.git/worktrees/<name>` for a linked worktree. */
  gitDir: string;
  /** Shared git dir (objects, refs, config); equals gitDir except in linked worktrees. */
  commonDir: string;
}

/**
 * Find the repository containing `start`, as git does: walk up to the first directory holding
 * `.git` — a directory, or a file `gitdir: <path>` (linked worktrees, submodules) — and follow
 * `commondir` when the git dir has one.
 */
export async function discoverRepository(fs: Fs, start: string): Promise<RepoLocation> {
  let dir = resolvePath('/', start);
  for (;;) {
    const dotgit = joinPath(dir, '.git');
    const st = await fs.lstat(dotgit);
    if (st && st.type === 'directory' && (await isGitDir(fs, dotgit))) {
      return { worktree: dir, gitDir: dotgit, commonDir: await commonDirOf(fs, dotgit) };
    }
    if (st && st.type === 'file') {
      const gitDir = await readGitFile(fs, dotgit, dir);
      return { worktree: dir, gitDir, commonDir: await commonDirOf(fs, gitDir) };
    }
    if (dir === '/') break;
    dir = dirname(dir);
  }
  throw new ScalpelError('NOT_A_REPOSITORY', `not a git repository (or any of the parent directories): ${start}`, { path: start });
}

async function isGitDir(fs: Fs, dir: string): Promise<boolean> {
  const head = await fs.lstat(joinPath(dir, 'HEAD'));
  if (!head) return false;
  if (await fs.lstat(joinPath(dir, 'commondir'))) return true;
  const objects = await fs.lstat(joinPath(dir, 'objects'));
  return objects !== null && objects.type === 'directory';
}

async function readGitFile(fs: Fs, file: string, worktree: string): Promise<string> {
  const text = utf8Decode(await fs.readFile(file));
  const m = /^gitdir: (.+?)\r?\n?$/.exec(text);
  if (!m) throw new ScalpelError('NOT_A_REPOSITORY', `invalid gitfile format: ${file}`, { path: file, reason: 'bad-gitfile' });
  const gitDir = resolvePath(worktree, m[1]);
  if (!(await isGitDir(fs, gitDir))) {
    throw new ScalpelError('NOT_A_REPOSITORY', `not a git repository: ${gitDir} (named by ${file})`, {
      path: gitDir,
      reason: 'gitfile-target',
    });
  }
  return gitDir;
}

async function commonDirOf(fs: Fs, gitDir: string): Promise<string> {
  const p = joinPath(gitDir, 'commondir');
  if (!(await fs.lstat(p))) return gitDir;
  const rel = utf8Decode(await fs.readFile(p)).replace(/\r?\n$/, '');
  return resolvePath(gitDir, rel);
}

/** The repository's config (common dir), plus `config.worktree` when extensions.worktreeConfig is on. */
export async function readRepoConfig(fs: Fs, loc: RepoLocation): Promise<GitConfig> {
  const main = joinPath(loc.commonDir, 'config');
  const text = (await fs.lstat(main)) ? await fs.readFile(main) : new Uint8Array(0);
  const cfg = GitConfig.parse(text, main);
  if (cfg.getBool('extensions.worktreeConfig', false)) {
    const wt = joinPath(loc.gitDir, 'config.worktree');
    if (await fs.lstat(wt)) {
      const both = new Uint8Array([...text, 0x0a, ...(await fs.readFile(wt))]);
      return GitConfig.parse(both, main);
    }
  }
  return cfg;
}

export function objectFormatOf(cfg: GitConfig): ObjectFormat {
  const v = cfg.getString('extensions.objectFormat');
  return checkObjectFormat(v === undefined ? undefined : v.toLowerCase());
}
