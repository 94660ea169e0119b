/**
 * Any filesystem's stat object (node:fs with or without bigint, memfs, lightning-fs, a browser
 * fs) as the contract's FileStat: the type, st_mode, and the fields git caches in an index entry.
 */
import type { FileStat, FileType } from './types.js';

/** st_mode's file type bits (POSIX `S_IFMT` and the types among them git knows). */
const S_IFMT = 0o170000;
const S_IFREG = 0o100000;
const S_IFDIR = 0o040000;
const S_IFLNK = 0o120000;
const TYPE_BITS: Record<FileType, number> = { file: S_IFREG, directory: S_IFDIR, symlink: S_IFLNK, other: 0 };

function num(v: unknown): number {
  if (typeof v === 'bigint') return Number(v);
  if (typeof v === 'number' && Number.isFinite(v)) return v;
  return 0;
}

/** Truncated to 32 bits as git stores dev/ino/uid/gid (and seconds). */
function u32(v: unknown): number {
  if (typeof v === 'bigint') return Number(BigInt.asUintN(32, v));
  if (typeof v === 'number' && Number.isFinite(v)) return v >>> 0;
  return 0;
}

function statType(s: Record<string, unknown>): FileType {
  const call = (k: string): boolean | undefined => (typeof s[k] === 'function' ? Boolean((s[k] as () => unknown).call(s)) : undefined);
  const l = call('isSymbolicLink');
  const d = call('isDirectory');
  const f = call('isFile');
  if (l) return 'symlink';
  if (d) return 'directory';
  if (f) return 'file';
  const t = s.type;
  if (t === 'file') return 'file';
  if (t === 'dir' || t === 'directory') return 'directory';
  if (t === 'symlink') return 'symlink';
  if (l === false || d === false || f === false) return 'other';
  const fmt = num(s.mode) & S_IFMT;
  return fmt === S_IFREG ? 'file' : fmt === S_IFDIR ? 'directory' : fmt === S_IFLNK ? 'symlink' : 'other';
}

/** [seconds (uint32), nanoseconds] of `mtime` / `ctime`; never NaN. */
function statTime(s: Record<string, unknown>, which: 'mtime' | 'ctime'): [number, number] {
  const ns = s[which + 'Ns'];
  if (typeof ns === 'bigint') {
    let sec = ns / 1_000_000_000n;
    let rem = ns - sec * 1_000_000_000n;
    if (rem < 0n) {
      sec -= 1n;
      rem += 1_000_000_000n;
    }
    return [u32(sec), Number(rem)];
  }
  let ms: number | undefined;
  const raw = s[which + 'Ms'];
  if (typeof raw === 'bigint') ms = Number(raw);
  else if (typeof raw === 'number' && Number.isFinite(raw)) ms = raw;
  else {
    const d = s[which];
    if (d && typeof (d as Date).getTime === 'function') {
      const t = (d as Date).getTime();
      if (Number.isFinite(t)) ms = t;
    }
  }
  if (ms === undefined) return which === 'ctime' ? statTime(s, 'mtime') : [0, 0];
  let sec = Math.floor(ms / 1000);
  let nsec = Math.round((ms - sec * 1000) * 1e6);
  if (nsec >= 1e9) {
    sec += 1;
    nsec -= 1e9;
  }
  return [u32(sec), Math.max(0, nsec)];
}

/**
 * Any fs's stat object as a FileStat: bigint nanosecond fields when present, else milliseconds
 * (memfs: whole milliseconds; lightning-fs: Date.now()), else Date objects, else 0 — never NaN.
 * Type bits missing from `mode` (lightning-fs keeps only permission bits) are filled in from the type.
 */
export function convertStat(raw: unknown): FileStat {
  const s = (raw ?? {}) as Record<string, unknown>;
  const type = statType(s);
  let mode = num(s.mode);
  if ((mode & S_IFMT) === 0) mode |= TYPE_BITS[type];
  const [mtimeSeconds, mtimeNanoseconds] = statTime(s, 'mtime');
  const [ctimeSeconds, ctimeNanoseconds] = statTime(s, 'ctime');
  return {
    type,
    mode,
    size: num(s.size),
    ctimeSeconds,
    ctimeNanoseconds,
    mtimeSeconds,
    mtimeNanoseconds,
    dev: u32(s.dev),
    ino: u32(s.ino),
    uid: u32(s.uid),
    gid: u32(s.gid),
  };
}
