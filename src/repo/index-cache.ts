import type { FileStat } from '../fs/types.js';

/** What the cache needs of a read (a ReadIndexResult): its bytes and the stat it was read at. */
export interface KeptRead {
  bytes: Uint8Array;
  stat: FileStat;
  shared?: { bytes: Uint8Array };
}

/**
 * Index reads a long-lived process keeps: the warm hook server, or an editor that passes the
 * same `cache` object to every openRepository call (OpenOptions.cache). A 100,000-entry index is
 * a 10 MB read and a decode on every hook event; kept here, an unchanged index costs one lstat
 * (two when split). A read is reused only while the file's stat is what it was when it was read
 * (size, modification and change times to the nanosecond, device and inode): git and this tool
 * both write an index by renaming a new file over it (a new inode), so a rewrite that leaves
 * all of these as they were is not a write either makes. The reads are shared, never changed by
 * their users (the codec's edits make new indexes), and own their bytes (never a scratch buffer).
 */
export class IndexCache<R extends KeptRead = KeptRead> {
  private readonly reads = new Map<string, CachedRead<R>>();
  private bytes = 0;

  /** Keep at most `maxBytes` of index files (the least recently used go first). */
  constructor(private readonly maxBytes = 256 << 20) {}

  /** The read of the index at `path` made when its stat was `stat`, read `how`; null when none is kept. */
  get(path: string, stat: FileStat, how: string): CachedRead<R> | null {
    const c = this.reads.get(path);
    if (!c || c.how !== how || c.key !== statKey(stat)) return null;
    // most recently used last
    this.reads.delete(path);
    this.reads.set(path, c);
    return c;
  }

  /** Keep `read` of the index at `path` (and of its shared index, at `shared` with `sharedStat`). */
  set(path: string, how: string, read: R, shared: { path: string; stat: FileStat } | null): void {
    this.drop(path);
    const size = read.bytes.length + (read.shared?.bytes.length ?? 0);
    if (size > this.maxBytes) return;
    this.reads.set(path, {
      how,
      key: statKey(read.stat),
      read,
      shared: shared ? { path: shared.path, key: statKey(shared.stat) } : null,
      size,
    });
    this.bytes += size;
    for (const [p, c] of this.reads) {
      if (this.bytes <= this.maxBytes) break;
      this.reads.delete(p);
      this.bytes -= c.size;
    }
  }

  /** Forget the read of `path`. */
  drop(path: string): void {
    const c = this.reads.get(path);
    if (!c) return;
    this.reads.delete(path);
    this.bytes -= c.size;
  }

  /** How many index files are kept, and their bytes (for `server status`). */
  get stats(): { files: number; bytes: number } {
    return { files: this.reads.size, bytes: this.bytes };
  }
}

export interface CachedRead<R extends KeptRead> {
  /** How it was read (the checksum checked or not, lenient or strict). */
  how: string;
  key: string;
  read: R;
  /** The shared index of a split index, and its stat when read: it must be unchanged too. */
  shared: { path: string; key: string } | null;
  size: number;
}

/** The stat fields a rewrite of the file changes. */
export function statKey(st: FileStat): string {
  return `${st.size}:${st.mtimeSeconds}.${st.mtimeNanoseconds}:${st.ctimeSeconds}.${st.ctimeNanoseconds}:${st.dev}:${st.ino}`;
}
