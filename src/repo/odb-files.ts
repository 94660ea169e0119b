/**
 * Writing files into an objects directory as git does (object-file.c `write_loose_object`,
 * `finish_tmp_packfile`): the bytes go to a new temp file beside their final name, read-only
 * (git_mkstemp_mode 0444), creating the fan-out or `pack` directory when missing; the temp file
 * is then renamed into place, and `core.sharedRepository`'s permissions applied.
 */
import { randomBytes } from '../bytes/random.js';
import { fsErrorCode, type Fs } from '../fs/types.js';
import { sharedPermissions, sharedSetting, type SharedRepository } from './shared-perms.js';

function randomSuffix(): string {
  const alphabet = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789';
  const bytes = randomBytes(12);
  let s = '';
  for (const b of bytes) s += alphabet[b % alphabet.length];
  return s;
}

/** The files one object database writes (loose objects, packs and their idx). */
export class ObjectFiles {
  /** Create temp files 0444 directly; false once the filesystem refused to write such a file. */
  private createReadOnly = true;

  constructor(
    private readonly fs: Fs,
    readonly objectsDir: string,
    private readonly sharedRepository: SharedRepository,
  ) {}

  /** A loose object's deflated bytes, at `<objects>/<xx>/<rest of the id>`. */
  async writeLoose(oid: string, bytes: Uint8Array): Promise<void> {
    const dir = `${this.objectsDir}/${oid.slice(0, 2)}`;
    const tmp = await this.writeTemp(dir, 'tmp_obj_', bytes);
    await this.renameTemp(tmp, `${dir}/${oid.slice(2)}`);
  }

  /**
   * One pack and its idx as `<objects>/pack/<name>.{pack,idx}`: both written to temp files first,
   * then the `.pack` renamed into place, then the `.idx` (a reader finds packs by their idx, so it
   * never sees one without its pack). Returns the pack's path.
   */
  async writePack(name: string, pack: Uint8Array, index: Uint8Array): Promise<string> {
    const dir = `${this.objectsDir}/pack`;
    const tmpPack = await this.writeTemp(dir, 'tmp_pack_', pack);
    let tmpIdx: string;
    try {
      tmpIdx = await this.writeTemp(dir, 'tmp_idx_', index);
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
    return packPath;
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
