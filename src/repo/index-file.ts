import { ScalpelError } from '../errors/index.js';
import type { Fs, FileStat } from '../fs/types.js';
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
  /** lstat of the index file, taken just before it was read (for the racy-git rules). */
  stat: FileStat;
  /** The shared index, when the index is split. */
  shared?: { path: string; index: GitIndex; bytes: Uint8Array };
}

export interface ReadIndexOptions {
  /** Check the index file's trailer (default true). git itself checks it only in fsck. */
  verify?: boolean;
  /**
   * Read into this buffer when the file fits (Fs.readFileInto); `keep` receives the buffer to
   * pass next time. The result then views the buffer: it is valid until the buffer is reused.
   */
  scratch?: { buffer: Uint8Array | null; keep(buffer: Uint8Array): void };
}

/** Read `<gitDir>/index` (an absent file is an empty index), merging `sharedindex.<id>` when split. */
export async function readIndexFile(fs: Fs, gitDir: string, objectFormat: ObjectFormat, hash?: HashProvider, opts: ReadIndexOptions = {}): Promise<ReadIndexResult | null> {
  const path = joinPath(gitDir, 'index');
  const stat = await fs.lstat(path);
  if (!stat) return null;
  let bytes: Uint8Array;
  if (opts.scratch && fs.readFileInto) {
    const r = await fs.readFileInto(path, opts.scratch.buffer);
    opts.scratch.keep(r.buffer);
    bytes = r.bytes;
  } else {
    bytes = await fs.readFile(path);
  }
  const verifyChecksum = opts.verify !== false;
  const file = withPath(() => decodeIndex(bytes, { objectFormat, hash, verifyChecksum }), path);
  const link = linkExtension(file);
  if (!link) return { index: file, file, bytes, stat };
  const sharedPath = joinPath(gitDir, `sharedindex.${link.baseOid}`);
  if (!(await fs.lstat(sharedPath))) {
    throw new ScalpelError('SPLIT_INDEX_MISMATCH', `split index names ${sharedPath}, which does not exist`, { path: sharedPath, expected: link.baseOid });
  }
  const sharedBytes = await fs.readFile(sharedPath);
  const shared = withPath(() => decodeIndex(sharedBytes, { objectFormat, hash, verifyChecksum }), sharedPath);
  return { index: mergeSplitIndex(file, shared), file, bytes, stat, shared: { path: sharedPath, index: shared, bytes: sharedBytes } };
}

function withPath<T>(f: () => T, path: string): T {
  try {
    return f();
  } catch (e) {
    if (e instanceof ScalpelError && e.data.path === undefined) e.data.path = path;
    throw e;
  }
}
