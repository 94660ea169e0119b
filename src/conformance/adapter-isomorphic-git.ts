/**
 * The isomorphic-git adapter: isomorphic-git's own index reader and writer (its internal
 * `GitIndex`: `GitIndex.from(buffer)`, `index.toObject()`), reached through its public
 * `GitIndexManager` export, under the corpus. isomorphic-git is not a dependency of git-scalpel:
 * the caller hands in a module loader, and when the package is not installed this fails with
 * UNSUPPORTED (capability 'isomorphic-git') before any case runs.
 *
 * What it is asked is only what isomorphic-git itself does: it reads versions 2 and 3 of SHA-1
 * repositories (it refuses version 4 and has no SHA-256), exposes no extension, and writes an index
 * from its entries alone.
 */
import { ScalpelError } from '../errors/index.js';
import type { AdapterInput, AnswerEntry, ConformanceAdapter, DecodeOutcome, ErrorClass } from './types.js';

/** Loads a module by specifier (the command line passes require or import). */
export type ModuleLoader = (specifier: string) => Promise<unknown>;

interface IsoEntry {
  path: string;
  oid: string;
  mode: number;
  ctimeSeconds: number;
  ctimeNanoseconds: number;
  mtimeSeconds: number;
  mtimeNanoseconds: number;
  dev: number;
  ino: number;
  uid: number;
  gid: number;
  size: number;
  flags: { assumeValid: boolean; extended: boolean; stage: number; skipWorktree: boolean; intentToAdd: boolean };
}

interface IsoIndex {
  entriesFlat: IsoEntry[];
  toObject(): Promise<Uint8Array>;
}

interface IsoIndexClass {
  from(buffer: unknown): Promise<IsoIndex>;
}

interface BufferLike {
  from(bytes: Uint8Array): Uint8Array;
  from(text: string, encoding: string): Uint8Array;
}

/** isomorphic-git's error messages, by the class of damage they report. */
const MESSAGES: Array<[RegExp, ErrorClass]> = [
  [/Index file is empty/, 'truncated'],
  [/Unexpected end of file/, 'truncated'],
  [/Invalid dircache magic file number/, 'signature'],
  [/Invalid checksum in GitIndex buffer/, 'checksum'],
  [/Unsupported dircache version/, 'version'],
  [/Unknown index entry format/, 'entry'],
  [/Got a path length of/, 'entry'],
  [/Expected 1-8 null characters/, 'entry'],
];

export function classifyIsomorphicGitError(e: unknown): ErrorClass | undefined {
  const msg = e instanceof Error ? e.message : String(e);
  for (const [rx, cls] of MESSAGES) if (rx.test(msg)) return cls;
  // Buffer reads past the end of the file
  if (e instanceof RangeError || (e as { code?: unknown })?.code === 'ERR_OUT_OF_RANGE') return 'truncated';
  return undefined;
}

/**
 * Load isomorphic-git through `load` and wrap it. Throws ScalpelError UNSUPPORTED when it is not
 * installed or does not have the shape this adapter knows (isomorphic-git 1.x).
 */
export async function isomorphicGitAdapter(load: ModuleLoader): Promise<ConformanceAdapter> {
  const Buf = (globalThis as { Buffer?: BufferLike }).Buffer;
  if (!Buf) throw unavailable('isomorphic-git reads index files from Node Buffers, and this runtime has none');
  let managers: { GitIndexManager?: { acquire(opts: object, closure: (index: object) => unknown): Promise<unknown> } };
  let version = '';
  try {
    managers = (await load(['isomorphic-git', 'managers'].join('/'))) as typeof managers;
    const main = (await load('isomorphic-git').catch(() => null)) as { version?: () => string } | null;
    version = typeof main?.version === 'function' ? main.version() : '';
  } catch (e) {
    throw unavailable(
      `isomorphic-git is not installed here (${e instanceof Error ? e.message.split('\n')[0] : String(e)}); install it beside git-scalpel (npm install isomorphic-git)`,
    );
  }
  const manager = managers.GitIndexManager;
  if (!manager || typeof manager.acquire !== 'function') throw unavailable('isomorphic-git/managers has no GitIndexManager.acquire');
  // GitIndex is not exported: the manager hands out an instance of it (here, the empty index of a
  // filesystem that has no index file), whose constructor is the class
  const fs = { lstat: async () => null, read: async () => null };
  const GitIndex = (await manager.acquire({ fs, gitdir: '/conformance', cache: {} }, (index) => index.constructor)) as IsoIndexClass;
  if (!GitIndex || typeof GitIndex.from !== 'function') throw unavailable('isomorphic-git has no GitIndex.from');

  const read = async (input: AdapterInput): Promise<IsoIndex> => GitIndex.from(Buf.from(input.bytes));
  return {
    name: 'isomorphic-git',
    description: `isomorphic-git${version ? ` ${version}` : ''}: GitIndex.from (read) and toObject (write)`,
    capabilities: { versions: [2, 3], objectFormats: ['sha1'], extensions: [], encode: true },
    async decode(input): Promise<DecodeOutcome> {
      let index: IsoIndex;
      try {
        index = await read(input);
      } catch (e) {
        return { error: { class: classifyIsomorphicGitError(e), message: isoMessage(e) } };
      }
      const entries = index.entriesFlat.map((e) => isoEntry(e, Buf));
      const header = new DataView(input.bytes.buffer, input.bytes.byteOffset, input.bytes.byteLength);
      return { index: { version: header.getUint32(4), entries } };
    },
    async encode(input) {
      try {
        const index = await read(input);
        return { bytes: new Uint8Array(await index.toObject()) };
      } catch (e) {
        throw new Error(isoMessage(e));
      }
    },
    classify: classifyIsomorphicGitError,
  };
}

function isoEntry(e: IsoEntry, Buf: BufferLike): AnswerEntry {
  let hex = '';
  for (const b of Buf.from(e.path, 'utf8')) hex += b.toString(16).padStart(2, '0');
  return {
    path: hex,
    mode: e.mode,
    oid: e.oid,
    stage: e.flags.stage,
    flags: {
      assumeValid: e.flags.assumeValid,
      extended: e.flags.extended,
      skipWorktree: e.flags.skipWorktree,
      intentToAdd: e.flags.intentToAdd,
    },
    stat: {
      ctimeSeconds: e.ctimeSeconds,
      ctimeNanoseconds: e.ctimeNanoseconds,
      mtimeSeconds: e.mtimeSeconds,
      mtimeNanoseconds: e.mtimeNanoseconds,
      dev: e.dev,
      ino: e.ino,
      uid: e.uid,
      gid: e.gid,
      size: e.size,
    },
  };
}

/** isomorphic-git's InternalError wraps the reader's message in a paragraph asking for a bug report: the message alone. */
function isoMessage(e: unknown): string {
  const inner = (e as { data?: { message?: unknown } } | null)?.data?.message;
  return typeof inner === 'string' ? inner : e instanceof Error ? e.message : String(e);
}

function unavailable(reason: string): ScalpelError {
  return new ScalpelError('UNSUPPORTED', `conformance adapter isomorphic-git is unavailable: ${reason}`, {
    capability: 'isomorphic-git',
    reason,
  });
}
