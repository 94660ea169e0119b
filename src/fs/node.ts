import * as fss from 'node:fs';
import { promises as fsp, constants as fsc } from 'node:fs';
import { Buffer } from 'node:buffer';
import { encodePath, hasEscapedBytes, decodePath } from '../bytes/text.js';
import { fsErrorCode, type FileStat, type Fs, type FileType } from './types.js';

/**
 * node:fs as the Fs contract. Non-UTF-8 names go to the OS as raw bytes. Calls are made
 * synchronously behind the async contract: each is a few microseconds of kernel work, and a
 * round trip through libuv's thread pool costs several times that (a scope of 4,000 files takes
 * 10x longer with promise calls). Large files go through readChunks/writeChunks.
 */
/** A buffer for a file of `size` bytes with room to grow (an eighth more, at least 64 KiB). */
function spare(size: number): Uint8Array {
  const b = Buffer.allocUnsafeSlow(size + Math.max(size >>> 3, 65536));
  return new Uint8Array(b.buffer, b.byteOffset, b.byteLength);
}

/** Options objects made once: a walk makes thousands of calls (no allocation, one shape for Node's checks). */
const STAT_OPTIONS = { bigint: true, throwIfNoEntry: false } as const;
const READDIR_OPTIONS = { encoding: 'latin1' } as const;

/**
 * The last stat objects made, kept alive for their shapes: V8 throws away optimized code whose
 * object shapes no live object has any more, so without a survivor each garbage collection sent
 * Node's BigIntStats construction, toStat and the loops of a whole-tree walk (thousands of
 * lstat calls) back to the interpreter (seen with --trace-deopt: "weak objects").
 */
const keptStats: { node: fss.BigIntStats | null; ours: FileStat | null } = { node: null, ours: null };

function lstatSync(path: string): FileStat | null {
  try {
    const st = fss.lstatSync(osPath(path), STAT_OPTIONS);
    if (!st) return null;
    const ours = toStat(st);
    keptStats.node = st;
    keptStats.ours = ours;
    return ours;
  } catch (e) {
    // ENOTDIR: a parent is not a directory; ELOOP (lstat follows no last component): a parent loops
    if (isMissing(e) || fsErrorCode(e) === 'ELOOP') return null;
    throw e;
  }
}

/** lstat with the link count (the watched-worktree view never keeps a file with several names); null when nothing is there. */
export function lstatLinked(path: string): { st: FileStat; links: number } | null {
  try {
    const st = fss.lstatSync(osPath(path), STAT_OPTIONS);
    return st ? { st: toStat(st), links: Number(st.nlink) } : null;
  } catch (e) {
    if (isMissing(e)) return null;
    throw e;
  }
}

const HIGH_LATIN1 = /[\u0080-\u00ff]/;

/** A name as the OS gave its bytes, as readdir gives it (non-UTF-8 bytes as U+DC80..U+DCFF escapes). */
export function nameOfBytes(b: Uint8Array): string {
  const s = Buffer.from(b.buffer, b.byteOffset, b.byteLength).toString('latin1');
  return HIGH_LATIN1.test(s) ? decodePath(b) : s;
}

export { readdirSync as readdirNames };

/**
 * A non-recursive watch of directory `path` (node:fs's `fs.watch`, not keeping the process
 * alive): `onEvent` gets each event's entry name as readdir gives it (null: none), `onError` the
 * watcher's errors. Throws as fs.watch does (ENOSPC: the system's limit on watches).
 */
export function watchDirectory(
  path: string,
  onEvent: (name: string | null, listing: boolean) => void,
  onError: (e: unknown) => void,
): { close(): void } {
  // 'change': libuv saw only IN_MODIFY or IN_ATTRIB (src/unix/linux.c; any other bit is 'rename'),
  // which leave the directory's listing as it was
  const w = fss.watch(osPath(path), { persistent: false, encoding: 'buffer' }, (type, name) =>
    onEvent(name ? nameOfBytes(name as unknown as Uint8Array) : null, type !== 'change'),
  );
  w.on('error', onError);
  return { close: () => w.close() };
}

function readdirSync(path: string): string[] {
  // as Latin-1, each name's bytes come back one char per byte without a Buffer per name; an
  // ASCII name is then already its string, and only names with high bytes are decoded as paths
  const names = fss.readdirSync(osPath(path), READDIR_OPTIONS) as unknown as string[];
  for (let i = 0; i < names.length; i++) {
    const n = names[i];
    if (HIGH_LATIN1.test(n)) names[i] = decodePath(Uint8Array.from(Buffer.from(n, 'latin1')));
  }
  return names;
}

export function nodeFs(): Fs {
  return {
    name: 'node:fs',
    capabilities: { symlinks: true, modes: true, exclusiveCreate: true, renameFollowsSymlinks: false, renameReplaces: true },
    async readFile(path) {
      const b = fss.readFileSync(osPath(path));
      return new Uint8Array(b.buffer, b.byteOffset, b.byteLength);
    },
    async readFileInto(path, buffer) {
      const fd = fss.openSync(osPath(path), 'r');
      try {
        const size = fss.fstatSync(fd).size;
        // one spare byte at least, so a file that grew since fstat is noticed (and read whole)
        let buf = buffer && buffer.length > size ? buffer : spare(size);
        let n = 0;
        for (;;) {
          if (n === buf.length) {
            const bigger = spare(n * 2);
            bigger.set(buf);
            buf = bigger;
          }
          const r = fss.readSync(fd, buf, n, buf.length - n, null);
          if (r === 0) break;
          n += r;
        }
        return { bytes: buf.subarray(0, n), buffer: buf };
      } finally {
        fss.closeSync(fd);
      }
    },
    async writeFile(path, data, opts = {}) {
      fss.writeFileSync(osPath(path), data, { mode: opts.mode ?? 0o666, flag: opts.exclusive ? 'wx' : 'w' });
    },
    async lstat(path) {
      return lstatSync(path);
    },
    lstatSync,
    async stat(path) {
      try {
        const st = fss.statSync(osPath(path), STAT_OPTIONS);
        return st ? toStat(st) : null;
      } catch (e) {
        if (isMissing(e)) return null;
        throw e;
      }
    },
    async readdir(path) {
      return readdirSync(path);
    },
    readdirSync,
    async readlink(path) {
      const t = fss.readlinkSync(osPath(path), { encoding: 'buffer' });
      return decodePath(new Uint8Array(t.buffer, t.byteOffset, t.byteLength));
    },
    async symlink(target, path) {
      fss.symlinkSync(osPath(target), osPath(path));
    },
    async mkdir(path, mode) {
      fss.mkdirSync(osPath(path), { mode: mode ?? 0o777 });
    },
    async rmdir(path) {
      fss.rmdirSync(osPath(path));
    },
    async unlink(path) {
      fss.unlinkSync(osPath(path));
    },
    async rename(from, to) {
      fss.renameSync(osPath(from), osPath(to));
    },
    async link(existing, newPath) {
      fss.linkSync(osPath(existing), osPath(newPath));
    },
    async chmod(path, mode) {
      fss.chmodSync(osPath(path), mode);
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
      const fd = fss.openSync(osPath(path), opts.exclusive ? 'wx' : 'w', opts.mode ?? 0o666);
      try {
        // gather what is ready and write it with one writev
        let batch: Uint8Array[] = [];
        const flush = () => {
          if (!batch.length) return;
          let total = 0;
          for (const b of batch) total += b.length;
          let done = fss.writevSync(fd, batch);
          while (done < total) {
            // a short write: finish the rest piece by piece
            let skip = done;
            const rest: Uint8Array[] = [];
            for (const b of batch) {
              if (skip >= b.length) skip -= b.length;
              else {
                rest.push(b.subarray(skip));
                skip = 0;
              }
            }
            done += fss.writevSync(fd, rest);
          }
          batch = [];
        };
        for await (const c of chunks) {
          batch.push(c);
          if (batch.length >= 512) flush();
        }
        flush();
      } finally {
        fss.closeSync(fd);
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

const MAX_EXACT = BigInt(Number.MAX_SAFE_INTEGER);

function toStat(s: import('node:fs').BigIntStats): FileStat {
  const m = Number(s.mode);
  const fmt = m & fsc.S_IFMT;
  const type: FileType = fmt === fsc.S_IFREG ? 'file' : fmt === fsc.S_IFDIR ? 'directory' : fmt === fsc.S_IFLNK ? 'symlink' : 'other';
  // Few BigInt operations (each allocates; a walk of thousands of files makes them garbage):
  // whole milliseconds convert exactly (they are below 2^53), and so does any value below 2^53
  const u32 = (v: bigint) => (v <= MAX_EXACT ? Number(v) >>> 0 : Number(v & 0xffffffffn));
  const nsecs = (ns: bigint) => {
    const r = Number(ns % 1_000_000_000n);
    return r < 0 ? r + 1_000_000_000 : r;
  };
  // seconds and nanoseconds as the kernel keeps them (tv_nsec >= 0, also before 1970). Whole
  // milliseconds (truncated by Node) floor to the right second for times from 1970 on; before it,
  // the nanoseconds are divided exactly
  const secs = (ms: bigint, ns: bigint) =>
    (ns >= 0n ? Math.floor(Number(ms) / 1000) : Number((ns - BigInt(nsecs(ns))) / 1_000_000_000n)) >>> 0;
  return {
    type,
    mode: m,
    size: Number(s.size),
    ctimeSeconds: secs(s.ctimeMs, s.ctimeNs),
    ctimeNanoseconds: nsecs(s.ctimeNs),
    mtimeSeconds: secs(s.mtimeMs, s.mtimeNs),
    mtimeNanoseconds: nsecs(s.mtimeNs),
    dev: u32(s.dev),
    ino: u32(s.ino),
    uid: u32(s.uid),
    gid: u32(s.gid),
  };
}
