/**
 * Shell baselines in flight (DESIGN I8): what the worktree and the index held before a shell
 * command, kept until the command's after-event takes it back. The baseline itself and a copy
 * of the index file are files under `<stateDir>/shell/<session>/<call>.{json,index}` (the copy a
 * hard link to the session's one copy of that index content, where the filesystem has them); the
 * objects it names (the pre-images it stored, and every blob the index named then: a person's
 * staged version exists nowhere else) are reachable from `refs/scalpel-shell/<worktree>/<session>/<call>`
 * before the command runs, so a `git gc --prune=now` inside the command cannot take them. The ref
 * names one commit whose tree is `b` (the baseline's blobs) and `i` (the index's objects). The
 * `i` tree is the same while the index is: its id is kept beside the baselines by the index's
 * checksum, so a run of commands over an unchanged index writes it once.
 */
import { encodeCommit, formatIdentity } from '../object/commit.js';
import { encodeTree, MODE_FILE, MODE_GITLINK, MODE_TREE, type TreeEntry } from '../object/tree.js';
import { fromHex, toHex } from '../bytes/hex.js';
import { hashBytes } from '../hash/index.js';
import { utf8Decode, utf8Encode } from '../bytes/text.js';
import { fsErrorCode } from '../fs/types.js';
import { joinPath } from '../fs/path.js';
import { mkdirp, removeTree, writeFileAtomic } from '../fs/atomic.js';
import type { GitIndex } from '../index/decode.js';
import { rowsOf } from '../index/rows.js';
import type { ObjectWriter } from '../repo/object-batch.js';
import type { Repository } from '../repo/repository.js';
import { callFileName } from './calls.js';

export interface StoredBaseline {
  /** The baseline's JSON (format git-scalpel-shell/2). */
  json: Uint8Array;
  /** The index file as it was (null: there was none). */
  index: Uint8Array | null;
}

/** The name of a session's shared index copy (see writeIndexCopy): never a call's (callFileName starts none with a dot). */
const SHARED_INDEX = /^\.index-[0-9a-f]+-[0-9]+$/;

export class ShellBaselines {
  constructor(private readonly repo: Repository) {}

  private dir(session: string): string {
    return joinPath(this.repo.stateDir, 'shell', session);
  }

  private refPrefix(session: string): string {
    return `refs/scalpel-shell/${this.repo.worktreeId}/${session}/`;
  }

  /**
   * Keep a baseline of call `key`: its objects made reachable first (`blobs`, the ones it
   * stored; `index`, the index as read), then its files. `out` is the batch the baseline's blobs
   * went into: it is flushed here, before the ref names them.
   */
  async save(
    session: string,
    key: string,
    stored: StoredBaseline,
    keep: { blobs: readonly string[]; index: GitIndex | null },
    out: ObjectWriter & { flush(): Promise<void> },
  ): Promise<void> {
    const entries: TreeEntry[] = [];
    const blobs = await this.flatTree(keep.blobs, out);
    if (blobs) entries.push({ mode: MODE_TREE, name: utf8Encode('b'), oid: blobs });
    const sum = stored.index ? this.indexSum(stored.index) : null;
    const indexTree = keep.index && stored.index && sum ? await this.indexTree(keep.index, sum, out) : null;
    if (indexTree) entries.push({ mode: MODE_TREE, name: utf8Encode('i'), oid: indexTree });
    const tree = await out.write('tree', encodeTree(entries, this.repo.objectFormat));
    const ident = formatIdentity({ name: 'git-scalpel', email: 'git-scalpel@localhost', timestamp: Math.floor(Date.now() / 1000) });
    const commit = await out.write(
      'commit',
      encodeCommit({ tree, parents: [], author: ident, committer: ident, message: `git-scalpel shell baseline ${session} ${key}\n` }),
    );
    await out.flush();
    const ref = this.refPrefix(session) + callFileName(key);
    const tx = await this.repo.refs.transaction(ref);
    try {
      await tx.set(commit);
    } finally {
      await tx.release();
    }
    const dir = this.dir(session);
    await mkdirp(this.repo.fs, dir);
    const name = callFileName(key);
    if (stored.index && sum) await this.writeIndexCopy(dir, name, stored.index, sum);
    await writeFileAtomic(this.repo.fs, joinPath(dir, `${name}.json`), stored.json, { mode: 0o644 });
  }

  /** The baseline of call `key`, or null when none was kept. */
  async load(session: string, key: string): Promise<StoredBaseline | null> {
    const dir = this.dir(session);
    const name = callFileName(key);
    let json: Uint8Array;
    try {
      json = await this.repo.fs.readFile(joinPath(dir, `${name}.json`));
    } catch (e) {
      if (fsErrorCode(e) === 'ENOENT' || fsErrorCode(e) === 'ENOTDIR') return null;
      throw e;
    }
    const indexPath = joinPath(dir, `${name}.index`);
    const index = (await this.repo.fs.lstat(indexPath)) ? await this.repo.fs.readFile(indexPath) : null;
    return { json, index };
  }

  /** The calls of `session` with a baseline kept. */
  async keys(session: string): Promise<string[]> {
    try {
      return (await this.repo.fs.readdir(this.dir(session))).filter((n) => n.endsWith('.json')).map((n) => n.slice(0, -5));
    } catch {
      return [];
    }
  }

  /** Forget the baseline of call `key`: its files, then its ref. */
  async remove(session: string, key: string): Promise<void> {
    const dir = this.dir(session);
    const name = callFileName(key);
    await removeTree(this.repo.fs, joinPath(dir, `${name}.json`));
    await removeTree(this.repo.fs, joinPath(dir, `${name}.index`));
    await this.repo.refs.remove(this.refPrefix(session) + name);
  }

  /** Forget every baseline of `session` (its turn is over: what a command that never finished left goes too). */
  async clear(session: string): Promise<void> {
    await removeTree(this.repo.fs, this.dir(session));
    for (const ref of (await this.repo.refs.list(this.refPrefix(session))).keys()) await this.repo.refs.remove(ref);
  }

  /** A tree naming each of `oids` (blobs), or null when there are none. */
  private async flatTree(oids: readonly string[], out: ObjectWriter): Promise<string | null> {
    const unique = [...new Set(oids)];
    if (unique.length === 0) return null;
    return out.write(
      'tree',
      encodeTree(
        unique.map((oid) => ({ mode: MODE_FILE, name: utf8Encode(oid), oid })),
        this.repo.objectFormat,
      ),
    );
  }

  /** The index file's checksum (its trailer; hashed when index.skipHash left it zero), in hex. */
  private indexSum(bytes: Uint8Array): string {
    const hashLen = this.repo.objectFormat === 'sha256' ? 32 : 20;
    const trailer = bytes.subarray(Math.max(0, bytes.length - hashLen));
    return trailer.some((b) => b !== 0)
      ? toHex(trailer)
      : toHex(hashBytes(this.repo.objectFormat, bytes.subarray(0, Math.max(0, bytes.length - hashLen)), this.repo.hash));
  }

  /**
   * The index copy of call `name`: a hard link to the session's copy of that index content
   * (`.index-<checksum>-<length>`, written once per content: a run of commands over an unchanged
   * 10 MB index writes it once), or a file of its own where the filesystem makes no hard links.
   * A new content's copy takes the shared name's place; the calls linked to an older one keep its
   * bytes (a link is its own name for them). Another process's save removing the copy between
   * the check and the link costs a file of its own, nothing else.
   */
  private async writeIndexCopy(dir: string, name: string, bytes: Uint8Array, sum: string): Promise<void> {
    const fs = this.repo.fs;
    const target = joinPath(dir, `${name}.index`);
    if (fs.link) {
      const sharedName = `.index-${sum}-${bytes.length}`;
      const shared = joinPath(dir, sharedName);
      try {
        const st = await fs.lstat(shared);
        if (!st || st.type !== 'file' || st.size !== bytes.length) {
          await writeFileAtomic(fs, shared, bytes, { mode: 0o644 });
          for (const n of await fs.readdir(dir))
            if (n !== sharedName && SHARED_INDEX.test(n)) await removeTree(fs, joinPath(dir, n)).catch(() => undefined);
        }
        // a copy of this call's an interrupted save left
        await removeTree(fs, target);
        await fs.link(shared, target);
        return;
      } catch {
        // no hard links here (or the copy went meanwhile): a file of its own
      }
    }
    await writeFileAtomic(fs, target, bytes, { mode: 0o644 });
  }

  /**
   * A tree naming every object the index names (entries of every stage, resolve-undo records;
   * not gitlinks: other repositories' commits), written once per index content: its id is kept
   * beside the baselines by the index's checksum and used again while that object exists.
   */
  private async indexTree(index: GitIndex, sum: string, out: ObjectWriter): Promise<string | null> {
    const hashLen = this.repo.objectFormat === 'sha256' ? 32 : 20;
    const cacheFile = joinPath(this.repo.stateDir, 'shell', 'index-objects');
    try {
      const [k, oid] = utf8Decode(await this.repo.fs.readFile(cacheFile))
        .trim()
        .split(' ');
      if (k === sum && oid && (await out.has(oid))) return oid;
    } catch {
      // none kept yet, or unreadable: written again
    }
    const oid = await out.write('tree', indexObjectsTree(index, hashLen));
    await mkdirp(this.repo.fs, joinPath(this.repo.stateDir, 'shell'));
    await writeFileAtomic(this.repo.fs, cacheFile, utf8Encode(`${sum} ${oid}\n`), { mode: 0o644 }).catch(() => undefined);
    return oid;
  }
}

/**
 * The content of a tree naming the index's objects: entry i is named by its number, zero-padded
 * to one width (so the names are distinct and already in git's order), blobs as files, sparse
 * directory entries' trees as trees. Written straight from the entries' id bytes: a 100,000-entry
 * index makes one 3.4 MB tree in a few milliseconds, no id turned into text.
 */
function indexObjectsTree(index: GitIndex, hashLen: number): Uint8Array {
  const rows = rowsOf(index);
  const ids: Array<{ tree: boolean; oid: Uint8Array }> = [];
  for (let i = 0; i < rows.count; i++) {
    const e = rows.entry(i);
    if (e.mode === MODE_GITLINK) continue;
    ids.push({ tree: e.mode === MODE_TREE, oid: e.oidBytes });
  }
  for (const x of index.extensions) {
    if (x.signature !== 'REUC' || !('records' in x)) continue;
    for (const r of x.records) {
      r.modes.forEach((m, k) => {
        const hex = r.oids[k];
        if (m === 0 || m === MODE_GITLINK || !hex) return;
        ids.push({ tree: m === MODE_TREE, oid: fromHex(hex) });
      });
    }
  }
  const width = String(Math.max(1, ids.length - 1)).length;
  const FILE = utf8Encode('100644 ');
  const TREE = utf8Encode('40000 ');
  let size = 0;
  for (const x of ids) size += (x.tree ? TREE.length : FILE.length) + width + 1 + hashLen;
  const content = new Uint8Array(size);
  let pos = 0;
  ids.forEach((x, i) => {
    const mode = x.tree ? TREE : FILE;
    content.set(mode, pos);
    pos += mode.length;
    const name = String(i).padStart(width, '0');
    for (let k = 0; k < width; k++) content[pos++] = name.charCodeAt(k);
    content[pos++] = 0;
    content.set(x.oid, pos);
    pos += hashLen;
  });
  return content;
}
