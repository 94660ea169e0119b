/**
 * The platform: what a runtime offers that pure code cannot provide for itself (fast hashing,
 * zlib, process information, fast byte helpers). One object, handed to `openRepository` and the
 * codecs, never installed into module state: two repositories in one process may use two
 * platforms, and a test cannot leak its choice into the next. Types only; the providers are
 * `purePlatform()`, `webPlatform()` and (git-scalpel/node) `nodePlatform()`.
 */
import type { HashProvider, ObjectFormat } from '../hash/index.js';

/** Incremental inflate of one zlib stream, so a caller can stop after a loose object's header. */
export interface InflateStream {
  /** Feeds compressed bytes; returns the bytes they inflate to (possibly none). Throws BAD_ZLIB. */
  push(chunk: Uint8Array): Uint8Array;
  /** True once the stream's end, with a valid adler32, has been read. */
  readonly ended: boolean;
  /** Number of pushed bytes that came after the end of the stream. */
  readonly trailing: number;
  /** Declares the input complete: BAD_ZLIB `truncated` if the stream has not ended, `trailing-data` if bytes followed it. */
  finish(): void;
}

/**
 * Synchronous zlib (RFC 1950: header, deflate data, adler32, as git's loose objects and packs
 * use it; never raw deflate or gzip).
 */
export interface ZlibProvider {
  readonly name: string;
  /** zlib-wrapped deflate; `level` -1 (zlib's default, 6) or 0..9. */
  deflate(data: Uint8Array, level: number): Uint8Array;
  /** Inflates exactly one zlib stream that spans all of `data`; corrupt, truncated or trailing input → BAD_ZLIB. */
  inflate(data: Uint8Array): Uint8Array;
  /** Streaming inflate of a loose object's header and body, for reading a header without its body. */
  createInflate(): InflateStream;
  /** zlib's CRC-32 of `data` continuing from `crc`, where the platform has a native one (the pure `crc32` otherwise). */
  crc32?(data: Uint8Array, crc?: number): number;
}

/** Who we are and whether another process still runs (Node has pids, a browser does not). */
export interface ProcessInfo {
  pid: number;
  isAlive(pid: number): boolean;
}

export interface Platform {
  /** For diagnostics: 'pure', 'web', 'node'. */
  readonly name: string;
  /** Synchronous hashing: object ids, streamed hashes, anything hashed in pieces. */
  readonly hash: HashProvider;
  /** Synchronous zlib: loose objects, packs. */
  readonly zlib: ZlibProvider;
  /** Process information for recovering this tool's own locks after a crash; absent where there are no processes (browsers). */
  readonly proc?: ProcessInfo;
  /**
   * One UTF-16 code unit per byte, equal to the byte, over a whole buffer (Node: Buffer#latin1Slice,
   * ~2 ms for 10 MB). Absent: callers decode path bytes with one UTF-8 TextDecoder call instead.
   */
  readonly latin1?: (bytes: Uint8Array) => string;
  /**
   * Memory for writers that write every byte before reading it, so it need not be zeroed (Node:
   * Buffer.allocUnsafeSlow; zero-filling a 10 MB index buffer costs more than copying it).
   */
  readonly alloc?: (size: number) => Uint8Array;
  /**
   * The hash of a whole buffer, asynchronously (browsers: `crypto.subtle.digest`, several times
   * the pure hash on large input). Use through `digestWhole`, which keeps small input synchronous.
   */
  readonly digest?: (format: ObjectFormat, data: Uint8Array) => Promise<Uint8Array>;
  /**
   * Inflate of one whole zlib stream, asynchronously (browsers: DecompressionStream), with the same
   * contract and BAD_ZLIB reasons as `zlib.inflate`. Use through `inflateWhole`. There is no async
   * deflate: CompressionStream takes no level, and its bytes differ from the level git's
   * `core.loosecompression` asks for; every provider here deflates to the same bytes.
   */
  readonly inflate?: (data: Uint8Array) => Promise<Uint8Array>;
}
