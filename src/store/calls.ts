/**
 * Tool calls in flight, one small file each under `<stateDir>/calls/<session>/`: a hook's
 * before-event leaves the call's kind, input, turn and start time there, and its after-event (a
 * separate process: harnesses give no duration) takes them back. Harnesses without call ids
 * (Gemini CLI, the generic form without `toolUseId`) get a key made up here, and their
 * after-events are paired by input and order: the newest call in flight with the same command,
 * or the same paths, is the one that finished (an older one with that input was denied or
 * killed before it ran: a harness that runs calls one by one reports each end before the next
 * start, and one that runs a batch at once sends every start before any call runs, so the
 * newest start is from before every call of the batch too). Taking a record back removes its file, and only
 * one process can remove it: two after-events running at once never pair with the same call.
 * Best effort for the log's sake; what pairing decides (a call's capture joins its turn) is
 * DESIGN I10's rule that a call which never finished changed nothing.
 */
import { utf8Decode, utf8Encode } from '../bytes/text.js';
import { randomHex } from '../bytes/random.js';
import { fsErrorCode, type Fs } from '../fs/types.js';
import { joinPath } from '../fs/path.js';
import { mkdirp, removeTree } from '../fs/atomic.js';

/** What a tool call's start leaves for its end. */
export interface CallRecord {
  /** The call's key: the harness's tool-use id, or one made up for a harness that gives none. */
  key: string;
  /** The harness gave the key (a tool-use id): its after-event names it. */
  byId: boolean;
  /** When it started (ms since the epoch). */
  at: number;
  /** The turn it captured into, or null. */
  turn: string | null;
  kind: 'write' | 'shell';
  /** The tool's name, as the harness called it. */
  tool: string;
  /** The worktree-relative paths it is about to write (write). */
  paths: string[];
  /** The command it runs (shell). */
  command?: string;
  /** The harness never sends this call's after-event: it is over by the session's next event. */
  unreported?: boolean;
}

/** What an after-event says of the call it ends, for pairing without an id. */
export interface CallInput {
  paths?: readonly string[];
  command?: string;
}

export class CallsInFlight {
  constructor(
    private readonly fs: Fs,
    private readonly stateDir: string,
  ) {}

  private dir(session: string): string {
    return joinPath(this.stateDir, 'calls', session);
  }

  private path(session: string, key: string): string {
    return joinPath(this.dir(session), callFileName(key));
  }

  /** A key for a call whose harness gives no id: its file names sort by start time. */
  static newKey(now: number): string {
    return `n-${now.toString(36).padStart(9, '0')}-${randomHex(4)}`;
  }

  /** Record that call `rec.key` of `session` started. */
  async start(session: string, rec: CallRecord): Promise<void> {
    const path = this.path(session, rec.key);
    const data = utf8Encode(JSON.stringify(rec));
    try {
      await this.fs.writeFile(path, data, { mode: 0o644 });
    } catch (e) {
      if (fsErrorCode(e) !== 'ENOENT') return;
      await mkdirp(this.fs, this.dir(session));
      await this.fs.writeFile(path, data, { mode: 0o644 }).catch(() => undefined);
    }
  }

  /** Take back what the start of call `key` recorded (and forget it); null when nothing readable is there. */
  async end(session: string, key: string): Promise<CallRecord | null> {
    const path = this.path(session, key);
    const rec = await this.read(path);
    if (!rec) return null;
    return (await this.claim(path)) ? rec : null;
  }

  /**
   * The call an after-event without an id ends: of the calls in flight that had no id either,
   * the newest whose input is the event's (the same command; the same paths), or the oldest of
   * all when the event says nothing of its input (its ends come in the order of the starts).
   * Taken back and forgotten, as `end`.
   */
  async endMatching(session: string, input: CallInput): Promise<CallRecord | null> {
    const candidates = (await this.pending(session)).filter((r) => !r.byId && matches(r, input));
    if (input.command !== undefined || input.paths !== undefined) candidates.reverse();
    for (const rec of candidates) if (await this.claim(this.path(session, rec.key))) return rec;
    return null;
  }

  /** The calls of `session` in flight, oldest first. */
  async pending(session: string): Promise<CallRecord[]> {
    const dir = this.dir(session);
    let names: string[];
    try {
      names = await this.fs.readdir(dir);
    } catch {
      return [];
    }
    const out: CallRecord[] = [];
    for (const n of names) {
      const rec = await this.read(joinPath(dir, n));
      if (rec) out.push(rec);
    }
    return out.sort((a, b) => a.at - b.at || (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  }

  /** Forget every call of `session` (its turn is over: what a killed tool left goes too). */
  async clear(session: string): Promise<void> {
    await removeTree(this.fs, this.dir(session)).catch(() => undefined);
  }

  /** Remove the record's file: true for the one process whose unlink took it. */
  private async claim(path: string): Promise<boolean> {
    try {
      await this.fs.unlink(path);
      return true;
    } catch {
      return false;
    }
  }

  private async read(path: string): Promise<CallRecord | null> {
    try {
      const v = JSON.parse(utf8Decode(await this.fs.readFile(path))) as Partial<CallRecord>;
      if (typeof v.at !== 'number' || typeof v.key !== 'string') return null;
      return {
        key: v.key,
        byId: v.byId === true,
        at: v.at,
        turn: typeof v.turn === 'string' ? v.turn : null,
        kind: v.kind === 'shell' ? 'shell' : 'write',
        tool: typeof v.tool === 'string' ? v.tool : '',
        paths: Array.isArray(v.paths) ? v.paths.filter((p): p is string => typeof p === 'string') : [],
        ...(typeof v.command === 'string' ? { command: v.command } : {}),
        ...(v.unreported === true ? { unreported: true } : {}),
      };
    } catch {
      return null;
    }
  }
}

/** Does an after-event's input name this call (same command, or same paths in any order)? */
function matches(r: CallRecord, input: CallInput): boolean {
  if (input.command !== undefined) return r.kind === 'shell' && r.command === input.command;
  if (input.paths !== undefined) {
    if (r.kind !== 'write' || r.paths.length !== input.paths.length) return false;
    const want = new Set(input.paths);
    return r.paths.every((p) => want.has(p));
  }
  return true;
}

/** A call's key as a file name (a harness's id, kept to safe characters). */
export function callFileName(key: string): string {
  const name = key.replace(/[^A-Za-z0-9._-]/g, '_').slice(0, 120);
  return name === '' || name.startsWith('.') ? `_${name}` : name;
}
