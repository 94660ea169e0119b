/**
 * Crash-safe writing on top of the Fs contract (DESIGN I6), usable with any adapter:
 *
 * - `writeFileAtomic`: temp file in the same directory, created exclusively, then `rename` over the
 *   destination. A crash leaves the destination old or new, never torn; at worst a temp file named
 *   `.<basename>.scalpel-tmp-<random>` stays behind, which `removeStaleTemps` removes on the next run.
 * - `replaceWithSymlink`: atomic where rename keeps symlinks, unlink + symlink where it follows them.
 * - `acquireLock`: git's lock protocol (`<file>.lock` created exclusively, written, renamed over
 *   `<file>`); refuses with INDEX_LOCKED in git's own words and never removes a lock it does not own.
 * - `mkdirp` / `pruneEmptyDirs`: create missing directories and later remove exactly those.
 *
 * Nothing here imports a Node built-in.
 */
import { concatBytes } from '../bytes/compare.js';
import { ScalpelError } from '../errors/index.js';
import { encodePath } from '../bytes/text.js';
import { randomHex } from '../bytes/random.js';
import { basename, dirname, joinPath, normalizePath } from './path.js';
import { fsErrorCode, type Fs } from './types.js';

const TEMP_MARK = '.scalpel-tmp-';
/** `.<basename>.scalpel-tmp-<hex>`; the basename part may have been shortened (see tempNameFor). */
const TEMP_RE = /^\..*\.scalpel-tmp-[0-9a-f]{8,32}$/s;
/** Longest file name most filesystems accept, in bytes (NAME_MAX). */
const NAME_MAX = 255;

/** True when `name` (a basename, or a path whose last segment is tested) is a temp file of ours. */
export function isScalpelTemp(name: string): boolean {
  const i = name.lastIndexOf('/');
  return TEMP_RE.test(i >= 0 ? name.slice(i + 1) : name);
}

/**
 * The temp path beside `path`: `.<basename>.scalpel-tmp-<16 hex>`. A basename too long for the
 * result to fit NAME_MAX bytes is shortened (by whole code points), so long names still work.
 */
export function tempPathFor(path: string): string {
  const dir = dirname(path);
  let base = basename(path);
  const suffix = TEMP_MARK + randomHex(8);
  const budget = NAME_MAX - 1 - suffix.length;
  if (encodePath(base).length > budget) {
    const cps = Array.from(base);
    while (cps.length > 0 && encodePath(cps.join('')).length > budget) cps.pop();
    base = cps.join('');
  }
  return joinPath(dir, '.' + base + suffix);
}

function errorWithCode(code: string, message: string, data: Record<string, unknown> = {}): Error {
  return Object.assign(new Error(`${code}: ${message}`), { code, ...data });
}

async function bestEffort(f: () => Promise<unknown>): Promise<void> {
  try {
    await f();
  } catch {
    // best effort: the caller is already reporting the error that matters
  }
}

export interface AtomicWriteOptions {
  /**
   * Permission bits of the new file (e.g. 0o644 / 0o755). Applied at creation, so the process
   * umask applies, as it does to files git checks out. When omitted, the destination's current
   * permission bits are kept if it is a regular file (a plain rename would otherwise reset them),
   * else 0o666.
   */
  mode?: number;
}

/**
 * Write `data` to `path` atomically: exclusive-create `.<basename>.scalpel-tmp-<random>` in the
 * same directory, write it, then `rename` it over `path`. On any failure the temp file is removed
 * (best effort) and the error rethrown; the destination is then untouched. After a crash (the
 * process dies between the two steps) the destination is still the old file and the temp file
 * remains: `removeStaleTemps(dir)` deletes it.
 *
 * A symlink at `path` is replaced by the file (rename replaces the link, it does not write
 * through it; memfs does the same). A directory at `path` makes the rename fail.
 */
export async function writeFileAtomic(fs: Fs, path: string, data: Uint8Array, opts: AtomicWriteOptions = {}): Promise<void> {
  let mode = opts.mode;
  if (mode === undefined) {
    const st = await fs.lstat(path);
    mode = st && st.type === 'file' ? st.mode & 0o7777 : 0o666;
  }
  const tmp = tempPathFor(path);
  try {
    await fs.writeFile(tmp, data, { mode, exclusive: true });
    await renameOver(fs, tmp, path);
  } catch (e) {
    // Even when writeFile failed the temp may exist (a torn write); it cannot be anyone else's
    // file because its name carries 64 random bits.
    await bestEffort(() => fs.unlink(tmp));
    throw e;
  }
}

/**
 * rename `from` onto `to`, replacing a file there. On a filesystem whose rename does not truly
 * replace (capabilities.renameReplaces false) the file there is unlinked first: not atomic, but
 * such filesystems (memfs) live in memory, where there is no crash to survive.
 */
export async function renameOver(fs: Fs, from: string, to: string): Promise<void> {
  if (fs.capabilities.renameReplaces === false) {
    const st = await fs.lstat(to);
    if (st && st.type !== 'directory') await fs.unlink(to);
  }
  await fs.rename(from, to);
}

/**
 * Remove temp files a killed run left in `dir` (regular files and symlinks whose name matches
 * `isScalpelTemp`). Returns the paths removed. A missing directory removes nothing.
 */
export async function removeStaleTemps(fs: Fs, dir: string): Promise<string[]> {
  let names: string[];
  try {
    names = await fs.readdir(dir);
  } catch (e) {
    const c = fsErrorCode(e);
    if (c === 'ENOENT' || c === 'ENOTDIR') return [];
    throw e;
  }
  const removed: string[] = [];
  for (const name of names) {
    if (!isScalpelTemp(name)) continue;
    const p = joinPath(dir, name);
    const st = await fs.lstat(p);
    if (!st || st.type === 'directory') continue;
    try {
      await fs.unlink(p);
      removed.push(p);
    } catch (e) {
      if (fsErrorCode(e) !== 'ENOENT') throw e;
    }
  }
  return removed;
}

/**
 * Make `path` a symlink to `target`, replacing a file or symlink that is there.
 *
 * - `capabilities.renameFollowsSymlinks` false (real filesystems): the link is created at a temp
 *   name beside `path` and renamed over it — atomic; on failure the temp link is removed.
 * - true (memfs, lightning-fs, where rename moves the link's target instead of the link): unlink
 *   then symlink. Not atomic: a crash between the two leaves `path` absent (never torn, never a
 *   wrong target); re-running the restore completes it. Never renames a symlink there.
 *
 * No symlink support → ScalpelError('UNSUPPORTED', { capability: 'symlinks' }). A directory at
 * `path` is an error (the caller removes it first).
 */
export async function replaceWithSymlink(fs: Fs, path: string, target: string): Promise<void> {
  if (!fs.capabilities.symlinks) {
    throw new ScalpelError(
      'UNSUPPORTED',
      `cannot create symlink ${path}: filesystem ${fs.name} has no symlinks (git would use core.symlinks=false)`,
      {
        capability: 'symlinks',
        path,
        fs: fs.name,
      },
    );
  }
  if (!fs.capabilities.renameFollowsSymlinks) {
    const tmp = tempPathFor(path);
    try {
      await fs.symlink(target, tmp);
      await renameOver(fs, tmp, path);
    } catch (e) {
      await bestEffort(() => fs.unlink(tmp));
      throw e;
    }
    return;
  }
  const st = await fs.lstat(path);
  if (st && st.type === 'directory') {
    throw errorWithCode('EISDIR', `cannot replace directory ${path} with a symlink`, { path, syscall: 'symlink' });
  }
  if (st) await fs.unlink(path);
  await fs.symlink(target, path);
}

/** A held lock file (git's `<file>.lock`). */
export interface Lock {
  /** The lock file's path. */
  readonly path: string;
  /** 'held' until committed or released. */
  readonly state: 'held' | 'committed' | 'released';
  /** Replace the lock file's content (the new content of the file it guards). */
  write(data: Uint8Array): Promise<void>;
  /** The same from parts (written one after the other, without copying them together when the fs can). */
  writeParts(parts: readonly Uint8Array[]): Promise<void>;
  /** Rename the lock over `target` (default: the lock path without its `.lock` suffix). */
  commit(target?: string): Promise<void>;
  /** Remove the lock file if we still own it (created it, did not commit, nobody replaced it). Idempotent. */
  release(): Promise<void>;
}

/** git's message (lockfile.c, unable_to_lock_message) for a lock that exists. */
export function lockExistsMessage(lockPath: string): string {
  return (
    `Unable to create '${lockPath}': File exists.\n\n` +
    'Another git process seems to be running in this repository, e.g.\n' +
    "an editor opened by 'git commit'. Please make sure all processes\n" +
    'are terminated then try again. If it still fails, a git process\n' +
    'may have crashed in this repository earlier:\n' +
    'remove the file manually to continue.'
  );
}

/**
 * Take the lock file `path` (e.g. `<gitdir>/index.lock`) by creating it exclusively (empty).
 * If it exists → ScalpelError('INDEX_LOCKED', git's message, { path }) and the file is not touched.
 *
 * On a filesystem without exclusive create (`capabilities.exclusiveCreate` false, lightning-fs) the
 * lock is checked with lstat first and then created: two processes racing between the check and the
 * create could both believe they hold it. That window cannot be closed there; the refusal when a
 * lock already exists at check time still holds.
 *
 * The lock remembers the identity (dev, ino) of the file it created: `release` and `commit` refuse
 * to act on a lock file that someone removed and re-created in the meantime.
 */
export async function acquireLock(fs: Fs, path: string, opts: { content?: Uint8Array; temp?: string } = {}): Promise<Lock> {
  const locked = () => new ScalpelError('INDEX_LOCKED', lockExistsMessage(path), { path });
  if (!fs.capabilities.exclusiveCreate && (await fs.lstat(path))) throw locked();
  if (
    opts.content &&
    opts.temp &&
    fs.link &&
    fs.capabilities.exclusiveCreate &&
    (await createLinked(fs, path, opts.content, opts.temp, locked))
  )
    return heldLock(fs, path);
  try {
    // `content` marks the lock as ours until the real content is written (see repo/journal.ts)
    await fs.writeFile(path, opts.content ?? new Uint8Array(0), { mode: 0o666, exclusive: true });
  } catch (e) {
    if (fsErrorCode(e) === 'EEXIST') throw locked();
    // Any other failure may still have created the (empty) file — open succeeded, the rest did
    // not. Remove an empty lock file so a failed acquire leaves no lock behind (as git's
    // rollback does); a non-empty one cannot be ours.
    await bestEffort(async () => {
      const st = await fs.lstat(path);
      if (st && st.type === 'file' && (st.size === 0 || (opts.content && st.size <= opts.content.length))) await fs.unlink(path);
    });
    throw e;
  }
  return heldLock(fs, path);
}

/**
 * Create the lock `path` already holding `content`: written to `temp` (beside it), then hard-linked
 * as the lock, which fails when the lock exists (EEXIST → `locked()`), as an exclusive create
 * does. A process killed at any moment leaves either no lock or one holding `content` (a temp
 * file its owner's next run removes). False when the filesystem cannot link here: the caller
 * creates the lock the plain way.
 */
async function createLinked(fs: Fs, path: string, content: Uint8Array, temp: string, locked: () => ScalpelError): Promise<boolean> {
  await fs.writeFile(temp, content, { mode: 0o666, exclusive: true });
  try {
    await (fs.link as NonNullable<Fs['link']>)(temp, path);
    return true;
  } catch (e) {
    if (fsErrorCode(e) === 'EEXIST') throw locked();
    if (['EPERM', 'ENOTSUP', 'EOPNOTSUPP', 'ENOSYS', 'EXDEV', 'EMLINK'].includes(fsErrorCode(e) ?? '')) return false;
    throw e;
  } finally {
    await bestEffort(() => fs.unlink(temp));
  }
}

/** A lock file just created at `path`, ours to write, commit or release. */
async function heldLock(fs: Fs, path: string): Promise<Lock> {
  const st0 = await fs.lstat(path);
  const ident = st0 ? { dev: st0.dev, ino: st0.ino } : undefined;
  let state: 'held' | 'committed' | 'released' = 'held';

  const stillOurs = async (): Promise<'ours' | 'gone' | 'foreign'> => {
    const st = await fs.lstat(path);
    if (!st) return 'gone';
    if (st.type !== 'file') return 'foreign';
    // ino 0 everywhere (a filesystem without inode numbers): nothing better to compare
    if (ident && ident.ino !== 0 && (st.ino !== ident.ino || st.dev !== ident.dev)) return 'foreign';
    return 'ours';
  };
  const mustHold = (what: string) => {
    if (state !== 'held')
      throw new ScalpelError('BAD_ARGUMENT', `cannot ${what} lock ${path}: it is ${state}`, { name: 'lock', path, reason: state });
  };

  return {
    path,
    get state() {
      return state;
    },
    async write(data) {
      mustHold('write');
      await fs.writeFile(path, data);
    },
    async writeParts(parts) {
      mustHold('write');
      if (fs.writeChunks) {
        await fs.writeChunks(
          path,
          (async function* () {
            yield* parts;
          })(),
        );
        return;
      }
      await fs.writeFile(path, concatBytes(parts));
    },
    async commit(target) {
      mustHold('commit');
      const dest = target ?? (path.endsWith('.lock') ? path.slice(0, -5) : undefined);
      if (dest === undefined)
        throw new ScalpelError('BAD_ARGUMENT', `lock ${path} does not end in .lock: name the commit target`, { name: 'target', path });
      const who = await stillOurs();
      if (who !== 'ours') {
        state = 'released';
        throw new ScalpelError(
          'INDEX_LOCKED',
          `lock ${path} was ${who === 'gone' ? 'removed' : 'replaced'} by another process before it could be committed`,
          { path, reason: who },
        );
      }
      await renameOver(fs, path, dest);
      state = 'committed';
    },
    async release() {
      if (state !== 'held') return;
      state = 'released';
      if ((await stillOurs()) !== 'ours') return;
      // one retry: a lock of ours left behind blocks every later git and git-scalpel process
      for (let attempt = 0; ; attempt++) {
        try {
          await fs.unlink(path);
          return;
        } catch (e) {
          if (fsErrorCode(e) === 'ENOENT') return;
          if (attempt >= 1) throw e;
        }
      }
    },
  };
}

/**
 * Create `dir` and its missing parents. Returns the directories it created, shallowest first
 * (pass them to `pruneEmptyDirs` to undo exactly this). An existing directory, or a symlink to
 * one, counts as present. A non-directory in the way fails: EEXIST at `dir` itself, ENOTDIR for a
 * parent. Concurrent creation of the same directory is tolerated (not reported as created).
 * When a mkdir fails, the directories this call already created are removed (if still empty)
 * before the error is rethrown.
 *
 * mkdirp does not check that no parent inside the worktree is a symbolic link: the engine validates
 * paths before calling it.
 */
export async function mkdirp(fs: Fs, dir: string, opts: { mode?: number } = {}): Promise<string[]> {
  const target = normalizePath(dir);
  const missing: string[] = [];
  let cur = target;
  for (;;) {
    const kind = await dirKind(fs, cur);
    if (kind === 'directory') break;
    if (kind === 'missing') {
      missing.push(cur);
      if (cur === '/' || dirname(cur) === cur) break;
      cur = dirname(cur);
      continue;
    }
    throw errorWithCode(cur === target ? 'EEXIST' : 'ENOTDIR', `${cur} exists and is not a directory (creating ${target})`, {
      path: cur,
      syscall: 'mkdir',
    });
  }
  const created: string[] = [];
  for (let i = missing.length - 1; i >= 0; i--) {
    const d = missing[i];
    try {
      await fs.mkdir(d, opts.mode);
      created.push(d);
    } catch (e) {
      if (fsErrorCode(e) === 'EEXIST' && (await dirKind(fs, d)) === 'directory') continue;
      // all or nothing: remove what this call created before reporting the failure
      await bestEffort(() => pruneEmptyDirs(fs, created, '/'));
      throw e;
    }
  }
  return created;
}

async function dirKind(fs: Fs, p: string): Promise<'directory' | 'missing' | 'other'> {
  const st = await fs.lstat(p);
  if (!st) return 'missing';
  if (st.type === 'directory') return 'directory';
  if (st.type === 'symlink') {
    const t = await fs.stat(p);
    if (t && t.type === 'directory') return 'directory';
  }
  return 'other';
}

/**
 * Remove each of `dirs` that is an empty directory, deepest first. Only directories strictly
 * below `stopAt` are considered: `stopAt` itself and anything outside it are never removed.
 * A directory that is not empty (or not a directory, or already gone) is left alone. Returns the
 * directories removed.
 */
export async function pruneEmptyDirs(fs: Fs, dirs: Iterable<string>, stopAt: string): Promise<string[]> {
  const stop = normalizePath(stopAt);
  const prefix = stop === '/' ? '/' : stop + '/';
  const unique = [...new Set([...dirs].map(normalizePath))].filter((d) => d !== stop && d.startsWith(prefix));
  const depth = (p: string) => p.split('/').length;
  unique.sort((a, b) => depth(b) - depth(a) || (a < b ? 1 : a > b ? -1 : 0));
  const removed: string[] = [];
  for (const d of unique) {
    const st = await fs.lstat(d);
    if (!st || st.type !== 'directory') continue;
    if ((await fs.readdir(d)).length > 0) continue;
    try {
      await fs.rmdir(d);
      removed.push(d);
    } catch (e) {
      const c = fsErrorCode(e);
      if (c !== 'ENOTEMPTY' && c !== 'EEXIST' && c !== 'ENOENT') throw e;
    }
  }
  return removed;
}

/** Remove `path` and everything beneath it, not following symbolic links; nothing there is not an error. */
export async function removeTree(fs: Fs, path: string): Promise<void> {
  const st = await fs.lstat(path);
  if (!st) return;
  if (st.type === 'directory') {
    for (const n of await fs.readdir(path)) await removeTree(fs, joinPath(path, n));
    try {
      await fs.rmdir(path);
    } catch (e) {
      if (fsErrorCode(e) !== 'ENOENT') throw e;
    }
    return;
  }
  try {
    await fs.unlink(path);
  } catch (e) {
    if (fsErrorCode(e) !== 'ENOENT') throw e;
  }
}

/**
 * Like writeFileAtomic, from pieces (the filesystem must have writeChunks): temp file in the same
 * directory, then a rename; the temp file is removed on any failure.
 */
export async function writeChunksAtomic(
  fs: Fs,
  path: string,
  chunks: AsyncIterable<Uint8Array>,
  opts: AtomicWriteOptions = {},
): Promise<void> {
  if (!fs.writeChunks)
    throw new ScalpelError('UNSUPPORTED', `${fs.name} cannot write a file in pieces`, { capability: 'writeChunks', path });
  const tmp = tempPathFor(path);
  try {
    await fs.writeChunks(tmp, chunks, { mode: opts.mode ?? 0o666, exclusive: true });
    await renameOver(fs, tmp, path);
  } catch (e) {
    await bestEffort(() => fs.unlink(tmp));
    throw e;
  }
}
