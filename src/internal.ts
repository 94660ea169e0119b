/**
 * git-scalpel/internal — plumbing for this package's own tools, tests and benchmarks (as
 * isomorphic-git's `internal-apis`): no stability promise across minor versions. The root entry
 * (`git-scalpel`) is the public API.
 */
export { Repository, resolvePlatform, type RepositoryOptions, type IndexReadOptions } from './repo/repository.js';
export { GitConfig } from './repo/config.js';
export { readRepoConfig, objectFormatOf } from './repo/discover.js';
export { readHead, headMovement, loadCommitGraph, type HistoryRepo } from './repo/history.js';
export { openWithPlatform, bindPlatform, type BoundApi } from './entry/bind.js';
export { DIGEST_ASYNC_MIN, INFLATE_ASYNC_MIN } from './platform/whole.js';
export type { ZlibProvider, InflateStream } from './platform/types.js';
// `git ls-files --stage --debug` formatting and the in-memory flags it prints
export {
  quotePath,
  formatStageLine,
  formatStageDebug,
  debugFlags,
  inMemoryFlags,
  CE_UPDATE_IN_BASE,
  CE_FSMONITOR_VALID,
} from './index/format.js';
export { linkExtension } from './index/split.js';
export { decodeEwah, encodeEwah, ewahFromBits } from './index/ewah.js';
export { checkObjectFormat, defaultHash } from './hash/index.js';
export { defaultZlib, checkLevel, zlibError } from './object/zlib.js';
