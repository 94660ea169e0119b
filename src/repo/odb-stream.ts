import { Deflate } from 'pako';
import { ScalpelError } from '../errors/index.js';
import { joinPath, dirname } from '../fs/path.js';
import { fsErrorCode } from '../fs/types.js';
import { mkdirp, writeChunksAtomic } from '../fs/atomic.js';
import { toHex } from '../bytes/hex.js';
import { frameHeader, parseFrameHeader, looseObjectPath } from '../object/loose.js';
import type { ObjectDatabase } from './odb.js';

/**
 * Blobs too large to hold in memory, streamed through the object database: written as loose
 * objects in two passes over the source (hash, then deflate to a temp file and rename), read back
 * by inflating piece by piece with the id checked at the end. Needs the filesystem's optional
 * readChunks/writeChunks; callers fall back to whole-buffer reads without them.
 */

export const CHUNK = 1 << 20;

export function canStream(odb: ObjectDatabase): boolean {
  return typeof odb.fs.readChunks === 'function' && typeof odb.fs.writeChunks === 'function';
}

/** Hash `size` bytes from `chunks` as a blob; BAD_OBJECT `changed-while-reading` if the byte count differs. */
export async function hashBlobStream(odb: ObjectDatabase, size: number, chunks: AsyncIterable<Uint8Array>, what: string): Promise<string> {
  const h = odb.hash.create(odb.format).update(frameHeader('blob', size));
  let n = 0;
  for await (const c of chunks) {
    h.update(c);
    n += c.length;
  }
  if (n !== size) throw changed(what, size, n);
  return toHex(h.digest());
}

/** Write the blob `open()` yields (called twice) as a loose object without holding it whole; returns its id. */
export async function writeBlobStream(
  odb: ObjectDatabase,
  size: number,
  open: () => AsyncIterable<Uint8Array>,
  what: string,
): Promise<string> {
  const oid = await hashBlobStream(odb, size, open(), what);
  if (await odb.has(oid)) return oid;
  const final = joinPath(odb.objectsDir, looseObjectPath(oid));
  await mkdirp(odb.fs, dirname(final));
  const level = odb.compressionLevel;
  const h = odb.hash.create(odb.format).update(frameHeader('blob', size));
  let n = 0;
  async function* deflated(): AsyncIterable<Uint8Array> {
    const out: Uint8Array[] = [];
    const d = new Deflate({ level });
    d.onData = (c: Uint8Array) => void out.push(c);
    d.push(frameHeader('blob', size), false);
    for await (const c of open()) {
      h.update(c);
      n += c.length;
      d.push(c, false);
      while (out.length) yield out.shift() as Uint8Array;
    }
    d.push(new Uint8Array(0), true);
    if (d.err) throw new ScalpelError('BAD_ZLIB', `deflate failed: ${d.msg}`, { reason: 'internal' });
    while (out.length) yield out.shift() as Uint8Array;
    // the file changed between the two passes: what was written is not the blob `oid`
    if (n !== size || toHex(h.digest()) !== oid) throw changed(what, size, n);
  }
  try {
    await writeChunksAtomic(odb.fs, final, deflated(), { mode: 0o444 });
  } catch (e) {
    if (fsErrorCode(e) === 'EEXIST' || (await odb.fs.lstat(final))) return oid;
    throw e;
  }
  return oid;
}

/**
 * The content of a large blob as pieces, checked against `oid` at the end (a mismatch throws
 * before the last piece is delivered). A loose object is inflated piece by piece; a packed one
 * is read whole (packs hold deltas) and handed out in one piece.
 */
export async function readBlobStream(odb: ObjectDatabase, oid: string): Promise<{ size: number; chunks: AsyncIterable<Uint8Array> }> {
  const path = joinPath(odb.objectsDir, looseObjectPath(oid));
  const st = canStream(odb) ? await odb.fs.lstat(path) : null;
  if (!st) {
    const obj = await odb.read(oid);
    if (obj.type !== 'blob') throw new ScalpelError('BAD_OBJECT', `${oid} is a ${obj.type}, not a blob`, { oid, reason: 'not-a-blob' });
    return {
      size: obj.content.length,
      chunks: (async function* () {
        yield obj.content;
      })(),
    };
  }
  const header = await odb.readHeader(oid);
  if (header.type !== 'blob') throw new ScalpelError('BAD_OBJECT', `${oid} is a ${header.type}, not a blob`, { oid, reason: 'not-a-blob' });
  const fs = odb.fs;
  async function* chunks(): AsyncIterable<Uint8Array> {
    const inflate = odb.zlib.createInflate();
    const h = odb.hash.create(odb.format);
    let headerDone = false;
    let pending = new Uint8Array(0);
    let n = 0;
    let held: Uint8Array | null = null;
    for await (const c of (fs.readChunks as NonNullable<typeof fs.readChunks>)(path, CHUNK)) {
      let out = inflate.push(c);
      h.update(out);
      if (!headerDone) {
        const joined = new Uint8Array(pending.length + out.length);
        joined.set(pending);
        joined.set(out, pending.length);
        const z = joined.indexOf(0);
        if (z < 0) {
          pending = joined;
          continue;
        }
        const fh = parseFrameHeader(joined.subarray(0, z + 1));
        if (fh.type !== 'blob' || fh.size !== header.size)
          throw new ScalpelError('BAD_OBJECT', `${oid}: header changed while reading`, { oid, reason: 'header' });
        out = joined.subarray(z + 1);
        headerDone = true;
      }
      n += out.length;
      // hold one piece back: the id is checked before the last piece is handed out
      if (held) yield held;
      held = out.length ? out.slice() : null;
    }
    inflate.finish();
    if (n !== header.size || toHex(h.digest()) !== oid) {
      throw new ScalpelError('BAD_OBJECT', `object ${oid} is corrupt: its content does not hash to its id`, {
        oid,
        reason: 'oid-mismatch',
      });
    }
    if (held) yield held;
  }
  return { size: header.size, chunks: chunks() };
}

function changed(what: string, size: number, n: number): ScalpelError {
  return new ScalpelError('BAD_OBJECT', `'${what}' changed while it was being read (${size} bytes expected, ${n} read); try again`, {
    path: what,
    reason: 'changed-while-reading',
    expected: size,
    found: n,
  });
}
