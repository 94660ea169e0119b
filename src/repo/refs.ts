import { ScalpelError } from '../errors/index.js';
import { utf8Decode, utf8Encode } from '../bytes/text.js';
import { isHex } from '../bytes/hex.js';
import type { Fs } from '../fs/types.js';
import { dirname, joinPath } from '../fs/path.js';
import { acquireLock, mkdirp, type Lock } from '../fs/atomic.js';

/**
 * Loose and packed refs of the common git dir (files backend): a loose ref file wins over a
 * packed-refs line; updates take `<ref>.lock` exclusively, check the old value
 * (compare-and-swap) and rename the lock into place, as git's ref transactions do.
 * Only direct refs (object ids) are handled: the refs this tool owns are never symbolic.
 */
export class RefStore {
  constructor(
    private readonly fs: Fs,
    private readonly commonDir: string,
    private readonly oidHexLength: number,
    /** How lock files are taken (the repository journals them); plain exclusive create by default. */
    private readonly acquire: (path: string) => Promise<Lock> = (path) => acquireLock(fs, path),
  ) {}

  private refPath(name: string): string {
    checkRefName(name);
    return joinPath(this.commonDir, name);
  }

  /** The object id a ref points at, or null when it does not exist. */
  async read(name: string): Promise<string | null> {
    const path = this.refPath(name);
    const st = await this.fs.lstat(path);
    if (st && st.type === 'file') {
      const text = utf8Decode(await this.fs.readFile(path)).trim();
      if (text.startsWith('ref:')) {
        throw new ScalpelError('UNSUPPORTED', `ref ${name} is symbolic (${text}); git-scalpel refs are direct`, { ref: name });
      }
      if (!isHex(text, this.oidHexLength))
        throw new ScalpelError('BAD_OBJECT', `ref ${name} holds no object id: ${JSON.stringify(text.slice(0, 80))}`, {
          ref: name,
          reason: 'bad-ref',
        });
      return text.toLowerCase();
    }
    if (st && st.type === 'directory') return null;
    return (await this.readPacked()).get(name) ?? null;
  }

  /** Every ref under `prefix` (e.g. "refs/scalpel/"), loose and packed. */
  async list(prefix: string): Promise<Map<string, string>> {
    const out = new Map<string, string>();
    for (const [k, v] of await this.readPacked()) if (k.startsWith(prefix)) out.set(k, v);
    const walk = async (rel: string): Promise<void> => {
      const abs = joinPath(this.commonDir, rel);
      const st = await this.fs.lstat(abs);
      if (!st) return;
      if (st.type === 'directory') {
        for (const n of await this.fs.readdir(abs)) if (!n.endsWith('.lock')) await walk(`${rel}/${n}`);
      } else if (st.type === 'file') {
        const v = await this.read(rel).catch(() => null);
        if (v) out.set(rel, v);
      }
    };
    await walk(prefix.replace(/\/$/, ''));
    return out;
  }

  private async readPacked(): Promise<Map<string, string>> {
    const path = joinPath(this.commonDir, 'packed-refs');
    const map = new Map<string, string>();
    if (!(await this.fs.lstat(path))) return map;
    const text = utf8Decode(await this.fs.readFile(path));
    for (const line of text.split('\n')) {
      if (!line || line.startsWith('#') || line.startsWith('^')) continue;
      const sp = line.indexOf(' ');
      if (sp < 0) continue;
      map.set(line.slice(sp + 1), line.slice(0, sp).toLowerCase());
    }
    return map;
  }

  /**
   * Take `<ref>.lock` for the duration of a read-modify-write: the value read under the lock
   * is `current`, and `set` writes the new value (or deletes the ref) and drops the lock.
   * A held lock is waited for (another process of ours is mid-update) up to `waitMs`, then
   * REF_LOCKED. Always `release()` in a finally block.
   */
  async transaction(name: string, waitMs = 10_000): Promise<RefTransaction> {
    const path = this.refPath(name);
    await mkdirp(this.fs, dirname(path));
    const deadline = Date.now() + waitMs;
    let delay = 2;
    let lock;
    for (;;) {
      try {
        lock = await this.acquire(`${path}.lock`);
        break;
      } catch (e) {
        if (!(e instanceof ScalpelError && e.code === 'INDEX_LOCKED')) throw e;
        if (Date.now() >= deadline) {
          throw new ScalpelError(
            'REF_LOCKED',
            `cannot lock ref '${name}': '${path}.lock' exists. Another git-scalpel process is using this session; if none is running, a process crashed earlier: remove the file to continue.`,
            { ref: name, path: `${path}.lock` },
          );
        }
        await new Promise((r) => setTimeout(r, delay + Math.random() * delay));
        delay = Math.min(delay * 2, 100);
      }
    }
    const held = lock;
    let current: string | null;
    try {
      current = await this.read(name);
    } catch (e) {
      await held.release();
      throw e;
    }
    return {
      current,
      set: async (oid: string | null) => {
        if (oid === null) {
          if ((await this.readPacked()).has(name)) await this.rewritePackedWithout(name);
          if (await this.fs.lstat(path)) await this.fs.unlink(path);
          await held.release();
          return;
        }
        if (!isHex(oid, this.oidHexLength)) throw new ScalpelError('BAD_ARGUMENT', `not an object id: ${oid}`, { name: 'oid', value: oid });
        await held.write(utf8Encode(`${oid}\n`));
        await held.commit(path);
      },
      release: () => held.release(),
    };
  }

  /** Point `name` at `oid` if it still points at `expected` (null: must not exist); REF_CONFLICT otherwise. */
  async update(name: string, oid: string, expected: string | null): Promise<void> {
    const tx = await this.transaction(name);
    try {
      if (tx.current !== expected) throw conflict(name, expected, tx.current);
      await tx.set(oid);
    } finally {
      await tx.release();
    }
  }

  /** Delete `name` if it still points at `expected`: the loose file and its packed-refs line. */
  async delete(name: string, expected: string | null): Promise<void> {
    const tx = await this.transaction(name);
    try {
      if (tx.current !== expected) throw conflict(name, expected, tx.current);
      await tx.set(null);
    } finally {
      await tx.release();
    }
  }

  /** Delete `name` whatever it points at (nothing when it does not exist). */
  async remove(name: string): Promise<void> {
    const tx = await this.transaction(name);
    try {
      if (tx.current !== null) await tx.set(null);
    } finally {
      await tx.release();
    }
  }

  private async rewritePackedWithout(name: string): Promise<void> {
    const path = joinPath(this.commonDir, 'packed-refs');
    const lock = await this.acquire(`${path}.lock`).catch((e: unknown) => {
      if (e instanceof ScalpelError && e.code === 'INDEX_LOCKED') {
        throw new ScalpelError('REF_LOCKED', `cannot lock packed-refs: '${path}.lock' exists`, { ref: name, path: `${path}.lock` });
      }
      throw e;
    });
    try {
      const lines = utf8Decode(await this.fs.readFile(path)).split('\n');
      const out: string[] = [];
      for (let i = 0; i < lines.length; i++) {
        const line = lines[i];
        if (line && !line.startsWith('#') && !line.startsWith('^') && line.slice(line.indexOf(' ') + 1) === name) {
          // drop the ref and its peeled line, if any
          if (lines[i + 1]?.startsWith('^')) i++;
          continue;
        }
        out.push(line);
      }
      await lock.write(utf8Encode(out.join('\n')));
      await lock.commit(path);
    } finally {
      await lock.release();
    }
  }
}

export interface RefTransaction {
  /** The ref's value when the lock was taken (null: absent). */
  readonly current: string | null;
  /** Write the new value (null deletes the ref) and drop the lock. */
  set(oid: string | null): Promise<void>;
  /** Drop the lock without changing the ref (no-op after set). */
  release(): Promise<void>;
}

function conflict(name: string, expected: string | null, found: string | null): ScalpelError {
  return new ScalpelError('REF_CONFLICT', `ref ${name} moved: expected ${expected ?? '(none)'}, found ${found ?? '(none)'}`, {
    ref: name,
    expected,
    found,
  });
}

/** A subset of git's check_refname_format, enough for the refs this tool writes and reads. */
export function checkRefName(name: string): void {
  const bad =
    !name.startsWith('refs/') ||
    name.endsWith('/') ||
    name.endsWith('.lock') ||
    name.includes('..') ||
    name.includes('//') ||
    name.includes('@{') ||
    /[\x00-\x20\x7f~^:?*[\\]/.test(name) ||
    name.split('/').some((c) => c.startsWith('.') || c === '');
  if (bad) throw new ScalpelError('BAD_ARGUMENT', `invalid ref name '${name}'`, { name: 'ref', value: name });
}
