/**
 * The snapshot engine's public types: what ScalpelRepository's methods take and return. Every
 * result that an operation can finish with problems it read past carries them in its own
 * `warnings` (no instance collects them).
 */
import type { Hunk } from '../diff/index.js';
import type { FsInput } from '../fs/types.js';
import type { WorktreeViews } from '../fs/view.js';
import type { HashProvider } from '../hash/index.js';
import type { ZlibProvider } from '../object/zlib.js';
import type { Platform } from '../platform/types.js';
import type { HeadMovement } from '../repo/history.js';
import type { ProcessInfo } from '../repo/journal.js';
import type { Conflict, PathPlan } from './restore.js';
import type { ApplyTo } from './apply.js';

export interface OpenOptions {
  /**
   * The filesystem: the Fs contract (git-scalpel/node's `nodeFs()`), a node-style fs module,
   * memfs, or an isomorphic-git-style promise fs (see FsInput). Anything but the contract is
   * adapted, and what it really does (symlinks, modes, exclusive create, rename of symlinks) is
   * probed once in `.git/scalpel/probe`.
   */
  fs: FsInput;
  /** Any directory of the worktree; the repository is found upwards from it. */
  dir: string;
  /** Hashing, zlib, process information, byte helpers (default: the pure platform; the package entries pass the runtime's). `hash`, `zlib`, `proc` override parts of it. */
  platform?: Platform;
  /**
   * Caller-owned cache (isomorphic-git's `cache`): pass the same object to several openRepository calls
   * on one filesystem object to probe that filesystem once, and to read each index again only when
   * its file changed (kept while its stat is as it was: size, times to the nanosecond, inode; at
   * most 256 MiB of index files). Without it every call probes and reads.
   */
  cache?: object;
  hash?: HashProvider;
  zlib?: ZlibProvider;
  /** Clock, for tests. */
  now?: () => Date;
  /** Process information for recovering this tool's own locks after a crash (default: Node's, from git-scalpel/node). */
  proc?: ProcessInfo;
  /** Files at least this large are streamed, never held whole in memory (default 16 MiB). */
  streamThreshold?: number;
  /**
   * A snapshot (or seal, extend, prune) that writes at least this many new objects stores them
   * as one pack in `objects/pack` instead of as loose objects (default: git config
   * `scalpel.packThreshold`, else 16; Infinity: always loose). git's own `gc` folds such packs
   * together, as it does fetched ones.
   */
  packThreshold?: number;
  /**
   * HOME and XDG_CONFIG_HOME, where git's global config, ignore and attributes files are (a
   * shell command's capture follows the person's core.excludesFile; a capture reads a file an
   * eol conversion or filter may make differ from its index blob): the library reads no
   * environment itself.
   */
  env?: { HOME?: string; XDG_CONFIG_HOME?: string };
  /**
   * The watched-worktree views of a long-lived process (the warm server's; git-scalpel/node's
   * `watchWorktrees()`): a shell command's baseline, and the walk after it, ask the worktree's view
   * instead of walking the disk (the same results, costing what changed since the last walk). The
   * caller owns it: it outlives the repository objects opened with it, and closing it is theirs.
   */
  views?: WorktreeViews;
}

export interface SnapshotOptions {
  session?: string;
  label?: string;
  /** Extend this snapshot instead of pushing a new one: paths it already holds keep their first capture. */
  into?: string;
  /** Directory relative paths are resolved from (default: the worktree root). */
  cwd?: string;
  /**
   * Capture into the session's open turn (its newest snapshot, when that is a turn the agent has
   * not ended: the first capture of a path in a turn wins), or open a turn for it (labelled
   * `label`, or as a tool call outside a prompt). `paths` may then be empty.
   */
  turn?: boolean;
  /**
   * With `turn`: the tool call (its key) this capture is for. The capture is provisional until
   * the call finishes (`callFinished`): a call that never finishes (the person denied it) changed
   * nothing, and its capture goes when the turn ends. Without it, the capture joins at once.
   */
  call?: string;
}

/** The label of a turn a tool call opens when no prompt opened one. */
export const OUTSIDE_PROMPT = '(tool call outside a prompt)';

export interface SnapshotInfo {
  id: string;
  session: string;
  label: string | null;
  createdAt: string;
  /** The scope roots, worktree-relative ('' is the whole worktree). */
  paths: string[];
  sealed: boolean;
  /** Worktree items, index entries and bytes captured. */
  items: number;
  entries: number;
  bytes: number;
  commit: string;
  /**
   * Problems the operation read past without stopping (an optional index cache git would discard
   * too, a log record that could not be written, a turn that could not be sealed); only when
   * there are some.
   */
  warnings?: string[];
  /** Declared paths that did not exist when captured (no file, no index entry): a restore removes whatever is made there. Only when there are some. */
  absent?: string[];
}

export interface RestoreOptions {
  session?: string;
  id?: string;
  dryRun?: boolean;
  force?: boolean;
  /**
   * Check the trailing hash of the index before rewriting it, and refuse (CHECKSUM_MISMATCH) when
   * it is wrong. Default false: git itself checks it only in `git fsck` (read-cache.c's
   * verify_index_checksum), and the check is a second SHA-1 pass over the whole index.
   */
  verifyIndex?: boolean;
}

export interface RestoreReport {
  session: string;
  /** The snapshots undone, newest first. */
  restored: string[];
  dryRun: boolean;
  /** With force: the snapshot holding what was there before, now on top of the stack. */
  savedAs: string | null;
  paths: PathPlan[];
  /** Empty directories the edit created to hold a declared path (each also in `paths`, action 'prune'): deepest first. */
  pruned: string[];
  conflicts: Conflict[];
  indexWritten: boolean;
  /**
   * Problems read past: an optional index cache (TREE, UNTR, FSMN, EOIE, IEOT) that does not
   * decode, left out as git leaves it out; HEAD's history that could not all be walked; a log
   * record that could not be written.
   */
  warnings: string[];
  /** What shell commands of the restored turns removed or changed that no snapshot holds (ignored directories and files in them, oversized ignored files, another repository's checkout): not brought back. */
  uncovered: string[];
  /** What shell commands of the restored turns created or changed inside ignored directories that existed before them (never captured): left in place. */
  left: string[];
  /**
   * How HEAD moved since the (oldest restored) snapshot: the edit committed, switched branches,
   * reset. Null when it did not move, or the snapshot predates the record. The restore never
   * moves HEAD or a branch; it refuses (REFUSED, writing nothing) when a commit made since was
   * pushed.
   */
  head: HeadMovement | null;
  /**
   * A rewind of part of a turn: the paths taken back (worktree-relative). The turns stay on
   * their stack with the rest of their paths, rewindable later.
   */
  picked?: string[];
}

/** One tool call of a turn, as the hooks logged its start and its end. */
export interface ToolCall {
  /** When the harness was about to run it (or, when its start was not logged, when it ended). */
  at: string;
  tool: string;
  /**
   * How it ended, as the harness reported it: 'ok', 'failed' (`exitCode` when the harness says),
   * 'unknown' (the harness says it ran, not how: Codex's shell commands), 'denied' (refused before
   * it ran); 'running' (no end yet, the turn goes on) or 'never-finished' (the turn ended without
   * it: denied at a prompt, or it never ran); 'blocked' (git-scalpel could not capture its paths
   * and stopped it: it never ran) or 'unprotected' (the same, let run by `--fail-open`).
   */
  outcome: 'ok' | 'failed' | 'unknown' | 'denied' | 'running' | 'never-finished' | 'blocked' | 'unprotected';
  /** What a file tool was about to write, or what a shell command changed. */
  paths: string[];
  /**
   * What a shell command removed, changed or made inside ignored directories that existed before
   * it (never captured: a rewind names these and cannot bring them back).
   */
  notCaptured?: string[];
  command?: string;
  exitCode?: number;
  durationMs?: number;
  /** The call's key: the harness's tool-use id, or one git-scalpel made for a harness without ids. */
  call?: string;
  toolUseId?: string;
  /**
   * How its hook events were answered, in order, each once: 'server' (the warm server) or
   * 'process' (a `git-scalpel hook` process); absent when the log does not say (older records,
   * a library caller).
   */
  via?: Array<'server' | 'process'>;
}

/** A turn as `turns` lists it. */
export interface TurnInfo extends SnapshotInfo {
  /** Its number in the session (what `rewind N` takes). */
  turn: number;
  /** The agent said it stopped (a turn not ended takes in the paths of the next tool calls). */
  ended: boolean;
  tools: ToolCall[];
  /** What its shell commands removed or changed that no snapshot holds (ignored directories, another repository's checkout): a rewind cannot bring it back. */
  uncovered: string[];
  /** What its shell commands made or changed inside ignored directories that were there before: a rewind leaves it. */
  left: string[];
  /** Paths a rewind of part of the turn took back (`rewind TURN -- PATH`): no longer the turn's. */
  taken: string[];
  /** What rewinding to this turn would do now: refused (and why), how many paths it changes, how many directories it removes, whether HEAD moved. */
  rewind: { refused: boolean; reasons: string[]; changes: number; pruned: number; headMoved: boolean };
}

export interface ApplyOptions {
  session?: string;
  label?: string;
  /** 'worktree' (default, as `git apply`), 'index' (`git apply --index`), 'cached' (`git apply --cached`). */
  to?: ApplyTo;
  /** The same as `to: 'index'` (`git apply --index`). */
  index?: boolean;
  /** The same as `to: 'cached'` (`git apply --cached`). */
  cached?: boolean;
  /** Run after the patch is written; a non-zero code rolls it back (the library runs no process: the caller does). */
  check?: () => Promise<{ code: number; output: string }>;
  /** A failed check leaves the patch in place (to fix forward); the snapshot stays on the stack. */
  keepOnFailure?: boolean;
  /** Say what would be written, write nothing. */
  dryRun?: boolean;
}

export interface ApplyReport {
  session: string;
  /** The snapshot holding what the patch replaced (restore undoes the patch); null for a dry run. */
  snapshot: string | null;
  dryRun: boolean;
  files: Array<{ path: string; from: string | null; deleted: boolean; mode: string | null }>;
  check: { code: number; output: string } | null;
  /** The check failed and the patch was rolled back (the snapshot popped). */
  rolledBack: boolean;
  /** Problems read past (an optional index cache git would discard too, a log record that could not be written); only when there are some. */
  warnings?: string[];
}

export interface DiffOptions {
  /** The session (default: the one of the worktree's newest turn that changed anything). */
  session?: string;
  /** The turn: its number in the session, or a snapshot id (default: the newest that changed anything). */
  turn?: string;
  /** Only these paths (relative to `cwd`, default the worktree). */
  paths?: readonly string[];
  cwd?: string;
  /** The index entries instead of the worktree (`git diff --cached`). */
  cached?: boolean;
  /** Unchanged lines around each change (default 3). */
  context?: number;
}

/** One file of a turn's diff. */
export interface FileDiff {
  /** The path now (a rename's new path; a deleted file's path). */
  path: string;
  /** A rename's source, when git would pair the two. */
  oldPath?: string;
  status: 'added' | 'deleted' | 'modified' | 'renamed';
  /** Before the turn: git's mode (octal text) and blob id; null when absent. */
  old: { mode: string; oid: string } | null;
  /** Now; null when absent. */
  new: { mode: string; oid: string } | null;
  /** Git would print "Binary files ... differ" (a NUL in the first 8000 bytes of either side). */
  binary: boolean;
  /** A rename's similarity, in percent. */
  similarity?: number;
  /** Lines added and deleted (0 for a binary file). */
  added: number;
  deleted: number;
  /** A binary file's sizes in bytes. */
  oldSize?: number;
  newSize?: number;
  /** Git's hunks (none for a binary file, or one that only changed its mode). */
  hunks: Hunk[];
}

/** What a turn changed, from its pre-image to now. */
export interface TurnDiff {
  session: string;
  /** The turn's snapshot id, its number and label. */
  id: string;
  turn: number | null;
  label: string | null;
  cached: boolean;
  files: FileDiff[];
  /** With `cached`: the paths whose index entries are conflicted now (git's "Unmerged path"). */
  unmerged: string[];
  /** Problems read past (an optional index cache git would discard too). */
  warnings: string[];
}

export interface RewindOptions {
  /** The session (default: the one of the worktree's newest turn that changed anything, or holding one of `paths`). */
  session?: string;
  /** The turn: its number in the session, or a snapshot id (default: the newest that changed anything, or holding one of `paths`). */
  turn?: string;
  /** Only these paths of the turn and of every later one (relative to `cwd`, default the worktree); the turns keep the rest. */
  paths?: readonly string[];
  cwd?: string;
  dryRun?: boolean;
  force?: boolean;
  verifyIndex?: boolean;
}
