/**
 * Loose objects of one objects directory: `<dir>/<first two hex digits>/<the rest>`, each a
 * zlib stream of git's object framing. Reading only; writing goes through odb-files.ts.
 */
import { isMissing } from '../fs/errors.js';
import type { Fs } from '../fs/types.js';
import type { HashProvider, ObjectFormat } from '../hash/index.js';
import { decodeLooseObject, readLooseHeader, type ObjectType } from '../object/loose.js';
import type { PackedObject } from '../object/pack.js';
import type { ZlibProvider } from '../object/zlib.js';

export interface ObjectHeader {
  type: ObjectType;
  size: number;
}

export function loosePath(dir: string, oid: string): string {
  return `${dir}/${oid.slice(0, 2)}/${oid.slice(2)}`;
}

/** The loose object `oid` of `dir`, checked against its id; undefined when there is none. */
export async function readLoose(
  fs: Fs,
  dir: string,
  oid: string,
  opts: { zlib: ZlibProvider; hash: HashProvider; format: ObjectFormat },
): Promise<PackedObject | undefined> {
  let bytes: Uint8Array;
  try {
    bytes = await fs.readFile(loosePath(dir, oid));
  } catch (e) {
    if (isMissing(e)) return undefined;
    throw e;
  }
  const { type, content } = decodeLooseObject(bytes, { zlib: opts.zlib, hash: opts.hash, format: opts.format, expectOid: oid });
  return { type, content };
}

/** A loose object's type and size from its first compressed bytes (the whole file only without readChunks). */
export async function readLooseObjectHeader(fs: Fs, dir: string, oid: string, zlib: ZlibProvider): Promise<ObjectHeader | undefined> {
  const path = loosePath(dir, oid);
  let bytes: Uint8Array;
  try {
    if (fs.readChunks) {
      const it = fs.readChunks(path, 4096)[Symbol.asyncIterator]();
      try {
        const first = await it.next();
        bytes = first.done ? new Uint8Array(0) : first.value;
      } finally {
        await it.return?.(); // closes the file
      }
    } else bytes = await fs.readFile(path);
  } catch (e) {
    if (isMissing(e)) return undefined;
    throw e;
  }
  const h = readLooseHeader(bytes, { zlib });
  return { type: h.type, size: h.size };
}

/**
 * Which of `oids` are loose objects in any of `dirs`: one call for many (a whole-tree snapshot
 * asks about a thousand trees), synchronous calls where the filesystem has them.
 */
export async function looseAmong(fs: Fs, dirs: readonly { path: string }[], oids: readonly string[]): Promise<Set<string>> {
  const found = new Set<string>();
  const lstatSync = fs.lstatSync?.bind(fs);
  if (lstatSync) {
    for (const oid of oids) if (dirs.some((d) => lstatSync(loosePath(d.path, oid)) !== null)) found.add(oid);
  } else {
    await Promise.all(oids.map(async (oid) => (await hasLoose(fs, dirs, oid)) && found.add(oid)));
  }
  return found;
}

/** Is there a loose object `oid` in any of `dirs`? */
export async function hasLoose(fs: Fs, dirs: readonly { path: string }[], oid: string): Promise<boolean> {
  for (const d of dirs) {
    if ((await fs.lstat(loosePath(d.path, oid))) !== null) return true;
  }
  return false;
}
