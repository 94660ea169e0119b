/**
 * Tool calls in flight, one small file each under `<stateDir>/calls/<session>/`: a hook's
 * before-tool event leaves the turn, the time and the paths there, and the after-tool event (a
 * separate process, and harnesses give no duration) takes them back. Best effort throughout: a
 * call whose record is lost is logged without its duration, never failed.
 */
import { utf8Decode, utf8Encode } from '../bytes/text.js';
import { fsErrorCode, type Fs } from '../fs/types.js';
import { joinPath } from '../fs/path.js';
import { mkdirp, removeTree } from '../fs/atomic.js';

/** What a tool call's start leaves for its end. */
export interface CallRecord {
  /** When it started (ms since the epoch). */
  at: number;
  /** The turn it captured into, or null. */
  turn: string | null;
  /** The worktree-relative paths it is about to write. */
  paths: string[];
}

export class CallsInFlight {
  constructor(
    private readonly fs: Fs,
    private readonly stateDir: string,
  ) {}

  private dir(session: string): string {
    return joinPath(this.stateDir, 'calls', session);
  }

  private path(session: string, toolUseId: string): string {
    // a tool-use id is the harness's; keep it to a safe file name
    const name = toolUseId.replace(/[^A-Za-z0-9._-]/g, '_').slice(0, 120);
    return joinPath(this.dir(session), name || '_');
  }

  /** Record that call `toolUseId` of `session` started. */
  async start(session: string, toolUseId: string, rec: CallRecord): Promise<void> {
    const path = this.path(session, toolUseId);
    const data = utf8Encode(JSON.stringify(rec));
    try {
      await this.fs.writeFile(path, data, { mode: 0o644 });
    } catch (e) {
      if (fsErrorCode(e) !== 'ENOENT') return;
      await mkdirp(this.fs, this.dir(session));
      await this.fs.writeFile(path, data, { mode: 0o644 }).catch(() => undefined);
    }
  }

  /** Take back what the start of call `toolUseId` recorded (and forget it); null when nothing readable is there. */
  async end(session: string, toolUseId: string): Promise<CallRecord | null> {
    const path = this.path(session, toolUseId);
    try {
      const v = JSON.parse(utf8Decode(await this.fs.readFile(path))) as { at: unknown; turn: unknown; paths: unknown };
      await this.fs.unlink(path).catch(() => undefined);
      const paths = Array.isArray(v.paths) ? v.paths.filter((p): p is string => typeof p === 'string') : [];
      return typeof v.at === 'number' ? { at: v.at, turn: typeof v.turn === 'string' ? v.turn : null, paths } : null;
    } catch {
      return null;
    }
  }

  /** Forget every call of `session` (its turn is over: what a killed tool left goes too). */
  async clear(session: string): Promise<void> {
    await removeTree(this.fs, this.dir(session)).catch(() => undefined);
  }
}
