/**
 * git-scalpel — root entry. Works in Node and in browsers: nothing reachable from here imports a
 * Node built-in. Hashing and zlib default to pure JS; `git-scalpel/node` installs node:crypto
 * and node:zlib and adds the node:fs adapter.
 */
export { ScalpelError, isScalpelError, type ErrorCode } from './errors/index.js';
export { toHex, fromHex, decodePath, encodePath, compareBytes } from './bytes/index.js';
export {
  pureHash,
  defaultHash,
  setDefaultHash,
  hashBytes,
  oidLength,
  type HashProvider,
  type HashState,
  type ObjectFormat,
} from './hash/index.js';
export { crc32 } from './hash/crc32.js';
export * from './index/index.js';
export * from './object/index.js';
export type { Fs, FileStat, FileType, FsCapabilities } from './fs/types.js';
export { GitConfig } from './repo/config.js';
export { discoverRepository, readRepoConfig, objectFormatOf, type RepoLocation } from './repo/discover.js';
export { readHead, headMovement, type HeadState, type HeadMovement, type HeadMovementOptions, type PushedCommits } from './repo/history.js';
export { readIndexFile, describeDropped, type ReadIndexResult, type DroppedIndexExtension } from './repo/index-file.js';
export {
  openRepository,
  ScalpelRepository,
  type OpenOptions,
  type SnapshotOptions,
  type SnapshotInfo,
  type RestoreOptions,
  type RestoreReport,
  type LogRecord,
} from './snapshot/engine.js';
export type { PathPlan, Conflict } from './snapshot/restore.js';
export type { TurnInfo } from './snapshot/engine.js';
export type { ToolCall } from './snapshot/turns.js';
export { handleHookEvent, type HookOptions, type HookOutcome } from './hooks/handle.js';
export { parseHookPayload, hookResponse, applyPatchPaths, HARNESSES, type Harness, type HookEvent, type HookResult, type HookAnswer } from './hooks/harness.js';
export type { Manifest, PathState, WorktreeItem, IndexRecord, ReucRecord } from './model/state.js';
export { Repository } from './repo/repository.js';
