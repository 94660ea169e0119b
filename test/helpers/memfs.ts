/**
 * In-memory filesystems for tests.
 *
 *   newMemoryFs()          memfs 4 behind the adapter (src/fs/memory.ts; memfs itself is a
 *                          devDependency, so only tests import it)
 *   lightningLikeFs(opts)  a hand-made isomorphic-git-style promise fs that behaves like
 *                          @isomorphic-git/lightning-fs: ignores the 'wx' flag, has no chmod, stat
 *                          objects with mtimeMs/ctimeMs, uid/gid/dev 1 and modes without type bits,
 *                          string paths only; without `symlinks: true` it has no symlink/readlink
 *                          (like OPFS); with it, rename follows a symlink at the source (moves the
 *                          target's entry and drops the link), as lightning-fs does.
 */
import { Volume, createFsFromVolume } from 'memfs';
import { memoryFs, type MemoryFs } from '../../src/fs/memory.js';

export { buildTree, dumpTree, type DumpEntry, type TreeSpec } from '../../src/fs/memory.js';

export function newMemoryFs(): MemoryFs & { volume: InstanceType<typeof Volume> } {
  return memoryFs({ Volume, createFsFromVolume }) as MemoryFs & { volume: InstanceType<typeof Volume> };
}

/** A raw memfs IFs (for toFs / probing tests). */
export function rawMemfs(): ReturnType<typeof createFsFromVolume> {
  return createFsFromVolume(new Volume());
}

type LNode =
  | { type: 'file'; data: Uint8Array; mode: number; ino: number; mtimeMs: number }
  | { type: 'dir'; children: Map<string, LNode>; mode: number; ino: number; mtimeMs: number }
  | { type: 'symlink'; target: string; mode: number; ino: number; mtimeMs: number };

class LError extends Error {
  readonly code: string;
  constructor(code: string, path: string) {
    super(`${code}: ${path}`);
    this.code = code;
  }
}

export interface LightningStat {
  type: 'file' | 'dir' | 'symlink';
  mode: number;
  size: number;
  ino: number;
  mtimeMs: number;
  ctimeMs: number;
  uid: number;
  gid: number;
  dev: number;
  isFile(): boolean;
  isDirectory(): boolean;
  isSymbolicLink(): boolean;
}

export interface LightningLikeFs {
  readFile(path: string, opts?: unknown): Promise<Uint8Array>;
  writeFile(path: string, data: Uint8Array | string, opts?: { mode?: number; flag?: string }): Promise<void>;
  unlink(path: string): Promise<void>;
  readdir(path: string, opts?: unknown): Promise<string[]>;
  mkdir(path: string, opts?: { mode?: number }): Promise<void>;
  rmdir(path: string): Promise<void>;
  rename(from: string, to: string): Promise<void>;
  stat(path: string, opts?: unknown): Promise<LightningStat>;
  lstat(path: string, opts?: unknown): Promise<LightningStat>;
  readlink?(path: string, opts?: unknown): Promise<string>;
  symlink?(target: string, path: string): Promise<void>;
  /** Test access: the number of calls each method received. */
  readonly callCounts: Record<string, number>;
}

export function lightningLikeFs(opts: { symlinks?: boolean } = {}): LightningLikeFs {
  let nextIno = 1;
  const root: LNode = { type: 'dir', children: new Map(), mode: 0o777, ino: nextIno++, mtimeMs: Date.now() };
  const callCounts: Record<string, number> = {};
  const count = (k: string) => {
    callCounts[k] = (callCounts[k] ?? 0) + 1;
  };

  const parts = (p: unknown): string[] => {
    if (typeof p !== 'string') throw new TypeError('path must be a string');
    return p.split('/').filter((s) => s !== '' && s !== '.');
  };
  const lookup = (p: string, follow: boolean, depth = 0): LNode => {
    if (depth > 40) throw new LError('ELOOP', p);
    const segs = parts(p);
    let node: LNode = root;
    let at = '';
    for (let i = 0; i < segs.length; i++) {
      if (node.type !== 'dir') throw new LError('ENOENT', p);
      const next = node.children.get(segs[i]);
      if (!next) throw new LError('ENOENT', p);
      node = next;
      if (node.type === 'symlink' && (follow || i < segs.length - 1)) {
        const t: string = node.target.startsWith('/') ? node.target : `${at}/${node.target}`;
        node = lookup(t, true, depth + 1);
      }
      at = `${at}/${segs[i]}`;
    }
    return node;
  };
  const parentOf = (p: string): { dir: Extract<LNode, { type: 'dir' }>; name: string } => {
    const segs = parts(p);
    const name = segs.pop();
    if (name === undefined) throw new LError('EEXIST', p);
    const dir = lookup('/' + segs.join('/'), true);
    if (dir.type !== 'dir') throw new LError('ENOENT', p);
    return { dir, name };
  };
  const toStat = (n: LNode): LightningStat => ({
    type: n.type,
    mode: n.mode,
    size: n.type === 'file' ? n.data.length : 0,
    ino: n.ino,
    mtimeMs: n.mtimeMs,
    ctimeMs: n.mtimeMs,
    uid: 1,
    gid: 1,
    dev: 1,
    isFile: () => n.type === 'file',
    isDirectory: () => n.type === 'dir',
    isSymbolicLink: () => n.type === 'symlink',
  });

  const fs: LightningLikeFs = {
    callCounts,
    async readFile(p) {
      count('readFile');
      const n = lookup(p, true);
      if (n.type !== 'file') throw new LError('EISDIR', p);
      return n.data.slice();
    },
    async writeFile(p, data, o = {}) {
      count('writeFile'); // o.flag is ignored, as lightning-fs does
      const { dir, name } = parentOf(p);
      const old = dir.children.get(name);
      if (old && old.type === 'dir') throw new LError('EISDIR', p);
      const bytes = typeof data === 'string' ? new TextEncoder().encode(data) : data.slice();
      dir.children.set(name, {
        type: 'file',
        data: bytes,
        mode: o.mode ?? (old?.type === 'file' ? old.mode : 0o666),
        ino: old?.ino ?? nextIno++,
        mtimeMs: Date.now(),
      });
    },
    async unlink(p) {
      count('unlink');
      const { dir, name } = parentOf(p);
      const n = dir.children.get(name);
      if (!n) throw new LError('ENOENT', p);
      if (n.type === 'dir') throw new LError('EPERM', p);
      dir.children.delete(name);
    },
    async readdir(p) {
      count('readdir');
      const n = lookup(p, true);
      if (n.type !== 'dir') throw new LError('ENOTDIR', p);
      return [...n.children.keys()];
    },
    async mkdir(p, o = {}) {
      count('mkdir');
      const { dir, name } = parentOf(p);
      if (dir.children.has(name)) throw new LError('EEXIST', p);
      dir.children.set(name, { type: 'dir', children: new Map(), mode: o.mode ?? 0o777, ino: nextIno++, mtimeMs: Date.now() });
    },
    async rmdir(p) {
      count('rmdir');
      const { dir, name } = parentOf(p);
      const n = dir.children.get(name);
      if (!n) throw new LError('ENOENT', p);
      if (n.type !== 'dir') throw new LError('ENOTDIR', p);
      if (n.children.size > 0) throw new LError('ENOTEMPTY', p);
      dir.children.delete(name);
    },
    async rename(a, b) {
      count('rename');
      // like lightning-fs: the source is looked up following symlinks, so renaming a link moves
      // (an alias of) its target to the destination and drops the link
      const entry = lookup(a, true);
      const to = parentOf(b);
      const from = parentOf(a);
      to.dir.children.set(to.name, entry);
      from.dir.children.delete(from.name);
    },
    async stat(p) {
      count('stat');
      return toStat(lookup(p, true));
    },
    async lstat(p) {
      count('lstat');
      return toStat(lookup(p, false));
    },
  };
  if (opts.symlinks) {
    fs.readlink = async (p) => {
      count('readlink');
      const n = lookup(p, false);
      if (n.type !== 'symlink') throw new LError('EINVAL', p);
      return n.target;
    };
    fs.symlink = async (target, p) => {
      count('symlink');
      const { dir, name } = parentOf(p);
      if (dir.children.has(name)) throw new LError('EEXIST', p);
      dir.children.set(name, { type: 'symlink', target, mode: 0o666, ino: nextIno++, mtimeMs: Date.now() });
    };
  }
  return fs;
}
