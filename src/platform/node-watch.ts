/**
 * Watched worktrees on Node (issue 22 part 4): the WatchBackend of src/fs/view.ts over node:fs's
 * non-recursive `fs.watch`, one watch per directory the walk reads, attached in the order the view
 * needs (a directory's watch before its listing). The warm server makes one host per process and
 * asks it for a view per worktree (`host.view(worktree)`, the same view each time), and hands the
 * host to `openRepository` as `OpenOptions.views`.
 *
 * Why not Node's recursive `fs.watch` on Linux (lib/internal/fs/recursive_watch.js, v20.20): it
 * is implemented in JavaScript with one `fs.watch` per file and per directory (100,000 files,
 * 100,000 inotify watches); hitting `max_user_watches` while it starts makes it emit 'error' before
 * the caller can listen, which its start swallows (only ENOENT is rethrown), so it then watches
 * part of the tree and says nothing; a removed directory unwatches every path that merely starts
 * with the same characters (`a` takes `ab`'s watches); and nothing tells a caller which watch was
 * in place before which listing. So it cannot vouch for what the view keeps.
 *
 * What this relies on (Linux, inotify through libuv, src/unix/linux.c):
 * - One inotify instance per event loop: every `fs.watch` of this thread shares one kernel queue,
 *   and the kernel queues an event when the change's system call makes it (fsnotify runs inside
 *   the write, rename, unlink, chmod, utimes... call, before it returns), in order, read in that
 *   order. So the **barrier**: write a marker file in a private directory this host watches; once
 *   its event is read, every event of a change completed before the marker was written has been
 *   read before it. The marker's directory need not be in the worktree (the queue is one), and
 *   `.git/scalpel/` would not do anyway: the worktree walk excludes it. A host is used from one
 *   thread (a worker has its own loop, hence its own queue).
 * - An event libuv reports as 'change' had only IN_MODIFY or IN_ATTRIB (`uv__inotify_read`: any
 *   other bit makes it 'rename', and Node reports 'rename' when both are set): the entry's content
 *   or attributes changed, the directory's listing did not. The view then keeps the listing.
 * - libuv reads the queue until it is empty (`uv__inotify_read` loops to EAGAIN) and calls each
 *   watch's callback synchronously as it goes, all in one poll phase.
 * - **Overflow**: when the queue holds `max_queued_events` (16,384 by default) unread events the
 *   kernel drops every later one and queues IN_Q_OVERFLOW with watch descriptor -1, which libuv
 *   drops too (no watcher has descriptor -1; libuv/libuv src/unix/linux.c, the "stale event"
 *   `continue`; Node has no way to see it, nodejs/node has no overflow signal on Linux — bun's
 *   fs.watch added one in oven-sh/bun#33110 for this reason). So the host counts the events read
 *   in one poll phase (reset in the check phase that follows): a queue that overflowed is read
 *   whole in one phase, so that phase delivers at least `max_queued_events` events; half of that
 *   makes every view invalid. Watches the views no longer need stay open until a rebuild, so
 *   their queued events are counted too (libuv drops events of a closed watch uncounted).
 * - A watch that cannot be made because of `max_user_watches` (ENOSPC) or `max_user_instances`
 *   (EMFILE) throws synchronously from `fs.watch`: the view is off (a limit), and says so.
 * - An FSWatcher 'error' makes the views invalid.
 *
 * macOS and Windows: not implemented; there the host's views are off ('unsupported') and every
 * walk runs in full, as without a server. A port would rely on FSEvents through the recursive
 * `fs.watch` on macOS (one stream for the tree; but coalesced, delivered with a latency, and its
 * "must scan subdirectories" / dropped-events flags are not passed on by libuv, so the barrier
 * and the loss signal would need another source) and on ReadDirectoryChangesW on Windows (libuv
 * reports its buffer overflow as an event with no file name, which Node passes on as a null
 * `filename`: that would be the loss signal; its events are asynchronous too, so the same marker
 * barrier would apply, if its ordering across directories of one recursive watch holds).
 */
import * as fss from 'node:fs';
import { tmpdir } from 'node:os';
import { fsErrorCode } from '../fs/types.js';
import { lstatLinked, readdirNames, watchDirectory } from '../fs/node.js';
import {
  WatchedWorktree,
  type DirWatch,
  type ViewLostReason,
  type ViewStatus,
  type WatchBackend,
  type WorktreeView,
  type WorktreeViews,
} from '../fs/view.js';

export interface WatchHostOptions {
  /** Most directories watched, all views together (default: only the system's `max_user_watches`). */
  maxWatches?: number;
  /** How long the barrier waits for its marker, in milliseconds (default 10,000). */
  barrierTimeoutMs?: number;
  /** Events read in one poll phase that count as a possible overflow (default: half of `/proc/sys/fs/inotify/max_queued_events`). */
  overflowAt?: number;
}

/** What a host is doing, for `server status`. */
export interface WatchHostStatus {
  supported: boolean;
  /** Watches open now (the barrier's own included). */
  watches: number;
  /** Events in one poll phase that make the views invalid. */
  overflowAt: number;
  /** The barrier's private directory (null until the first barrier). */
  barrierDir: string | null;
  views: ViewStatus[];
}

/** The views of one process: one per worktree, sharing one event queue and one barrier. */
export interface WatchHost extends WorktreeViews {
  /** The view of `worktree` (absolute, as the repository's `worktree`), made on first request. */
  view(worktree: string): WorktreeView;
  status(): WatchHostStatus;
  /** Close every view and the barrier's directory. */
  close(): void;
}

const DEFAULT_QUEUE = 16384;

function queueLimit(): number {
  try {
    const n = Number(fss.readFileSync('/proc/sys/fs/inotify/max_queued_events', 'utf8').trim());
    return Number.isFinite(n) && n > 0 ? n : DEFAULT_QUEUE;
  } catch {
    return DEFAULT_QUEUE;
  }
}

/** Make the process's watch host (the warm server makes one; see the module comment). */
export function watchWorktrees(opts: WatchHostOptions = {}): WatchHost {
  return new NodeWatchHost(opts);
}

class NodeWatchHost implements WatchHost {
  private readonly supported = process.platform === 'linux';
  private readonly views = new Map<string, WatchedWorktree>();
  /** Each view's way to say it lost events. */
  private readonly losers = new Set<(reason: ViewLostReason, detail?: string) => void>();
  private readonly overflowAt: number;
  private readonly maxWatches: number;
  private readonly timeoutMs: number;
  private watches = 0;
  /** Events read since the last check phase. */
  private batch = 0;
  /** The barrier's private directory and its watch (made on first use). */
  private marks: { dir: string; watch: DirWatch } | null = null;
  private markSeq = 0;
  private readonly waiting = new Map<string, () => void>();
  private closed = false;

  constructor(opts: WatchHostOptions) {
    this.overflowAt = opts.overflowAt ?? Math.max(1, Math.floor((this.supported ? queueLimit() : DEFAULT_QUEUE) / 2));
    this.maxWatches = opts.maxWatches ?? Infinity;
    this.timeoutMs = opts.barrierTimeoutMs ?? 10_000;
  }

  view(worktree: string): WorktreeView {
    let v = this.views.get(worktree);
    if (!v) {
      v = new WatchedWorktree(worktree, (lost) => {
        this.losers.add(lost);
        if (!this.supported || this.closed || worktree === '/') lost('unsupported');
        return this.backend();
      });
      this.views.set(worktree, v);
    }
    return v;
  }

  status(): WatchHostStatus {
    return {
      supported: this.supported,
      watches: this.watches + (this.marks ? 1 : 0),
      overflowAt: this.overflowAt,
      barrierDir: this.marks?.dir ?? null,
      views: [...this.views.values()].map((v) => v.status()),
    };
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    for (const v of this.views.values()) v.close();
    this.views.clear();
    if (this.marks) {
      this.marks.watch.close();
      fss.rmSync(this.marks.dir, { recursive: true, force: true });
      this.marks = null;
    }
  }

  private loseAll(reason: ViewLostReason, detail?: string): void {
    for (const l of this.losers) l(reason, detail);
    // a barrier waiting now waits for nothing: its marker may have been dropped with the rest
    for (const done of [...this.waiting.values()]) done();
  }

  /** Every event of every watch passes here first: the poll phase's count (see the module comment). */
  private counted(): void {
    if (this.batch++ === 0) setImmediate(() => (this.batch = 0));
    if (this.batch === this.overflowAt) this.loseAll('overflow', `${this.batch} events in one read of the queue`);
  }

  private readonly failed = (e: unknown) => this.loseAll('error', fsErrorCode(e) ?? (e instanceof Error ? e.message : String(e)));

  private backend(): WatchBackend {
    return {
      watch: (abs, onEvent) => this.watch(abs, onEvent),
      watchEntry: (abs, onEvent) => {
        const i = abs.lastIndexOf('/');
        const parent = i <= 0 ? '/' : abs.slice(0, i);
        const own = abs.slice(i + 1);
        return this.watch(parent, (name) => {
          if (name === null || name === own) onEvent();
        });
      },
      barrier: () => this.barrier(),
      lstat: lstatLinked,
      readdir: readdirNames,
    };
  }

  private watch(abs: string, onEvent: (name: string | null, listing: boolean) => void): DirWatch {
    if (this.watches >= this.maxWatches) {
      this.loseAll('limit', `${this.maxWatches} directories watched`);
      throw new Error('watch limit');
    }
    let w: DirWatch;
    try {
      w = watchDirectory(
        abs,
        (name, listing) => {
          this.counted();
          onEvent(name, listing);
        },
        this.failed,
      );
    } catch (e) {
      const code = fsErrorCode(e);
      if (code === 'ENOSPC' || code === 'EMFILE') this.loseAll('limit', code);
      throw e;
    }
    this.watches++;
    let open = true;
    return {
      close: () => {
        if (!open) return;
        open = false;
        this.watches--;
        w.close();
      },
    };
  }

  /**
   * Resolves once every change completed before the call has been read from the queue: a marker
   * file made in the host's private directory comes back as an event after all of them.
   */
  private barrier(): Promise<void> {
    if (this.closed) return Promise.reject(new Error('watch host closed'));
    let marks = this.markDir();
    if (!fss.existsSync(marks.dir)) {
      // removed under us (a cleaner of the temporary directory): a new one, watched before use
      marks.watch.close();
      this.marks = null;
      marks = this.markDir();
    }
    const name = `m${++this.markSeq}`;
    const file = `${marks.dir}/${name}`;
    return new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waiting.delete(name);
        this.loseAll('barrier-timeout', `${this.timeoutMs} ms`);
        resolve();
      }, this.timeoutMs);
      // not unref'd: while a barrier waits, the process must not exit for want of anything to do
      // (the watches themselves are not persistent)
      this.waiting.set(name, () => {
        clearTimeout(timer);
        this.waiting.delete(name);
        fss.rmSync(file, { force: true });
        resolve();
      });
      try {
        fss.writeFileSync(file, '');
      } catch (e) {
        clearTimeout(timer);
        this.waiting.delete(name);
        reject(e as Error);
      }
    });
  }

  private markDir(): { dir: string; watch: DirWatch } {
    if (this.marks) return this.marks;
    const dir = fss.mkdtempSync(`${tmpdir()}/git-scalpel-watch-`);
    const watch = watchDirectory(
      dir,
      (name) => {
        this.counted();
        if (name !== null) this.waiting.get(name)?.();
      },
      this.failed,
    );
    this.marks = { dir, watch };
    return this.marks;
  }
}
