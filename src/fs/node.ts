import { promises as fsp, constants as fsc } from 'node:fs';
import { Buffer } from 'node:buffer';
import { encodePath, hasEscapedBytes, decodePath } from '../bytes/text.js';
import { fsErrorCode, type FileStat, type Fs, type FileType } from './types.js';

/** node:fs as the Fs contract. Non-UTF-8 names go to the OS as raw bytes. */
export function nodeFs(): Fs {
  return {
    name: 'node:fs',
    capabilities: { symlinks: true, modes: true, exclusiveCreate: true, renameFollowsSymlinks: false },
    async readFile(path) {
      const b = await fsp.readFile(osPath(path));
      return new Uint8Array(b.buffer, b.byteOffset, b.byteLength);
    },
    async writeFile(path, data, opts = {}) {
      await fsp.writeFile(osPath(path), data, { mode: opts.mode ?? 0o666, flag: opts.exclusive ? 'wx' : 'w' });
    },
    async lstat(path) {
      try {
        return toStat(await fsp.lstat(osPath(path), { bigint: true }));
      } catch (e) {
        if (isMissing(e)) return null;
        throw e;
      }
    },
    async stat(path) {
      try {
        return toStat(await fsp.stat(osPath(path), { bigint: true }));
      } catch (e) {
        if (isMissing(e)) return null;
        throw e;
      }
    },
    async readdir(path) {
      const names = await fsp.readdir(osPath(path), { encoding: 'buffer' });
      return names.map((n) => decodePath(new Uint8Array(n.buffer, n.byteOffset, n.byteLength)));
    },
    async readlink(path) {
      const t = await fsp.readlink(osPath(path), { encoding: 'buffer' });
      return decodePath(new Uint8Array(t.buffer, t.byteOffset, t.byteLength));
    },
    async symlink(target, path) {
      await fsp.symlink(osPath(target), osPath(path));
    },
    async mkdir(path, mode) {
      await fsp.mkdir(osPath(path), { mode: mode ?? 0o777 });
    },
    async rmdir(path) {
      await fsp.rmdir(osPath(path));
    },
    async unlink(path) {
      await fsp.unlink(osPath(path));
    },
    async rename(from, to) {
      await fsp.rename(osPath(from), osPath(to));
    },
    async chmod(path, mode) {
      await fsp.chmod(osPath(path), mode);
    },
    async *readChunks(path, chunkSize) {
      const fh = await fsp.open(osPath(path), 'r');
      try {
        for (;;) {
          const buf = new Uint8Array(chunkSize);
          const { bytesRead } = await fh.read(buf, 0, chunkSize, null);
          if (bytesRead === 0) return;
          yield bytesRead === chunkSize ? buf : buf.subarray(0, bytesRead);
        }
      } finally {
        await fh.close();
      }
    },
    async writeChunks(path, chunks, opts = {}) {
      const fh = await fsp.open(osPath(path), opts.exclusive ? 'wx' : 'w', opts.mode ?? 0o666);
      try {
        for await (const c of chunks) {
          let done = 0;
          while (done < c.length) done += (await fh.write(c, done, c.length - done)).bytesWritten;
        }
      } finally {
        await fh.close();
      }
    },
  };
}

function osPath(p: string): string | Buffer {
  return hasEscapedBytes(p) ? Buffer.from(encodePath(p)) : p;
}

function isMissing(e: unknown): boolean {
  const c = fsErrorCode(e);
  return c === 'ENOENT' || c === 'ENOTDIR';
}

function toStat(s: import('node:fs').BigIntStats): FileStat {
  const m = Number(s.mode);
  const fmt = m & fsc.S_IFMT;
  const type: FileType = fmt === fsc.S_IFREG ? 'file' : fmt === fsc.S_IFDIR ? 'directory' : fmt === fsc.S_IFLNK ? 'symlink' : 'other';
  const u32 = (v: bigint) => Number(v & 0xffffffffn);
  return {
    type,
    mode: m,
    size: Number(s.size),
    ctimeSeconds: u32(s.ctimeNs / 1_000_000_000n),
    ctimeNanoseconds: Number(s.ctimeNs % 1_000_000_000n),
    mtimeSeconds: u32(s.mtimeNs / 1_000_000_000n),
    mtimeNanoseconds: Number(s.mtimeNs % 1_000_000_000n),
    dev: u32(s.dev),
    ino: u32(s.ino),
    uid: u32(s.uid),
    gid: u32(s.gid),
  };
}
