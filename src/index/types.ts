import type { ObjectFormat } from '../hash/index.js';
import type { ErrorCode } from '../errors/index.js';

/** Stat data cached in an index entry (all unsigned 32-bit, as git stores them). */
export interface IndexStat {
  ctimeSeconds: number;
  ctimeNanoseconds: number;
  mtimeSeconds: number;
  mtimeNanoseconds: number;
  dev: number;
  ino: number;
  uid: number;
  gid: number;
  size: number;
}

export interface EntryFlags {
  /** 0x8000 in the flags word ("assume unchanged"). */
  assumeValid: boolean;
  /** v3+: 0x4000 of the extended word. */
  skipWorktree: boolean;
  /** v3+: 0x2000 of the extended word (`git add -N`). */
  intentToAdd: boolean;
}

export type Stage = 0 | 1 | 2 | 3;

/**
 * EWAH-compressed bitmap as git serialises it (ewah/ewah_io.c): bit count, 64-bit words,
 * position of the last run-length word. `bits` lists the set positions in increasing order.
 */
export interface EwahBitmap {
  /** Number of bits the bitmap covers (`bit_size`). */
  bitSize: number;
  /** Set bit positions, ascending. */
  bits: number[];
  /**
   * The serialised bytes as read, kept so an untouched bitmap re-encodes to exactly the same
   * bytes even if another writer compressed it differently. `encodeEwah` writes it only after
   * checking it still decodes to `bitSize`/`bits`, so an edit that forgets to clear it is safe.
   */
  raw?: Uint8Array;
}

/** One node of the cache tree (TREE), in the pre-order git stores them. */
export interface CacheTreeNode {
  /** Path component (bytes); empty for the root. */
  name: Uint8Array;
  /** Number of index entries this tree covers; -1 when invalid. */
  entryCount: number;
  /** Number of subtrees that follow (pre-order). */
  subtreeCount: number;
  /** Tree object id as hex; absent when entryCount is -1. */
  oid?: string;
}

export interface ResolveUndoRecord {
  path: Uint8Array;
  /** Modes of stages 1, 2, 3; 0 means the stage was absent. */
  modes: [number, number, number];
  /** Object ids (hex) of stages 1..3; undefined where the mode is 0. */
  oids: [string | undefined, string | undefined, string | undefined];
}

/** Stat data as the untracked cache stores it: the same fields as an entry's. */
export type StatData = IndexStat;

/**
 * A directory block of the untracked cache (UNTR), in the depth-first pre-order git writes them
 * (`write_one_dir` in dir.c). Block n is bit n of the three EWAH bitmaps.
 */
export interface UntrackedDir {
  /** Directory name component (bytes, no '/'); empty for the root. */
  name: Uint8Array;
  /** Untracked names directly in this directory (dirs end with '/'), in stored order. */
  untracked: Uint8Array[];
  /** Number of child directory blocks that follow in pre-order (only the ones git recursed into). */
  dirCount: number;
  /**
   * Bit in the "valid" bitmap. When set, `stat` must be present and is written; when clear, `stat`
   * is ignored by the encoder (git keeps stale stat data in memory the same way).
   * Invalidating a directory like git (`invalidate_one_directory` + `write_one_dir`) means:
   * valid = false, untracked = [], checkOnly = false.
   */
  valid: boolean;
  /** Bit in the "check_only" bitmap. */
  checkOnly: boolean;
  /** Stat data of the directory; present when `valid`. */
  stat?: StatData;
  /** exclude_oid (hex) of the directory's per-dir exclude file: present iff its sha_valid bit is set. */
  excludeOid?: string;
}

export interface UntrackedCache {
  /** The identity string (`untracked_cache_ident`: location + kernel name, NUL-terminated), raw bytes. */
  ident: Uint8Array;
  infoExcludeStat: StatData;
  excludesFileStat: StatData;
  /** oid (hex) of $GIT_DIR/info/exclude and core.excludesFile content (all zeros: file absent). */
  infoExcludeOid: string;
  excludesFileOid: string;
  dirFlags: number;
  /** e.g. ".gitignore" */
  excludePerDir: Uint8Array;
  /** Pre-order directory tree; empty when there is no root. */
  dirs: UntrackedDir[];
  /**
   * Only when `dirs` is empty: git writes a rootless cache as exclude_per_dir, NUL, then the varint 0
   * which doubles as the final NUL ('short', the default). git's reader also accepts the varint 0
   * followed by a separate final NUL ('explicit'); kept so such a payload re-encodes byte-identically.
   */
  rootlessForm?: 'short' | 'explicit';
  /**
   * The three bitmaps exactly as read (valid, check_only, sha_valid). The encoder reuses one only
   * while its bits still equal what `dirs` says (so a foreign writer's bit_size or compression
   * survives a round trip); otherwise it rebuilds the bitmap the way git does (`ewah_set` in order).
   */
  storedBitmaps?: { valid: EwahBitmap; checkOnly: EwahBitmap; shaValid: EwahBitmap };
}

export type IndexExtension =
  | { signature: 'TREE'; nodes: CacheTreeNode[] }
  | { signature: 'REUC'; records: ResolveUndoRecord[] }
  | { signature: 'UNTR'; cache: UntrackedCache }
  /**
   * fsmonitor. The bitmap marks entries that are NOT CE_FSMONITOR_VALID (positions in the full,
   * merged index). `trailing`: bytes after the bitmap inside the payload, which git's reader ignores;
   * kept for a byte-identical round trip (git itself never writes any).
   */
  | { signature: 'FSMN'; version: 1; sinceNanoseconds: bigint; bitmap: EwahBitmap; trailing?: Uint8Array }
  | { signature: 'FSMN'; version: 2; token: Uint8Array; bitmap: EwahBitmap; trailing?: Uint8Array }
  | { signature: 'EOIE'; offset: number; hash: string }
  | { signature: 'IEOT'; version: number; blocks: { offset: number; count: number }[] }
  | { signature: 'link'; baseOid: string; deleteBitmap?: EwahBitmap; replaceBitmap?: EwahBitmap }
  | { signature: 'sdir' }
  | { signature: string; raw: Uint8Array };

/**
 * An optional cache extension a lenient decode left out because its payload does not decode, or
 * (FSMN) its bitmap covers more entries than the index has. git discards such a TREE, UNTR, FSMN,
 * EOIE or IEOT and carries on (see DecodeOptions.lenient).
 */
export interface DroppedExtension {
  signature: string;
  /** Byte offset of the extension's header (its signature) in the index file. */
  offset: number;
  /** The ScalpelError code decoding the payload gave (BAD_EXTENSION, BAD_EWAH, TRUNCATED, ...). */
  code: ErrorCode;
  /** That error's message. */
  reason: string;
}

export interface IndexOptions {
  objectFormat?: ObjectFormat;
}

export type { ObjectFormat };
