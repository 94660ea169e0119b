export { decodeIndex, forEachEntry, entryCount, DecodedIndex, type GitIndex, type DecodeOptions } from './decode.js';
export { encodeIndex, type EncodeOptions } from './encode.js';
export { IndexEntry, compareEntries, compareEntryPaths, type IndexEntryInit } from './entry.js';
export { mergeSplitIndex, linkExtension } from './split.js';
export {
  quotePath,
  formatStageLine,
  formatStageDebug,
  debugFlags,
  inMemoryFlags,
  CE_UPDATE_IN_BASE,
  CE_FSMONITOR_VALID,
} from './format.js';
export { decodeEwah, encodeEwah, ewahFromBits } from './ewah.js';
export { checkEntryOrder } from './verify.js';
export type * from './types.js';
