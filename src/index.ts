/**
 * git-scalpel — the root entry, for every runtime. Nothing reachable from here imports a Node
 * built-in. In Node (and Bun, Deno, a WebContainer's Node) the package's `node` export condition
 * loads src/entry/root-node.ts instead: the same API with node:crypto and node:zlib as the
 * default platform. Here the default is the web platform: WebCrypto and DecompressionStream for
 * whole buffers where the runtime has them, pure JS (@noble/hashes, pako) for everything else.
 * Every function also takes an explicit `platform` (or `hash` / `zlib`); none sets module state.
 * Plumbing the tests and tools use lives behind `git-scalpel/internal`.
 */
import {
  openRepositoryWith,
  handleHookEventWith,
  decodeIndexWith,
  encodeIndexWith,
  readIndexFileWith,
  hashBytesWith,
  objectIdWith,
  encodeLooseObjectWith,
  decodeLooseObjectWith,
  readLooseHeaderWith,
  encodePackWith,
  encodePackIndexWith,
  verifyPackIndexWith,
  verifyPackChecksumWith,
  parseCommitGraphLayerWith,
} from './entry/bind.js';
import { webPlatform } from './platform/web.js';

export { ScalpelError, isScalpelError, type ErrorCode } from './errors/index.js';
export { toHex, fromHex, decodePath, encodePath, compareBytes } from './bytes/index.js';
export { pureHash, oidLength, type HashProvider, type HashState, type ObjectFormat } from './hash/index.js';
export { crc32 } from './hash/crc32.js';

// the platform
export type { Platform, ProcessInfo } from './platform/types.js';
export { purePlatform } from './platform/pure.js';
export { webPlatform } from './platform/web.js';
export { digestWhole, inflateWhole } from './platform/whole.js';
export type { OpenOptions, HookOptions, WithPlatform } from './entry/bind.js';

// the index codec
export { checkEntryOrder } from './index/verify.js';
export { forEachEntry, entryCount, type GitIndex, type DecodeOptions } from './index/decode.js';
export type { EncodeOptions } from './index/encode.js';
export { IndexEntry, compareEntries, compareEntryPaths, type IndexEntryInit } from './index/entry.js';
export { mergeSplitIndex } from './index/split.js';
export type * from './index/types.js';

// objects: loose, trees, commits, packs
export {
  type ZlibProvider,
  type InflateStream,
  type ZlibFailure,
  pakoZlib,
  pakoClassicZlib,
  LOOSE_COMPRESSION_DEFAULT,
} from './object/zlib.js';
export {
  type ObjectType,
  type FrameHeader,
  type Framed,
  type EncodeLooseOptions,
  type DecodeLooseOptions,
  OBJECT_TYPES,
  MAX_HEADER_LENGTH,
  isObjectType,
  frameHeader,
  frameObject,
  parseFrameHeader,
  parseFramed,
  looseObjectPath,
} from './object/loose.js';
export {
  type TreeEntry,
  MODE_TREE,
  MODE_FILE,
  MODE_EXECUTABLE,
  MODE_SYMLINK,
  MODE_GITLINK,
  isTreeMode,
  entryObjectType,
  compareTreeEntries,
  decodeTree,
  encodeTree,
} from './object/tree.js';
export {
  type Commit,
  type CommitInit,
  type Text,
  type RawHeader,
  type Identity,
  decodeCommit,
  encodeCommit,
  splitHeaders,
  formatIdentity,
  formatTimezone,
  parseIdentity,
  commitLinks,
} from './object/commit.js';
export { type CommitGraphLayer, type CommitGraphLayerOptions, CommitGraph } from './object/commit-graph.js';
export {
  type PackIndex,
  type PackSource,
  type PackHeader,
  type PackedObject,
  parsePackIndex,
  parsePackHeader,
  bufferPackSource,
  readPackedObject,
  readPackedObjectSync,
} from './object/pack.js';
export {
  type PackIndexEntry,
  type PackObjectInput,
  type EncodePackOptions,
  type EncodedPack,
  packEntryHeader,
} from './object/pack-write.js';

// repositories, snapshots, restores
export type { Fs, FsInput, NodeStyleFs, PromiseFsApi, FileStat, FileType, FsCapabilities } from './fs/types.js';
export type { WorktreeView, WorktreeViews, ViewReader, ViewStatus, ViewLostReason } from './fs/view.js';
export { opfsFs, type OpfsOptions, type OpfsDirectoryHandle, type OpfsLocks } from './fs/opfs.js';
export { discoverRepository, type RepoLocation } from './repo/discover.js';
export { describeDropped, type ReadIndexResult, type DroppedIndexExtension } from './repo/index-file.js';
export type { HeadState, HeadMovement, HeadMovementOptions, PushedCommits } from './repo/history.js';
export {
  ScalpelRepository,
  type SnapshotOptions,
  type SnapshotInfo,
  type RestoreOptions,
  type RestoreReport,
  type LogRecord,
  type TurnInfo,
  type DiffOptions,
  type FileDiff,
  type RewindOptions,
  type TurnDiff,
} from './snapshot/engine.js';
export {
  diffLines,
  hunks as diffHunks,
  formatUnified,
  isBinary,
  countChanges,
  formatStat,
  formatNumstat,
  similarity,
  similarityIndex,
  findRenames,
  type Hunk,
  type HunkLine,
  type HunkOptions,
  type LineChange,
  type FileCounts,
  type StatFile,
  type RenameCandidate,
  type RenamePair,
} from './diff/index.js';
export type { PathPlan, Conflict } from './snapshot/restore.js';
export type { ToolCall } from './snapshot/turns.js';
export type { Manifest, PathState, WorktreeItem, IndexRecord, ReucRecord } from './model/state.js';

// agent harnesses
export type { HookOutcome } from './hooks/handle.js';
export {
  parseHookPayload,
  hookResponse,
  applyPatchPaths,
  HARNESSES,
  type Harness,
  type HookEvent,
  type HookResult,
  type HookAnswer,
} from './hooks/harness.js';

/** Open the repository containing `opts.dir` for snapshots and restores (`opts.fs`: node:fs, memfs, lightning-fs, …). */
export const openRepository = /* @__PURE__ */ openRepositoryWith(webPlatform);
/** Handle one event of an agent harness's hook (a prompt opens a turn, a write is captured before it happens, a stop seals the turn); never throws for what the event or the repository holds. */
export const handleHookEvent = /* @__PURE__ */ handleHookEventWith(webPlatform);
/** Decode an index file (`opts.hash` or `opts.platform` checks the trailer; strict unless `lenient`). */
export const decodeIndex = /* @__PURE__ */ decodeIndexWith(webPlatform);
/** Encode an index the way git's `do_write_index` does: `encodeIndex(decodeIndex(b))` is `b`. */
export const encodeIndex = /* @__PURE__ */ encodeIndexWith(webPlatform);
/** Read `<gitDir>/index` (merged with its shared index when split); null when there is none. */
export const readIndexFile = /* @__PURE__ */ readIndexFileWith(webPlatform);
/** The SHA-1 or SHA-256 of `data`. */
export const hashBytes = /* @__PURE__ */ hashBytesWith(webPlatform);
/** The id `content` has as an object of `type`. */
export const objectId = /* @__PURE__ */ objectIdWith(webPlatform);
/** The bytes of a loose object file (zlib at `opts.level`, default git's 1). */
export const encodeLooseObject = /* @__PURE__ */ encodeLooseObjectWith(webPlatform);
/** A loose object file's type and content (checked against `opts.expectOid` when given). */
export const decodeLooseObject = /* @__PURE__ */ decodeLooseObjectWith(webPlatform);
/** A loose object file's type and size, inflating no more than its header. */
export const readLooseHeader = /* @__PURE__ */ readLooseHeaderWith(webPlatform);
/** A pack of `objects` and its checksum. */
export const encodePack = /* @__PURE__ */ encodePackWith(webPlatform);
/** The .idx (version 2) of a pack. */
export const encodePackIndex = /* @__PURE__ */ encodePackIndexWith(webPlatform);
/** Checks a parsed .idx's own checksum. */
export const verifyPackIndex = /* @__PURE__ */ verifyPackIndexWith(webPlatform);
/** Checks a pack's trailing checksum (and that `opts.index` belongs to it); returns it as hex. */
export const verifyPackChecksum = /* @__PURE__ */ verifyPackChecksumWith(webPlatform);
/** One commit-graph file (a layer of a chain), checked against its trailer unless `opts.verify` is false. */
export const parseCommitGraphLayer = /* @__PURE__ */ parseCommitGraphLayerWith(webPlatform);
