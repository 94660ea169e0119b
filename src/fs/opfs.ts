/**
 * The Fs contract (types.ts) on the Origin Private File System:
 *
 *   const fs = opfsFs(await navigator.storage.getDirectory());
 *   const repo = await openRepository({ fs, dir: '/repo' });
 *
 * Paths are absolute inside `root` ('/' is `root` itself). What OPFS is, and what follows:
 *
 * - No symlinks, no modes, no inode numbers, no ctime. The capabilities say so (symlinks false,
 *   modes false), and the engine degrades the way git does on such a filesystem: core.fileMode=false
 *   (files read as 0644, the executable bit of an index entry is kept as it is, never taken from
 *   the worktree) and core.symlinks=false (a link git checked out is a plain file holding the
 *   target; restoring a snapshot that holds a real symlink refuses before writing, UNSUPPORTED with
 *   capability 'symlinks'). `symlink` and `chmod` throw UNSUPPORTED naming the capability; the
 *   `mode` of writeFile is ignored. Stats: size, mtime = ctime = File.lastModified (milliseconds),
 *   dev = ino = uid = gid = 0; directories have times 0.
 * - Names are UTF-8 strings: a name that is not (U+DC80..U+DCFF escapes, bytes/text.ts) would be
 *   stored as U+FFFD, so it is refused: UNSUPPORTED, capability 'nonUtf8Names'. Names OPFS itself
 *   rejects ('\\' in Chromium) fail with EINVAL.
 * - Writes go through createWritable(): the browser writes a swap file (`<name>.crswap`, visible in
 *   readdir while the write runs) and replaces the file when it is closed, so a file is either old
 *   or new, never torn; a crash can leave the swap file behind.
 * - Exclusive create: OPFS has no O_EXCL (getFileHandle({ create }) opens what is there). The
 *   check and the create run under a Web Lock named after the file's path from the OPFS root, so
 *   they are one step for every opfsFs of the origin (tabs and workers included); capability
 *   exclusiveCreate is true. Code writing the same file around this adapter is not held back.
 *   Without Web Locks (or `locks: null`) it is a check then a create, capability exclusiveCreate
 *   false, as on lightning-fs.
 * - rename of a file: FileSystemFileHandle.move() where the browser has it (Chromium): one step
 *   that replaces the destination, so temp + rename stays atomic. Elsewhere (or `move: false`):
 *   the destination is written from the source (old or new, never torn), then the source removed.
 *   A crash between the two leaves both: an engine temp file is removed by the next restore, but
 *   a lock committed this way (index.lock → index) stays behind beside the new index, and git then
 *   reports the index locked until it is removed. Directories are renamed by move() where a
 *   directory handle has it (Chromium's has not), else copied and then removed: not atomic; the
 *   engine never renames directories.
 * - Directory handles are cached per instance (each path step costs a round trip to the browser's
 *   storage). A handle names a path in Chromium, where one of a directory removed and made again
 *   reaches the new one; a lookup that finds nothing through a cached handle is checked with
 *   root.resolve() and retried from the root when the handle no longer leads there. In a browser
 *   whose directory handles follow a directory moved by someone else, pass `cacheDirectories: false`.
 *
 * Pure TS, no Node built-in, no module-level state.
 */
import { ScalpelError } from '../errors/index.js';
import { hasEscapedBytes } from '../bytes/text.js';
import { FsError } from './adapt.js';
import type { FileStat, Fs, FsCapabilities } from './types.js';

export interface OpfsOptions {
  /** Name shown in errors (default 'opfs'). */
  name?: string;
  /**
   * Web Locks used for exclusive create (default: `navigator.locks`). null: none; exclusive create
   * is then a check followed by a create and capability exclusiveCreate is false.
   */
  locks?: OpfsLocks | null;
  /** Rename files with handle.move() where it exists (default true); false: copy then delete. */
  move?: boolean;
  /** Cache directory handles (default true); see the module comment. */
  cacheDirectories?: boolean;
}

/**
 * A directory of the Origin Private File System, as a browser gives it
 * (`await navigator.storage.getDirectory()`, a `FileSystemDirectoryHandle`): the members named
 * here are the ones checked by type, so that these declarations need no DOM library.
 */
export interface OpfsDirectoryHandle {
  readonly kind: 'directory';
  readonly name: string;
  getDirectoryHandle(name: string, options?: { create?: boolean }): Promise<unknown>;
  getFileHandle(name: string, options?: { create?: boolean }): Promise<unknown>;
  removeEntry(name: string, options?: { recursive?: boolean }): Promise<void>;
}

/** The part of the Web Locks API (`navigator.locks`) used for exclusive create. */
export interface OpfsLocks {
  request(name: string, options: { mode?: 'exclusive' | 'shared' }, callback: (lock: unknown) => unknown): Promise<unknown>;
}

type Dir = FileSystemDirectoryHandle;
type FileH = FileSystemFileHandle;
/** move() is in Chromium (and the WHATWG spec) but not yet in TypeScript's DOM types. */
type Movable = { move?(parent: Dir, name: string): Promise<void> };
type Writable = FileSystemWritableFileStream;

const CACHE_LIMIT = 4096;

/** errno codes for the DOMException names OPFS throws; the call site decides TypeMismatchError. */
const DOM_CODES: Readonly<Record<string, string>> = Object.freeze({
  NotFoundError: 'ENOENT',
  InvalidModificationError: 'ENOTEMPTY',
  NoModificationAllowedError: 'EBUSY',
  NotAllowedError: 'EACCES',
  SecurityError: 'EACCES',
  QuotaExceededError: 'ENOSPC',
  NotReadableError: 'EIO',
  InvalidStateError: 'EIO',
  TypeError: 'EINVAL',
});

function domName(e: unknown): string {
  return e && typeof e === 'object' && typeof (e as { name?: unknown }).name === 'string' ? (e as { name: string }).name : '';
}

/** An FsError for an OPFS exception; `typeMismatch` is the code a TypeMismatchError means here. */
function fsError(e: unknown, syscall: string, path: string, typeMismatch: string, dest?: string): Error {
  if (e instanceof FsError || e instanceof ScalpelError) return e;
  const n = domName(e);
  const code = n === 'TypeMismatchError' ? typeMismatch : (DOM_CODES[n] ?? 'EIO');
  return new FsError(code, syscall, path, e, dest);
}

function fileStat(f: File): FileStat {
  const ms = Math.max(0, Math.floor(f.lastModified));
  const sec = Math.floor(ms / 1000);
  const nsec = (ms - sec * 1000) * 1_000_000;
  return {
    type: 'file',
    mode: 0o100644,
    size: f.size,
    mtimeSeconds: sec >>> 0,
    mtimeNanoseconds: nsec,
    ctimeSeconds: sec >>> 0,
    ctimeNanoseconds: nsec,
    dev: 0,
    ino: 0,
    uid: 0,
    gid: 0,
  };
}

const DIR_STAT: Readonly<FileStat> = Object.freeze({
  type: 'directory',
  mode: 0o040755,
  size: 0,
  mtimeSeconds: 0,
  mtimeNanoseconds: 0,
  ctimeSeconds: 0,
  ctimeNanoseconds: 0,
  dev: 0,
  ino: 0,
  uid: 0,
  gid: 0,
});

type Entry = { kind: 'file'; handle: FileH } | { kind: 'directory'; handle: Dir };

/** The Fs contract on `handle`, a directory of the Origin Private File System: paths are absolute inside it ('/' is the directory itself). No symlinks and no modes (capabilities `symlinks` and `modes` false: the engine then works as git does with core.symlinks=false and core.fileMode=false); exclusive create under a Web Lock. */
export function opfsFs(handle: OpfsDirectoryHandle, opts: OpfsOptions = {}): Fs {
  const root = handle as unknown as Dir;
  const fsName = opts.name ?? 'opfs';
  const nav = (globalThis as { navigator?: { locks?: OpfsLocks; storage?: { getDirectory?(): Promise<Dir> } } }).navigator;
  const locks = opts.locks === undefined ? (nav?.locks ?? null) : opts.locks;
  const useMove = opts.move !== false;
  const cache = opts.cacheDirectories === false ? null : new Map<string, Dir>();
  let lockBase: Promise<string> | undefined;

  const capabilities: FsCapabilities = Object.freeze({
    symlinks: false,
    modes: false,
    exclusiveCreate: locks !== null && typeof locks.request === 'function',
    // nothing can be a symlink here; true is the value that never lets anyone rename one
    renameFollowsSymlinks: true,
    renameReplaces: true,
  });

  function unsupported(capability: string, method: string, path: string): ScalpelError {
    return new ScalpelError(
      'UNSUPPORTED',
      `filesystem ${fsName} (the Origin Private File System) has no ${capability === 'symlinks' ? 'symbolic links' : 'file modes'}: ${method} '${path}' is impossible (git would use core.${capability === 'symlinks' ? 'symlinks' : 'fileMode'}=false)`,
      {
        capability,
        method,
        path,
        fs: fsName,
      },
    );
  }

  /** The components of an absolute path ('.' and '..' resolved); refuses names OPFS cannot hold. */
  function split(path: string, syscall: string): string[] {
    if (typeof path !== 'string' || !path.startsWith('/')) throw new FsError('EINVAL', syscall, String(path), 'path is not absolute');
    const out: string[] = [];
    for (const c of path.split('/')) {
      if (c === '' || c === '.') continue;
      if (c === '..') out.pop();
      else out.push(c);
    }
    if (hasEscapedBytes(path)) {
      throw new ScalpelError(
        'UNSUPPORTED',
        `filesystem ${fsName} cannot represent the non-UTF-8 name ${JSON.stringify(path)}: OPFS names are Unicode strings`,
        { capability: 'nonUtf8Names', path, fs: fsName },
      );
    }
    return out;
  }

  const keyOf = (parts: readonly string[], n = parts.length) => '/' + parts.slice(0, n).join('/');

  function forget(parts: readonly string[]): void {
    if (!cache) return;
    const k = keyOf(parts);
    for (const key of [...cache.keys()]) if (key === k || key.startsWith(k + '/')) cache.delete(key);
  }

  function remember(parts: readonly string[], n: number, h: Dir): void {
    if (!cache) return;
    if (cache.size >= CACHE_LIMIT) cache.clear();
    cache.set(keyOf(parts, n), h);
  }

  /** The directory handle at `parts` (DOMException on failure), and whether a cached handle began the walk. */
  async function walk(parts: readonly string[], fromCache: boolean): Promise<{ dir: Dir; cached: boolean }> {
    let i = 0;
    let h: Dir | undefined;
    if (fromCache && cache) for (i = parts.length; i > 0 && !(h = cache.get(keyOf(parts, i)));) i--;
    const cached = h !== undefined;
    let dir = h ?? root;
    for (; i < parts.length; i++) {
      dir = await dir.getDirectoryHandle(parts[i]);
      remember(parts, i + 1, dir);
    }
    return { dir, cached };
  }

  /** Does a cached handle for `parts` still lead there? (It may have been removed, or moved.) */
  async function stillThere(parts: readonly string[], dir: Dir): Promise<boolean> {
    if (typeof root.resolve !== 'function') return false;
    const p = await root.resolve(dir).catch(() => null);
    return !!p && p.length === parts.length && p.every((n, i) => n === parts[i]);
  }

  /**
   * Run `f` on the directory at `parts`. A NotFoundError (or TypeMismatchError: the directory is
   * now a file) reached through a cached handle that no longer leads to `parts` is retried once
   * from the root. `f` must do nothing before its first lookup fails.
   */
  async function inDir<T>(parts: readonly string[], f: (dir: Dir) => Promise<T>): Promise<T> {
    let first: { dir: Dir; cached: boolean };
    try {
      first = await walk(parts, true);
    } catch (e) {
      if (!cache || (domName(e) !== 'NotFoundError' && domName(e) !== 'TypeMismatchError')) throw e;
      forget(parts);
      return f((await walk(parts, false)).dir);
    }
    try {
      return await f(first.dir);
    } catch (e) {
      if (!first.cached || domName(e) !== 'NotFoundError' || (await stillThere(parts, first.dir))) throw e;
      forget(parts);
      return f((await walk(parts, false)).dir);
    }
  }

  /** What `name` in `dir` is, or null. */
  async function entryIn(dir: Dir, name: string, dirFirst = false): Promise<Entry | null> {
    const asFile = async (): Promise<Entry> => ({ kind: 'file', handle: await dir.getFileHandle(name) });
    const asDir = async (): Promise<Entry> => ({ kind: 'directory', handle: await dir.getDirectoryHandle(name) });
    const [a, b] = dirFirst ? [asDir, asFile] : [asFile, asDir];
    try {
      return await a();
    } catch (e) {
      if (domName(e) === 'NotFoundError') return null;
      if (domName(e) !== 'TypeMismatchError') throw e;
    }
    try {
      return await b();
    } catch (e) {
      if (domName(e) === 'NotFoundError') return null;
      throw e;
    }
  }

  /** Parent components and final name of a path that must not be the root. */
  function parentAndName(path: string, syscall: string, atRoot: string): { parent: string[]; name: string; parts: string[] } {
    const parts = split(path, syscall);
    if (parts.length === 0) throw new FsError(atRoot, syscall, path, 'the root directory');
    return { parent: parts.slice(0, -1), name: parts[parts.length - 1], parts };
  }

  async function lockKey(path: string): Promise<string> {
    // the root's own path from the OPFS root, so that two instances on nested roots agree
    lockBase ??= (async () => {
      try {
        const top = await nav?.storage?.getDirectory?.();
        const p = top && typeof top.resolve === 'function' ? await top.resolve(root) : null;
        if (p) return p.map((n) => '/' + n).join('');
      } catch {
        // not resolvable: fall back to the root's name (two roots of one name share locks: safe)
      }
      return `?${root.name}`;
    })();
    return `git-scalpel:opfs:${await lockBase}${keyOf(split(path, 'open'))}`;
  }

  /** The handle of the file to write at `path`, created (exclusively when asked). */
  async function fileForWrite(path: string, exclusive: boolean | undefined): Promise<FileH> {
    const { parent, name } = parentAndName(path, 'open', 'EISDIR');
    try {
      return await inDir(parent, async (dir) => {
        if (!exclusive) return dir.getFileHandle(name, { create: true });
        const create = async () => {
          if (await entryIn(dir, name)) throw new FsError('EEXIST', 'open', path, 'file already exists');
          return dir.getFileHandle(name, { create: true });
        };
        if (!capabilities.exclusiveCreate) return create();
        return (await locks!.request(await lockKey(path), { mode: 'exclusive' }, create)) as FileH;
      });
    } catch (e) {
      // TypeMismatchError: a parent is a file (walk) or the name is a directory (getFileHandle)
      if (domName(e) === 'TypeMismatchError') {
        const isDir = await inDir(parent, (dir) => entryIn(dir, name, true)).then(
          (en) => en?.kind === 'directory',
          () => false,
        );
        throw fsError(e, 'open', path, isDir ? 'EISDIR' : 'ENOTDIR');
      }
      throw fsError(e, 'open', path, 'ENOTDIR');
    }
  }

  async function writeThrough(path: string, fh: FileH, fill: (w: Writable) => Promise<void>): Promise<void> {
    let w: Writable;
    try {
      w = await fh.createWritable();
    } catch (e) {
      throw fsError(e, 'open', path, 'EISDIR');
    }
    try {
      await fill(w);
      await w.close();
    } catch (e) {
      // the swap file is dropped; the file keeps its old content (or stays empty when just created)
      await w.abort().catch(() => undefined);
      throw fsError(e, 'write', path, 'EISDIR');
    }
  }

  /** The file handle at `path` (FsError: ENOENT, ENOTDIR on a parent, EISDIR). */
  async function fileAt(path: string, syscall: string): Promise<FileH> {
    const { parent, name } = parentAndName(path, syscall, 'EISDIR');
    try {
      return await inDir(parent, (dir) => dir.getFileHandle(name));
    } catch (e) {
      if (domName(e) === 'TypeMismatchError') {
        const en = await inDir(parent, (dir) => entryIn(dir, name, true)).catch(() => null);
        throw fsError(e, syscall, path, en?.kind === 'directory' ? 'EISDIR' : 'ENOTDIR');
      }
      throw fsError(e, syscall, path, 'ENOTDIR');
    }
  }

  async function entryAt(path: string, syscall: string): Promise<Entry | null> {
    const parts = split(path, syscall);
    if (parts.length === 0) return { kind: 'directory', handle: root };
    const name = parts[parts.length - 1];
    try {
      return await inDir(parts.slice(0, -1), async (dir) => {
        const en = await entryIn(dir, name, cache?.has(keyOf(parts)) ?? false);
        // nothing found through a cached parent: let inDir check that handle
        if (!en) throw new DOMException(`${path} not found`, 'NotFoundError');
        return en;
      });
    } catch (e) {
      if (domName(e) === 'NotFoundError' || domName(e) === 'TypeMismatchError') return null;
      throw fsError(e, syscall, path, 'ENOTDIR');
    }
  }

  async function stat(path: string, syscall: string): Promise<FileStat | null> {
    const en = await entryAt(path, syscall);
    if (!en) return null;
    if (en.kind === 'directory') return { ...DIR_STAT };
    try {
      return fileStat(await en.handle.getFile());
    } catch (e) {
      // removed between the lookup and the read
      if (domName(e) === 'NotFoundError') return null;
      throw fsError(e, syscall, path, 'EISDIR');
    }
  }

  async function dirAt(path: string, syscall: string): Promise<Dir> {
    const parts = split(path, syscall);
    try {
      return (await inDir(parts, async (d) => d)) as Dir;
    } catch (e) {
      throw fsError(e, syscall, path, 'ENOTDIR');
    }
  }

  /** Copy directory `src` to `name` in `dst` (created), recursively. */
  async function copyTree(src: Dir, dst: Dir, name: string): Promise<void> {
    const d = await dst.getDirectoryHandle(name, { create: true });
    for await (const [n, h] of src.entries()) {
      if (h.kind === 'directory') await copyTree(h as Dir, d, n);
      else {
        const w = await (await d.getFileHandle(n, { create: true })).createWritable();
        try {
          await w.write(await (h as FileH).getFile());
          await w.close();
        } catch (e) {
          await w.abort().catch(() => undefined);
          throw e;
        }
      }
    }
  }

  const fs: Fs = {
    name: fsName,
    capabilities,

    async readFile(path) {
      const fh = await fileAt(path, 'open');
      try {
        return new Uint8Array(await (await fh.getFile()).arrayBuffer());
      } catch (e) {
        throw fsError(e, 'read', path, 'EISDIR');
      }
    },

    async *readChunks(path, chunkSize) {
      const fh = await fileAt(path, 'open');
      let file: File;
      try {
        file = await fh.getFile();
      } catch (e) {
        throw fsError(e, 'open', path, 'EISDIR');
      }
      const step = Math.max(1, Math.floor(chunkSize));
      for (let off = 0; off < file.size; off += step) {
        try {
          yield new Uint8Array(await file.slice(off, off + step).arrayBuffer());
        } catch (e) {
          // NotReadableError: the file changed after getFile()
          throw fsError(e, 'read', path, 'EISDIR');
        }
      }
    },

    async writeFile(path, data, opts = {}) {
      const fh = await fileForWrite(path, opts.exclusive);
      await writeThrough(path, fh, (w) => w.write(data as Uint8Array<ArrayBuffer>));
    },

    async writeChunks(path, chunks, opts = {}) {
      const fh = await fileForWrite(path, opts.exclusive);
      await writeThrough(path, fh, async (w) => {
        for await (const c of chunks) await w.write(c as Uint8Array<ArrayBuffer>);
      });
    },

    lstat: (path) => stat(path, 'lstat'),
    stat: (path) => stat(path, 'stat'),

    async readdir(path) {
      const dir = await dirAt(path, 'scandir');
      const names: string[] = [];
      try {
        for await (const n of dir.keys()) names.push(n);
      } catch (e) {
        throw fsError(e, 'scandir', path, 'ENOTDIR');
      }
      return names;
    },

    async readlink(path) {
      // nothing here is a symbolic link: EINVAL for what exists, as readlink(2) says of a file
      const en = await entryAt(path, 'readlink');
      throw new FsError(
        en ? 'EINVAL' : 'ENOENT',
        'readlink',
        path,
        en ? 'not a symbolic link (OPFS has none)' : 'no such file or directory',
      );
    },

    async symlink(target, path) {
      void target;
      throw unsupported('symlinks', 'symlink', path);
    },

    async chmod(path, mode) {
      void mode;
      throw unsupported('modes', 'chmod', path);
    },

    async mkdir(path) {
      const { parent, name, parts } = parentAndName(path, 'mkdir', 'EEXIST');
      try {
        const made = await inDir(parent, async (dir) => {
          if (await entryIn(dir, name, true)) throw new FsError('EEXIST', 'mkdir', path, 'file already exists');
          // two callers racing here both succeed (getDirectoryHandle opens what is there)
          return dir.getDirectoryHandle(name, { create: true });
        });
        remember(parts, parts.length, made);
      } catch (e) {
        // TypeMismatchError from the create: a file appeared under that name
        if (domName(e) === 'TypeMismatchError' && (await entryAt(path, 'mkdir'))) throw new FsError('EEXIST', 'mkdir', path, e);
        throw fsError(e, 'mkdir', path, 'ENOTDIR');
      }
    },

    async rmdir(path) {
      const { parent, name, parts } = parentAndName(path, 'rmdir', 'EBUSY');
      try {
        await inDir(parent, async (dir) => {
          await dir.getDirectoryHandle(name);
          // InvalidModificationError when it holds anything (no { recursive })
          await dir.removeEntry(name);
        });
      } catch (e) {
        throw fsError(e, 'rmdir', path, 'ENOTDIR');
      } finally {
        forget(parts);
      }
    },

    async unlink(path) {
      const { parent, name } = parentAndName(path, 'unlink', 'EISDIR');
      try {
        await inDir(parent, async (dir) => {
          await dir.getFileHandle(name);
          await dir.removeEntry(name);
        });
      } catch (e) {
        if (domName(e) === 'TypeMismatchError') {
          const en = await entryAt(path, 'unlink');
          throw fsError(e, 'unlink', path, en?.kind === 'directory' ? 'EISDIR' : 'ENOTDIR');
        }
        throw fsError(e, 'unlink', path, 'ENOTDIR');
      }
    },

    async rename(from, to) {
      const a = parentAndName(from, 'rename', 'EBUSY');
      const b = parentAndName(to, 'rename', 'EBUSY');
      const err = (code: string, why: string) => new FsError(code, 'rename', from, why, to);
      const src = await entryAt(from, 'rename');
      if (!src) throw err('ENOENT', 'no such file or directory');
      if (keyOf(a.parts) === keyOf(b.parts)) return;
      const dst = await entryAt(to, 'rename');
      const dstParent = await dirAt(keyOf(b.parent), 'rename').catch((e) => {
        throw new FsError((e as FsError).code ?? 'ENOENT', 'rename', from, e, to);
      });
      const srcParent = await dirAt(keyOf(a.parent), 'rename');
      try {
        if (src.kind === 'file') {
          if (dst?.kind === 'directory') throw err('EISDIR', 'destination is a directory');
          const mover = src.handle as FileH & Movable;
          if (useMove && typeof mover.move === 'function') {
            await mover.move(dstParent, b.name);
            return;
          }
          // copy, then delete: the destination is replaced through a swap file (never torn)
          const w = await (await dstParent.getFileHandle(b.name, { create: true })).createWritable();
          try {
            await w.write(await src.handle.getFile());
            await w.close();
          } catch (e) {
            await w.abort().catch(() => undefined);
            throw e;
          }
          await srcParent.removeEntry(a.name);
          return;
        }
        if (keyOf(b.parts).startsWith(keyOf(a.parts) + '/')) throw err('EINVAL', 'cannot move a directory into itself');
        if (dst?.kind === 'file') throw err('ENOTDIR', 'destination is not a directory');
        // an empty directory at the destination is replaced, one holding anything is not
        if (dst) await dstParent.removeEntry(b.name);
        const mover = src.handle as Dir & Movable;
        if (useMove && typeof mover.move === 'function') await mover.move(dstParent, b.name);
        else {
          await copyTree(src.handle, dstParent, b.name);
          await srcParent.removeEntry(a.name, { recursive: true });
        }
      } catch (e) {
        throw e instanceof FsError
          ? e
          : new FsError(domName(e) === 'TypeMismatchError' ? 'ENOTDIR' : (DOM_CODES[domName(e)] ?? 'EIO'), 'rename', from, e, to);
      } finally {
        // cached handles below a renamed directory, or of one replaced, name other things now
        if (src.kind === 'directory' || dst?.kind === 'directory') {
          forget(a.parts);
          forget(b.parts);
        }
      }
    },
  };
  return fs;
}
