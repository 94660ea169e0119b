/**
 * In-memory filesystems for tests, property tests and browsers, and tree helpers that work on any Fs.
 *
 * memfs is a devDependency of git-scalpel, not a dependency: this module does not import it. The
 * caller passes the memfs module it has (`import * as memfs from 'memfs'`), so nothing here
 * pulls memfs into a consumer's bundle. test/helpers/memfs.ts does that for the test suite.
 *
 *   const fs = memoryFs(memfs);
 *   await buildTree(fs, '/repo', { 'a.txt': 'hi\n', bin: { run: { type: 'file', data: '#!/bin/sh\n', mode: 0o755 } },
 *                                  link: { type: 'symlink', target: 'a.txt' }, empty: { type: 'directory' } });
 *   const before = await dumpTree(fs, '/repo', { skip: (p) => p === '.git' || p.startsWith('.git/') });
 */
import { adaptPromiseFs, type AdaptedFs } from './adapt.js';
import { mkdirp } from './atomic.js';
import { dirname, joinPath } from './path.js';
import { toHex } from '../bytes/hex.js';
import { utf8Encode } from '../bytes/text.js';
import { hashBytes } from '../hash/index.js';
import type { FileType, Fs, FsCapabilities } from './types.js';

/** The part of the memfs module memoryFs uses. */
export interface MemfsModule {
  Volume: new () => unknown;
  /** memfs's parameter type is its Volume class, which this module does not import. */
  createFsFromVolume: (vol: never) => unknown;
}

/**
 * What memfs 4 does, as the adapter's probe finds it (test/fs/adapt.test.ts checks that they agree):
 * symlinks and modes work, 'wx' is honoured, and rename of a symlink moves its target (the link
 * stays where it was, the target's data appears at the destination), and rename onto a file leaves the
 * replaced entry counted in its directory (which then cannot be removed: ENOTEMPTY).
 */
export const MEMFS_CAPABILITIES: FsCapabilities = Object.freeze({
  symlinks: true,
  modes: true,
  exclusiveCreate: true,
  renameFollowsSymlinks: true,
  renameReplaces: false,
});

export interface MemoryFs extends AdaptedFs {
  /** The memfs Volume (e.g. `vol.toJSON()`). */
  readonly volume: unknown;
}

/**
 * A fresh, empty in-memory Fs over memfs. Its capabilities are memfs's known ones
 * (MEMFS_CAPABILITIES) and names travel as strings ('strings' path mode: memfs stores JS strings,
 * so non-UTF-8 names in their escaped form round-trip). Synchronous, no probe.
 */
export function memoryFs(memfs: MemfsModule, opts: { name?: string; capabilities?: Partial<FsCapabilities> } = {}): MemoryFs {
  const volume = new memfs.Volume();
  const ifs = memfs.createFsFromVolume(volume as never);
  const adapter = adaptPromiseFs(ifs, {
    name: opts.name ?? 'memfs',
    capabilities: { ...MEMFS_CAPABILITIES, ...opts.capabilities },
    pathMode: 'strings',
    probed: false,
  });
  return Object.assign(adapter, { volume });
}

// ---------------------------------------------------------------------------------------------
// building trees from a JSON description

export interface TreeFile {
  type: 'file';
  /** Content; a string is written as UTF-8. Default empty. */
  data?: string | Uint8Array;
  /** Permission bits, set with chmod after writing (so the umask does not interfere) when the fs has modes. */
  mode?: number;
}
export interface TreeSymlink {
  type: 'symlink';
  target: string;
}
export interface TreeDir {
  type: 'directory';
  mode?: number;
  children?: TreeSpec;
}
/**
 * A file's content (string or bytes), a descriptor, or a plain object = a directory of children.
 * (A plain object whose `type` is 'file' / 'symlink' / 'directory' is a descriptor: to describe a
 * directory holding a file named `type`, use `{ type: 'directory', children: {...} }`.)
 */
export type TreeNode = string | Uint8Array | TreeFile | TreeSymlink | TreeDir | TreeSpec;
/** Names (which may contain '/': parents are created) → nodes. */
export interface TreeSpec {
  [name: string]: TreeNode;
}

function isDescriptor(n: object): n is TreeFile | TreeSymlink | TreeDir {
  const t = (n as { type?: unknown }).type;
  return t === 'file' || t === 'symlink' || t === 'directory';
}

/** Create `spec` under `root` (created if missing) on any Fs. Existing files are overwritten. */
export async function buildTree(fs: Fs, root: string, spec: TreeSpec): Promise<void> {
  await mkdirp(fs, root);
  for (const [name, node] of Object.entries(spec)) {
    const path = joinPath(root, name);
    await mkdirp(fs, dirname(path));
    if (typeof node === 'string' || node instanceof Uint8Array) {
      await fs.writeFile(path, typeof node === 'string' ? utf8Encode(node) : node);
    } else if (!isDescriptor(node)) {
      await buildTree(fs, path, node);
    } else if (node.type === 'file') {
      const data = node.data === undefined ? new Uint8Array(0) : typeof node.data === 'string' ? utf8Encode(node.data) : node.data;
      await fs.writeFile(path, data, node.mode === undefined ? {} : { mode: node.mode });
      if (node.mode !== undefined && fs.capabilities.modes) await fs.chmod(path, node.mode);
    } else if (node.type === 'symlink') {
      await fs.symlink(node.target, path);
    } else {
      await mkdirp(fs, path, node.mode === undefined ? {} : { mode: node.mode });
      if (node.mode !== undefined && fs.capabilities.modes) await fs.chmod(path, node.mode);
      if (node.children) await buildTree(fs, path, node.children);
    }
  }
}

// ---------------------------------------------------------------------------------------------
// dumping trees for comparison

export interface DumpEntry {
  /** Relative to the dumped root, '/'-separated. */
  path: string;
  type: FileType;
  /** Files and directories: see DumpOptions.mode. */
  mode?: number;
  /** Files: byte length. */
  size?: number;
  /** Symlinks: readlink. */
  target?: string;
  /** Files: hex SHA-1 of the content (plain SHA-1, not the git blob id). */
  sha1?: string;
  /** Files, with `bytes: true`: the content. */
  bytes?: Uint8Array;
}

export interface DumpOptions {
  /** Leave out this relative path (and, for a directory, everything beneath it). */
  skip?: (path: string) => boolean;
  /** Include each file's bytes as well as its SHA-1. */
  bytes?: boolean;
  /**
   * 'perm' (default): permission bits (mode & 0o7777) of files and directories; 'exec': files only,
   * as git sees them (0o755 when the owner exec bit is set, else 0o644); 'none': no modes.
   */
  mode?: 'perm' | 'exec' | 'none';
}

/**
 * Everything under `root` (not `root` itself), sorted by path, symlinks not followed. Two dumps are
 * equal (e.g. `expect(after).toEqual(before)`) when types, bytes, modes and symlink targets agree.
 * A missing root dumps as [].
 */
export async function dumpTree(fs: Fs, root: string, opts: DumpOptions = {}): Promise<DumpEntry[]> {
  const out: DumpEntry[] = [];
  const modeOpt = opts.mode ?? 'perm';
  const rootSt = await fs.lstat(root);
  if (!rootSt || rootSt.type !== 'directory') return out;
  const walk = async (dir: string, rel: string): Promise<void> => {
    for (const name of await fs.readdir(dir)) {
      const relPath = rel === '' ? name : `${rel}/${name}`;
      if (opts.skip?.(relPath)) continue;
      const path = joinPath(dir, name);
      const st = await fs.lstat(path);
      if (!st) continue;
      const e: DumpEntry = { path: relPath, type: st.type };
      if (st.type === 'file') {
        if (modeOpt === 'perm') e.mode = st.mode & 0o7777;
        else if (modeOpt === 'exec') e.mode = st.mode & 0o100 ? 0o755 : 0o644;
        const data = await fs.readFile(path);
        e.size = data.length;
        e.sha1 = toHex(hashBytes('sha1', data));
        if (opts.bytes) e.bytes = data.slice();
      } else if (st.type === 'directory') {
        if (modeOpt === 'perm') e.mode = st.mode & 0o7777;
      } else if (st.type === 'symlink') {
        e.target = await fs.readlink(path);
      }
      out.push(e);
      if (st.type === 'directory') await walk(path, relPath);
    }
  };
  await walk(root, '');
  out.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  return out;
}
