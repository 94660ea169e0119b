/**
 * The packs of the object directories: finding them (`<dir>/pack/*.idx` with their `.pack`),
 * looking an id up in their indexes, and opening a pack's data — read whole, or in ranges where
 * the filesystem offers `readRange` (RandomAccessFs) and the pack is large.
 */
import { toHex } from '../bytes/hex.js';
import { ScalpelError } from '../errors/index.js';
import { joinPath } from '../fs/path.js';
import type { Fs } from '../fs/types.js';
import { oidLength, type ObjectFormat } from '../hash/index.js';
import {
  bufferPackSource,
  checkPackMatchesIndex,
  PACK_HEADER_SIZE,
  parsePackHeader,
  parsePackIndex,
  windowedPackSource,
  type DeltaBaseCache,
  type PackIndex,
  type PackObjectCache,
  type PackSource,
} from '../object/pack.js';
import { isMissing } from '../fs/errors.js';

/**
 * Optional random access an `Fs` may offer. Without it a pack is read whole into memory (once per
 * pack, kept while the database lives); with it only the ranges a read needs are fetched.
 * (Proposed for the Fs contract: `readRange(path, position, length)` returning
 * min(length, size - position) bytes.)
 */
export interface RandomAccessFs {
  readRange?(path: string, position: number, length: number): Promise<Uint8Array>;
}

export interface PackFile {
  /** "pack-<checksum>" */
  name: string;
  packPath: string;
  index: PackIndex;
  /** The pack's data once opened (a failed open is forgotten, so the next read tries again). */
  source: Promise<PackSource> | undefined;
  cache: PackObjectCache | undefined;
}

/** An objects directory (the repository's own, or an alternate) and the packs found in it. */
export interface ObjectDir {
  path: string;
  packs: PackFile[];
}

/** A pack known from its parsed idx, not opened yet. */
export function packFile(name: string, packPath: string, index: PackIndex, baseCache: DeltaBaseCache | undefined): PackFile {
  return { name, packPath, index, source: undefined, cache: baseCache?.forPack() };
}

/**
 * Lists `<dir>/pack/*.idx` with their `.pack`; keeps the packs of `dir.packs` still there (open
 * ones stay open), parses new idx files. An idx that cannot be read or parsed is skipped.
 */
export async function scanPacks(fs: Fs, dir: ObjectDir, format: ObjectFormat, baseCache: DeltaBaseCache | undefined): Promise<PackFile[]> {
  const packDir = joinPath(dir.path, 'pack');
  let names: string[];
  try {
    names = await fs.readdir(packDir);
  } catch (e) {
    if (isMissing(e)) return [];
    throw e;
  }
  const have = new Set(names);
  const known = new Map(dir.packs.map((p) => [p.name, p]));
  const out: PackFile[] = [];
  for (const n of names.sort()) {
    if (!n.endsWith('.idx')) continue;
    const name = n.slice(0, -4);
    if (!have.has(`${name}.pack`)) continue;
    const old = known.get(name);
    if (old !== undefined) {
      out.push(old);
      continue;
    }
    let index: PackIndex;
    try {
      index = parsePackIndex(await fs.readFile(`${packDir}/${n}`), format);
    } catch (e) {
      // git skips a pack whose idx it cannot use (warning); it may be half-removed by a gc.
      if (isMissing(e) || e instanceof ScalpelError) continue;
      throw e;
    }
    out.push(packFile(name, `${packDir}/${name}.pack`, index, baseCache));
  }
  return out;
}

/** Where `key` (an id as bytes) is packed, in search order: every pack of every directory holding it. */
export function findPacked(dirs: readonly ObjectDir[], key: Uint8Array): Array<{ pack: PackFile; offset: number }> {
  const out: Array<{ pack: PackFile; offset: number }> = [];
  for (const d of dirs) {
    for (const pack of d.packs) {
      const offset = pack.index.find(key);
      if (offset !== undefined) out.push({ pack, offset });
    }
  }
  return out;
}

/**
 * The pack's data, opened once and shared by every read. Packs larger than `wholePackLimit` are
 * read in ranges when `fs.readRange` exists, else whole. The header and trailer are checked
 * against the idx before the first read.
 */
export function openPack(fs: Fs & RandomAccessFs, pack: PackFile, format: ObjectFormat, wholePackLimit: number): Promise<PackSource> {
  if (pack.source === undefined) {
    pack.source = loadPackSource(fs, pack, format, wholePackLimit);
    pack.source.catch(() => {
      pack.source = undefined;
    });
  }
  return pack.source;
}

async function loadPackSource(fs: Fs & RandomAccessFs, pack: PackFile, format: ObjectFormat, wholePackLimit: number): Promise<PackSource> {
  const h = oidLength(format);
  let source: PackSource;
  const readRange = fs.readRange;
  let size = -1;
  if (typeof readRange === 'function') {
    const st = await fs.stat(pack.packPath);
    if (st === null) throw Object.assign(new Error(`ENOENT: ${pack.packPath}`), { code: 'ENOENT' });
    size = st.size;
  }
  if (size >= 0 && size > wholePackLimit && typeof readRange === 'function') {
    const path = pack.packPath;
    source = windowedPackSource(size, (position, length) => readRange.call(fs, path, position, length));
  } else {
    source = bufferPackSource(await fs.readFile(pack.packPath));
  }
  if (source.size < PACK_HEADER_SIZE + h) {
    throw new ScalpelError('TRUNCATED', `pack ${pack.name}: ${source.size} bytes is too small`, {
      what: 'pack',
      offset: source.size,
      need: PACK_HEADER_SIZE + h - source.size,
    });
  }
  const header = parsePackHeader(await source.read(0, PACK_HEADER_SIZE));
  const trailer = await source.read(source.size - h, h);
  checkPackMatchesIndex(header, toHex(trailer), pack.index);
  return source;
}
