/**
 * The conformance corpus's JSON shapes (conformance/schema/*.json say the same for other
 * languages) and the adapter interface an implementation plugs into the runner with.
 *
 * Byte strings (paths, object ids, tree names, tokens, raw payloads) are lowercase hex.
 */
import type { IndexStat } from '../index/types.js';

/** What a strict reader must report for a damaged file (conformance/README.md, "Error classes"). */
export type ErrorClass =
  'truncated' | 'signature' | 'version' | 'checksum' | 'entry' | 'order' | 'extension' | 'unknown-extension' | 'split';

export const ERROR_CLASSES: readonly ErrorClass[] = [
  'truncated',
  'signature',
  'version',
  'checksum',
  'entry',
  'order',
  'extension',
  'unknown-extension',
  'split',
];

export type ObjectFormatName = 'sha1' | 'sha256';

/** An entry's stat fields, as the index stores them (the same shape as the codec's IndexStat). */
export type AnswerStat = IndexStat;

export interface AnswerEntry {
  /** Path bytes, hex. */
  path: string;
  /** st_mode as git stores it (0o100644 = 33188). */
  mode: number;
  /** Object id, hex (40 or 64 digits). */
  oid: string;
  stage: number;
  flags: { assumeValid: boolean; extended: boolean; skipWorktree: boolean; intentToAdd: boolean };
  stat: AnswerStat;
}

/**
 * One extension: `signature` plus its fields (conformance/README.md lists them per signature).
 * `offset` (of its header in the file) and `size` (of its payload) are informative: the runner
 * does not compare them.
 */
export interface AnswerExtension {
  signature: string;
  offset?: number;
  size?: number;
  [field: string]: unknown;
}

export interface AnswerIndex {
  version: number;
  /** The header's entry count (entries in this file; fewer than `entries` for a split index). */
  entryCount: number;
  skipHash: boolean;
  /** The trailer, hex; null when it is all zeros (index.skipHash). */
  checksum: string | null;
  /** The entries as git reads them: for a split index, merged with its shared index. */
  entries: AnswerEntry[];
  /** Split index only: the entries stored in this file, replaced ones with an empty path. */
  fileEntries?: AnswerEntry[];
  /** The file's extensions in file order. */
  extensions: AnswerExtension[];
}

export interface GitVerdict {
  /** Process exit status; negative: killed by that signal (git 2.39 crashes on two damaged cases). */
  exitCode: number;
  stderr: string;
  /** `git ls-files -s --debug` output (paths quoted as core.quotePath=true prints them). */
  stageDebug?: string;
}

export interface CaseAnswers {
  name: string;
  /** written: bytes git wrote; derived: a valid file made from a written one; damaged: made to be refused; foreign: another project's fixture, byte for byte. */
  kind: 'written' | 'derived' | 'damaged' | 'foreign';
  description: string;
  objectFormat: ObjectFormatName;
  files: { index: string; sharedIndex?: string };
  result: 'index' | 'error';
  index?: AnswerIndex;
  error?: { class: ErrorClass; detail: string };
  /** Whether decoding then encoding must give the file's bytes back. */
  roundTrip?: { required: boolean; reason?: string };
  git: {
    version: string;
    lsFiles: GitVerdict;
    resolveUndo?: string | null;
    sparseStageDebug?: string;
    /** Absent for foreign cases (their objects are not in the corpus). */
    fsck?: GitVerdict;
  };
  provenance: Record<string, unknown>;
}

export interface ManifestCase {
  name: string;
  kind: CaseAnswers['kind'];
  description: string;
  objectFormat: ObjectFormatName;
  files: CaseAnswers['files'];
  gitVersion: string;
  /** Cases that read: the index version and what the case exercises. */
  version?: number;
  features?: string[];
  /** Damaged (and refused foreign) cases: the class a reader must report. */
  class?: ErrorClass;
  /** Derived and damaged cases: the case they were made from. */
  source?: string;
  /** What a reader must support to be asked about a derived or damaged case. */
  requires?: { version?: number; objectFormat: ObjectFormatName };
  git?: { lsFilesExit: number; fsckExit: number };
}

export interface Manifest {
  corpus: string;
  formatVersion: number;
  generatedBy: string;
  gitVersion: string;
  pathEncoding: 'hex';
  classes: Record<ErrorClass, string>;
  counts: Record<string, number>;
  cases: ManifestCase[];
}

// ------------------------------------------------------------------ adapters

/** What an adapter is given for one case. */
export interface AdapterInput {
  /** The case's name (for messages). */
  name: string;
  /** The index file's bytes. */
  bytes: Uint8Array;
  /** Index files do not say which hash their repository uses: the case does. */
  objectFormat: ObjectFormatName;
  /** A split index's shared index (sharedindex.<id>), when the case has one. */
  sharedIndex?: Uint8Array;
}

/** An index as the adapter read it, in the answers' shape. */
export interface AdapterIndex {
  version: number;
  entries: AnswerEntry[];
  /** Split index: the file's own entries (compared when given). */
  fileEntries?: AnswerEntry[];
  /** The file's extensions in file order; those whose signature the adapter does not list in `capabilities.extensions` are not compared. */
  extensions?: AnswerExtension[];
}

export type DecodeOutcome =
  | { index: AdapterIndex }
  /** The reader refused the file. `class`: one of ERROR_CLASSES (without it the case fails). */
  | { error: { class?: ErrorClass; message: string } }
  /** The reader does not handle this file at all (the case is reported as not supported). */
  | { unsupported: string };

export type EncodeOutcome = { bytes: Uint8Array } | { unsupported: string };

export interface AdapterCapabilities {
  /** Index versions the reader handles; a case of another version is not supported. */
  versions: readonly number[];
  objectFormats: readonly ObjectFormatName[];
  /** Extension signatures the reader parses into fields ('all': every one the corpus has). */
  extensions: readonly string[] | 'all';
  /** Whether the adapter can write an index back (`encode`). */
  encode: boolean;
}

/**
 * An implementation under test. `decode` reads a case strictly (trailer checked, entry order
 * checked as git fsck does); `encode` decodes the case and writes it back. A thrown error counts as
 * a refusal of class `classify(error)` (or the error's own `conformanceClass` property).
 */
export interface ConformanceAdapter {
  name: string;
  description?: string;
  capabilities: AdapterCapabilities;
  decode(input: AdapterInput): DecodeOutcome | Promise<DecodeOutcome>;
  encode?(input: AdapterInput): EncodeOutcome | Promise<EncodeOutcome>;
  classify?(error: unknown): ErrorClass | undefined;
}

// ------------------------------------------------------------------- results

export type CaseStatus = 'pass' | 'fail' | 'unsupported';
export type AspectStatus = CaseStatus | 'n/a';

export interface CaseResult {
  name: string;
  kind: CaseAnswers['kind'];
  status: CaseStatus;
  /** Per part of the check: the refusal (damaged cases), entries, extensions, re-encoding. */
  aspects: { error: AspectStatus; entries: AspectStatus; extensions: AspectStatus; roundTrip: AspectStatus };
  /** fail: the first difference; unsupported: what is not supported. */
  reason?: string;
  /** Things worth knowing that do not fail the case (an allowed re-encoding difference). */
  notes?: string[];
}

export interface ConformanceReport {
  adapter: { name: string; description?: string; capabilities: AdapterCapabilities };
  corpus: { gitVersion: string; cases: number };
  summary: { pass: number; fail: number; unsupported: number };
  cases: CaseResult[];
}
