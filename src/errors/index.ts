/**
 * Typed errors. Every error the library throws on purpose is a `ScalpelError` with a stable
 * `code` (documented below, never renamed) and a `data` object naming the offending path, byte
 * offset, expected and found values — whatever lets a caller act on it without parsing prose.
 */

export type ErrorCode =
  // bytes / codecs
  | 'TRUNCATED' // input ends before a field it declares; data.offset, data.need
  | 'BAD_SIGNATURE' // magic bytes wrong; data.offset, data.found
  | 'BAD_VERSION' // unsupported format version; data.version
  | 'CHECKSUM_MISMATCH' // trailer hash differs from the content; data.expected, data.found
  | 'BAD_ENTRY' // an index entry is malformed; data.offset, data.index, data.reason
  | 'BAD_EXTENSION' // an extension's payload is malformed; data.signature, data.offset, data.reason
  | 'UNKNOWN_MANDATORY_EXTENSION' // lowercase signature we do not understand; data.signature
  | 'BAD_VARINT' // overlong or truncated varint; data.offset
  | 'BAD_EWAH' // malformed EWAH bitmap; data.offset, data.reason
  | 'BAD_OBJECT' // loose object framing / tree / commit malformed; data.reason, data.oid
  | 'BAD_ZLIB' // deflate stream corrupt; data.reason
  | 'BAD_PATH' // a path that cannot be represented or is hostile; data.path, data.reason
  | 'BAD_ARGUMENT' // a caller passed a value outside the contract; data.name, data.reason
  | 'SPLIT_INDEX_MISMATCH' // link extension and sharedindex disagree; data.expected, data.found
  // repository / engine (later layers add theirs here)
  | 'NOT_A_REPOSITORY'
  | 'OBJECT_NOT_FOUND'
  | 'INDEX_LOCKED' // another process holds index.lock; data.path (refusal, exit 3)
  | 'REF_LOCKED' // a ref's lock file exists; data.ref, data.path
  | 'REF_CONFLICT' // a ref moved under us (compare-and-swap failed); data.ref, data.expected, data.found
  | 'REFUSED' // restore refused: paths changed since the seal; data.conflicts (exit 3)
  | 'SNAPSHOT_CORRUPT' // stored snapshot state is incomplete, corrupt or hostile; data.reason (refusal, exit 3)
  | 'SNAPSHOT_NOT_FOUND' // no such snapshot in the session; data.session, data.id
  | 'SPARSE_PATH' // a path lies inside a sparse-index directory entry; data.path, data.directory
  | 'UNREADABLE' // a file the answer depends on exists but cannot be read; data.path, data.cause (the fs error code)
  | 'UNSUPPORTED'; // the filesystem or repository lacks a capability; data.capability

export class ScalpelError extends Error {
  readonly code: ErrorCode;
  readonly data: Record<string, unknown>;
  constructor(code: ErrorCode, message: string, data: Record<string, unknown> = {}) {
    super(message);
    this.name = 'ScalpelError';
    this.code = code;
    this.data = data;
  }
}

export function isScalpelError(e: unknown, code?: ErrorCode): e is ScalpelError {
  return e instanceof ScalpelError && (code === undefined || e.code === code);
}
