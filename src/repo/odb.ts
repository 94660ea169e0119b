/**
 * The object database of a repository over the `Fs` contract: loose objects (read and write) and
 * packs (read), in the repository's objects directory and the ones `objects/info/alternates`
 * names. Mirrors git's lookup order (object-file.c `do_oid_object_info_extended`): packs, then
 * loose objects, then — for a miss — a re-scan of the pack directories (`reprepare_packed_git`),
 * so objects a concurrent `git gc` just moved into a new pack are still found.
 *
 * Every object read is checked against the id it was asked for. Writes follow git's
 * `write_loose_object`: deflate at `core.loosecompression`, a temp file in the object's fan-out
 * directory, then rename into place (odb-files.ts); an object that already exists (loose or
 * packed, here or in an alternate) is not written again.
 *
 * An `ObjectBatch` (`batch()`, object-batch.ts) gathers the objects one operation writes and
 * stores them together when flushed (`writeNew`): as one pack and its idx (`encodePack`; the
 * `.pack` renamed into place before the `.idx`, as git's `finish_tmp_packfile`) when there are
 * `packThreshold` or more, else as loose objects written several at a time. A pack's entries are
 * whole objects deflated at the loose level: they are what would otherwise have been written loose.
 *
 * The parts, one file each: shared-perms.ts (core.sharedRepository), alternates.ts, odb-packs.ts
 * (finding and opening packs), odb-loose.ts (reading loose objects), odb-files.ts (temp files and
 * renames), object-batch.ts (ObjectWriter, ObjectBatch).
 */
import { hexInto } from '../bytes/index.js';
import { ScalpelError } from '../errors/index.js';
import { normalizePath } from '../fs/path.js';
import { settleAll } from '../fs/settle.js';
import type { Fs } from '../fs/types.js';
import { checkObjectFormat, pureHash, oidLength, type HashProvider, type ObjectFormat } from '../hash/index.js';
import { encodeLooseObject, objectId, type ObjectType } from '../object/loose.js';
import {
  DeltaBaseCache,
  parsePackIndex,
  readPackedHeader,
  readPackedObject,
  type PackedObject,
  type PackedObjectHeader,
} from '../object/pack.js';
import { encodePack } from '../object/pack-write.js';
import { checkLevel, pakoZlib, LOOSE_COMPRESSION_DEFAULT, type ZlibProvider } from '../object/zlib.js';
import { findAlternates } from './alternates.js';
import { ObjectBatch, type BatchTarget, type NewObject, type ObjectWriter } from './object-batch.js';
import { ObjectFiles } from './odb-files.js';
import { hasLoose, looseAmong, readLoose, readLooseObjectHeader, type ObjectHeader } from './odb-loose.js';
import { findPacked, openPack, packFile, scanPacks, type ObjectDir, type PackFile, type RandomAccessFs } from './odb-packs.js';
import { sharedSetting, type SharedRepository } from './shared-perms.js';

// what importers of the object database have always found here
export { ObjectBatch, type NewObject, type ObjectWriter } from './object-batch.js';
export { parseSharedRepository, sharedPermissions, type SharedRepository } from './shared-perms.js';
export type { ObjectHeader } from './odb-loose.js';
export type { RandomAccessFs } from './odb-packs.js';

/** Loose objects of one flush written at the same time. */
const LOOSE_PARALLEL = 8;

export interface ObjectDatabaseOptions {
  fs: Fs & RandomAccessFs;
  /** Absolute path of the objects directory (`<common dir>/objects`). */
  objectsDir: string;
  format: ObjectFormat;
  hash?: HashProvider;
  zlib?: ZlibProvider;
  /** zlib level for loose objects: git's `core.loosecompression` (default 1). */
  compressionLevel?: number;
  sharedRepository?: SharedRepository;
  /** Follow `objects/info/alternates` (default true). */
  alternates?: boolean;
  /** Bytes of delta bases kept across reads (default 32 MiB; 0 disables). */
  deltaBaseCacheSize?: number;
  /** With `fs.readRange`: packs up to this size are still read whole (default 0: always ranges). */
  wholePackLimit?: number;
  /** A batch flush of at least this many new objects writes one pack, fewer are written loose (default 16; Infinity: never a pack). */
  packThreshold?: number;
  /** A batch flushes by itself once it holds this many bytes of content (default 32 MiB). */
  batchBytes?: number;
  /**
   * No pack is written while the objects directory holds more than this many packs: the objects
   * go loose instead (default 50, git's `gc.autoPackLimit`). One pack past it is what makes git's
   * own `gc --auto` (run by `git commit` and others) fold the packs together; lookups, which search
   * every pack, never pass that count because of us.
   */
  packLimit?: number;
}

function notFound(oid: string): ScalpelError {
  return new ScalpelError('OBJECT_NOT_FOUND', `object ${oid} not found`, { oid });
}

function checkPositive(name: string, v: number): number {
  if (typeof v !== 'number' || !(v >= 1))
    throw new ScalpelError('BAD_ARGUMENT', `${name} must be at least 1, got ${v}`, { name, value: v });
  return v;
}

export class ObjectDatabase implements ObjectWriter, BatchTarget {
  readonly fs: Fs & RandomAccessFs;
  readonly objectsDir: string;
  readonly format: ObjectFormat;
  readonly hash: HashProvider;
  readonly zlib: ZlibProvider;
  readonly compressionLevel: number;
  readonly sharedRepository: SharedRepository;
  private readonly hexLength: number;
  /** findPacked's id as bytes (reused: lookups are synchronous). */
  private readonly oidKey: Uint8Array;
  private readonly followAlternates: boolean;
  private readonly baseCache: DeltaBaseCache | undefined;
  private readonly wholePackLimit: number;
  readonly packThreshold: number;
  readonly batchBytes: number;
  readonly packLimit: number;
  private dirs: ObjectDir[];
  private scanned: Promise<void> | undefined;
  private readonly files: ObjectFiles;
  /** One re-scan shared by every lookup that misses while it runs. */
  private rescanning: Promise<void> | undefined;

  constructor(opts: ObjectDatabaseOptions) {
    if (!opts || !opts.fs) throw new ScalpelError('BAD_ARGUMENT', 'ObjectDatabase needs an fs', { name: 'fs' });
    if (typeof opts.objectsDir !== 'string' || opts.objectsDir === '') {
      throw new ScalpelError('BAD_ARGUMENT', 'ObjectDatabase needs an objectsDir', { name: 'objectsDir' });
    }
    this.fs = opts.fs;
    this.objectsDir = normalizePath(opts.objectsDir);
    this.format = checkObjectFormat(opts.format);
    this.hexLength = oidLength(this.format) * 2;
    this.oidKey = new Uint8Array(this.hexLength / 2);
    this.hash = opts.hash ?? pureHash;
    this.zlib = opts.zlib ?? pakoZlib;
    this.compressionLevel = checkLevel(opts.compressionLevel ?? LOOSE_COMPRESSION_DEFAULT);
    this.sharedRepository = opts.sharedRepository ?? 'umask';
    sharedSetting(this.sharedRepository);
    this.followAlternates = opts.alternates ?? true;
    const cacheSize = opts.deltaBaseCacheSize ?? 32 * 1024 * 1024;
    this.baseCache = cacheSize > 0 ? new DeltaBaseCache(cacheSize) : undefined;
    this.wholePackLimit = opts.wholePackLimit ?? 0;
    this.packThreshold = checkPositive('packThreshold', opts.packThreshold ?? 16);
    this.batchBytes = checkPositive('batchBytes', opts.batchBytes ?? 32 * 1024 * 1024);
    this.packLimit = checkPositive('packLimit', opts.packLimit ?? 50);
    this.dirs = [{ path: this.objectsDir, packs: [] }];
    this.files = new ObjectFiles(this.fs, this.objectsDir, this.sharedRepository);
  }

  // ─────────────────────────────────────────────────────────────────────────── public API

  /** True when the object exists, loose or packed, here or in an alternate. */
  async has(oid: string): Promise<boolean> {
    const id = this.checkOid(oid);
    await this.ensureScanned();
    if (this.findPacked(id).length > 0 || (await this.hasLoose(id))) return true;
    await this.rescan();
    return this.findPacked(id).length > 0 || (await this.hasLoose(id));
  }

  /** Which of `oids` exist (as has() answers each, lower-case ids), asked all at once. */
  async existing(oids: readonly string[]): Promise<Set<string>> {
    const ids = oids.map((o) => this.checkOid(o));
    await this.ensureScanned();
    const lookUp = async (among: readonly string[], found: Set<string>): Promise<string[]> => {
      const notPacked: string[] = [];
      for (const id of among) {
        if (this.findPacked(id).length > 0) found.add(id);
        else notPacked.push(id);
      }
      const loose = await looseAmong(this.fs, this.dirs, notPacked);
      for (const id of loose) found.add(id);
      return notPacked.filter((id) => !loose.has(id));
    };
    const found = new Set<string>();
    const rest = await lookUp(ids, found);
    if (rest.length > 0) {
      // as has(): a pack may have appeared since the scan (a concurrent gc or repack)
      await this.rescan();
      await lookUp(rest, found);
    }
    return found;
  }

  /** The object's type and content, checked against `oid`. OBJECT_NOT_FOUND (data.oid) when it does not exist. */
  async read(oid: string): Promise<PackedObject> {
    const id = this.checkOid(oid);
    const r = await this.readAny(id, new Set());
    if (r === undefined) throw notFound(id);
    return r;
  }

  /** The object's type and size, without inflating its content where that can be avoided (not hash-checked). */
  async readHeader(oid: string): Promise<ObjectHeader> {
    const id = this.checkOid(oid);
    const r = await this.headerAny(id, new Set());
    if (r === undefined) throw notFound(id);
    return r;
  }

  /** Writes a loose object (unless the object already exists) and returns its id. */
  async write(type: ObjectType, content: Uint8Array): Promise<string> {
    const oid = objectId(type, content, this.format, this.hash);
    if (await this.existsQuick(oid)) return oid;
    const bytes = encodeLooseObject(type, content, { level: this.compressionLevel, zlib: this.zlib });
    await this.files.writeLoose(oid, bytes);
    return oid;
  }

  /** A batch that writes what it is given when flushed (see the module comment). */
  batch(): ObjectBatch {
    return new ObjectBatch(this);
  }

  /** The id `content` has as an object of `type` in this database's format. */
  idOf(type: ObjectType, content: Uint8Array): string {
    return objectId(type, content, this.format, this.hash);
  }

  /** True when the object exists here or in an alternate, without the re-scan a miss in `has` costs. */
  async exists(oid: string): Promise<boolean> {
    return this.existsQuick(this.checkOid(oid));
  }

  /**
   * Stores the objects that are not in the database yet (ids computed by the caller with `idOf`,
   * and taken as given): one pack when there are `packThreshold` or more (and at most `packLimit`
   * packs), else loose objects, several at a time. `checked`: the caller found each one absent
   * already (an ObjectBatch does as it queues them), so none is looked up again. When a write
   * fails, the others still end before the failure is thrown; nothing refers to objects written
   * so far, and git prunes them as any unreachable object.
   */
  async writeNew(objects: readonly NewObject[], opts: { checked?: boolean } = {}): Promise<void> {
    const absent: NewObject[] = [];
    const ids = new Set<string>();
    for (const o of objects) {
      if (ids.has(o.oid)) continue;
      ids.add(o.oid);
      if (opts.checked || !(await this.existsQuick(o.oid))) absent.push(o);
    }
    if (absent.length === 0) return;
    if (absent.length >= this.packThreshold && this.dirs[0].packs.length <= this.packLimit) {
      await this.writePack(absent);
    } else {
      const level = this.compressionLevel;
      const zlib = this.zlib;
      await settleAll(
        absent.map((o) => () => this.files.writeLoose(o.oid, encodeLooseObject(o.type, o.content, { level, zlib }))),
        LOOSE_PARALLEL,
      );
    }
  }

  /** Forgets the pack and alternate listing; the next lookup scans again. */
  refresh(): void {
    this.scanned = undefined;
    this.baseCache?.clear();
    for (const d of this.dirs) d.packs = [];
    this.dirs = this.dirs.slice(0, 1);
  }

  /** The packs found so far, e.g. for diagnostics: objects directory, pack name and object count. */
  async listPacks(): Promise<Array<{ objectsDir: string; name: string; count: number }>> {
    await this.ensureScanned();
    return this.dirs.flatMap((d) => d.packs.map((p) => ({ objectsDir: d.path, name: p.name, count: p.index.count })));
  }

  /** The object directories searched: this one, then its alternates. */
  async objectDirectories(): Promise<string[]> {
    await this.ensureScanned();
    return this.dirs.map((d) => d.path);
  }

  // ─────────────────────────────────────────────────────────────────────────── lookup

  private checkOid(oid: string): string {
    if (typeof oid !== 'string' || oid.length !== this.hexLength || !/^[0-9a-fA-F]+$/.test(oid)) {
      throw new ScalpelError('BAD_ARGUMENT', `not a ${this.format} object id: ${JSON.stringify(oid)}`, {
        name: 'oid',
        value: oid,
        reason: 'bad-oid',
      });
    }
    return oid.toLowerCase();
  }

  private findPacked(oid: string): Array<{ pack: PackFile; offset: number }> {
    // parsed once, not once per pack (a whole-tree snapshot asks about hundreds of trees)
    const key = this.oidKey;
    if (!hexInto(oid, key))
      throw new ScalpelError('BAD_ARGUMENT', `not a ${this.format} object id: ${JSON.stringify(oid)}`, {
        name: 'oid',
        value: oid,
        reason: 'bad-oid',
      });
    return findPacked(this.dirs, key);
  }

  private hasLoose(oid: string): Promise<boolean> {
    return hasLoose(this.fs, this.dirs, oid);
  }

  /** Packed or loose anywhere, without a re-scan (git's freshen checks before a write). */
  private async existsQuick(oid: string): Promise<boolean> {
    await this.ensureScanned();
    return this.findPacked(oid).length > 0 || (await this.hasLoose(oid));
  }

  /**
   * Packs, loose, re-scan, packs (and loose again). A copy that fails to read (corrupt, or its
   * pack vanished) is skipped for the next; when none reads, the first failure is thrown.
   */
  private readAny(oid: string, resolving: Set<string>): Promise<PackedObject | undefined> {
    return this.lookup(
      oid,
      resolving,
      (pack, offset) => this.readFromPack(pack, offset, oid, resolving),
      (dir) => readLoose(this.fs, dir, oid, this),
    );
  }

  private headerAny(oid: string, resolving: Set<string>): Promise<ObjectHeader | undefined> {
    return this.lookup(
      oid,
      resolving,
      (pack, offset) => this.headerFromPack(pack, offset, resolving),
      (dir) => readLooseObjectHeader(this.fs, dir, oid, this.zlib),
    );
  }

  private async lookup<T>(
    oid: string,
    resolving: Set<string>,
    fromPack: (pack: PackFile, offset: number) => Promise<T>,
    fromLoose: (dir: string) => Promise<T | undefined>,
  ): Promise<T | undefined> {
    if (resolving.has(oid)) {
      throw new ScalpelError('BAD_OBJECT', `delta base ${oid} depends on itself through REF_DELTA entries`, { reason: 'delta-cycle', oid });
    }
    resolving.add(oid);
    let failure: unknown;
    try {
      await this.ensureScanned();
      for (let round = 0; round < 2; round++) {
        for (const { pack, offset } of this.findPacked(oid)) {
          try {
            return await fromPack(pack, offset);
          } catch (e) {
            failure ??= e;
          }
        }
        for (const d of this.dirs) {
          try {
            const r = await fromLoose(d.path);
            if (r !== undefined) return r;
          } catch (e) {
            failure ??= e;
          }
        }
        if (round === 0) await this.rescan();
      }
    } finally {
      resolving.delete(oid);
    }
    if (failure !== undefined) {
      if (failure instanceof ScalpelError && failure.data.oid === undefined) failure.data.oid = oid;
      throw failure;
    }
    return undefined;
  }

  private async readFromPack(pack: PackFile, offset: number, oid: string, resolving: Set<string>): Promise<PackedObject> {
    const source = await openPack(this.fs, pack, this.format, this.wholePackLimit);
    const obj = await readPackedObject(source, offset, {
      format: this.format,
      index: pack.index,
      cache: pack.cache,
      resolveRef: (base) => this.readAny(base, resolving),
    });
    const found = objectId(obj.type, obj.content, this.format, this.hash);
    if (found !== oid) {
      throw new ScalpelError('BAD_OBJECT', `packed object at ${offset} of ${pack.name} hashes to ${found}, expected ${oid}`, {
        reason: 'oid-mismatch',
        oid,
        expected: oid,
        found,
        pack: pack.name,
        offset,
      });
    }
    return obj;
  }

  private async headerFromPack(pack: PackFile, offset: number, resolving: Set<string>): Promise<PackedObjectHeader> {
    const source = await openPack(this.fs, pack, this.format, this.wholePackLimit);
    return readPackedHeader(source, offset, {
      format: this.format,
      index: pack.index,
      cache: pack.cache,
      resolveRef: (base) => this.readAny(base, resolving),
      resolveRefType: async (base) => (await this.headerAny(base, resolving))?.type,
    });
  }

  // ─────────────────────────────────────────────────────────────────────────── packs

  private ensureScanned(): Promise<void> {
    if (this.scanned === undefined) {
      const p = this.scan();
      this.scanned = p;
      p.catch(() => {
        if (this.scanned === p) this.scanned = undefined;
      });
    }
    return this.scanned;
  }

  /** One re-scan shared by every lookup that missed while it ran. */
  private async rescan(): Promise<void> {
    await this.ensureScanned();
    if (this.rescanning === undefined) {
      const p = this.scan().finally(() => {
        this.rescanning = undefined;
      });
      this.rescanning = p;
    }
    return this.rescanning;
  }

  private async scan(): Promise<void> {
    // adds (never removes) the directories the alternates files name, recursively as git does
    if (this.followAlternates)
      for (const path of await findAlternates(
        this.fs,
        this.dirs.map((d) => d.path),
      ))
        this.dirs.push({ path, packs: [] });
    for (const d of this.dirs) d.packs = await scanPacks(this.fs, d, this.format, this.baseCache);
  }

  // ─────────────────────────────────────────────────────────────────────────── write

  /** One pack and its idx (the pack renamed into place before the idx); the new pack is searched from then on without a re-scan. */
  private async writePack(objects: readonly NewObject[]): Promise<void> {
    // ids as `idOf` computed them (writeNew's contract), not hashed a second time
    const enc = encodePack(objects, { format: this.format, hash: this.hash, zlib: this.zlib, level: this.compressionLevel });
    const name = `pack-${enc.checksum}`;
    const packPath = await this.files.writePack(name, enc.pack, enc.index);
    await this.ensureScanned();
    const home = this.dirs[0];
    if (!home.packs.some((p) => p.name === name))
      home.packs.push(packFile(name, packPath, parsePackIndex(enc.index, this.format), this.baseCache));
  }
}
