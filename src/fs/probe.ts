/**
 * What a filesystem really does (DESIGN "Platform": probe, do not trust that a method exists):
 * its capabilities guessed from the methods it has, or found by trying them in a scratch
 * directory, and how it passes names that are not UTF-8.
 */
import { ScalpelError } from '../errors/index.js';
import { encodePath, utf8Encode } from '../bytes/text.js';
import { equalBytes } from '../bytes/compare.js';
import { randomHex } from '../bytes/random.js';
import { joinPath } from './path.js';
import { mkdirp, pruneEmptyDirs } from './atomic.js';
import { normalizeErrorCode } from './errors.js';
import { isFn, promiseApi, toBytes, type PathMode, type RawFn, type RawFs } from './raw.js';
import type { Fs, FsCapabilities } from './types.js';

/** Capabilities guessed from method presence, erring where an error is safe (see adapt.ts). */
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

/** Probe results: the capabilities, and for each one that is false (or true by default) why. */
export interface ProbeResult extends FsCapabilities {
  renameReplaces: boolean;
  reasons: Partial<Record<keyof FsCapabilities, string>>;
}

/** The capabilities alone, as an adapter keeps them. */
export function stripReasons(p: ProbeResult): FsCapabilities {
  return {
    symlinks: p.symlinks,
    modes: p.modes,
    exclusiveCreate: p.exclusiveCreate,
    renameFollowsSymlinks: p.renameFollowsSymlinks,
    renameReplaces: p.renameReplaces,
  };
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

/** Runs `f` in a fresh directory under `scratchDir`, removed afterwards with the parents it needed (see probeCapabilities). */
export async function inScratchDir<T>(fs: Fs, scratchDir: string, f: (dir: string) => Promise<T>): Promise<T> {
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

/** Every probe of probeCapabilities, in `dir` (which the caller creates and removes). */
export async function runProbes(fs: Fs, dir: string): Promise<ProbeResult> {
  const reasons: ProbeResult['reasons'] = {};
  const why = (e: unknown) =>
    e instanceof ScalpelError ? `${e.code}: ${e.message}` : `${normalizeErrorCode(e)}: ${e instanceof Error ? e.message : String(e)}`;

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
    if (!exclusiveCreate)
      reasons.exclusiveCreate =
        code === undefined
          ? 'exclusive write of an existing file succeeded'
          : `exclusive write failed with ${code}, content now ${JSON.stringify(new TextDecoder().decode(after))}`;
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
      if (!ok)
        reasons.renameFollowsSymlinks = `after rename: destination ${toSt?.type ?? 'absent'}, source ${fromSt?.type ?? 'absent'}, target ${targetSt?.type ?? 'absent'}`;
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
    if (!renameReplaces)
      reasons.renameReplaces = code
        ? `after rename onto a file and its unlink, rmdir failed with ${code}`
        : `rename onto a file left ${JSON.stringify(new TextDecoder().decode(after))}`;
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
export async function probePathMode(raw: RawFs, dir: string): Promise<PathMode> {
  const call = (k: string, ...args: unknown[]) => (raw[k] as RawFn).call(raw, ...args);
  const name = 'n\udcff';
  const bytes = encodePath(name);
  const clean = async () => {
    for (const p of [encodePath(joinPath(dir, name)), joinPath(dir, name), joinPath(dir, 'n\ufffd')])
      await call('unlink', p).catch(() => undefined);
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
