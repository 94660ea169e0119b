import { ScalpelError } from '../errors/index.js';
import { decodePath, encodePath } from '../bytes/text.js';
import { compareRange } from '../bytes/compare.js';
import { joinPath } from '../fs/path.js';
import type { FileStat } from '../fs/types.js';
import type { GitIndex } from '../index/decode.js';
import type { IndexEntry } from '../index/entry.js';
import { objectId } from '../object/loose.js';
import { CHUNK, canStream, hashBlobStream, writeBlobStream } from '../repo/odb-stream.js';
import type { Repository } from '../repo/repository.js';
import { checkNoSymlinkParent, compareRel } from './scope.js';
import type { IndexRecord, PathState, ReucRecord, WorktreeItem } from './state.js';

export interface CaptureOptions {
  /** Write file contents and symlink targets as loose blobs (snapshot), or only hash them (seal, restore check). */
  writeObjects: boolean;
}

/**
 * The state of everything under `roots`: worktree items (walked from each root only, never the
 * whole tree), the index entries at or beneath each root, and their resolve-undo records.
 * Entries named `.git` inside a scope are nested repositories: not captured, never touched.
 */
export async function captureState(repo: Repository, index: GitIndex | null, roots: readonly string[], opts: CaptureOptions): Promise<PathState> {
  const items: WorktreeItem[] = [];
  for (const root of roots) {
    await checkNoSymlinkParent(repo.fs, repo.worktree, root);
    await walk(repo, root, items, opts);
  }
  items.sort((a, b) => compareRel(a.path, b.path));
  return { roots: [...roots], items, index: index ? indexRecordsUnder(index, roots) : [], reuc: index ? reucUnder(index, roots) : [] };
}

async function walk(repo: Repository, root: string, out: WorktreeItem[], opts: CaptureOptions): Promise<void> {
  const stack: string[] = [root];
  while (stack.length) {
    const rel = stack.pop() as string;
    const abs = rel === '' ? repo.worktree : joinPath(repo.worktree, rel);
    const st = await repo.fs.lstat(abs);
    if (!st) continue;
    const item = await readItem(repo, rel, abs, st, opts);
    if (rel !== '') out.push(item);
    if (item.kind === 'dir') {
      const names = await repo.fs.readdir(abs);
      for (const n of names) {
        if (n === '.git' || n.toLowerCase() === '.git') continue;
        stack.push(rel === '' ? n : `${rel}/${n}`);
      }
    }
  }
}

export async function readItem(repo: Repository, rel: string, abs: string, st: FileStat, opts: CaptureOptions): Promise<WorktreeItem> {
  if (st.type === 'directory') return { path: rel, kind: 'dir' };
  if (st.type === 'symlink') {
    const target = await repo.fs.readlink(abs);
    const bytes = encodePath(target);
    const oid = opts.writeObjects ? await repo.odb.write('blob', bytes) : objectId('blob', bytes, repo.objectFormat, repo.hash);
    return { path: rel, kind: 'symlink', target, oid };
  }
  if (st.type === 'file' && st.size >= repo.streamThreshold && canStream(repo.odb)) {
    // large: never held whole — hashed, then deflated to a loose object, piece by piece
    const fs = repo.fs;
    const open = () => (fs.readChunks as NonNullable<typeof fs.readChunks>)(abs, CHUNK);
    const oid = opts.writeObjects ? await writeBlobStream(repo.odb, st.size, open, rel) : await hashBlobStream(repo.odb, st.size, open(), rel);
    return { path: rel, kind: 'file', mode: st.mode & 0o111 ? 0o100755 : 0o100644, oid, size: st.size };
  }
  if (st.type === 'file') {
    const bytes = await repo.fs.readFile(abs);
    const oid = opts.writeObjects ? await repo.odb.write('blob', bytes) : objectId('blob', bytes, repo.objectFormat, repo.hash);
    return { path: rel, kind: 'file', mode: st.mode & 0o111 ? 0o100755 : 0o100644, oid, size: bytes.length };
  }
  throw new ScalpelError('UNSUPPORTED', `cannot capture '${rel}': not a regular file, symbolic link or directory`, { path: rel, capability: 'file-type' });
}

export function toRecord(e: IndexEntry, path?: string): IndexRecord {
  return { path: path ?? e.path, stage: e.stage, mode: e.mode, oid: e.oid, flags: e.flags };
}

/** Indexes of every entry at or beneath `root`, in order. */
export function entriesUnder(entries: readonly IndexEntry[], root: string): number[] {
  if (root === '') return entries.map((_, i) => i);
  const key = encodePath(root);
  const out: number[] = [];
  for (let i = lowerBound(entries, key); i < entries.length && pathEquals(entries[i], key); i++) out.push(i);
  const withSlash = new Uint8Array(key.length + 1);
  withSlash.set(key);
  withSlash[key.length] = 0x2f;
  for (let i = lowerBound(entries, withSlash); i < entries.length && hasPrefix(entries[i], withSlash); i++) out.push(i);
  return out;
}

function lowerBound(entries: readonly IndexEntry[], key: Uint8Array): number {
  let lo = 0;
  let hi = entries.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    const e = entries[mid];
    const t = e._t;
    if (compareRange(t.pathBuf, t.pathOff[e._i], t.pathLen[e._i], key) < 0) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

function pathEquals(e: IndexEntry, key: Uint8Array): boolean {
  const t = e._t;
  return t.pathLen[e._i] === key.length && compareRange(t.pathBuf, t.pathOff[e._i], key.length, key) === 0;
}

function hasPrefix(e: IndexEntry, prefix: Uint8Array): boolean {
  const t = e._t;
  return t.pathLen[e._i] >= prefix.length && compareRange(t.pathBuf, t.pathOff[e._i], prefix.length, prefix) === 0;
}

export function indexRecordsUnder(index: GitIndex, roots: readonly string[]): IndexRecord[] {
  const seen = new Set<number>();
  for (const r of roots) for (const i of entriesUnder(index.entries, r)) seen.add(i);
  return [...seen].sort((a, b) => a - b).map((i) => toRecord(index.entries[i]));
}

export function reucUnder(index: GitIndex, roots: readonly string[]): ReucRecord[] {
  const out: ReucRecord[] = [];
  for (const x of index.extensions) {
    if (x.signature !== 'REUC' || !('records' in x)) continue;
    for (const r of x.records) {
      const p = decodePath(r.path);
      if (!roots.some((root) => root === '' || p === root || p.startsWith(root + '/'))) continue;
      out.push({ path: p, modes: [...r.modes] as [number, number, number], oids: r.oids.map((o) => o ?? null) as [string | null, string | null, string | null] });
    }
  }
  return out.sort((a, b) => compareRel(a.path, b.path));
}

/** Sparse-index directory entries ("dir/", mode 040000) that contain `root`: a path inside one cannot be captured. */
export function sparseDirContaining(index: GitIndex, root: string): string | null {
  if (!index.extensions.some((x) => x.signature === 'sdir')) return null;
  const parts = root.split('/');
  for (let i = 1; i <= parts.length; i++) {
    const dir = parts.slice(0, i).join('/') + '/';
    if (dir === root + '/') break;
    const idx = entriesUnder(index.entries, dir.slice(0, -1)).find((k) => index.entries[k].path === dir);
    if (idx !== undefined && index.entries[idx].mode === 0o040000) return dir;
  }
  return null;
}
