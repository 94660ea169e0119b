/**
 * The object database of a repository over the `Fs` contract: loose objects (read and write) and
 * packs (read), in the repository's objects directory and the ones `objects/info/alternates`
 * names. Mirrors git's lookup order (object-file.c `do_oid_object_info_extended`): packs, then
 * loose objects, then — for a miss — a re-scan of the pack directories (`reprepare_packed_git`),
 * so objects a concurrent `git gc` just moved into a new pack are still found.
 *
 * Every object read is checked against the id it was asked for. Writes follow git's
 * `write_loose_object`: deflate at `core.loosecompression`, a `tmp_obj_*` file in the object's
 * fan-out directory, mode 0444, then rename into place; an object that already exists (loose or
 * packed, here or in an alternate) is not written again.
 *
 * An `ObjectBatch` (`batch()`) gathers the objects one operation writes and stores them together
 * when flushed: as one pack and its idx (`encodePack`; temp files in `objects/pack`, the `.pack`
 * renamed into place before the `.idx`, as git's `finish_tmp_packfile`) when there are
 * `packThreshold` or more, else as loose objects written several at a time. Creating a file in
 * the objects directory is the dear part of writing a small object; a pack is two files whatever
 * the count (git's `fetch.unpackLimit` makes the same trade, at 100). A pack's entries are whole
 * objects deflated at the loose level: they are what would otherwise have been written loose.
 */
import { hexInto, toHex } from '../bytes/index.js';
import { randomBytes } from '../bytes/random.js';
import { ScalpelError } from '../errors/index.js';
import { joinPath, normalizePath, resolvePath } from '../fs/path.js';
import { settleAll } from '../fs/settle.js';
import { fsErrorCode, type Fs } from '../fs/types.js';
import { checkObjectFormat, defaultHash, oidLength, type HashProvider, type ObjectFormat } from '../hash/index.js';
import { decodeLooseObject, encodeLooseObject, objectId, readLooseHeader, type ObjectType } from '../object/loose.js';
import {
  bufferPackSource,
  checkPackMatchesIndex,
  DeltaBaseCache,
  PACK_HEADER_SIZE,
  parsePackHeader,
  parsePackIndex,
  readPackedHeader,
  readPackedObject,
  windowedPackSource,
  type PackedObject,
  type PackedObjectHeader,
  type PackIndex,
  type PackObjectCache,
  type PackSource,
} from '../object/pack.js';
import { encodePack } from '../object/pack-write.js';
import { checkLevel, defaultZlib, LOOSE_COMPRESSION_DEFAULT, type ZlibProvider } from '../object/zlib.js';

/** What writes objects: the database itself (each object at once) or an `ObjectBatch` (at its flush). */
export interface ObjectWriter {
  /** The object's id; the object exists once the writer is done (for a batch: after its flush). */
  write(type: ObjectType, content: Uint8Array): Promise<string>;
  /** True when the object exists or this writer will write it. */
  has(oid: string): Promise<boolean>;
}

/** An object on its way into the database, its id already computed. */
interface NewObject {
  oid: string;
  type: ObjectType;
  content: Uint8Array;
}

/** Loose objects of one flush written at the same time. */
const LOOSE_PARALLEL = 8;

/**
 * Optional random access an `Fs` may offer. Without it a pack is read whole into memory (once per
 * pack, kept while the database lives); with it only the ranges a read needs are fetched.
 * (Proposed for the Fs contract: `readRange(path, position, length)` returning
 * min(length, size - position) bytes.)
 */
export interface RandomAccessFs {
  readRange?(path: string, position: number, length: number): Promise<Uint8Array>;
}

/**
 * `core.sharedRepository`: 'umask' (git's default: permissions as the umask leaves them),
 * 'group' (adds group read, and write where the owner has it), 'all' (also others' read), or an
 * octal mode such as 0o640 (exactly those bits; the owner must have read and write).
 * `parseSharedRepository` turns a config value into this.
 */
export type SharedRepository = 'umask' | 'group' | 'all' | number;

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

export interface ObjectHeader {
  type: ObjectType;
  size: number;
}

interface PackFile {
  /** "pack-<checksum>" */
  name: string;
  packPath: string;
  index: PackIndex;
  source: Promise<PackSource> | undefined;
  cache: PackObjectCache | undefined;
}

interface ObjectDir {
  path: string;
  packs: PackFile[];
}

/** git's alternates recursion limit. */
const MAX_ALTERNATE_DEPTH = 5;
const S_ISGID = 0o2000;

function notFound(oid: string): ScalpelError {
  return new ScalpelError('OBJECT_NOT_FOUND', `object ${oid} not found`, { oid });
}

function isMissing(e: unknown): boolean {
  const c = fsErrorCode(e);
  return c === 'ENOENT' || c === 'ENOTDIR';
}

/** git_config_perm: the value of `core.sharedRepository` as a SharedRepository. */
export function parseSharedRepository(value: string | boolean | null | undefined): SharedRepository {
  if (value === undefined || value === false) return 'umask';
  if (value === null || value === true) return 'group';
  const v = value.trim().toLowerCase();
  if (v === 'umask') return 'umask';
  if (v === 'group') return 'group';
  if (v === 'all' || v === 'world' || v === 'everybody') return 'all';
  if (/^[0-7]+$/.test(v)) {
    const n = parseInt(v, 8);
    if (n === 0) return 'umask';
    if (n === 1) return 'group';
    if (n === 2) return 'all';
    return checkShared(n);
  }
  if (v === 'true' || v === 'yes' || v === 'on' || v === '') return v === '' ? 'umask' : 'group';
  if (v === 'false' || v === 'no' || v === 'off') return 'umask';
  throw new ScalpelError('BAD_ARGUMENT', `bad core.sharedRepository value ${JSON.stringify(value)}`, { name: 'core.sharedRepository', value });
}

function checkShared(n: number): number {
  if (!Number.isInteger(n) || n < 0 || n > 0o7777 || (n & 0o600) !== 0o600) {
    throw new ScalpelError('BAD_ARGUMENT', `shared repository mode ${n.toString(8)} must give the owner read and write`, { name: 'sharedRepository', value: n });
  }
  return n & 0o666;
}

/** git's internal encoding: 0 umask, 0o660 group, 0o664 everybody, negative an exact mode. */
function sharedSetting(s: SharedRepository | undefined): number {
  if (s === undefined || s === 'umask') return 0;
  if (s === 'group') return 0o660;
  if (s === 'all') return 0o664;
  if (typeof s === 'number') return -checkShared(s);
  throw new ScalpelError('BAD_ARGUMENT', `bad sharedRepository ${JSON.stringify(s)}`, { name: 'sharedRepository', value: s });
}

/** git's calc_shared_perm + adjust_shared_perm (path.c). */
export function sharedPermissions(shared: SharedRepository, mode: number, isDir: boolean): number {
  const setting = sharedSetting(shared);
  if (setting === 0) return mode;
  let tweak = setting < 0 ? -setting : setting;
  if (!(mode & 0o200)) tweak &= ~0o222;
  if (mode & 0o100) tweak |= (tweak & 0o444) >> 2;
  let m = setting < 0 ? (mode & ~0o777) | tweak : mode | tweak;
  if (isDir) {
    m |= (m & 0o444) >> 2;
    // g+s matters only if the group gets access (git: FORCE_DIR_SET_GID, Linux semantics)
    if (m & 0o060) m |= S_ISGID;
  }
  return m;
}

function checkPositive(name: string, v: number): number {
  if (typeof v !== 'number' || !(v >= 1)) throw new ScalpelError('BAD_ARGUMENT', `${name} must be at least 1, got ${v}`, { name, value: v });
  return v;
}

function randomSuffix(): string {
  const alphabet = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789';
  const bytes = randomBytes(12);
  let s = '';
  for (const b of bytes) s += alphabet[b % alphabet.length];
  return s;
}

/** Unquotes a C-quoted alternates line ("..." with backslash escapes), as git's unquote_c_style. */
function unquoteC(s: string): string | undefined {
  if (!s.startsWith('"')) return s;
  const bytes: number[] = [];
  let i = 1;
  const enc = new TextEncoder();
  while (i < s.length) {
    const ch = s[i];
    if (ch === '"') {
      if (i !== s.length - 1) return undefined;
      return new TextDecoder().decode(Uint8Array.from(bytes));
    }
    if (ch === '\\') {
      const n = s[i + 1];
      const map: Record<string, number> = { a: 7, b: 8, f: 12, n: 10, r: 13, t: 9, v: 11, '\\': 92, '"': 34 };
      if (n !== undefined && n in map) {
        bytes.push(map[n]);
        i += 2;
        continue;
      }
      if (n !== undefined && /[0-3]/.test(n) && /^[0-7]{2}$/.test(s.slice(i + 2, i + 4))) {
        bytes.push(parseInt(s.slice(i + 1, i + 4), 8));
        i += 4;
        continue;
      }
      return undefined;
    }
    for (const b of enc.encode(ch)) bytes.push(b);
    i++;
  }
  return undefined;
}

export class ObjectDatabase implements ObjectWriter {
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
  /** Create temp files 0444 directly; false once the filesystem refused to write such a file. */
  private createReadOnly = true;
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
    this.hash = opts.hash ?? defaultHash();
    this.zlib = opts.zlib ?? defaultZlib();
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
  }

  // ─────────────────────────────────────────────────────────────────────────── public API

  /** True when the object exists, loose or packed, here or in an alternate. */
  async has(oid: string): Promise<boolean> {
    const id = this.checkOid(oid);
    if (this.known.has(id)) return true;
    await this.ensureScanned();
    if (this.findPacked(id).length > 0 || (await this.hasLoose(id))) return this.remember(id);
    await this.rescan();
    return (this.findPacked(id).length > 0 || (await this.hasLoose(id))) && this.remember(id);
  }

  /**
   * Objects this database saw exist or wrote: asked again within an operation (a snapshot checks
   * the same blob for its worktree and its index part), they cost nothing. Objects are never
   * removed while reachable, and an operation makes what it writes reachable before it returns.
   */
  private readonly known = new Set<string>();

  /**
   * Forget which objects were seen: call at the start of each operation, since between two
   * operations a `git gc --prune=now` may delete objects that had become unreachable.
   */
  forgetKnown(): void {
    this.known.clear();
  }

  private remember(oid: string): true {
    if (this.known.size > 1_000_000) this.known.clear();
    this.known.add(oid);
    return true;
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
    await this.writeLoose(oid, bytes);
    this.remember(oid);
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
        absent.map((o) => () => this.writeLoose(o.oid, encodeLooseObject(o.type, o.content, { level, zlib }))),
        LOOSE_PARALLEL,
      );
    }
    for (const o of absent) this.remember(o.oid);
  }

  /** Forgets what is known about packs and alternates; the next lookup scans again. */
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
      throw new ScalpelError('BAD_ARGUMENT', `not a ${this.format} object id: ${JSON.stringify(oid)}`, { name: 'oid', value: oid, reason: 'bad-oid' });
    }
    return oid.toLowerCase();
  }

  private findPacked(oid: string): Array<{ pack: PackFile; offset: number }> {
    const out: Array<{ pack: PackFile; offset: number }> = [];
    // parsed once, not once per pack (a whole-tree snapshot asks about hundreds of trees)
    const key = this.oidKey;
    if (!hexInto(oid, key)) throw new ScalpelError('BAD_ARGUMENT', `not a ${this.format} object id: ${JSON.stringify(oid)}`, { name: 'oid', value: oid, reason: 'bad-oid' });
    for (const d of this.dirs) {
      for (const pack of d.packs) {
        const offset = pack.index.find(key);
        if (offset !== undefined) out.push({ pack, offset });
      }
    }
    return out;
  }

  private loosePath(dir: string, oid: string): string {
    return `${dir}/${oid.slice(0, 2)}/${oid.slice(2)}`;
  }

  private async hasLoose(oid: string): Promise<boolean> {
    for (const d of this.dirs) {
      if ((await this.fs.lstat(this.loosePath(d.path, oid))) !== null) return true;
    }
    return false;
  }

  /** Packed or loose anywhere, without a re-scan (git's freshen checks before a write). */
  private async existsQuick(oid: string): Promise<boolean> {
    if (this.known.has(oid)) return true;
    await this.ensureScanned();
    return (this.findPacked(oid).length > 0 || (await this.hasLoose(oid))) && this.remember(oid);
  }

  /**
   * Packs, loose, re-scan, packs (and loose again). A copy that fails to read (corrupt, or its
   * pack vanished) is skipped for the next; when none reads, the first failure is thrown.
   */
  private readAny(oid: string, resolving: Set<string>): Promise<PackedObject | undefined> {
    return this.lookup(oid, resolving, (pack, offset) => this.readFromPack(pack, offset, oid, resolving), (dir) => this.readLoose(dir, oid));
  }

  private headerAny(oid: string, resolving: Set<string>): Promise<ObjectHeader | undefined> {
    return this.lookup(oid, resolving, (pack, offset) => this.headerFromPack(pack, offset, resolving), (dir) => this.headerLoose(dir, oid));
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

  /** A loose object's type and size from its first compressed bytes (the whole file only without readChunks). */
  private async headerLoose(dir: string, oid: string): Promise<ObjectHeader | undefined> {
    const path = this.loosePath(dir, oid);
    let bytes: Uint8Array;
    try {
      if (this.fs.readChunks) {
        const it = this.fs.readChunks(path, 4096)[Symbol.asyncIterator]();
        try {
          const first = await it.next();
          bytes = first.done ? new Uint8Array(0) : first.value;
        } finally {
          await it.return?.(); // closes the file
        }
      } else bytes = await this.fs.readFile(path);
    } catch (e) {
      if (isMissing(e)) return undefined;
      throw e;
    }
    const h = readLooseHeader(bytes, { zlib: this.zlib });
    return { type: h.type, size: h.size };
  }

  private async readLoose(dir: string, oid: string): Promise<PackedObject | undefined> {
    let bytes: Uint8Array;
    try {
      bytes = await this.fs.readFile(this.loosePath(dir, oid));
    } catch (e) {
      if (isMissing(e)) return undefined;
      throw e;
    }
    const { type, content } = decodeLooseObject(bytes, { zlib: this.zlib, hash: this.hash, format: this.format, expectOid: oid });
    return { type, content };
  }

  private async readFromPack(pack: PackFile, offset: number, oid: string, resolving: Set<string>): Promise<PackedObject> {
    const source = await this.openPack(pack);
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
    const source = await this.openPack(pack);
    return readPackedHeader(source, offset, {
      format: this.format,
      index: pack.index,
      cache: pack.cache,
      resolveRef: (base) => this.readAny(base, resolving),
      resolveRefType: async (base) => (await this.headerAny(base, resolving))?.type,
    });
  }

  // ─────────────────────────────────────────────────────────────────────────── packs

  private openPack(pack: PackFile): Promise<PackSource> {
    if (pack.source === undefined) {
      pack.source = this.loadPackSource(pack);
      pack.source.catch(() => {
        pack.source = undefined;
      });
    }
    return pack.source;
  }

  private async loadPackSource(pack: PackFile): Promise<PackSource> {
    const fs = this.fs;
    const h = oidLength(this.format);
    let source: PackSource;
    const readRange = fs.readRange;
    let size = -1;
    if (typeof readRange === 'function') {
      const st = await fs.stat(pack.packPath);
      if (st === null) throw Object.assign(new Error(`ENOENT: ${pack.packPath}`), { code: 'ENOENT' });
      size = st.size;
    }
    if (size >= 0 && size > this.wholePackLimit && typeof readRange === 'function') {
      const path = pack.packPath;
      source = windowedPackSource(size, (position, length) => readRange.call(fs, path, position, length));
    } else {
      source = bufferPackSource(await fs.readFile(pack.packPath));
    }
    if (source.size < PACK_HEADER_SIZE + h) {
      throw new ScalpelError('TRUNCATED', `pack ${pack.name}: ${source.size} bytes is too small`, { what: 'pack', offset: source.size, need: PACK_HEADER_SIZE + h - source.size });
    }
    const header = parsePackHeader(await source.read(0, PACK_HEADER_SIZE));
    const trailer = await source.read(source.size - h, h);
    checkPackMatchesIndex(header, toHex(trailer), pack.index);
    return source;
  }

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
    if (this.followAlternates) await this.loadAlternates();
    for (const d of this.dirs) d.packs = await this.scanPacks(d);
  }

  /** Adds (never removes) the directories the alternates files name, recursively as git does. */
  private async loadAlternates(): Promise<void> {
    const seen = new Set(this.dirs.map((d) => d.path));
    const queue: Array<{ path: string; depth: number }> = this.dirs.map((d, i) => ({ path: d.path, depth: i === 0 ? 0 : 1 }));
    while (queue.length > 0) {
      const { path, depth } = queue.shift() as { path: string; depth: number };
      if (depth > MAX_ALTERNATE_DEPTH) continue;
      let text: string;
      try {
        text = new TextDecoder().decode(await this.fs.readFile(`${path}/info/alternates`));
      } catch (e) {
        if (isMissing(e)) continue;
        throw e;
      }
      for (const raw of text.split('\n')) {
        const line = raw.endsWith('\r') ? raw.slice(0, -1) : raw;
        if (line === '' || line.startsWith('#')) continue;
        const unq = unquoteC(line);
        if (unq === undefined || unq === '') continue;
        const target = resolvePath(path, unq);
        if (seen.has(target)) continue;
        seen.add(target);
        const st = await this.fs.stat(target);
        if (st === null || st.type !== 'directory') continue;
        this.dirs.push({ path: target, packs: [] });
        queue.push({ path: target, depth: depth + 1 });
      }
    }
  }

  /** Lists `<dir>/pack/*.idx` with their `.pack`; keeps packs already open, parses new idx files. */
  private async scanPacks(dir: ObjectDir): Promise<PackFile[]> {
    const packDir = joinPath(dir.path, 'pack');
    let names: string[];
    try {
      names = await this.fs.readdir(packDir);
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
        index = parsePackIndex(await this.fs.readFile(`${packDir}/${n}`), this.format);
      } catch (e) {
        // git skips a pack whose idx it cannot use (warning); it may be half-removed by a gc.
        if (isMissing(e) || e instanceof ScalpelError) continue;
        throw e;
      }
      out.push({ name, packPath: `${packDir}/${name}.pack`, index, source: undefined, cache: this.baseCache?.forPack() });
    }
    return out;
  }

  // ─────────────────────────────────────────────────────────────────────────── write

  private async writeLoose(oid: string, bytes: Uint8Array): Promise<void> {
    const dir = `${this.objectsDir}/${oid.slice(0, 2)}`;
    const tmp = await this.writeTemp(dir, 'tmp_obj_', bytes);
    await this.renameTemp(tmp, `${dir}/${oid.slice(2)}`);
  }

  /**
   * Writes `bytes` to a new temp file `<dir>/<prefix><random>`, read-only (git_mkstemp_mode 0444),
   * creating `dir` when missing; returns its path.
   */
  private async writeTemp(dir: string, prefix: string, bytes: Uint8Array): Promise<string> {
    const fs = this.fs;
    let madeDir = false;
    let eexist = 0;
    for (;;) {
      const tmp = `${dir}/${prefix}${randomSuffix()}`;
      const readOnly = this.createReadOnly;
      try {
        // some filesystems (memfs) refuse to write the file they just created read-only: those
        // get 0644 and a chmod before the rename.
        await fs.writeFile(tmp, bytes, { mode: readOnly ? 0o444 : 0o644, exclusive: true });
        if (!readOnly) await this.makeReadOnly(tmp);
        return tmp;
      } catch (e) {
        const code = fsErrorCode(e);
        if (code === 'EEXIST' && ++eexist < 8) continue;
        if (code === 'ENOENT' && !madeDir) {
          madeDir = true;
          await this.makeObjectsSubdir(dir);
          continue;
        }
        if (code !== 'EEXIST') await this.removeQuietly(tmp);
        if (code === 'EACCES' && readOnly) {
          this.createReadOnly = false;
          continue;
        }
        throw e;
      }
    }
  }

  /** Renames a temp file to its final name (an object file or a pack file) and applies core.sharedRepository. */
  private async renameTemp(tmp: string, final: string): Promise<void> {
    try {
      await this.fs.rename(tmp, final);
    } catch (e) {
      await this.removeQuietly(tmp);
      // Another writer got there first (rename over an existing file fails on some systems).
      if ((await this.fs.lstat(final).catch(() => null)) !== null) return;
      throw e;
    }
    await this.adjustSharedPerm(final, false);
  }

  /**
   * One pack and its idx: both written to temp files first, then the `.pack` renamed into place,
   * then the `.idx` (a reader finds packs by their idx, so it never sees one without its pack).
   * The new pack is searched from then on without a re-scan.
   */
  private async writePack(objects: readonly NewObject[]): Promise<void> {
    // ids as `idOf` computed them (writeNew's contract), not hashed a second time
    const enc = encodePack(objects, { format: this.format, hash: this.hash, zlib: this.zlib, level: this.compressionLevel });
    const dir = `${this.objectsDir}/pack`;
    const name = `pack-${enc.checksum}`;
    const tmpPack = await this.writeTemp(dir, 'tmp_pack_', enc.pack);
    let tmpIdx: string;
    try {
      tmpIdx = await this.writeTemp(dir, 'tmp_idx_', enc.index);
    } catch (e) {
      await this.removeQuietly(tmpPack);
      throw e;
    }
    const packPath = `${dir}/${name}.pack`;
    const hadPack = (await this.fs.lstat(packPath).catch(() => null)) !== null;
    try {
      await this.renameTemp(tmpPack, packPath);
    } catch (e) {
      await this.removeQuietly(tmpIdx);
      throw e;
    }
    try {
      await this.renameTemp(tmpIdx, `${dir}/${name}.idx`);
    } catch (e) {
      // no idx: the pack would be garbage nobody reads; a pack that was there before stays
      if (!hadPack) await this.removeQuietly(packPath);
      throw e;
    }
    await this.ensureScanned();
    const home = this.dirs[0];
    if (!home.packs.some((p) => p.name === name)) {
      home.packs.push({ name, packPath, index: parsePackIndex(enc.index, this.format), source: undefined, cache: this.baseCache?.forPack() });
    }
  }

  /** chmod a-w, keeping the read bits the umask left (what creating it 0444 would have given). */
  private async makeReadOnly(path: string): Promise<void> {
    if (!this.fs.capabilities.modes) return;
    const st = await this.fs.lstat(path);
    if (st !== null && st.mode & 0o222) await this.fs.chmod(path, st.mode & 0o7555);
  }

  /** A fan-out directory or `pack`, with core.sharedRepository's permissions. */
  private async makeObjectsSubdir(dir: string): Promise<void> {
    try {
      await this.fs.mkdir(dir, 0o777);
    } catch (e) {
      if (fsErrorCode(e) === 'EEXIST') return;
      throw e;
    }
    await this.adjustSharedPerm(dir, true);
  }

  private async adjustSharedPerm(path: string, isDir: boolean): Promise<void> {
    if (sharedSetting(this.sharedRepository) === 0 || !this.fs.capabilities.modes) return;
    const st = await this.fs.lstat(path);
    if (st === null) return;
    const next = sharedPermissions(this.sharedRepository, st.mode, isDir);
    if ((st.mode ^ next) & 0o7777) await this.fs.chmod(path, next & 0o7777);
  }

  private async removeQuietly(path: string): Promise<void> {
    try {
      await this.fs.unlink(path);
    } catch {
      // already gone, or never created
    }
  }
}

/**
 * The objects one operation writes, stored together: `write` computes the id and keeps the
 * content; `flush` stores what is new (`ObjectDatabase.writeNew`: one pack, or a few loose
 * objects). A batch flushes by itself once it holds `batchBytes` of content, so memory stays
 * bounded however much is captured. Until the final `flush` has returned, ids it handed out may
 * name objects that are not on disk yet: refer to them (move a ref) only after it.
 */
export class ObjectBatch implements ObjectWriter {
  private pending: NewObject[] = [];
  private pendingBytes = 0;
  /** Every id handed out: pending, flushed, or found to exist. */
  private readonly seen = new Set<string>();
  /** Ids whose existence check is under way. */
  private readonly checking = new Map<string, Promise<void>>();
  /** Flushes run one after the other. */
  private queue: Promise<void> = Promise.resolve();
  private failure: { e: unknown } | undefined;

  constructor(readonly odb: ObjectDatabase) {}

  async write(type: ObjectType, content: Uint8Array): Promise<string> {
    const oid = this.odb.idOf(type, content);
    if (this.seen.has(oid)) {
      // the same object, written concurrently: done when that write is, and failed if it fails
      await this.checking.get(oid);
      return oid;
    }
    this.seen.add(oid);
    const check = this.odb.exists(oid).then((exists) => {
      if (exists) return;
      this.pending.push({ oid, type, content });
      this.pendingBytes += content.length;
    });
    this.checking.set(oid, check);
    try {
      await check;
    } catch (e) {
      // not queued: a retry must not take the id for written
      this.seen.delete(oid);
      throw e;
    } finally {
      this.checking.delete(oid);
    }
    if (this.pendingBytes >= this.odb.batchBytes) await this.flush();
    return oid;
  }

  async has(oid: string): Promise<boolean> {
    return this.seen.has(oid.toLowerCase()) || this.odb.has(oid);
  }

  /** Objects waiting for the next flush. */
  get size(): number {
    return this.pending.length;
  }

  /** Stores every pending object; throws the failure of this or any earlier flush of the batch. */
  flush(): Promise<void> {
    const items = this.pending;
    this.pending = [];
    this.pendingBytes = 0;
    const run = this.queue.then(async () => {
      if (this.failure || items.length === 0) return;
      try {
        // each was found absent when it was queued (and ids are unique within the batch)
        await this.odb.writeNew(items, { checked: true });
      } catch (e) {
        this.failure ??= { e };
      }
    });
    this.queue = run;
    return run.then(() => {
      if (this.failure) throw this.failure.e;
    });
  }
}
