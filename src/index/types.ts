import type { ObjectFormat } from '../hash/index.js';

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
   * bytes even if another writer compressed it differently. Cleared (undefined) on any edit.
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

export interface StatData {
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

/** A directory node of the untracked cache (UNTR), pre-order. */
export interface UntrackedDir {
  name: Uint8Array;
  /** Untracked names directly in this directory (dirs end with '/'). */
  untracked: Uint8Array[];
  /** Number of child directories that follow in pre-order. */
  dirCount: number;
  /** Set by the valid bitmap; stat data below is present only when valid. */
  valid: boolean;
  checkOnly: boolean;
  /** stat data, present when valid */
  stat?: StatData;
  /** exclude_oid (hex) of the directory's .gitignore, present when its bit is set in sha_valid. */
  excludeOid?: string;
}

export interface UntrackedCache {
  /** The identity string (`untracked_cache_ident`: location + kernel name), raw bytes. */
  ident: Uint8Array;
  infoExcludeStat: StatData;
  excludesFileStat: StatData;
  /** oid (hex) of $GIT_DIR/info/exclude and core.excludesFile content. */
  infoExcludeOid: string;
  excludesFileOid: string;
  dirFlags: number;
  /** e.g. ".gitignore" */
  excludePerDir: Uint8Array;
  /** Pre-order directory tree; empty when there is no root. */
  dirs: UntrackedDir[];
}

export type IndexExtension =
  | { signature: 'TREE'; nodes: CacheTreeNode[] }
  | { signature: 'REUC'; records: ResolveUndoRecord[] }
  | { signature: 'UNTR'; cache: UntrackedCache }
  | { signature: 'FSMN'; version: 1; sinceNanoseconds: bigint; bitmap: EwahBitmap }
  | { signature: 'FSMN'; version: 2; token: Uint8Array; bitmap: EwahBitmap }
  | { signature: 'EOIE'; offset: number; hash: string }
  | { signature: 'IEOT'; version: number; blocks: { offset: number; count: number }[] }
  | { signature: 'link'; baseOid: string; deleteBitmap?: EwahBitmap; replaceBitmap?: EwahBitmap }
  | { signature: 'sdir' }
  | { signature: string; raw: Uint8Array };

export interface IndexOptions {
  objectFormat?: ObjectFormat;
}

export type { ObjectFormat };
