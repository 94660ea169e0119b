/**
 * The event log: every snapshot, seal, restore and refusal of a session, one small JSON file per
 * event under `<stateDir>/log/<session>/` (names sort by time), so appending never rewrites a
 * growing file and a record cut short by a crash is skipped when the log is read.
 */
import { utf8Decode, utf8Encode } from '../bytes/text.js';
import { randomHex } from '../bytes/random.js';
import { fsErrorCode, type Fs } from '../fs/types.js';
import { joinPath } from '../fs/path.js';
import { mkdirp, removeTree } from '../fs/atomic.js';
import { checkSession } from './stack.js';

export interface LogRecord {
  at: string;
  event:
    | 'snapshot'
    | 'extend'
    | 'seal'
    | 'restore'
    | 'refused'
    | 'drop'
    | 'prune'
    | 'turn-start'
    | 'turn-end'
    | 'tool'
    | 'session-start'
    | 'session-end'
    | 'apply';
  session: string;
  ids: string[];
  paths: string[];
  detail?: Record<string, unknown>;
}

/**
 * Microseconds since the epoch from the monotonic clock (`performance`, in Node.js and browsers),
 * zero-padded to sort as text; 16 zeros where there is no such clock.
 */
export function monotonicStamp(): string {
  const perf = (globalThis as { performance?: { now(): number; timeOrigin?: number } }).performance;
  if (!perf || typeof perf.timeOrigin !== 'number') return '0'.repeat(16);
  return String(Math.floor((perf.timeOrigin + perf.now()) * 1000)).padStart(16, '0');
}

export class EventLog {
  constructor(
    private readonly fs: Fs,
    private readonly stateDir: string,
    private readonly now: () => Date,
  ) {}

  private dir(session: string): string {
    return joinPath(this.stateDir, 'log', session);
  }

  /**
   * Best effort: the log records what happened, it never decides whether it happens, so a failed
   * append returns the problem (for the caller's warnings) instead of throwing.
   */
  async append(rec: Omit<LogRecord, 'at'>): Promise<string | null> {
    try {
      const at = this.now().toISOString();
      const dir = this.dir(rec.session);
      // a new file written once: a record cut short by a crash is skipped when the log is read.
      // Names sort by the record's time, then by a monotonic clock, so two records one process
      // appends in the same millisecond (a blocked call's start and end) keep their order.
      const name = `${at.replace(/[:.]/g, '-')}-${monotonicStamp()}-${randomHex(4)}.json`;
      const data = utf8Encode(JSON.stringify({ at, ...rec }));
      try {
        await this.fs.writeFile(joinPath(dir, name), data, { mode: 0o644, exclusive: true });
      } catch (e) {
        if (fsErrorCode(e) !== 'ENOENT') throw e;
        await mkdirp(this.fs, dir); // the session's first record (or its log was removed meanwhile)
        await this.fs.writeFile(joinPath(dir, name), data, { mode: 0o644, exclusive: true });
      }
      return null;
    } catch (e) {
      return `could not append to the log: ${(e as Error).message}`;
    }
  }

  /** The session's records, oldest first. */
  async read(session: string): Promise<LogRecord[]> {
    checkSession(session);
    const dir = this.dir(session);
    if (!(await this.fs.lstat(dir))) return [];
    const names = (await this.fs.readdir(dir)).filter((n) => n.endsWith('.json')).sort();
    const out: LogRecord[] = [];
    for (const n of names) {
      try {
        out.push(JSON.parse(utf8Decode(await this.fs.readFile(joinPath(dir, n)))) as LogRecord);
      } catch {
        // a record cut short by a crash is skipped, not fatal
      }
    }
    return out;
  }

  /** Drops a session's whole log. */
  async remove(session: string): Promise<void> {
    checkSession(session);
    await removeTree(this.fs, this.dir(session));
  }
}
