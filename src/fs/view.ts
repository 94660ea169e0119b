/**
 * A watched-worktree view (the warm server's: a shell baseline costs what changed): what a walk
 * of the worktree asks — a directory's names, an entry's lstat — answered from memory where a filesystem watcher
 * can vouch that nothing changed since the answer was read, and from the filesystem for
 * everything it reported (an entry, its directory's listing, everything beneath a directory that
 * was made, removed, renamed or replaced). A long-lived process (the warm server) keeps one per
 * worktree; a shell command's baseline and the walk after it then cost the paths changed since
 * the last walk, not a walk of the tree. Without a view, or when it cannot vouch (`open` gives
 * null), the walk asks the filesystem, as it always has: the results are the same either way.
 *
 * This module is pure: the watcher is a `WatchBackend` injected by the platform layer
 * (the Node platform's watch host, git-scalpel/node's `watchWorktrees`; none exists for browsers,
 * where the walk runs in full).
 *
 * What the cache trusts, and why (the backend's contract, kept by the Node watch host):
 * - A directory's listing is kept only when the directory's watch was in place before the
 *   listing was read (the watch is attached first, then readdir): an entry made after the watch
 *   is reported, one made before it is in the listing. This is inotify's classic race (files made
 *   in a new directory before its watch exists are never reported), closed by the order.
 * - An entry's lstat is kept only when its directory's watch was in place before the lstat (a
 *   change to a file — write, truncate, chmod, utimes, rename, unlink — is reported on its
 *   directory's watch, naming it); for a directory entry, only while that directory is watched
 *   itself and its watch came first (what is made in it changes its mtime, reported on its own
 *   watch, not its parent's); never for a file with several hard links (a write through another
 *   name is reported in the other name's directory).
 * - An event naming a directory that is watched drops that directory and everything cached
 *   beneath it (it may have been removed, replaced or renamed: its watch may be on another inode
 *   now); the next walk reads it again, attaching new watches first.
 * - `open` first waits for the backend's barrier: every change that completed before `open` was
 *   called has been delivered (or the backend has said it lost events). Then the events are
 *   applied, and the root's identity (device and inode) is checked.
 * - Anything the backend cannot vouch for (a lost event, an error, a limit, a watcher that
 *   stopped) makes the view invalid: everything cached is dropped, every watch closed, and the
 *   next `open` rebuilds from nothing (a walk in full, attaching watches as it goes).
 *
 * What no watcher reports, here as for git's own fsmonitor: writes through a shared memory
 * mapping, writes through a hard link outside the watched directories, a change of link count
 * made from outside (which changes the other names' ctime), and a filesystem mounted over a
 * directory of the worktree. Network filesystems report only what the local machine does.
 */
import type { FileStat } from './types.js';

/** Why a view is not answering from memory (stable names, for `server status`). */
export type ViewLostReason =
  /** The kernel's event queue may have overflowed (events lost). */
  | 'overflow'
  /** A watch could not be made: the system's (or the owner's) limit on watches. */
  | 'limit'
  /** A watcher reported an error or stopped. */
  | 'error'
  /** The barrier's marker did not come back in time. */
  | 'barrier-timeout'
  /** The worktree's root directory was removed, renamed or replaced. */
  | 'root-moved'
  /** Too many watches of directories no longer in the tree were kept (closed by a rebuild). */
  | 'retired'
  /** The view was closed by its owner. */
  | 'closed'
  /** The platform has no watcher the view can trust. */
  | 'unsupported';

/** What a view is doing, for `server status`. */
export interface ViewStatus {
  worktree: string;
  /** watching: answers from memory; invalid: the next walk runs in full and rebuilds; off: never again (closed, unsupported, a limit). */
  state: 'watching' | 'invalid' | 'off';
  /** Why not watching (absent when watching). */
  reason?: ViewLostReason;
  /** The error's code or message, when one caused it. */
  detail?: string;
  /** Directories watched now. */
  directories: number;
  /** Directories whose listing is held. */
  listed: number;
  /** Entries whose lstat is held. */
  entries: number;
  /** Walks answered (from memory where it could). */
  walks: number;
  /** Times the view was rebuilt from nothing after it became invalid. */
  rebuilds: number;
  /** Events delivered so far. */
  events: number;
  /** The last time the view could not vouch, and why (it was rebuilt since when `state` is watching). */
  lastLoss?: { reason: ViewLostReason; detail?: string };
}

/** What a walk asks of the view; valid until `release`. */
export interface ViewReader {
  /**
   * The names in the worktree's directory `rel` ('' the root; the array is the view's: not to be
   * changed). Throws as readdir would.
   */
  names(rel: string): string[];
  /** The names of `rel` when the view holds them (no read), else null. */
  held(rel: string): string[] | null;
  /** lstat of the entry `name` of directory `dir` (`rel` is the entry's own path); null when nothing is there. */
  stat(dir: string, name: string, rel: string): FileStat | null;
  /**
   * A mark of directory `rel` as the view holds it: the same object (===) at a later walk means no
   * event has touched its listing, or the lstat of any entry the view keeps, since this call (what
   * a walk derived from them then still holds, for the entries `kept` vouched for) — except that a
   * watched subdirectory's own lstat (its times, its size) may have changed with what changed in
   * it: it is still a directory (its removal or replacement changes the mark). Null when the view
   * holds no listing of it or cannot vouch now. Asked before anything else of it is read: right
   * after `names(rel)`, or instead of it (a walk whose record of `rel` holds with this mark reads
   * nothing of it).
   */
  mark(rel: string): object | null;
  /**
   * The names of directory `rel`'s entries an event touched since `since` (a mark this view gave
   * for it: what `mark` vouches for holds for every other entry), or null when the view cannot
   * say (another directory's mark, a rebuild, a change of the whole listing, too many changes).
   * Asked right after `mark(rel)`.
   */
  changed(rel: string, since: object): string[] | null;
  /** Does the view keep the lstat of entry `name` of directory `dir` (asked after `stat`)? Not kept: a later walk asks the disk. */
  kept(dir: string, name: string): boolean;
  /**
   * What `make` gives, kept by the view under `key` (the newest few keys) until it is rebuilt: for
   * what a walk derives from inputs the key names exactly (the index's paths, by its checksum).
   */
  remember<T>(key: string, make: () => T): T;
  /** What `remember` keeps under `key`, or undefined (nothing is made). */
  recall<T>(key: string): T | undefined;
  /** The walk is over. */
  release(): void;
}

/**
 * A watched worktree as the engine sees it: `open` before a walk. Made by whoever keeps a
 * process warm (git-scalpel/node's `watchWorktrees`), handed to `openRepository` as
 * `OpenOptions.view`.
 */
export interface WorktreeView {
  /** The worktree watched (absolute, '/'-separated, as the repository's `worktree`). */
  readonly worktree: string;
  /**
   * Before a walk of `worktree`: waits until every change completed before this call has been
   * delivered, applies them, and gives a reader; null when the view cannot vouch (the walk then
   * asks the filesystem) or watches another worktree.
   */
  open(worktree: string): Promise<ViewReader | null>;
  status(): ViewStatus;
  /** Stop watching (closes every watch); `open` gives null from then on. */
  close(): void;
}

/**
 * Where an opened repository gets its worktree's view: `openRepository({ views })` asks once, for
 * the repository's worktree (git-scalpel/node's watch host gives the same view to every open of
 * one worktree). Null: no view for it.
 */
export interface WorktreeViews {
  view(worktree: string): WorktreeView | null;
}

/** An lstat with the link count the view needs (a file with several names is never kept). */
export interface LinkedStat {
  st: FileStat;
  links: number;
}

/** A watch of one directory (not recursive). */
export interface DirWatch {
  close(): void;
}

/**
 * What the platform provides. `watch` attaches a watch synchronously (when it returns, every later
 * change to an entry of the directory, and to the directory itself, will be reported as an event
 * naming the entry: `null` when it names none) or throws. `barrier` resolves once every change
 * completed before it was called has been reported (or `lost` was called). `lost` is the
 * backend's way to say it can no longer vouch (given at construction, see WatchedWorktree).
 */
export interface WatchBackend {
  /**
   * `onEvent`'s `listing`: false when the platform tells the change left the directory's listing
   * as it was (the entry's content or attributes changed: inotify's IN_MODIFY, IN_ATTRIB);
   * true or absent when it may have changed it.
   */
  watch(abs: string, onEvent: (name: string | null, listing?: boolean) => void): DirWatch;
  /** Watches `abs`'s parent for changes of the entry `abs` itself (renamed, removed): `onEvent` for those only. */
  watchEntry(abs: string, onEvent: () => void): DirWatch;
  barrier(): Promise<void>;
  lstat(abs: string): LinkedStat | null;
  readdir(abs: string): string[];
}

interface DirNode {
  rel: string;
  watch: DirWatch;
  /** dev:ino of the directory when its watch was attached. */
  ident: string;
  /** Its names (null: read them again). */
  names: string[] | null;
  /** Its entries' lstat, by name (null: nothing there). */
  stats: Map<string, FileStat | null>;
  /** Names of its entries that are watched directories. */
  kids: Set<string>;
  /** Replaced whenever an event takes anything held here away (see ViewReader.mark). */
  mark: Mark;
  /** What replaced the mark, oldest first: [the mark's epoch then, the entry's name or null: every entry]. */
  log: Array<[number, string | null]>;
  /** The newest epoch dropped from `log`: what changed since an older mark is not known. */
  floor: number;
}

/** A directory's mark: its node's `token` (one per node, so per watch) and the epoch it was given at. */
interface Mark {
  readonly token: object;
  readonly epoch: number;
}

/**
 * Kinds of pending events: an entry of the directory (its listing and the entry); the entry's own
 * stat only (a change inside a watched subdirectory); the entry's content or attributes (the
 * listing as it was).
 */
const ENTRY = 1;
const STAT = 2;
const CHANGE = 4;

/** How many changes of one directory its log keeps (ViewReader.changed). */
const LOG_MAX = 64;

/** How many watches of directories no longer in the tree are kept before a rebuild closes them. */
const RETIRED_MAX = 4096;

/** How many derived results `remember` keeps. */
const MEMO_MAX = 16;

const identOf = (st: FileStat) => `${st.dev}:${st.ino}`;

/**
 * The view's memory and its rules (see the module comment). `makeBackend(lost)` gives the
 * platform's watcher; `lost(reason, detail)` is how it says it can no longer vouch.
 */
export class WatchedWorktree implements WorktreeView {
  readonly worktree: string;
  private readonly backend: WatchBackend;
  private nodes = new Map<string, DirNode>();
  /** Watches of directories dropped from the tree: kept open until a rebuild (see `retire`). */
  private retired: DirWatch[] = [];
  private rootWatch: DirWatch | null = null;
  /** Events not applied yet: directory → entry name → kind bits ('*': every entry). */
  private pending = new Map<string, Map<string, number>>();
  private lostReason: ViewLostReason | null = null;
  private lostDetail: string | undefined;
  /** Never again (closed, or a limit). */
  private off = false;
  private counts = { walks: 0, rebuilds: 0, events: 0 };
  private memos = new Map<string, unknown>();
  private lastLoss: { reason: ViewLostReason; detail?: string } | null = null;
  /** Incremented on every rebuild: a watch's events from an older generation are ignored. */
  private generation = 0;

  constructor(worktree: string, makeBackend: (lost: (reason: ViewLostReason, detail?: string) => void) => WatchBackend) {
    this.worktree = worktree;
    this.backend = makeBackend((reason, detail) => this.lose(reason, detail));
  }

  status(): ViewStatus {
    let listed = 0;
    let entries = 0;
    for (const n of this.nodes.values()) {
      if (n.names) listed++;
      entries += n.stats.size;
    }
    const state = this.off ? 'off' : this.lostReason ? 'invalid' : 'watching';
    return {
      worktree: this.worktree,
      state,
      ...(this.lostReason ? { reason: this.lostReason } : {}),
      ...(this.lostDetail ? { detail: this.lostDetail } : {}),
      directories: this.nodes.size,
      listed,
      entries,
      walks: this.counts.walks,
      rebuilds: this.counts.rebuilds,
      events: this.counts.events,
      ...(this.lastLoss ? { lastLoss: this.lastLoss } : {}),
    };
  }

  close(): void {
    this.lose('closed');
    this.off = true;
    this.reset();
  }

  async open(worktree: string): Promise<ViewReader | null> {
    if (this.off || worktree !== this.worktree) return null;
    try {
      await this.backend.barrier();
    } catch (e) {
      this.lose('error', e instanceof Error ? e.message : String(e));
    }
    if (this.off) return null;
    if (this.lostReason || this.retired.length > RETIRED_MAX) {
      // everything cached goes; this walk reads the tree from nothing, attaching watches first.
      // The events the closed watches still had queued are read (and dropped) before: the new
      // watches' events are then counted from an empty queue (the backend's overflow check)
      this.reset();
      this.lostReason = null;
      this.lostDetail = undefined;
      this.counts.rebuilds++;
      try {
        await this.backend.barrier();
      } catch (e) {
        this.lose('error', e instanceof Error ? e.message : String(e));
      }
      if (this.off || this.lostReason) return null;
    } else this.apply();
    if (this.nodes.size > 0 && !this.rootSame()) {
      this.reset();
      this.counts.rebuilds++;
    }
    this.counts.walks++;
    const gen = this.generation;
    let released = false;
    // once the view is lost or rebuilt during the walk, the rest of it asks the filesystem
    const live = () => !released && gen === this.generation && !this.lostReason;
    return {
      names: (rel) => (live() ? this.names(rel) : this.backend.readdir(this.abs(rel))),
      held: (rel) => (live() ? (this.nodes.get(rel)?.names ?? null) : null),
      stat: (dir, name, rel) => (live() ? this.stat(dir, name, rel) : (this.backend.lstat(this.abs(rel))?.st ?? null)),
      mark: (rel) => {
        const node = live() ? this.nodes.get(rel) : undefined;
        return node && node.names ? node.mark : null;
      },
      changed: (rel, since) => {
        const node = live() ? this.nodes.get(rel) : undefined;
        const m = since as Partial<Mark>;
        if (!node || !node.names || m.token !== node.mark.token || typeof m.epoch !== 'number' || m.epoch < node.floor) return null;
        const out = new Set<string>();
        for (let i = node.log.length - 1; i >= 0 && node.log[i][0] > m.epoch; i--) {
          const name = node.log[i][1];
          if (name === null) return null;
          out.add(name);
        }
        return [...out];
      },
      kept: (dir, name) => live() && (this.nodes.get(dir)?.stats.has(name) ?? false),
      remember: <T>(key: string, make: () => T): T => {
        if (this.memos.has(key)) {
          const v = this.memos.get(key) as T;
          // newest last
          this.memos.delete(key);
          this.memos.set(key, v);
          return v;
        }
        const v = make();
        this.memos.set(key, v);
        if (this.memos.size > MEMO_MAX) this.memos.delete(this.memos.keys().next().value as string);
        return v;
      },
      recall: <T>(key: string): T | undefined => this.memos.get(key) as T | undefined,
      release: () => {
        released = true;
      },
    };
  }

  private lose(reason: ViewLostReason, detail?: string): void {
    if (this.off) return;
    if (!this.lostReason) {
      this.lostReason = reason;
      this.lostDetail = detail;
      this.lastLoss = { reason, ...(detail ? { detail } : {}) };
    }
    // a limit stays (rebuilding would hit it again on every walk), and so does a platform without a watcher
    if (reason === 'limit' || reason === 'unsupported') {
      this.off = true;
      this.reset();
    }
  }

  /** Drop everything: close every watch (also the retired ones), forget every event. */
  private reset(): void {
    this.generation++;
    for (const n of this.nodes.values()) n.watch.close();
    for (const w of this.retired) w.close();
    this.rootWatch?.close();
    this.rootWatch = null;
    this.nodes = new Map();
    this.retired = [];
    this.pending = new Map();
    this.memos = new Map();
  }

  private abs(rel: string): string {
    return rel === '' ? this.worktree : this.worktree === '/' ? `/${rel}` : `${this.worktree}/${rel}`;
  }

  /** Is the root still the directory its watch is on (renamed away and another put there: not)? */
  private rootSame(): boolean {
    const root = this.nodes.get('');
    if (!root) return true;
    const st = this.backend.lstat(this.worktree);
    return !!st && st.st.type === 'directory' && identOf(st.st) === root.ident;
  }

  private note(dir: string, name: string, kind: number): void {
    let m = this.pending.get(dir);
    if (!m) this.pending.set(dir, (m = new Map()));
    m.set(name, (m.get(name) ?? 0) | kind);
  }

  /** Apply the events delivered so far (after the barrier). */
  private apply(): void {
    const pending = this.pending;
    if (pending.size === 0) return;
    this.pending = new Map();
    const linked: Array<{ dev: number; ino: number }> = [];
    for (const [dir, names] of pending) {
      const node = this.nodes.get(dir);
      if (!node) continue;
      if (names.has('*')) {
        touch(node, null);
        node.names = null;
        node.stats.clear();
        for (const k of [...node.kids]) this.drop(join(dir, k));
        continue;
      }
      for (const [name, kind] of names) {
        node.stats.delete(name);
        // what changed inside a watched subdirectory changed its stat, not what it is (its
        // removal or replacement is an entry event here): the mark stays (see ViewReader.mark)
        if (!(kind & ENTRY)) {
          if (!node.kids.has(name) || kind & CHANGE) touch(node, name);
          continue;
        }
        touch(node, name);
        node.names = null;
        if (node.kids.has(name)) this.drop(join(dir, name));
        // a name made as another link to a file: the file's other names changed (their ctime and
        // link count) with no event naming them
        const now = this.backend.lstat(this.abs(join(dir, name)));
        if (now && now.links > 1 && now.st.type !== 'directory') linked.push({ dev: now.st.dev, ino: now.st.ino });
      }
    }
    if (linked.length) {
      for (const n of this.nodes.values())
        for (const [name, st] of n.stats)
          if (st && linked.some((l) => l.dev === st.dev && l.ino === st.ino)) {
            n.stats.delete(name);
            touch(n, name);
          }
    }
  }

  /** Forget the directory `rel` and everything cached beneath it (its watches are retired). */
  private drop(rel: string): void {
    const node = this.nodes.get(rel);
    if (!node) return;
    for (const k of node.kids) this.drop(join(rel, k));
    this.nodes.delete(rel);
    this.retire(node.watch);
    if (rel !== '') {
      const { parent, name } = split(rel);
      const p = this.nodes.get(parent);
      if (p) {
        p.kids.delete(name);
        p.stats.delete(name);
        touch(p, name);
      }
    }
  }

  /**
   * A watch no longer needed stays open until the next rebuild: closing it would make the events
   * it still has queued vanish uncounted, and the backend's overflow check counts them.
   */
  private retire(w: DirWatch): void {
    this.retired.push(w);
  }

  private names(rel: string): string[] {
    const node = this.nodes.get(rel) ?? this.watchDir(rel);
    if (!node) return this.backend.readdir(this.abs(rel));
    if (node.names === null) node.names = this.backend.readdir(this.abs(rel));
    return node.names;
  }

  /**
   * Attach a watch to directory `rel`, then check it is the directory it was (a symlink is
   * followed by a watch: then no node). Its parent's stat of it is read again after the watch.
   */
  private watchDir(rel: string): DirNode | null {
    if (this.lostReason) return null;
    const parentRel = rel === '' ? null : split(rel).parent;
    const parent = parentRel === null ? null : this.nodes.get(parentRel);
    // a directory is watched only beneath a watched parent (its removal is told there)
    if (parentRel !== null && !parent) return null;
    const abs = this.abs(rel);
    const before = this.backend.lstat(abs);
    if (!before || before.st.type !== 'directory') return null;
    const gen = this.generation;
    let watch: DirWatch;
    try {
      if (rel === '' && !this.rootWatch) {
        // the root has no watched parent: its renaming or removal is watched in its own parent
        this.rootWatch = this.backend.watchEntry(abs, () => {
          if (gen === this.generation) this.lose('root-moved');
        });
      }
      watch = this.backend.watch(abs, (name, listing) => {
        if (gen !== this.generation) return;
        this.counts.events++;
        if (name === null) this.note(rel, '*', ENTRY);
        else this.note(rel, name, listing === false ? CHANGE : ENTRY);
        // what changes in a directory changes its own stat, kept in its parent
        if (rel !== '') {
          const { parent: p, name: own } = split(rel);
          this.note(p, own, STAT);
        }
      });
    } catch {
      // the backend said why (lost): a limit, an error
      return null;
    }
    if (this.lostReason) {
      watch.close();
      return null;
    }
    const after = this.backend.lstat(abs);
    if (!after || after.st.type !== 'directory' || identOf(after.st) !== identOf(before.st)) {
      watch.close();
      return null;
    }
    const node: DirNode = {
      rel,
      watch,
      ident: identOf(after.st),
      names: null,
      stats: new Map(),
      kids: new Set(),
      mark: { token: {}, epoch: 0 },
      log: [],
      floor: 0,
    };
    this.nodes.set(rel, node);
    if (parent) {
      const { name } = split(rel);
      parent.kids.add(name);
      parent.stats.set(name, after.st);
    }
    return node;
  }

  private stat(dir: string, name: string, rel: string): FileStat | null {
    const node = this.nodes.get(dir);
    if (!node) return this.backend.lstat(this.abs(rel))?.st ?? null;
    const hit = node.stats.get(name);
    if (hit !== undefined) return hit;
    const now = this.backend.lstat(this.abs(rel));
    if (!now) {
      node.stats.set(name, null);
      return null;
    }
    // a directory's stat is kept while it is watched itself (its watch came first: watchDir), a
    // file's unless it has other names
    if (now.st.type === 'directory' ? this.nodes.get(rel)?.ident === identOf(now.st) : now.links <= 1) node.stats.set(name, now.st);
    return now.st;
  }
}

/** An event took something held of `node` away: a new mark, and the entry's name (null: every entry) in its log. */
function touch(node: DirNode, name: string | null): void {
  const epoch = node.mark.epoch + 1;
  node.mark = { token: node.mark.token, epoch };
  node.log.push([epoch, name]);
  if (node.log.length > LOG_MAX) node.floor = (node.log.shift() as [number, string | null])[0];
}

function join(dir: string, name: string): string {
  return dir === '' ? name : `${dir}/${name}`;
}

function split(rel: string): { parent: string; name: string } {
  const i = rel.lastIndexOf('/');
  return i < 0 ? { parent: '', name: rel } : { parent: rel.slice(0, i), name: rel.slice(i + 1) };
}
