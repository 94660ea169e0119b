/**
 * The filesystem contract. Callers supply an implementation (node:fs, memfs, an
 * isomorphic-git-style promise fs) through an adapter; the engine uses nothing else.
 *
 * Paths are absolute, '/'-separated strings. Names that are not UTF-8 travel as strings with
 * U+DC80..U+DCFF escapes (each byte 0x80..0xFF of a name that is not UTF-8 as U+DC00 + byte, as
 * `decodePath` gives it); adapters that can pass raw bytes to the OS do so.
 */
import type { IndexStat } from '../index/types.js';

export type FileType = 'file' | 'directory' | 'symlink' | 'other';

/** lstat/stat: the type, st_mode, and the fields git caches in an index entry (same names). */
export interface FileStat extends IndexStat {
  type: FileType;
  /** st_mode (type and permission bits) as the OS reports it. */
  mode: number;
}

export interface FsCapabilities {
  /** symlink/readlink work (false: OPFS, WebContainer host FileSystemAPI; git then uses core.symlinks=false). */
  symlinks: boolean;
  /** chmod and the executable bit are real (false: git then uses core.fileMode=false). */
  modes: boolean;
  /** open with 'wx' really fails when the file exists (false on lightning-fs). */
  exclusiveCreate: boolean;
  /** rename of a symlink moves the target instead of the link (memfs, lightning-fs). */
  renameFollowsSymlinks: boolean;
  /**
   * rename onto an existing file really replaces it (absent: true). memfs 4 keeps counting the
   * replaced entry in its directory, which then can never be removed (ENOTEMPTY while readdir
   * shows nothing); there the engine unlinks the destination before renaming onto it.
   */
  renameReplaces?: boolean;
}

export interface Fs {
  readonly name: string;
  readonly capabilities: FsCapabilities;
  readFile(path: string): Promise<Uint8Array>;
  /** Write a file. `exclusive`: fail with code EEXIST if it exists. */
  writeFile(path: string, data: Uint8Array, opts?: { mode?: number; exclusive?: boolean }): Promise<void>;
  /** lstat; null when nothing is there (ENOENT, or ENOTDIR on a parent). */
  lstat(path: string): Promise<FileStat | null>;
  /** stat (follows symlinks); null when nothing is there. */
  stat(path: string): Promise<FileStat | null>;
  readdir(path: string): Promise<string[]>;
  readlink(path: string): Promise<string>;
  symlink(target: string, path: string): Promise<void>;
  mkdir(path: string, mode?: number): Promise<void>;
  rmdir(path: string): Promise<void>;
  unlink(path: string): Promise<void>;
  rename(from: string, to: string): Promise<void>;
  chmod(path: string, mode: number): Promise<void>;
  /**
   * Optional: a hard link `newPath` to the file `existing` (EEXIST when `newPath` exists). Lock
   * files are created through it with their content already in them (acquireLock), so a process
   * killed at any moment never leaves an empty lock nobody can tell from another's.
   */
  link?(existing: string, newPath: string): Promise<void>;
  /**
   * Optional: read a file in pieces of about `chunkSize` bytes, so a large file is never held
   * whole. Without it, large files are read with readFile.
   */
  readChunks?(path: string, chunkSize: number): AsyncIterable<Uint8Array>;
  /**
   * Optional synchronous lstat and readdir, same results as the async ones. A walk over a large
   * scope (thousands of files) spends more on promises than on the calls themselves; where the
   * platform has cheap synchronous calls (node:fs), capture walks with these.
   */
  lstatSync?(path: string): FileStat | null;
  readdirSync?(path: string): string[];
  /**
   * Optional: read a whole file into `buffer` when it fits, so a caller that reads the same large
   * file again and again (the index) reuses memory it already touched instead of a fresh
   * allocation each time (on a VM, first-touch page faults cost more than the read itself).
   * Returns the file's bytes (a view of `buffer`, or of a larger one allocated here) and the
   * buffer to pass next time. Without it, callers use readFile.
   */
  readFileInto?(path: string, buffer: Uint8Array | null): Promise<{ bytes: Uint8Array; buffer: Uint8Array }>;
  /** Optional: write a file from pieces (`exclusive`: fail with EEXIST if it exists). */
  writeChunks?(path: string, chunks: AsyncIterable<Uint8Array>, opts?: { mode?: number; exclusive?: boolean }): Promise<void>;
}

/**
 * The promise API of a filesystem, whose methods are found by name: `fs.promises` of node:fs or
 * memfs, lightning-fs's `promises`, node:fs/promises itself, or any isomorphic-git-style promise
 * fs. Implementations differ in their option arguments, so the types check the names, a path as
 * first argument and a promise back. readFile, writeFile, readdir, mkdir, rmdir and unlink are
 * required, and lstat or stat (without lstat there are no symlinks); readlink, symlink, chmod,
 * rename and link are used where present. What the filesystem really does with them is probed
 * when a repository is opened.
 */
export interface PromiseFsApi {
  readFile(path: string, options?: unknown): Promise<unknown>;
  writeFile(path: string, data: Uint8Array, options?: unknown): Promise<unknown>;
  readdir(path: string, options?: unknown): Promise<unknown>;
  mkdir(path: string, options?: unknown): Promise<unknown>;
  rmdir(path: string, options?: unknown): Promise<unknown>;
  unlink(path: string): Promise<unknown>;
  lstat?(path: string, options?: unknown): Promise<unknown>;
  stat?(path: string, options?: unknown): Promise<unknown>;
  readlink?(path: string, options?: unknown): Promise<unknown>;
  symlink?(target: string, path: string, type?: unknown): Promise<unknown>;
  chmod?(path: string, mode: number): Promise<unknown>;
  rename?(from: string, to: string): Promise<unknown>;
  link?(existing: string, newPath: string): Promise<unknown>;
}

/** A module whose `promises` is a PromiseFsApi: node:fs (default or namespace import), memfs's `fs` or a `Volume`, a lightning-fs instance. */
export interface NodeStyleFs {
  readonly promises: PromiseFsApi;
}

/**
 * What `openRepository({ fs })` accepts: the Fs contract as it is (`nodeFs()` of git-scalpel/node,
 * `opfsFs(...)`), a node-style fs module, or a promise fs API. Anything but the contract is
 * adapted.
 */
export type FsInput = Fs | NodeStyleFs | PromiseFsApi;

/** An error from an fs call carries the OS-style code (ENOENT, EEXIST, ...). */
export function fsErrorCode(e: unknown): string | undefined {
  if (e && typeof e === 'object' && 'code' in e && typeof (e as { code: unknown }).code === 'string') return (e as { code: string }).code;
  return undefined;
}
