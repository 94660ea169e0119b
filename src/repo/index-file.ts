import { ScalpelError } from '../errors/index.js';
import type { Fs } from '../fs/types.js';
import { joinPath } from '../fs/path.js';
import { decodeIndex, type GitIndex } from '../index/decode.js';
import { linkExtension, mergeSplitIndex } from '../index/split.js';
import type { HashProvider, ObjectFormat } from '../hash/index.js';

export interface ReadIndexResult {
  /** The index as git sees it: merged with its shared index when split. */
  index: GitIndex;
  /** The file's own decoded content (the split part when split). */
  file: GitIndex;
  /** The raw bytes of `index`. */
  bytes: Uint8Array;
  /** The shared index, when the index is split. */
  shared?: { path: string; index: GitIndex; bytes: Uint8Array };
}

/** Read `<gitDir>/index` (an absent file is an empty index), merging `sharedindex.<id>` when split. */
export async function readIndexFile(fs: Fs, gitDir: string, objectFormat: ObjectFormat, hash?: HashProvider): Promise<ReadIndexResult | null> {
  const path = joinPath(gitDir, 'index');
  if (!(await fs.lstat(path))) return null;
  const bytes = await fs.readFile(path);
  const file = withPath(() => decodeIndex(bytes, { objectFormat, hash }), path);
  const link = linkExtension(file);
  if (!link) return { index: file, file, bytes };
  const sharedPath = joinPath(gitDir, `sharedindex.${link.baseOid}`);
  if (!(await fs.lstat(sharedPath))) {
    throw new ScalpelError('SPLIT_INDEX_MISMATCH', `split index names ${sharedPath}, which does not exist`, { path: sharedPath, expected: link.baseOid });
  }
  const sharedBytes = await fs.readFile(sharedPath);
  const shared = withPath(() => decodeIndex(sharedBytes, { objectFormat, hash }), sharedPath);
  return { index: mergeSplitIndex(file, shared), file, bytes, shared: { path: sharedPath, index: shared, bytes: sharedBytes } };
}

function withPath<T>(f: () => T, path: string): T {
  try {
    return f();
  } catch (e) {
    if (e instanceof ScalpelError && e.data.path === undefined) e.data.path = path;
    throw e;
  }
}
