/**
 * Line diffs that match `git diff` byte for byte: the edit script, hunks with git's context and
 * function-name headers, the unified text, binary detection, `--stat` / `--numstat` counts and
 * lines, and the similarity scores rename detection (`-M`) uses. Pure: bytes in, plain objects out.
 */
export { diffLines, type DiffOptions, type LineChange } from './lines.js';
export { hunks, type Hunk, type HunkLine, type HunkOptions } from './hunks.js';
export { formatUnified } from './unified.js';
export { isBinary } from './binary.js';
export {
  countChanges,
  formatNumstat,
  formatStat,
  statName,
  statSummary,
  type FileCounts,
  type StatFile,
  type StatOptions,
} from './stat.js';
export { DEFAULT_RENAME_SCORE, MAX_SCORE, similarity, similarityIndex, type SimilarityOptions } from './similarity.js';
export { findRenames, type RenameCandidate, type RenameOptions, type RenamePair } from './renames.js';
