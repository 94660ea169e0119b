import type { Fs } from '../fs/types.js';
import { basename, joinPath } from '../fs/path.js';
import type { HashProvider, ObjectFormat } from '../hash/index.js';
import type { ZlibProvider } from '../object/zlib.js';
import type { Platform } from '../platform/types.js';
import { purePlatform } from '../platform/pure.js';
import { encodeIndex } from '../index/encode.js';
import type { GitIndex } from '../index/decode.js';
import { acquireLock, type Lock } from '../fs/atomic.js';
import { ScalpelError } from '../errors/index.js';
import { LockJournal, lockMarker, lockTemp, type ProcessInfo } from './journal.js';
import type { GitConfig } from './config.js';
import { discoverRepository, objectFormatOf, readRepoConfig, type RepoLocation } from './discover.js';
import { readIndexFile, type ReadIndexResult } from './index-file.js';
import type { IndexCache } from './index-cache.js';
import { ObjectDatabase, parseSharedRepository, sharedPermissions } from './odb.js';
import { RefStore } from './refs.js';

/** git folds packs together past gc.autoPackLimit; 0 or less turns that off in git, and we keep git's default bound then. */
function packLimitOf(config: GitConfig): number {
  const n = config.getInt('gc.autoPackLimit', 50);
  return n > 0 ? n : 50;
}

/**
 * `scalpel.packThreshold`: how many new objects an operation writes as one pack (see
 * ObjectDatabaseOptions.packThreshold); 0 or less: never a pack. Unset: the database's default.
 */
function packThresholdOf(config: GitConfig): number | undefined {
  if (config.get('scalpel.packThreshold') === undefined) return undefined;
  const n = config.getInt('scalpel.packThreshold', 0);
  return n > 0 ? n : Infinity;
}

/** The options' platform (the pure one by default) with their hash, zlib and proc overrides applied. */
export function resolvePlatform(opts: { platform?: Platform; hash?: HashProvider; zlib?: ZlibProvider; proc?: ProcessInfo }): Platform {
  const base = opts.platform ?? purePlatform;
  if (!opts.hash && !opts.zlib && !opts.proc) return base;
  return Object.freeze({ ...base, hash: opts.hash ?? base.hash, zlib: opts.zlib ?? base.zlib, proc: opts.proc ?? base.proc });
}

/** How Repository.readIndex and withIndex read the index file. */
export interface IndexReadOptions {
  /** Check the trailer (default true). */
  verify?: boolean;
  /** Leave out optional cache extensions that do not decode, as git does (default true); false: strict. */
  lenient?: boolean;
}

export interface RepositoryOptions {
  fs: Fs;
  /** Any directory inside the worktree (the repository is found upwards from it). */
  dir: string;
  /** Hashing, zlib, process information (default: the pure platform, which has no process information). */
  platform?: Platform;
  /** Overrides the platform's hash. */
  hash?: HashProvider;
  /** Overrides the platform's zlib. */
  zlib?: ZlibProvider;
  /** Overrides the platform's process information (for recovering our own locks after a crash). */
  proc?: ProcessInfo;
  /** Files at least this large are streamed, never held whole (when the filesystem can). Default 16 MiB. */
  streamThreshold?: number;
  /**
   * An operation that writes at least this many new objects writes them as one pack (default: git
   * config `scalpel.packThreshold`, else 16; Infinity: always loose).
   */
  packThreshold?: number;
  /**
   * HOME and XDG_CONFIG_HOME: where git's global config and the person's global ignore and
   * attributes files are (the library reads no environment itself; without them, only the
   * repository's own config and files count).
   */
  env?: RepositoryEnv;
  /** Index reads a long-lived caller keeps across the repositories it opens (kept while each index file is unchanged). */
  indexCache?: IndexCache<ReadIndexResult>;
}

/** The environment variables git's global files are found by. */
export interface RepositoryEnv {
  HOME?: string;
  XDG_CONFIG_HOME?: string;
}

/**
 * A repository on some filesystem: where it is, its config, object database, refs and index.
 * The I/O edge the snapshot engine stands on; it never spawns git.
 */
export class Repository {
  readonly fs: Fs;
  readonly loc: RepoLocation;
  readonly config: GitConfig;
  readonly objectFormat: ObjectFormat;
  /** The platform, with the options' hash, zlib and proc overrides applied. */
  readonly platform: Platform;
  readonly hash: HashProvider;
  readonly zlib: ZlibProvider;
  readonly odb: ObjectDatabase;
  readonly refs: RefStore;

  readonly journal: LockJournal;
  /** Files at least this large are streamed through the object database (never held whole; 16 MiB unless opened with another). */
  readonly streamThreshold: number;
  private readonly proc: ProcessInfo | undefined;
  /** Memory for index reads (see withIndex): one spare buffer, moved out by the read that uses it. */
  private readonly indexBuffers = new SpareBuffer();
  /** Index reads kept across calls by a long-lived caller (RepositoryOptions.indexCache). */
  private readonly indexCache: IndexCache<ReadIndexResult> | undefined;

  /** Where git's global files are (RepositoryOptions.env). */
  readonly env: RepositoryEnv;

  private constructor(
    fs: Fs,
    loc: RepoLocation,
    config: GitConfig,
    platform: Platform,
    packThreshold: number | undefined,
    env: RepositoryEnv,
    streamThreshold: number | undefined,
    indexCache: IndexCache<ReadIndexResult> | undefined,
  ) {
    const { hash, zlib, proc } = platform;
    this.indexCache = indexCache;
    this.fs = fs;
    this.streamThreshold = streamThreshold ?? 16 << 20;
    this.env = Object.freeze({ ...env });
    this.platform = platform;
    this.proc = proc;
    this.journal = new LockJournal(fs, joinPath(loc.commonDir, 'scalpel', 'journal'), proc);
    this.loc = loc;
    this.config = config;
    this.objectFormat = objectFormatOf(config);
    this.hash = hash;
    this.zlib = zlib;
    const level = config.getInt('core.loosecompression', config.getInt('core.compression', 1));
    this.odb = new ObjectDatabase({
      fs,
      objectsDir: joinPath(loc.commonDir, 'objects'),
      format: this.objectFormat,
      hash,
      zlib,
      compressionLevel: level === -1 ? -1 : Math.max(0, Math.min(9, level)),
      sharedRepository: parseSharedRepository(config.get('core.sharedRepository')),
      packThreshold: packThreshold ?? packThresholdOf(config),
      packLimit: packLimitOf(config),
    });
    this.refs = new RefStore(fs, loc.commonDir, this.objectFormat === 'sha256' ? 64 : 40, (path) => this.acquire(path));
  }

  static async open(opts: RepositoryOptions): Promise<Repository> {
    const loc = await discoverRepository(opts.fs, opts.dir);
    const config = await readRepoConfig(opts.fs, loc);
    return new Repository(
      opts.fs,
      loc,
      config,
      resolvePlatform(opts),
      opts.packThreshold,
      opts.env ?? {},
      opts.streamThreshold,
      opts.indexCache,
    );
  }

  get worktree(): string {
    return this.loc.worktree;
  }

  /** "main" for the main worktree, else the linked worktree's name (its directory in .git/worktrees). */
  get worktreeId(): string {
    return this.loc.gitDir === this.loc.commonDir ? 'main' : `wt-${basename(this.loc.gitDir)}`;
  }

  get indexPath(): string {
    return joinPath(this.loc.gitDir, 'index');
  }

  /** The tool's own state directory inside the git dir of this worktree. */
  get stateDir(): string {
    return joinPath(this.loc.gitDir, 'scalpel');
  }

  /**
   * Read the index (merged when split); null when there is no index file yet. The trailer is
   * checked unless `verify: false` (git checks it only in fsck; we check it before any rewrite).
   * Read as git reads unless `lenient: false`: an optional cache extension that does not decode
   * (TREE, UNTR, FSMN, EOIE, IEOT) is left out and named in the result's `dropped`, so the
   * engine works wherever git does; `lenient: false` reads strictly, as `index --verify` does.
   */
  readIndex(opts: IndexReadOptions = {}): Promise<ReadIndexResult | null> {
    return readIndexFile(this.fs, this.loc.gitDir, this.objectFormat, this.hash, {
      verify: opts.verify,
      lenient: opts.lenient !== false,
      latin1: this.platform.latin1,
      cache: this.indexCache,
    });
  }

  /**
   * Run `fn` on the index read into memory an earlier read of this repository already touched
   * (into fresh memory when a concurrent operation is using it). A 10 MB index read into fresh
   * memory costs about three times the read itself in first-touch page faults; an agent's
   * harness reads it on every snapshot and restore. What `fn` returns must not hold views of the
   * index's bytes: the next read overwrites them. Lenient unless `lenient: false`, as readIndex.
   */
  async withIndex<T>(opts: IndexReadOptions, fn: (read: ReadIndexResult | null) => Promise<T>): Promise<T> {
    // the spare buffer is moved out for the whole of `fn`: no other read can reach it meanwhile
    let buffer = this.indexBuffers.take();
    try {
      const scratch = {
        buffer,
        keep: (b: Uint8Array) => {
          buffer = b;
        },
      };
      const read = await readIndexFile(this.fs, this.loc.gitDir, this.objectFormat, this.hash, {
        verify: opts.verify,
        lenient: opts.lenient !== false,
        scratch,
        latin1: this.platform.latin1,
        cache: this.indexCache,
      });
      return await fn(read);
    } finally {
      if (buffer) this.indexBuffers.give(buffer);
    }
  }

  /**
   * Take `index.lock` exclusively. Someone else's lock is waited for a little, never removed:
   * editors' git integrations hold it for milliseconds during background refreshes. After
   * `git config scalpel.lockTimeout` milliseconds (default 1000; 0 refuses at once, like
   * `core.filesRefLockTimeout` for refs) it is INDEX_LOCKED. `sleep` is for tests.
   */
  async lockIndex(opts: { timeoutMs?: number; sleep?: (ms: number) => Promise<void> } = {}): Promise<Lock> {
    const timeout = Math.max(0, opts.timeoutMs ?? this.config.getInt('scalpel.lockTimeout', 1000));
    const sleep = opts.sleep ?? ((ms: number) => new Promise<void>((r) => setTimeout(r, ms)));
    const start = Date.now();
    let delay = 5;
    for (;;) {
      try {
        return await this.acquire(`${this.indexPath}.lock`);
      } catch (e) {
        if (!(e instanceof ScalpelError && e.code === 'INDEX_LOCKED')) throw e;
        const left = timeout - (Date.now() - start);
        if (left <= 0) throw e;
        // git's backoff for ref locks: growing waits, with jitter so two waiters do not collide
        await sleep(Math.min(left, delay + Math.random() * delay));
        delay = Math.min(delay * 2, 100);
      }
    }
  }

  /**
   * Create a lock file exclusively, journaled so that a run killed while holding it lets the
   * next run take it over (LockJournal); a lock of anyone else stays refused (INDEX_LOCKED).
   */
  async acquire(path: string): Promise<Lock> {
    let lock: Lock;
    const content = lockMarker(this.proc?.pid);
    // created with its marker in it, through a temp file named for us (LockJournal.lockTemp)
    const temp = () => (this.proc ? lockTemp(path, this.proc.pid) : undefined);
    try {
      lock = await acquireLock(this.fs, path, { content, temp: temp() });
    } catch (e) {
      if (!(e instanceof ScalpelError && e.code === 'INDEX_LOCKED') || !(await this.journal.recoverStale(path))) throw e;
      lock = await acquireLock(this.fs, path, { content, temp: temp() });
    }
    // what a killed run of ours left beside a lock: its temp files
    await this.journal.sweepTemps(path);
    const journal = this.journal;
    let recorded = false;
    return {
      path: lock.path,
      get state() {
        return lock.state;
      },
      async write(data) {
        // the marker is about to go: record the lock's identity first
        if (!recorded) {
          await journal.record(lock);
          recorded = true;
        }
        await lock.write(data);
      },
      async writeParts(parts) {
        if (!recorded) {
          await journal.record(lock);
          recorded = true;
        }
        await lock.writeParts(parts);
      },
      async commit(target) {
        await lock.commit(target);
        if (recorded) await journal.forget(lock).catch(() => undefined);
      },
      async release() {
        const was = lock.state;
        await lock.release();
        if (was === 'held' && recorded) await journal.forget(lock).catch(() => undefined);
      },
    };
  }

  /** Write the index through a lock taken with lockIndex(): encode, write the lock file, rename it over the index. */
  async writeIndex(lock: Lock, index: GitIndex): Promise<Uint8Array> {
    const bytes = encodeIndex(index, { hash: this.hash });
    await this.writeIndexBytes(lock, bytes);
    return bytes;
  }

  /** Write encoded index bytes (or its parts) through a lock taken with lockIndex() (permission bits per core.sharedRepository). */
  async writeIndexBytes(lock: Lock, bytes: Uint8Array | readonly Uint8Array[]): Promise<void> {
    if (bytes instanceof Uint8Array) await lock.write(bytes);
    else await lock.writeParts(bytes);
    // core.sharedRepository decides the index file's permission bits, as git's adjust_shared_perm does
    const shared = parseSharedRepository(this.config.get('core.sharedRepository'));
    if (shared !== 'umask' && this.fs.capabilities.modes) {
      const st = await this.fs.lstat(lock.path);
      if (st) {
        const mode = sharedPermissions(shared, st.mode, false) & 0o7777;
        if (mode !== (st.mode & 0o7777)) await this.fs.chmod(lock.path, mode);
      }
    }
    await lock.commit(this.indexPath);
  }
}

/**
 * One spare buffer, lent by moving it: `take` hands it over and leaves none, `give` puts one
 * back. Memory only: it carries nothing from one operation to the next (every read overwrites
 * it), and two concurrent operations never hold the same buffer.
 */
class SpareBuffer {
  private spare: Uint8Array | null = null;

  take(): Uint8Array | null {
    const b = this.spare;
    this.spare = null;
    return b;
  }

  give(b: Uint8Array): void {
    this.spare = b;
  }
}
