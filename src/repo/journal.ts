import { utf8Decode, utf8Encode } from '../bytes/text.js';
import { randomHex } from '../bytes/random.js';
import { fsErrorCode, type Fs } from '../fs/types.js';
import { basename, dirname, joinPath } from '../fs/path.js';
import { mkdirp, writeFileAtomic, type Lock } from '../fs/atomic.js';

import type { ProcessInfo } from '../platform/types.js';

/** Who we are and whether another process still runs: part of the platform (Node has pids, a browser does not). */
export type { ProcessInfo };

interface JournalFile {
  pid: number;
  startedAt: string;
  locks: Array<{ path: string; dev: number; ino: number }>;
}

const MARKER = 'git-scalpel lock pid=';

/**
 * The temp file a lock `lockPath` of process `pid` is made through (acquireLock hard-links it as
 * the lock). Its name ends in `.lock` too, so git never takes it for a ref when it lies among them.
 */
export function lockTemp(lockPath: string, pid: number): string {
  return `${lockPath}.scalpel-${pid}-${randomHex(4)}.lock`;
}

/** What a lock file of ours holds until its real content is written: names the process. */
export function lockMarker(pid: number | undefined): Uint8Array | undefined {
  return pid === undefined ? undefined : utf8Encode(`${MARKER}${pid}\n`);
}

/**
 * Lock files of ours are created holding a marker naming our pid; just before the real content
 * replaces the marker, the journal records the file's identity. Either way a lock left by a
 * killed run of ours can be recognised. Lock journal: before a process of ours works under lock files, it records their identity
 * (path, device, inode) and its pid in `.git/scalpel/journal/<pid>.json`. If it is killed, the
 * locks stay behind, as git's do. The next run may remove such a lock — and only such a lock:
 * one recorded in a journal, whose process is gone, and whose file is still the very file that
 * process created (same device and inode). A lock of anyone else is never touched. Without
 * process information (browsers) nothing is recovered and the lock is reported as held.
 */
export class LockJournal {
  private readonly file: string;
  private readonly locks: JournalFile['locks'] = [];
  private readonly startedAt = new Date().toISOString();

  constructor(
    private readonly fs: Fs,
    private readonly dir: string,
    private readonly proc: ProcessInfo | undefined,
  ) {
    this.file = joinPath(dir, `${proc?.pid ?? 'unknown'}.json`);
  }

  /** Record a lock of ours whose marker is about to be replaced by real content. */
  async record(lock: Lock): Promise<void> {
    if (!this.proc) return;
    const st = await this.fs.lstat(lock.path);
    if (!st || st.ino === 0) return; // no inode numbers: a lock could not be told from another's
    this.locks.push({ path: lock.path, dev: st.dev, ino: st.ino });
    await this.write();
  }

  /** Forget a lock we released or committed. */
  async forget(lock: Lock): Promise<void> {
    if (!this.proc) return;
    const i = this.locks.findIndex((l) => l.path === lock.path);
    if (i < 0) return;
    this.locks.splice(i, 1);
    if (this.locks.length) await this.write();
    else await this.fs.unlink(this.file).catch(() => undefined);
  }

  /**
   * A plain write: a journal torn by a crash is ignored when read, and then the lock still holds
   * our marker (the journal is written before the marker is replaced), which identifies it alone.
   * The directory is made when the write finds none.
   */
  private async write(): Promise<void> {
    const body: JournalFile = { pid: (this.proc as ProcessInfo).pid, startedAt: this.startedAt, locks: this.locks };
    const data = utf8Encode(JSON.stringify(body));
    try {
      await this.fs.writeFile(this.file, data, { mode: 0o644 });
    } catch (e) {
      if (fsErrorCode(e) !== 'ENOENT') throw e;
      await mkdirp(this.fs, this.dir);
      await this.fs.writeFile(this.file, data, { mode: 0o644 });
    }
  }

  /**
   * `lockPath` exists: if a journal of a dead process of ours names this very file, remove it
   * (and the journal when nothing else is left in it). Returns true when the lock was removed.
   */
  async recoverStale(lockPath: string): Promise<boolean> {
    if (!this.proc) return false;
    try {
      return await this.recoverStaleUnchecked(lockPath, this.proc);
    } catch (e) {
      // the lock changed hands while we looked (renamed into place, removed): not stale
      if (fsErrorCode(e) === 'ENOENT') return false;
      throw e;
    }
  }

  /**
   * Remove the temp files a killed run of ours left beside `lockPath` (lockTemp: named with the
   * pid of their process; a live process's are left alone). Best effort.
   */
  async sweepTemps(lockPath: string): Promise<void> {
    const proc = this.proc;
    if (!proc) return;
    const prefix = `${basename(lockPath)}.scalpel-`;
    let names: string[];
    try {
      names = await this.fs.readdir(dirname(lockPath));
    } catch {
      return;
    }
    for (const n of names) {
      if (!n.startsWith(prefix)) continue;
      const pid = Number(/^(\d+)-/.exec(n.slice(prefix.length))?.[1]);
      if (!Number.isInteger(pid) || pid === proc.pid || proc.isAlive(pid)) continue;
      await this.fs.unlink(joinPath(dirname(lockPath), n)).catch(() => undefined);
    }
  }

  private async recoverStaleUnchecked(lockPath: string, proc: ProcessInfo): Promise<boolean> {
    const st = await this.fs.lstat(lockPath);
    if (!st || st.type !== 'file') return false;
    // still holding our marker: the pid in it says whose it is
    if (st.size <= 64) {
      const text = utf8Decode(await this.fs.readFile(lockPath));
      const m = text.startsWith(MARKER) ? /^git-scalpel lock pid=(\d+)\n$/.exec(text) : null;
      if (m) {
        const pid = Number(m[1]);
        if (pid === proc.pid || proc.isAlive(pid)) return false;
        await this.fs.unlink(lockPath);
        return true;
      }
    }
    if (st.ino === 0) return false;
    const dirSt = await this.fs.lstat(this.dir);
    if (!dirSt || dirSt.type !== 'directory') return false;
    for (const name of await this.fs.readdir(this.dir)) {
      if (!name.endsWith('.json')) continue;
      const path = joinPath(this.dir, name);
      let j: JournalFile;
      try {
        j = JSON.parse(utf8Decode(await this.fs.readFile(path))) as JournalFile;
      } catch {
        continue;
      }
      if (!Number.isInteger(j.pid) || j.pid === proc.pid || proc.isAlive(j.pid) || !Array.isArray(j.locks)) continue;
      const hit = j.locks.find((l) => l.path === lockPath && l.dev === st.dev && l.ino === st.ino);
      if (!hit) continue;
      await this.fs.unlink(lockPath);
      const rest = j.locks.filter((l) => l !== hit);
      if (rest.length) await writeFileAtomic(this.fs, path, utf8Encode(JSON.stringify({ ...j, locks: rest })), { mode: 0o644 });
      else await this.fs.unlink(path).catch(() => undefined);
      return true;
    }
    return false;
  }
}
