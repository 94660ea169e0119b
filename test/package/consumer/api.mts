// The public API as an ES module consumer types it, with no Node.js types at all (test/package/
// consumer.test.ts type-checks this under node16, nodenext and bundler; it never runs).
import {
  openRepository,
  ScalpelError,
  isScalpelError,
  decodeIndex,
  encodeIndex,
  forEachEntry,
  IndexEntry,
  objectId,
  purePlatform,
  type ErrorCode,
  type FsInput,
  type GitIndex,
  type PromiseFsApi,
  type RestoreReport,
  type ScalpelRepository,
  type SnapshotInfo,
} from 'git-scalpel';
import { nodeFs, nodePlatform, openRepository as openOnNode } from 'git-scalpel/node';
import { Repository, GitConfig } from 'git-scalpel/internal';

export async function undoAnEdit(fs: FsInput, dir: string): Promise<RestoreReport> {
  const repo: ScalpelRepository = await openRepository({ fs, dir, platform: purePlatform });
  const snap: SnapshotInfo = await repo.snapshot(['src/app.ts', 'src/new-dir'], { session: 'agent-1', label: 'turn 7' });
  await repo.seal({ session: 'agent-1' });
  return repo.restore({ session: 'agent-1', id: snap.id, force: true });
}

export async function onNode(dir: string): Promise<string[]> {
  const repo = await openOnNode({ fs: nodeFs(), dir, platform: nodePlatform() });
  return (await repo.list()).map((s) => s.id);
}

/** A promise fs written by hand is a filesystem too. */
export function handMade(files: Map<string, Uint8Array>): PromiseFsApi {
  const missing = (): Promise<never> => Promise.reject(Object.assign(new Error('ENOENT'), { code: 'ENOENT' }));
  return {
    readFile: async (path: string) => files.get(path) ?? missing(),
    writeFile: async (path: string, data: Uint8Array) => void files.set(path, data),
    readdir: async () => [...files.keys()],
    mkdir: async () => undefined,
    rmdir: async () => undefined,
    unlink: async (path: string) => void files.delete(path),
    lstat: async (path: string) => (files.has(path) ? { type: 'file' } : missing()),
  };
}

export function codes(e: unknown): ErrorCode | 'other' {
  if (isScalpelError(e, 'REFUSED')) return e.code;
  return e instanceof ScalpelError ? e.code : 'other';
}

export function roundTrip(bytes: Uint8Array): boolean {
  const index: GitIndex = decodeIndex(bytes, { objectFormat: 'sha1' });
  let n = 0;
  forEachEntry(index, () => void n++);
  const added = new IndexEntry({ path: 'a.txt', oid: objectId('blob', new Uint8Array(0)), mode: 0o100644 });
  const again = encodeIndex({ ...index, entries: [...index.entries, added] });
  return again.length > 0 && n === index.entries.length;
}

export const internals = [Repository, GitConfig] as const;
