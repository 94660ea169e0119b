/**
 * Running the real git CLI from tests (the library itself never spawns git).
 *
 *   import { git, makeTempRepo } from '../helpers/git.js';
 *   const dir = makeTempRepo({ objectFormat: 'sha256' });
 *   const oid = git(dir, ['hash-object', '-w', '--stdin'], { input: 'hello\n' }).trim();
 *   const raw = git(dir, ['cat-file', 'blob', oid], { encoding: 'buffer' });
 *
 * Every git runs with a deterministic environment (`gitEnv`): inherited GIT_* variables are
 * dropped (tests may run inside a git hook, where GIT_DIR and GIT_INDEX_FILE are set), the system
 * config is ignored, HOME and XDG_CONFIG_HOME point at a private directory whose .gitconfig sets
 * `init.defaultBranch=main` and a user, and author/committer name, email and date are fixed.
 *
 * Directories from `makeTempRepo` / `makeTempDir` are removed after the test file's tests
 * (an `afterAll` registered when this module is imported), or earlier with `cleanupTempDirs()`.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll } from 'vitest';

export type ObjectFormat = 'sha1' | 'sha256';

/** Fixed identity and dates of every commit the helper's git makes. */
export const GIT_AUTHOR = { name: 'A U Thor', email: 'author@example.com', date: '1700000000 +0000' } as const;
export const GIT_COMMITTER = { name: 'C O Mitter', email: 'committer@example.com', date: '1700000000 +0000' } as const;

const tempDirs: string[] = [];

/** A fresh empty directory under os.tmpdir(), removed with the others. */
export function makeTempDir(prefix = 'scalpel-'): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  tempDirs.push(dir);
  return dir;
}

/** Removes every directory this module created so far. */
export function cleanupTempDirs(): void {
  for (const dir of tempDirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  home = undefined;
}

afterAll(cleanupTempDirs);

let home: string | undefined;

function gitHome(): string {
  if (home === undefined) {
    home = makeTempDir('scalpel-home-');
    writeFileSync(
      join(home, '.gitconfig'),
      [
        '[init]',
        '\tdefaultBranch = main',
        '[user]',
        `\tname = ${GIT_AUTHOR.name}`,
        `\temail = ${GIT_AUTHOR.email}`,
        '[core]',
        '\tautocrlf = false',
        '[commit]',
        '\tgpgSign = false',
        '[gc]',
        '\tauto = 0',
        '[maintenance]',
        '\tauto = false',
        '[protocol "file"]',
        '\tallow = always',
        '',
      ].join('\n'),
    );
  }
  return home;
}

/** The environment every helper git runs with; `extra` is merged on top. */
export function gitEnv(extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!k.startsWith('GIT_')) env[k] = v;
  const h = gitHome();
  return {
    ...env,
    HOME: h,
    XDG_CONFIG_HOME: h,
    LC_ALL: 'C',
    TZ: 'UTC',
    GIT_CONFIG_NOSYSTEM: '1',
    GIT_TERMINAL_PROMPT: '0',
    GIT_AUTHOR_NAME: GIT_AUTHOR.name,
    GIT_AUTHOR_EMAIL: GIT_AUTHOR.email,
    GIT_AUTHOR_DATE: GIT_AUTHOR.date,
    GIT_COMMITTER_NAME: GIT_COMMITTER.name,
    GIT_COMMITTER_EMAIL: GIT_COMMITTER.email,
    GIT_COMMITTER_DATE: GIT_COMMITTER.date,
    ...extra,
  };
}

export interface GitOptions {
  /** Written to git's stdin. */
  input?: string | Uint8Array;
  /** Extra environment variables. */
  env?: NodeJS.ProcessEnv;
  /** `'utf8'` (default) returns a string; `'buffer'` returns the raw bytes. */
  encoding?: 'utf8' | 'buffer';
}

/**
 * Runs `git <args>` in `cwd` and returns its stdout. A non-zero exit throws an Error whose
 * message includes the command and git's stderr.
 */
export function git(cwd: string, args: readonly string[], opts?: GitOptions & { encoding?: 'utf8' }): string;
export function git(cwd: string, args: readonly string[], opts: GitOptions & { encoding: 'buffer' }): Buffer;
export function git(cwd: string, args: readonly string[], opts: GitOptions = {}): string | Buffer {
  try {
    const out = execFileSync('git', args, {
      cwd,
      env: gitEnv(opts.env),
      input: opts.input,
      stdio: ['pipe', 'pipe', 'pipe'],
      maxBuffer: 1 << 30,
    });
    return opts.encoding === 'buffer' ? out : out.toString('utf8');
  } catch (e) {
    const err = e as { status?: number; stderr?: Buffer };
    throw new Error(`git ${args.join(' ')} (in ${cwd}) exited ${err.status}: ${err.stderr?.toString('utf8').trim() ?? String(e)}`);
  }
}

/** The NUL-terminated records of a `-z` output (a last one without its NUL is dropped). */
export function splitNul(out: Buffer): Buffer[] {
  const parts: Buffer[] = [];
  let p = 0;
  while (p < out.length) {
    const z = out.indexOf(0, p);
    if (z < 0) break;
    parts.push(out.subarray(p, z));
    p = z + 1;
  }
  return parts;
}

export interface TempRepoOptions {
  objectFormat?: ObjectFormat;
  bare?: boolean;
}

/** `git init` in a fresh temp directory; returns the directory (the worktree, or the git dir when bare). */
export function makeTempRepo(opts: TempRepoOptions = {}): string {
  const dir = makeTempDir('scalpel-repo-');
  const args = ['init', '-q', `--object-format=${opts.objectFormat ?? 'sha1'}`];
  if (opts.bare) args.push('--bare');
  git(dir, [...args, '.']);
  return dir;
}

/** The repository's objects directory. */
export function objectsDir(repo: string, opts: { bare?: boolean } = {}): string {
  return opts.bare ? join(repo, 'objects') : join(repo, '.git', 'objects');
}

export interface CatObject {
  oid: string;
  type: 'blob' | 'tree' | 'commit' | 'tag';
  content: Buffer;
}

/** The records of `git cat-file --batch` output, in order (a missing id is an error). */
function parseCatBatch(out: Buffer): CatObject[] {
  const list: CatObject[] = [];
  let p = 0;
  while (p < out.length) {
    const nl = out.indexOf(10, p);
    const [oid, type, size] = out.toString('latin1', p, nl).split(' ');
    if (type === 'missing') throw new Error(`git cat-file: ${oid} missing`);
    const n = Number(size);
    list.push({ oid, type: type as CatObject['type'], content: out.subarray(nl + 1, nl + 1 + n) });
    p = nl + 1 + n + 1;
  }
  return list;
}

/** Every object of the repository as `git cat-file --batch-all-objects --batch` prints it: id → type and content. */
export function catAllObjects(dir: string): Map<string, { type: CatObject['type']; content: Buffer }> {
  const out = git(dir, ['cat-file', '--batch-all-objects', '--batch'], { encoding: 'buffer' });
  return new Map(parseCatBatch(out).map((o) => [o.oid, { type: o.type, content: o.content }]));
}

/** The objects `oids` names, as git reads them (`git cat-file --batch`), in that order. */
export function catObjects(dir: string, oids: readonly string[]): CatObject[] {
  return parseCatBatch(git(dir, ['cat-file', '--batch'], { input: oids.join('\n') + '\n', encoding: 'buffer' }));
}
