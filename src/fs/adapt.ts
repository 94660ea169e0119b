/**
 * Turning what a caller hands us into the Fs contract (types.ts), and finding out what that
 * filesystem really does (DESIGN "Platform": probe, do not trust that a method exists).
 *
 *   const fs = await toFs(input, { probeDir: '<gitdir>/scalpel/probe' });
 *
 * `input` may be
 *   (a) an object that already implements Fs (has `capabilities`): returned as is (with
 *       `probeDir`, wrapped so its capabilities are the probed ones);
 *   (b) a Node-style fs module or a memfs `IFs` (has `.promises` with lstat, ...): adapted over
 *       `.promises`;
 *   (c) an isomorphic-git-style promise fs: `{ promises: {...} }`, or a bare object with async
 *       readFile, writeFile, unlink, readdir, mkdir, rmdir, stat, lstat and optionally readlink,
 *       symlink, chmod, rename (@isomorphic-git/lightning-fs and the like).
 *
 * Without `probeDir` nothing is written and the capabilities are a guess that errs on the safe
 * side: `exclusiveCreate` false (exclusive create is emulated, see writeFile), `renameFollowsSymlinks`
 * true (symlinks are replaced by unlink + symlink), `symlinks`/`modes` from method presence, and
 * names that are not UTF-8 are refused (UNSUPPORTED, capability 'nonUtf8Names'). The engine always
 * passes a probe directory.
 *
 * This module imports no Node built-in: it is reachable from the browser root entry.
 */
import { ScalpelError } from '../errors/index.js';
import { decodePath, encodePath, hasEscapedBytes, utf8Encode } from '../bytes/text.js';
import { equalBytes } from '../bytes/compare.js';
import { joinPath } from './path.js';
import { mkdirp, pruneEmptyDirs } from './atomic.js';
import { randomHex } from '../bytes/random.js';
import { fsErrorCode, type FileStat, type FileType, type Fs, type FsCapabilities } from './types.js';

/**
 * How names that are not UTF-8 (strings with U+DC80..U+DCFF escapes, see bytes/text.ts) reach
 * the underlying fs:
 * - 'bytes': as Uint8Array paths, and readdir/readlink ask for `encoding: 'buffer'` (node:fs).
 * - 'strings': the escaped string is passed as is; the fs stores JS strings and gives the same
 *   string back (memfs, lightning-fs). Raw bytes cannot be produced on disk there, but names
 *   round-trip through it.
 * - 'utf8': neither works (or not probed): such names are refused with UNSUPPORTED.
 */
export type PathMode = 'bytes' | 'strings' | 'utf8';

export interface ToFsOptions {
  /** Name shown in errors (default 'node-style fs' / 'promise fs'). */
  name?: string;
  /**
   * Directory in which to probe what the fs really does (created if missing, e.g.
   * `<gitdir>/scalpel/probe`). Everything the probe creates is removed again, even on failure.
   */
  probeDir?: string;
  /** Forced capabilities; they win over probes and guesses (use them to turn a capability off). */
  capabilities?: Partial<FsCapabilities>;
  /** Forced path mode (else probed, or 'utf8' without a probe). */
  pathMode?: PathMode;
}

/** An adapter made by this module: the contract plus what it knows about itself. */
export interface AdaptedFs extends Fs {
  readonly [ADAPTED]?: true;
  /** Capabilities come from probing (true) or from a guess / the caller (false). */
  readonly probed: boolean;
  readonly pathMode: PathMode;
  /** The promise API calls go to. */
  readonly raw: object;
}

/** The errors the adapter throws for a failed fs call: an OS-style `code`, the original as `cause`. */
export class FsError extends Error {
  readonly code: string;
  readonly syscall: string;
  readonly path?: string;
  readonly dest?: string;
  constructor(code: string, syscall: string, path?: string, cause?: unknown, dest?: string) {
    const orig = cause instanceof Error ? cause.message : cause === undefined ? '' : String(cause);
    const where = path === undefined ? syscall : `${syscall} '${path}'${dest === undefined ? '' : ` -> '${dest}'`}`;
    const message = orig.startsWith(code) ? `${orig}${orig.includes(syscall) ? '' : ` (${where})`}` : `${code}: ${orig ? orig + ', ' : ''}${where}`;
    super(message, cause === undefined ? undefined : { cause });
    this.name = 'FsError';
    this.code = code;
    this.syscall = syscall;
    if (path !== undefined) this.path = path;
    if (dest !== undefined) this.dest = dest;
  }
}

/** DOMException names of the File System Access API / OPFS, as errno codes. */
const DOM_CODES: Record<string, string> = {
  NotFoundError: 'ENOENT',
  TypeMismatchError: 'ENOTDIR',
  InvalidModificationError: 'ENOTEMPTY',
  NoModificationAllowedError: 'EACCES',
  NotAllowedError: 'EACCES',
  QuotaExceededError: 'ENOSPC',
  NotSupportedError: 'ENOTSUP',
  InvalidStateError: 'EIO',
};

/** The errno-style code of any error an fs implementation throws ('UNKNOWN' when there is none). */
export function normalizeErrorCode(e: unknown): string {
  const c = fsErrorCode(e);
  if (c !== undefined && /^E[A-Z0-9]+$/.test(c)) return c;
  if (c !== undefined && DOM_CODES[c]) return DOM_CODES[c];
  if (e && typeof e === 'object') {
    const name = (e as { name?: unknown }).name;
    if (typeof name === 'string' && DOM_CODES[name]) return DOM_CODES[name];
    const msg = (e as { message?: unknown }).message;
    // "ENOENT: no such file", and lightning-fs's "ENOTDIR is not a constructor" (a missing error class)
    const m = typeof msg === 'string' ? /^(E[A-Z]{2,})\b/.exec(msg) : null;
    if (m) return m[1];
  }
  return c ?? 'UNKNOWN';
}

function wrapError(e: unknown, syscall: string, path?: string, dest?: string): Error {
  if (e instanceof ScalpelError || e instanceof FsError) return e;
  return new FsError(normalizeErrorCode(e), syscall, path, e, dest);
}

function unsupported(fsName: string, capability: string, method: string, path?: string): ScalpelError {
  return new ScalpelError('UNSUPPORTED', `filesystem ${fsName} has no ${method}${path === undefined ? '' : ` (needed for ${path})`}: capability '${capability}' is missing`, {
    capability,
    method,
    fs: fsName,
    ...(path === undefined ? {} : { path }),
  });
}

// ---------------------------------------------------------------------------------------------
// stats

const S_IFMT = 0o170000;
const TYPE_BITS: Record<FileType, number> = { file: 0o100000, directory: 0o040000, symlink: 0o120000, other: 0 };

function num(v: unknown): number {
  if (typeof v === 'bigint') return Number(v);
  if (typeof v === 'number' && Number.isFinite(v)) return v;
  return 0;
}

/** Truncated to 32 bits as git stores dev/ino/uid/gid (and seconds). */
function u32(v: unknown): number {
  if (typeof v === 'bigint') return Number(BigInt.asUintN(32, v));
  if (typeof v === 'number' && Number.isFinite(v)) return v >>> 0;
  return 0;
}

function statType(s: Record<string, unknown>): FileType {
  const call = (k: string): boolean | undefined => (typeof s[k] === 'function' ? Boolean((s[k] as () => unknown).call(s)) : undefined);
  const l = call('isSymbolicLink');
  const d = call('isDirectory');
  const f = call('isFile');
  if (l) return 'symlink';
  if (d) return 'directory';
  if (f) return 'file';
  const t = s.type;
  if (t === 'file') return 'file';
  if (t === 'dir' || t === 'directory') return 'directory';
  if (t === 'symlink') return 'symlink';
  if (l === false || d === false || f === false) return 'other';
  const fmt = num(s.mode) & S_IFMT;
  return fmt === 0o100000 ? 'file' : fmt === 0o040000 ? 'directory' : fmt === 0o120000 ? 'symlink' : 'other';
}

/** [seconds (uint32), nanoseconds] of `mtime` / `ctime`; never NaN. */
function statTime(s: Record<string, unknown>, which: 'mtime' | 'ctime'): [number, number] {
  const ns = s[which + 'Ns'];
  if (typeof ns === 'bigint') {
    let sec = ns / 1_000_000_000n;
    let rem = ns - sec * 1_000_000_000n;
    if (rem < 0n) {
      sec -= 1n;
      rem += 1_000_000_000n;
    }
    return [u32(sec), Number(rem)];
  }
  let ms: number | undefined;
  const raw = s[which + 'Ms'];
  if (typeof raw === 'bigint') ms = Number(raw);
  else if (typeof raw === 'number' && Number.isFinite(raw)) ms = raw;
  else {
    const d = s[which];
    if (d && typeof (d as Date).getTime === 'function') {
      const t = (d as Date).getTime();
      if (Number.isFinite(t)) ms = t;
    }
  }
  if (ms === undefined) return which === 'ctime' ? statTime(s, 'mtime') : [0, 0];
  let sec = Math.floor(ms / 1000);
  let nsec = Math.round((ms - sec * 1000) * 1e6);
  if (nsec >= 1e9) {
    sec += 1;
    nsec -= 1e9;
  }
  return [u32(sec), Math.max(0, nsec)];
}

/**
 * Any fs's stat object as a FileStat: bigint nanosecond fields when present, else milliseconds
 * (memfs: whole milliseconds; lightning-fs: Date.now()), else Date objects, else 0 — never NaN.
 * Type bits missing from `mode` (lightning-fs keeps only permission bits) are filled in from the type.
 */
export function convertStat(raw: unknown): FileStat {
  const s = (raw ?? {}) as Record<string, unknown>;
  const type = statType(s);
  let mode = num(s.mode);
  if ((mode & S_IFMT) === 0) mode |= TYPE_BITS[type];
  const [mtimeSeconds, mtimeNanoseconds] = statTime(s, 'mtime');
  const [ctimeSeconds, ctimeNanoseconds] = statTime(s, 'ctime');
  return {
    type,
    mode,
    size: num(s.size),
    ctimeSeconds,
    ctimeNanoseconds,
    mtimeSeconds,
    mtimeNanoseconds,
    dev: u32(s.dev),
    ino: u32(s.ino),
    uid: u32(s.uid),
    gid: u32(s.gid),
  };
}

// ---------------------------------------------------------------------------------------------
// the adapter

/** Marks adapters made here, so toFs can re-probe their raw API rather than the adapter. */
const ADAPTED = Symbol('git-scalpel.adapted');

function isOurAdapter(v: unknown): v is AdaptedFs {
  return !!v && typeof v === 'object' && (v as Record<symbol, unknown>)[ADAPTED] === true;
}

type RawFn = (...args: unknown[]) => Promise<unknown>;
type RawFs = Record<string, unknown>;

const REQUIRED = ['readFile', 'writeFile', 'readdir', 'mkdir', 'rmdir', 'unlink'] as const;

function isFn(raw: RawFs, k: string): boolean {
  return typeof raw[k] === 'function';
}

/** The promise API of `input` (cases b and c), or undefined when it is not one. */
function promiseApi(input: unknown): RawFs | undefined {
  if (!input || (typeof input !== 'object' && typeof input !== 'function')) return undefined;
  const o = input as RawFs;
  const p = o.promises as RawFs | undefined;
  if (p && typeof p === 'object' && isFn(p, 'readFile')) return p;
  if (isFn(o, 'readFile')) return o;
  return undefined;
}

function isFsContract(input: unknown): input is Fs {
  return !!input && typeof input === 'object' && 'capabilities' in input && typeof (input as Fs).capabilities === 'object' && typeof (input as Fs).lstat === 'function';
}

function toBytes(v: unknown): Uint8Array | undefined {
  if (v instanceof Uint8Array) return new Uint8Array(v.buffer, v.byteOffset, v.byteLength);
  if (v instanceof ArrayBuffer) return new Uint8Array(v);
  if (ArrayBuffer.isView(v)) return new Uint8Array(v.buffer, v.byteOffset, v.byteLength);
  if (typeof v === 'string') return utf8Encode(v);
  return undefined;
}

function nameOf(v: unknown): string {
  if (typeof v === 'string') return v;
  const b = toBytes(v);
  return b ? decodePath(b) : String(v);
}

interface AdapterConfig {
  name: string;
  capabilities: FsCapabilities;
  pathMode: PathMode;
  probed: boolean;
}

/** Capabilities guessed from method presence, erring where an error is safe (see module doc). */
export function guessCapabilities(input: unknown): FsCapabilities {
  const raw = promiseApi(input) ?? {};
  return {
    symlinks: isFn(raw, 'symlink') && isFn(raw, 'readlink'),
    modes: isFn(raw, 'chmod'),
    exclusiveCreate: false,
    renameFollowsSymlinks: true,
    renameReplaces: false,
  };
}

/**
 * Adapter over a promise fs API with the given configuration; no probing, no I/O. `toFs` is the
 * usual entry; this is for callers that know the fs (e.g. memoryFs).
 */
export function adaptPromiseFs(input: unknown, cfg: Partial<AdapterConfig> = {}): AdaptedFs {
  const raw = promiseApi(input);
  if (!raw) throw new ScalpelError('BAD_ARGUMENT', 'not a filesystem: expected an Fs, a node-style fs module, memfs, or a promise fs with readFile/writeFile/...', { name: 'fs', reason: 'no-readFile' });
  const missing: string[] = REQUIRED.filter((k) => !isFn(raw, k));
  if (!isFn(raw, 'lstat') && !isFn(raw, 'stat')) missing.push('lstat');
  if (missing.length > 0) {
    throw new ScalpelError('BAD_ARGUMENT', `not a usable filesystem: missing ${missing.join(', ')}`, { name: 'fs', reason: 'missing-methods', missing });
  }
  const fsName = cfg.name ?? (promiseApi(input) === (input as RawFs).promises ? 'node-style fs' : 'promise fs');
  const capabilities: FsCapabilities = { ...guessCapabilities(input), ...cfg.capabilities };
  const pathMode: PathMode = cfg.pathMode ?? 'utf8';
  const hasSymlinkApi = isFn(raw, 'symlink') || isFn(raw, 'readlink');
  let statOptions = true; // pass { bigint: true } until the fs rejects the argument

  const fn = (k: string): RawFn | undefined => (isFn(raw, k) ? (raw[k] as RawFn) : undefined);
  const osPath = (p: string): string | Uint8Array => {
    if (!hasEscapedBytes(p)) return p;
    if (pathMode === 'bytes') return encodePath(p);
    if (pathMode === 'strings') return p;
    throw new ScalpelError('UNSUPPORTED', `filesystem ${fsName} cannot represent the non-UTF-8 name ${JSON.stringify(p)}${adapter.probed ? '' : ' (not probed: pass probeDir to toFs)'}`, {
      capability: 'nonUtf8Names',
      path: p,
      fs: fsName,
    });
  };
  async function call<T>(syscall: string, path: string, f: () => Promise<T>, dest?: string): Promise<T> {
    try {
      return await f();
    } catch (e) {
      throw wrapError(e, syscall, path, dest);
    }
  }
  async function statCall(kind: 'lstat' | 'stat', path: string): Promise<FileStat | null> {
    // Without symlinks, stat and lstat agree: use whichever exists.
    const f = fn(kind) ?? (hasSymlinkApi ? undefined : fn(kind === 'lstat' ? 'stat' : 'lstat'));
    if (!f) throw unsupported(fsName, kind, kind, path);
    const p = osPath(path);
    let s: unknown;
    try {
      s = statOptions ? await f.call(raw, p, { bigint: true }) : await f.call(raw, p);
    } catch (e) {
      const code = normalizeErrorCode(e);
      if (code === 'ENOENT' || code === 'ENOTDIR') return null;
      if (statOptions && !/^E[A-Z0-9]+$/.test(code)) {
        // an fs that rejects the options argument: retry without it, and never pass it again
        statOptions = false;
        return statCall(kind, path);
      }
      throw wrapError(e, kind, path);
    }
    if (s === null || s === undefined) return null;
    return convertStat(s);
  }

  const adapter: AdaptedFs = {
    [ADAPTED]: true,
    name: fsName,
    capabilities,
    probed: cfg.probed ?? false,
    pathMode,
    raw,
    async readFile(path) {
      const p = osPath(path);
      const v = await call('open', path, () => fn('readFile')!.call(raw, p));
      const b = toBytes(v);
      if (b) return b;
      // lightning-fs returns undefined for a directory
      const st = await statCall('stat', path);
      throw new FsError(st?.type === 'directory' ? 'EISDIR' : st ? 'EIO' : 'ENOENT', 'read', path, 'the filesystem returned no data');
    },
    async writeFile(path, data, opts = {}) {
      const p = osPath(path);
      const o: Record<string, unknown> = { flag: opts.exclusive ? 'wx' : 'w' };
      if (opts.mode !== undefined) o.mode = opts.mode;
      if (opts.exclusive && !capabilities.exclusiveCreate) {
        // Emulated: the fs ignores 'wx'. Not atomic (capabilities.exclusiveCreate stays false).
        if (await statCall('lstat', path)) throw new FsError('EEXIST', 'open', path, 'file already exists');
      }
      await call('open', path, () => fn('writeFile')!.call(raw, p, data, o));
    },
    lstat: (path) => statCall('lstat', path),
    stat: (path) => statCall('stat', path),
    async readdir(path) {
      const p = osPath(path);
      const f = fn('readdir')!;
      const names = (await call('scandir', path, () => (pathMode === 'bytes' ? f.call(raw, p, { encoding: 'buffer' }) : f.call(raw, p)))) as unknown[];
      if (!Array.isArray(names)) throw new FsError('EIO', 'scandir', path, 'readdir did not return an array');
      const out: string[] = [];
      for (const n of names) {
        const s = nameOf(n);
        if (s !== '.' && s !== '..') out.push(s);
      }
      return out;
    },
    async readlink(path) {
      const f = fn('readlink');
      if (!f) throw unsupported(fsName, 'symlinks', 'readlink', path);
      const p = osPath(path);
      const t = await call('readlink', path, () => (pathMode === 'bytes' ? f.call(raw, p, { encoding: 'buffer' }) : f.call(raw, p)));
      return nameOf(t);
    },
    async symlink(target, path) {
      const f = fn('symlink');
      if (!f) throw unsupported(fsName, 'symlinks', 'symlink', path);
      const t = osPath(target);
      const p = osPath(path);
      await call('symlink', path, () => f.call(raw, t, p), target);
    },
    async mkdir(path, mode) {
      const p = osPath(path);
      await call('mkdir', path, () => fn('mkdir')!.call(raw, p, mode === undefined ? {} : { mode }));
    },
    async rmdir(path) {
      const p = osPath(path);
      await call('rmdir', path, () => fn('rmdir')!.call(raw, p));
    },
    async unlink(path) {
      const p = osPath(path);
      await call('unlink', path, () => fn('unlink')!.call(raw, p));
    },
    async rename(from, to) {
      const f = fn('rename');
      if (!f) throw unsupported(fsName, 'rename', 'rename', from);
      const a = osPath(from);
      const b = osPath(to);
      await call('rename', from, () => f.call(raw, a, b), to);
    },
    async chmod(path, mode) {
      const f = fn('chmod');
      if (!f) throw unsupported(fsName, 'modes', 'chmod', path);
      const p = osPath(path);
      await call('chmod', path, () => f.call(raw, p, mode));
    },
  };
  return adapter;
}

/** `fs` with other capabilities: the same methods, called on `fs` itself. */
export function withCapabilities(fs: Fs, capabilities: FsCapabilities): Fs {
  return {
    name: fs.name,
    capabilities: { ...capabilities },
    readFile: fs.readFile.bind(fs),
    writeFile: fs.writeFile.bind(fs),
    lstat: fs.lstat.bind(fs),
    stat: fs.stat.bind(fs),
    readdir: fs.readdir.bind(fs),
    readlink: fs.readlink.bind(fs),
    symlink: fs.symlink.bind(fs),
    mkdir: fs.mkdir.bind(fs),
    rmdir: fs.rmdir.bind(fs),
    unlink: fs.unlink.bind(fs),
    rename: fs.rename.bind(fs),
    chmod: fs.chmod.bind(fs),
  };
}

/** Accept any supported filesystem (see the module doc) and return the Fs contract. */
export async function toFs(input: unknown, opts: ToFsOptions = {}): Promise<Fs> {
  if (isFsContract(input)) {
    if (opts.probeDir === undefined) return input;
    // One of ours: probe the fs underneath (the adapter may emulate exclusive create).
    if (isOurAdapter(input)) return toFs(input.raw, { ...opts, name: opts.name ?? input.name });
    const probed = await probeCapabilities(input, opts.probeDir);
    return withCapabilities(input, { ...stripReasons(probed), ...opts.capabilities });
  }
  const raw = promiseApi(input);
  if (!raw) {
    throw new ScalpelError('BAD_ARGUMENT', 'not a filesystem: expected an Fs, a node-style fs module, memfs, or a promise fs with readFile/writeFile/...', { name: 'fs', reason: 'no-readFile' });
  }
  const name = opts.name;
  if (opts.probeDir === undefined) {
    return adaptPromiseFs(input, { name, capabilities: { ...guessCapabilities(input), ...opts.capabilities }, pathMode: opts.pathMode, probed: false });
  }
  // Probe through a provisional adapter that passes 'wx' straight through (no emulation), so the
  // exclusive-create probe sees what the fs itself does.
  const provisional = adaptPromiseFs(input, {
    name,
    capabilities: { ...guessCapabilities(input), exclusiveCreate: true, renameFollowsSymlinks: false, renameReplaces: true },
    pathMode: 'utf8',
  });
  let pathMode: PathMode = 'utf8';
  const caps = await inScratchDir(provisional, opts.probeDir, async (dir) => {
    pathMode = opts.pathMode ?? (await probePathMode(raw, dir));
    return runProbes(provisional, dir);
  });
  return adaptPromiseFs(input, { name, capabilities: { ...stripReasons(caps), ...opts.capabilities }, pathMode, probed: true });
}

// ---------------------------------------------------------------------------------------------
// probes

/** Probe results: the capabilities, and for each one that is false (or true by default) why. */
export interface ProbeResult extends FsCapabilities {
  renameReplaces: boolean;
  reasons: Partial<Record<keyof FsCapabilities, string>>;
}

function stripReasons(p: ProbeResult): FsCapabilities {
  return { symlinks: p.symlinks, modes: p.modes, exclusiveCreate: p.exclusiveCreate, renameFollowsSymlinks: p.renameFollowsSymlinks, renameReplaces: p.renameReplaces };
}

/**
 * Find out what `fs` really does, in a fresh directory `probe-<random>` under `scratchDir`
 * (created with its missing parents; the caller passes one inside `.git/scalpel/`). Everything
 * created is removed afterwards, even when a probe throws. Probes (see runProbes):
 *
 * - symlinks: symlink + readlink round trip and lstat says symlink. A missing method, or
 *   EPERM/ENOSYS/ENOTSUP/... (Windows without privilege, OPFS), → false.
 * - modes: chmod 0o755 then lstat shows the owner exec bit, chmod 0o644 then it is gone → true.
 *   No chmod, or bits that do not stick (Windows, FAT, lightning-fs without chmod) → false.
 * - exclusiveCreate: writeFile({ exclusive }) on an existing file must fail with EEXIST and leave
 *   its content alone (lightning-fs ignores 'wx' and overwrites → false).
 * - renameFollowsSymlinks: rename a symlink; the destination must be a symlink with the same
 *   target, the source gone and the target file untouched, else true (memfs moves the target
 *   and leaves the link; lightning-fs moves the target too). Without symlinks it is reported true,
 *   the safe value (nobody may rename a symlink there).
 * - renameReplaces: rename a file onto another, unlink it, then remove their directory. memfs 4
 *   keeps counting the replaced entry (rmdir: ENOTEMPTY while readdir shows nothing) → false, and
 *   that directory stays behind, there being no way to remove it; atomic.ts's renameOver then
 *   unlinks a target before renaming onto it.
 *
 * Probe `fs` as the engine will use it: an adapter that emulates exclusive create would pass the
 * exclusive probe; `toFs` therefore probes through an adapter that passes 'wx' straight through.
 */
export async function probeCapabilities(fs: Fs, scratchDir: string): Promise<ProbeResult> {
  return inScratchDir(fs, scratchDir, (dir) => runProbes(fs, dir));
}

async function inScratchDir<T>(fs: Fs, scratchDir: string, f: (dir: string) => Promise<T>): Promise<T> {
  const created = await mkdirp(fs, scratchDir);
  const dir = joinPath(scratchDir, `probe-${randomHex(6)}`);
  try {
    await fs.mkdir(dir);
    return await f(dir);
  } finally {
    await removeTree(fs, dir).catch(() => undefined);
    await pruneEmptyDirs(fs, created, '/').catch(() => undefined);
  }
}

/** Remove `dir` and everything under it without following symlinks; best effort per entry. */
async function removeTree(fs: Fs, dir: string): Promise<void> {
  const st = await fs.lstat(dir);
  if (!st) return;
  if (st.type !== 'directory') {
    await fs.unlink(dir);
    return;
  }
  for (const name of await fs.readdir(dir)) {
    await removeTree(fs, joinPath(dir, name)).catch(() => undefined);
  }
  await fs.rmdir(dir);
}

const NO_SYMLINK_CODES = new Set(['EPERM', 'ENOSYS', 'ENOTSUP', 'EOPNOTSUPP', 'EINVAL', 'EACCES']);
const enc = (s: string) => utf8Encode(s);

async function runProbes(fs: Fs, dir: string): Promise<ProbeResult> {
  const reasons: ProbeResult['reasons'] = {};
  const why = (e: unknown) => (e instanceof ScalpelError ? `${e.code}: ${e.message}` : `${normalizeErrorCode(e)}: ${e instanceof Error ? e.message : String(e)}`);

  // symlinks: a relative link round-trips through readlink and lstat sees a symlink
  let symlinks = false;
  try {
    await fs.writeFile(joinPath(dir, 'target'), enc('T'));
    await fs.symlink('target', joinPath(dir, 'link'));
    const t = await fs.readlink(joinPath(dir, 'link'));
    const st = await fs.lstat(joinPath(dir, 'link'));
    symlinks = t === 'target' && st?.type === 'symlink';
    if (!symlinks) reasons.symlinks = `readlink gave ${JSON.stringify(t)}, lstat type ${st?.type}`;
  } catch (e) {
    const code = e instanceof ScalpelError ? e.code : normalizeErrorCode(e);
    reasons.symlinks = NO_SYMLINK_CODES.has(code) || code === 'UNSUPPORTED' ? why(e) : `unexpected ${why(e)}`;
  }

  // modes: the owner exec bit can be set and cleared
  let modes = false;
  try {
    const p = joinPath(dir, 'mode');
    await fs.writeFile(p, enc('M'), { mode: 0o644 });
    await fs.chmod(p, 0o755);
    const on = await fs.lstat(p);
    await fs.chmod(p, 0o644);
    const off = await fs.lstat(p);
    modes = !!on && !!off && (on.mode & 0o100) !== 0 && (off.mode & 0o111) === 0;
    if (!modes) reasons.modes = `after chmod 755 mode ${on?.mode.toString(8)}, after chmod 644 mode ${off?.mode.toString(8)}`;
  } catch (e) {
    reasons.modes = why(e);
  }

  // exclusiveCreate: 'wx' on an existing file fails with EEXIST and does not write
  let exclusiveCreate = false;
  try {
    const p = joinPath(dir, 'excl');
    await fs.writeFile(p, enc('A'));
    let code: string | undefined;
    try {
      await fs.writeFile(p, enc('B'), { exclusive: true });
    } catch (e) {
      code = normalizeErrorCode(e);
    }
    const after = await fs.readFile(p);
    exclusiveCreate = code === 'EEXIST' && equalBytes(after, enc('A'));
    if (!exclusiveCreate) reasons.exclusiveCreate = code === undefined ? 'exclusive write of an existing file succeeded' : `exclusive write failed with ${code}, content now ${JSON.stringify(new TextDecoder().decode(after))}`;
  } catch (e) {
    reasons.exclusiveCreate = why(e);
  }

  // renameFollowsSymlinks: renaming a link must move the link, not its target
  let renameFollowsSymlinks = true;
  if (!symlinks) {
    reasons.renameFollowsSymlinks = 'no symlinks: reported true, the safe value';
  } else {
    try {
      const target = joinPath(dir, 'rtarget');
      const from = joinPath(dir, 'rlink');
      const to = joinPath(dir, 'rmoved');
      await fs.writeFile(target, enc('R'));
      await fs.symlink('rtarget', from);
      await fs.rename(from, to);
      const toSt = await fs.lstat(to);
      const fromSt = await fs.lstat(from);
      const targetSt = await fs.lstat(target);
      const ok =
        toSt?.type === 'symlink' &&
        (await fs.readlink(to)) === 'rtarget' &&
        fromSt === null &&
        targetSt?.type === 'file' &&
        equalBytes(await fs.readFile(target), enc('R'));
      renameFollowsSymlinks = !ok;
      if (!ok) reasons.renameFollowsSymlinks = `after rename: destination ${toSt?.type ?? 'absent'}, source ${fromSt?.type ?? 'absent'}, target ${targetSt?.type ?? 'absent'}`;
    } catch (e) {
      reasons.renameFollowsSymlinks = `rename of a symlink failed: ${why(e)}`;
    }
  }
  // renameReplaces: a file renamed onto another replaces it, and their directory can be removed
  // after (memfs 4 counts the replaced entry on: rmdir then says ENOTEMPTY, and the probe's own
  // directory stays behind, empty to readdir, in that in-memory filesystem)
  let renameReplaces = false;
  try {
    const sub = joinPath(dir, 'replace');
    await fs.mkdir(sub);
    await fs.writeFile(joinPath(sub, 'a'), enc('A'));
    await fs.writeFile(joinPath(sub, 'b'), enc('B'));
    await fs.rename(joinPath(sub, 'b'), joinPath(sub, 'a'));
    const after = await fs.readFile(joinPath(sub, 'a'));
    await fs.unlink(joinPath(sub, 'a'));
    let code: string | undefined;
    try {
      await fs.rmdir(sub);
    } catch (e) {
      code = normalizeErrorCode(e);
    }
    renameReplaces = code === undefined && equalBytes(after, enc('B'));
    if (!renameReplaces) reasons.renameReplaces = code ? `after rename onto a file and its unlink, rmdir failed with ${code}` : `rename onto a file left ${JSON.stringify(new TextDecoder().decode(after))}`;
  } catch (e) {
    reasons.renameReplaces = why(e);
  }
  return { symlinks, modes, exclusiveCreate, renameFollowsSymlinks, renameReplaces, reasons };
}

/**
 * How non-UTF-8 names travel (see PathMode): create `n<0xff>` as a Uint8Array path and look for
 * those exact bytes in readdir(encoding 'buffer') → 'bytes'; else create the escaped string and
 * look for the same string in readdir → 'strings'; else 'utf8'. Works on the raw API (the
 * adapter's own path handling is what is being decided).
 */
async function probePathMode(raw: RawFs, dir: string): Promise<PathMode> {
  const call = (k: string, ...args: unknown[]) => (raw[k] as RawFn).call(raw, ...args);
  const name = 'n\udcff';
  const bytes = encodePath(name);
  const clean = async () => {
    for (const p of [encodePath(joinPath(dir, name)), joinPath(dir, name), joinPath(dir, 'n\ufffd')]) await call('unlink', p).catch(() => undefined);
  };
  try {
    await call('writeFile', encodePath(joinPath(dir, name)), enc('x'));
    const names = (await call('readdir', dir, { encoding: 'buffer' })) as unknown[];
    if (Array.isArray(names) && names.some((n) => n instanceof Uint8Array && equalBytes(n, bytes))) {
      const back = toBytes(await call('readFile', encodePath(joinPath(dir, name))));
      if (back && equalBytes(back, enc('x'))) return 'bytes';
    }
  } catch {
    // not a bytes-capable fs
  } finally {
    await clean();
  }
  try {
    await call('writeFile', joinPath(dir, name), enc('y'));
    const names = (await call('readdir', dir)) as unknown[];
    if (Array.isArray(names) && names.includes(name)) {
      const back = toBytes(await call('readFile', joinPath(dir, name)));
      if (back && equalBytes(back, enc('y'))) return 'strings';
    }
  } catch {
    // names are UTF-8 only
  } finally {
    await clean();
  }
  return 'utf8';
}
