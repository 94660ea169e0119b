import { ScalpelError } from '../errors/index.js';
import type { Fs, FileStat } from '../fs/types.js';
import { joinPath } from '../fs/path.js';
import { decodeIndex, type GitIndex } from '../index/decode.js';
import { linkExtension, mergeSplitIndex } from '../index/split.js';
import type { HashProvider, ObjectFormat } from '../hash/index.js';
import type { ErrorCode } from '../errors/index.js';
import { statKey, type IndexCache } from './index-cache.js';

/** An optional cache extension a lenient read left out (DecodeOptions.lenient), and the file that held it. */
export interface DroppedIndexExtension {
  /** The index file that held it: `<gitDir>/index`, or the shared index of a split index. */
  path: string;
  signature: string;
  /** Byte offset of the extension's header in that file. */
  offset: number;
  code: ErrorCode;
  /** The decoding error's message. */
  reason: string;
}

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
  /**
   * Optional cache extensions a lenient read left out because they do not decode, the index
   * file's first, then the shared index's, each in file order; empty when nothing was left out
   * (always, when strict). An index written from `index` is written without them.
   */
  dropped: DroppedIndexExtension[];
}

export interface ReadIndexOptions {
  /** Check the index file's trailer (default true). git itself checks it only in fsck. */
  verify?: boolean;
  /**
   * Read into this buffer when the file fits (Fs.readFileInto); `keep` receives the buffer to
   * pass next time. The result then views the buffer: it is valid until the buffer is reused.
   */
  scratch?: { buffer: Uint8Array | null; keep(buffer: Uint8Array): void };
  /**
   * Read as git reads (default false: strict): an optional cache extension (TREE, UNTR, FSMN,
   * EOIE, IEOT) that does not decode, in the index file or its shared index, is left out and
   * named in `dropped` (see DecodeOptions.lenient).
   */
  lenient?: boolean;
  /** The platform's Latin-1 decoder (DecodeOptions.latin1). */
  latin1?: (bytes: Uint8Array) => string;
  /**
   * Reads kept by a long-lived caller: an index whose stat did not change since
   * it was read (nor its shared index's) is not read again. Its reads own their bytes: `scratch`
   * is not used with it.
   */
  cache?: IndexCache<ReadIndexResult>;
}

/** Read `<gitDir>/index` (an absent file is an empty index), merging `sharedindex.<id>` when split. */
export async function readIndexFile(
  fs: Fs,
  gitDir: string,
  objectFormat: ObjectFormat,
  hash?: HashProvider,
  opts: ReadIndexOptions = {},
): Promise<ReadIndexResult | null> {
  const path = joinPath(gitDir, 'index');
  const stat = await fs.lstat(path);
  if (!stat) {
    opts.cache?.drop(path);
    return null;
  }
  const cache = opts.cache;
  const how = `${opts.verify !== false ? 'verified' : 'unverified'}:${opts.lenient === true ? 'lenient' : 'strict'}`;
  if (cache) {
    const kept = cache.get(path, stat, how);
    if (kept) {
      const sharedStat = kept.shared ? await fs.lstat(kept.shared.path) : null;
      if (!kept.shared || (sharedStat && statKey(sharedStat) === kept.shared.key)) return kept.read;
    }
  }
  let bytes: Uint8Array;
  if (opts.scratch && fs.readFileInto && !cache) {
    const r = await fs.readFileInto(path, opts.scratch.buffer);
    opts.scratch.keep(r.buffer);
    bytes = r.bytes;
  } else {
    bytes = await fs.readFile(path);
  }
  const verifyChecksum = opts.verify !== false;
  const lenient = opts.lenient === true;
  const file = withPath(
    () => decodeIndex(bytes, { objectFormat, hash, verifyChecksum, lenient, latin1: opts.latin1, racySince: stat.mtimeSeconds }),
    path,
  );
  const dropped = droppedIn(file, path, []);
  const link = linkExtension(file);
  if (!link) {
    const read = { index: file, file, bytes, stat, dropped };
    cache?.set(path, how, read, null);
    return read;
  }
  const sharedPath = joinPath(gitDir, `sharedindex.${link.baseOid}`);
  const sharedStat = await fs.lstat(sharedPath);
  if (!sharedStat) {
    throw new ScalpelError('SPLIT_INDEX_MISMATCH', `split index names ${sharedPath}, which does not exist`, {
      path: sharedPath,
      expected: link.baseOid,
    });
  }
  const sharedBytes = await fs.readFile(sharedPath);
  const shared = withPath(() => decodeIndex(sharedBytes, { objectFormat, hash, verifyChecksum, lenient, latin1: opts.latin1 }), sharedPath);
  droppedIn(shared, sharedPath, dropped);
  const read = {
    index: mergeSplitIndex(file, shared),
    file,
    bytes,
    stat,
    shared: { path: sharedPath, index: shared, bytes: sharedBytes },
    dropped,
  };
  cache?.set(path, how, read, { path: sharedPath, stat: sharedStat });
  return read;
}

function droppedIn(index: GitIndex, path: string, out: DroppedIndexExtension[]): DroppedIndexExtension[] {
  if (index.dropped)
    for (const d of index.dropped) out.push({ path, signature: d.signature, offset: d.offset, code: d.code, reason: d.reason });
  return out;
}

/**
 * The one-line warning for an extension a lenient read left out, e.g. "index: dropped the TREE
 * extension at byte 1234 of .git/index, which does not parse (<reason>); git discards it too, and
 * an index written now leaves it out". The path is printed as the record holds it.
 */
export function describeDropped(d: DroppedIndexExtension): string {
  // a reason is an error message: keep the warning on one line whatever it holds
  const reason = d.reason.replace(/[\r\n]+/g, ' ');
  // the one kind git does not discard: an FSMN bitmap covering more entries than the index has
  // parses, and git stops on it with BUG() (decodeIndex's message says "bitmap covers N entries")
  const past = d.signature === 'FSMN' && /bitmap covers \d+ entries/.test(d.reason);
  const what = past ? 'which does not fit the index' : 'which does not parse';
  const git = past ? 'git itself stops on it' : 'git discards it too';
  return `index: dropped the ${d.signature} extension at byte ${d.offset} of ${d.path}, ${what} (${reason}); ${git}, and an index written now leaves it out`;
}

function withPath<T>(f: () => T, path: string): T {
  try {
    return f();
  } catch (e) {
    if (e instanceof ScalpelError && e.data.path === undefined) e.data.path = path;
    throw e;
  }
}
