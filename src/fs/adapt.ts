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
 * This module imports no Node built-in: it is reachable from the browser root entry. Its parts:
 * errors.ts (FsError, error codes), stat.ts (stat objects), probe.ts (capabilities), raw.ts (the
 * caller's promise API).
 */
import { ScalpelError } from '../errors/index.js';
import { decodePath, encodePath, hasEscapedBytes } from '../bytes/text.js';
import { FsError, normalizeErrorCode, unsupported, wrapError } from './errors.js';
import { guessCapabilities, inScratchDir, probeCapabilities, probePathMode, runProbes, stripReasons } from './probe.js';
import { isFn, promiseApi, toBytes, type PathMode, type RawFn, type RawFs } from './raw.js';
import { convertStat } from './stat.js';
import type { FileStat, Fs, FsCapabilities } from './types.js';

// the adapter's parts, where importers of this module have always found them
export { FsError, normalizeErrorCode } from './errors.js';
export { guessCapabilities, probeCapabilities, type ProbeResult } from './probe.js';
export type { PathMode } from './raw.js';
export { convertStat } from './stat.js';

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

/** Marks adapters made here, so toFs can re-probe their raw API rather than the adapter. */
const ADAPTED = Symbol('git-scalpel.adapted');

function isOurAdapter(v: unknown): v is AdaptedFs {
  return !!v && typeof v === 'object' && (v as Record<symbol, unknown>)[ADAPTED] === true;
}

const REQUIRED = ['readFile', 'writeFile', 'readdir', 'mkdir', 'rmdir', 'unlink'] as const;

function isFsContract(input: unknown): input is Fs {
  return (
    !!input &&
    typeof input === 'object' &&
    'capabilities' in input &&
    typeof (input as Fs).capabilities === 'object' &&
    typeof (input as Fs).lstat === 'function'
  );
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

/**
 * Adapter over a promise fs API with the given configuration; no probing, no I/O. `toFs` is the
 * usual entry; this is for callers that know the fs (e.g. memoryFs).
 */
export function adaptPromiseFs(input: unknown, cfg: Partial<AdapterConfig> = {}): AdaptedFs {
  const raw = promiseApi(input);
  if (!raw)
    throw new ScalpelError(
      'BAD_ARGUMENT',
      'not a filesystem: expected an Fs, a node-style fs module, memfs, or a promise fs with readFile/writeFile/...',
      { name: 'fs', reason: 'no-readFile' },
    );
  const missing: string[] = REQUIRED.filter((k) => !isFn(raw, k));
  if (!isFn(raw, 'lstat') && !isFn(raw, 'stat')) missing.push('lstat');
  if (missing.length > 0) {
    throw new ScalpelError('BAD_ARGUMENT', `not a usable filesystem: missing ${missing.join(', ')}`, {
      name: 'fs',
      reason: 'missing-methods',
      missing,
    });
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
    throw new ScalpelError(
      'UNSUPPORTED',
      `filesystem ${fsName} cannot represent the non-UTF-8 name ${JSON.stringify(p)}${adapter.probed ? '' : ' (not probed: pass probeDir to toFs)'}`,
      {
        capability: 'nonUtf8Names',
        path: p,
        fs: fsName,
      },
    );
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
      // lstat follows no last component: its ELOOP is a parent that loops, so nothing is there
      if (code === 'ENOENT' || code === 'ENOTDIR' || (kind === 'lstat' && code === 'ELOOP')) return null;
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
      const names = (await call('scandir', path, () =>
        pathMode === 'bytes' ? f.call(raw, p, { encoding: 'buffer' }) : f.call(raw, p),
      )) as unknown[];
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
    ...(fn('link')
      ? {
          async link(existing: string, newPath: string) {
            const a = osPath(existing);
            const b = osPath(newPath);
            await call('link', existing, () => (fn('link') as RawFn).call(raw, a, b), newPath);
          },
        }
      : {}),
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
    ...(fs.link ? { link: fs.link.bind(fs) } : {}),
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
    throw new ScalpelError(
      'BAD_ARGUMENT',
      'not a filesystem: expected an Fs, a node-style fs module, memfs, or a promise fs with readFile/writeFile/...',
      { name: 'fs', reason: 'no-readFile' },
    );
  }
  const name = opts.name;
  if (opts.probeDir === undefined) {
    return adaptPromiseFs(input, {
      name,
      capabilities: { ...guessCapabilities(input), ...opts.capabilities },
      pathMode: opts.pathMode,
      probed: false,
    });
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
