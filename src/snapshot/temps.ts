import { utf8Decode, utf8Encode } from '../bytes/text.js';
import { removeStaleTemps, mkdirp } from '../fs/atomic.js';
import { dirname, joinPath } from '../fs/path.js';
import { fsErrorCode, type Fs } from '../fs/types.js';
import { checkScopeRoot } from '../model/scope.js';

/**
 * The directories a restore is about to write temp files in, recorded before the first one is
 * made and removed once the worktree is written. A restore that is interrupted (killed, or a
 * failed write whose temp could not be removed) leaves the record behind, and the next restore
 * removes the temps it may have left (`removeStaleTemps`) in exactly those directories.
 *
 * Without the record every restore had to list every directory it wrote to: about 2 ms a
 * restore in a 100,000-file repository, where git's own restore lists none. Restores of one
 * worktree are serialised by its `index.lock`, so one record per worktree suffices, and a record
 * found while holding that lock belongs to a run that is over.
 */
export class TempLedger {
  constructor(
    private readonly fs: Fs,
    private readonly file: string,
    private readonly worktree: string,
  ) {}

  /**
   * Remove what an interrupted run left. `fallback`: the directories to sweep when the record is
   * unreadable (torn by the interruption itself): those this restore will write to.
   */
  async sweep(fallback: readonly string[]): Promise<string[]> {
    if (!(await this.fs.lstat(this.file))) return [];
    let dirs: string[] = [...fallback];
    try {
      const parsed: unknown = JSON.parse(utf8Decode(await this.fs.readFile(this.file)));
      if (parsed && typeof parsed === 'object' && Array.isArray((parsed as { dirs?: unknown }).dirs)) {
        dirs = (parsed as { dirs: unknown[] }).dirs.filter((d): d is string => typeof d === 'string' && isInside(d));
      }
    } catch {
      // torn: fall back
    }
    const removed: string[] = [];
    for (const d of dirs) {
      // the directory may have been replaced since (by a link, say): only ever list a real one
      if (await this.realDirectory(d))
        removed.push(...(await removeStaleTemps(this.fs, d === '' ? this.worktree : joinPath(this.worktree, d))));
    }
    await this.fs.unlink(this.file);
    return removed;
  }

  /** Is the worktree-relative `rel`, and each directory above it, a directory (not a link to one)? */
  private async realDirectory(rel: string): Promise<boolean> {
    let p = this.worktree;
    for (const c of rel === '' ? [] : rel.split('/')) {
      p = joinPath(p, c);
      const st = await this.fs.lstat(p);
      if (!st || st.type !== 'directory') return false;
    }
    return true;
  }

  /** Record `dirs` (worktree-relative) before the first temp is made in them. */
  async record(dirs: readonly string[]): Promise<void> {
    const data = utf8Encode(JSON.stringify({ dirs }));
    try {
      await this.fs.writeFile(this.file, data);
    } catch (e) {
      if (fsErrorCode(e) !== 'ENOENT') throw e;
      await mkdirp(this.fs, dirname(this.file));
      await this.fs.writeFile(this.file, data);
    }
  }

  /** The worktree is written: nothing of ours is left behind. A failure here only costs the next run a sweep. */
  async clear(): Promise<void> {
    try {
      await this.fs.unlink(this.file);
    } catch {
      // left for the next run to sweep
    }
  }
}

/** A worktree-relative path as the scope allows them (no absolute path, no `..`, `.` or .git component). */
function isInside(d: string): boolean {
  try {
    checkScopeRoot(d);
    return true;
  } catch {
    return false;
  }
}
