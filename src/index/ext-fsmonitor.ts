/**
 * FSMN (fsmonitor) extension payload, as `read_fsmonitor_extension` / `write_fsmonitor_extension`
 * in git's fsmonitor.c handle it:
 *
 *   u32 version
 *   version 1: u64 nanoseconds since the epoch     version 2: token bytes, NUL
 *   u32 ewah_size
 *   EWAH bitmap of exactly ewah_size bytes (bit n: index entry n is not CE_FSMONITOR_VALID)
 *
 * git writes only version 2, but reads both. git's reader ignores bytes after the bitmap; we keep
 * them (`trailing`) so the payload re-encodes byte-identically.
 */
import type { ByteWriter } from '../bytes/writer.js';
import { readU32 } from '../bytes/reader.js';
import { ScalpelError } from '../errors/index.js';
import { decodeEwah, encodeEwah, type EwahDecodeOptions } from './ewah.js';
import type { IndexExtension } from './types.js';

export type FsmonitorExtension = Extract<IndexExtension, { signature: 'FSMN' }>;

function bad(offset: number, reason: string, message: string, extra: Record<string, unknown> = {}): ScalpelError {
  return new ScalpelError('BAD_EXTENSION', `index: FSMN extension: ${message} (byte ${offset})`, {
    signature: 'FSMN',
    offset,
    reason,
    ...extra,
  });
}

/**
 * Decode the FSMN payload in bytes[start, end). Mirrors git's checks: payload at least 9 bytes;
 * version 1 or 2; the bitmap consumes exactly ewah_size bytes. Stricter than git where git would
 * read past the payload: the token's NUL, the u64, ewah_size and the bitmap must lie inside it.
 * `opts` go to the bitmap decoder (e.g. `limit` = the index entry count, git's actual bound).
 */
export function decodeFsmonitor(bytes: Uint8Array, start: number, end: number, opts: EwahDecodeOptions = {}): FsmonitorExtension {
  if (end > bytes.length) end = bytes.length;
  if (end - start < 4 + 1 + 4) throw bad(start, 'too-short', `payload of ${end - start} bytes is too short`);
  const version = readU32(bytes, start);
  let p = start + 4;
  let sinceNanoseconds = 0n;
  let token: Uint8Array | undefined;
  if (version === 1) {
    if (end - p < 8) throw bad(p, 'truncated', 'eof in the version 1 timestamp');
    sinceNanoseconds = (BigInt(readU32(bytes, p)) << 32n) | BigInt(readU32(bytes, p + 4));
    p += 8;
  } else if (version === 2) {
    let z = p;
    while (z < end && bytes[z] !== 0) z++;
    if (z >= end) throw bad(p, 'unterminated-token', 'token has no terminating NUL inside the payload');
    token = bytes.slice(p, z);
    p = z + 1;
  } else {
    throw bad(start, 'bad-version', `bad fsmonitor version ${version}`, { version });
  }
  if (end - p < 4) throw bad(p, 'truncated', 'eof before the bitmap size');
  const ewahSize = readU32(bytes, p);
  p += 4;
  if (ewahSize > end - p) {
    throw bad(p - 4, 'bitmap-size-overrun', `bitmap size ${ewahSize} runs past the payload (${end - p} bytes left)`, {
      ewahSize,
      left: end - p,
    });
  }
  const { bitmap, next } = decodeEwah(bytes, p, p + ewahSize, 'FSMN bitmap', opts);
  if (next !== p + ewahSize) {
    throw bad(p - 4, 'bitmap-size-mismatch', `bitmap size says ${ewahSize} bytes, the bitmap has ${next - p}`, {
      ewahSize,
      consumed: next - p,
    });
  }
  const trailing = next < end ? bytes.slice(next, end) : undefined;
  if (version === 1) {
    const ext: FsmonitorExtension = { signature: 'FSMN', version: 1, sinceNanoseconds, bitmap };
    if (trailing) ext.trailing = trailing;
    return ext;
  }
  const ext: FsmonitorExtension = { signature: 'FSMN', version: 2, token: token!, bitmap };
  if (trailing) ext.trailing = trailing;
  return ext;
}

/** Write the FSMN payload (without the signature and size header). */
export function encodeFsmonitor(w: ByteWriter, ext: FsmonitorExtension): void {
  if (ext.version === 1) {
    const t = ext.sinceNanoseconds;
    if (typeof t !== 'bigint' || t < 0n || t > 0xffffffffffffffffn) {
      throw new ScalpelError('BAD_ARGUMENT', `FSMN: timestamp ${String(t)} is not an unsigned 64-bit value`, {
        name: 'sinceNanoseconds',
        reason: 'not-u64',
      });
    }
    w.u32(1);
    w.u64(t);
  } else if (ext.version === 2) {
    if (ext.token.includes(0)) {
      throw new ScalpelError('BAD_ARGUMENT', 'FSMN: token contains a NUL byte', { name: 'token', reason: 'nul-in-token' });
    }
    w.u32(2);
    w.cstring(ext.token);
  } else {
    const v = (ext as { version: unknown }).version;
    throw new ScalpelError('BAD_ARGUMENT', `FSMN: unknown version ${String(v)}`, { name: 'version', reason: 'bad-version', value: v });
  }
  const fix = w.pos;
  w.u32(0);
  encodeEwah(w, ext.bitmap);
  w.setU32(fix, w.pos - fix - 4);
  if (ext.trailing) w.bytes(ext.trailing);
}
