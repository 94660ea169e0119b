/**
 * The git-scalpel adapter: the library's own index codec under the corpus. Decoding is the codec's
 * strict mode (trailer checked, every extension decoded), the split index merged with its shared
 * index, and the entry order checked as git fsck checks it. Encoding rebuilds the index from its
 * fields (every entry re-made, every extension a plain object without the bytes it was read from),
 * so the round trip exercises the writer rather than a copy of the input.
 */
import { ScalpelError, isScalpelError, type ErrorCode } from '../errors/index.js';
import { toHex } from '../bytes/hex.js';
import { decodeIndex, type GitIndex } from '../index/decode.js';
import { encodeIndex } from '../index/encode.js';
import { mergeSplitIndex, linkExtension } from '../index/split.js';
import { checkEntryOrder } from '../index/verify.js';
import type { IndexEntry } from '../index/entry.js';
import type { EwahBitmap, IndexExtension, IndexStat, UntrackedCache } from '../index/types.js';
import type { AdapterInput, AnswerEntry, AnswerExtension, ConformanceAdapter, DecodeOutcome, ErrorClass } from './types.js';

/** The error class of each of the codec's error codes. */
const CLASS_OF: Partial<Record<ErrorCode, ErrorClass>> = {
  TRUNCATED: 'truncated',
  BAD_SIGNATURE: 'signature',
  BAD_VERSION: 'version',
  CHECKSUM_MISMATCH: 'checksum',
  BAD_ENTRY: 'entry',
  BAD_VARINT: 'entry',
  BAD_PATH: 'entry',
  BAD_EXTENSION: 'extension',
  BAD_EWAH: 'extension',
  UNKNOWN_MANDATORY_EXTENSION: 'unknown-extension',
  SPLIT_INDEX_MISMATCH: 'split',
};

export function classifyScalpelError(e: unknown): ErrorClass | undefined {
  if (!isScalpelError(e)) return undefined;
  // anything that went wrong inside a known extension's payload (which decodeIndex marks with the
  // extension's offset) is a bad extension, even a field running past the payload's own end
  if (e.data.extensionOffset !== undefined && e.code !== 'UNKNOWN_MANDATORY_EXTENSION') return 'extension';
  return CLASS_OF[e.code];
}

export function scalpelAdapter(): ConformanceAdapter {
  return {
    name: 'git-scalpel',
    description: 'decodeIndex (strict) + mergeSplitIndex + checkEntryOrder; encodeIndex of the index rebuilt from its fields',
    capabilities: { versions: [2, 3, 4], objectFormats: ['sha1', 'sha256'], extensions: 'all', encode: true },
    decode: decodeCase,
    encode(input) {
      const file = decodeIndex(input.bytes, { objectFormat: input.objectFormat });
      const rebuilt: GitIndex = {
        version: file.version,
        objectFormat: file.objectFormat,
        skipHash: file.skipHash,
        // a replaced entry of a split index has no path of its own: it stays the row it was
        entries: file.entries.map((e) => (e.pathBytes.length ? e.with({}) : e)),
        extensions: file.extensions.map(rebuildExtension),
      };
      return { bytes: encodeIndex(rebuilt) };
    },
    classify: classifyScalpelError,
  };
}

function decodeCase(input: AdapterInput): DecodeOutcome {
  const objectFormat = input.objectFormat;
  let file: GitIndex;
  let index: GitIndex;
  try {
    file = decodeIndex(input.bytes, { objectFormat });
    index = file;
    const link = linkExtension(file);
    if (link) {
      if (!input.sharedIndex) {
        throw new ScalpelError('SPLIT_INDEX_MISMATCH', `the shared index sharedindex.${link.baseOid} is missing`, {
          expected: link.baseOid,
          found: null,
        });
      }
      let shared: GitIndex;
      try {
        shared = decodeIndex(input.sharedIndex, { objectFormat });
      } catch (e) {
        throw new ScalpelError('SPLIT_INDEX_MISMATCH', `the shared index does not decode: ${(e as Error).message}`, {
          expected: link.baseOid,
          cause: isScalpelError(e) ? e.code : String(e),
        });
      }
      index = mergeSplitIndex(file, shared);
    }
  } catch (e) {
    if (!isScalpelError(e)) throw e;
    return { error: { class: classifyScalpelError(e), message: `[${e.code}] ${e.message}` } };
  }
  try {
    checkEntryOrder(index);
  } catch (e) {
    if (!isScalpelError(e, 'BAD_ENTRY')) throw e;
    return { error: { class: 'order', message: `[${e.code}] ${e.message}` } };
  }
  const out: DecodeOutcome = {
    index: { version: file.version, entries: index.entries.map(entryAnswer), extensions: file.extensions.map(extensionAnswer) },
  };
  if (index !== file) out.index.fileEntries = file.entries.map(entryAnswer);
  return out;
}

export function entryAnswer(e: IndexEntry): AnswerEntry {
  return {
    path: toHex(e.pathBytes),
    mode: e.mode,
    oid: e.oid,
    stage: e.stage,
    flags: { assumeValid: e.assumeValid, extended: (e.flagsWord & 0x4000) !== 0, skipWorktree: e.skipWorktree, intentToAdd: e.intentToAdd },
    stat: statAnswer(e.stat),
  };
}

function statAnswer(s: IndexStat): IndexStat {
  return {
    ctimeSeconds: s.ctimeSeconds,
    ctimeNanoseconds: s.ctimeNanoseconds,
    mtimeSeconds: s.mtimeSeconds,
    mtimeNanoseconds: s.mtimeNanoseconds,
    dev: s.dev,
    ino: s.ino,
    uid: s.uid,
    gid: s.gid,
    size: s.size,
  };
}

function bitmapAnswer(b: EwahBitmap | undefined): { bitSize: number; bits: number[] } | null {
  return b ? { bitSize: b.bitSize, bits: [...b.bits] } : null;
}

/** One decoded extension in the answers' shape (conformance/README.md, "Extensions"). */
export function extensionAnswer(x: IndexExtension): AnswerExtension {
  switch (x.signature) {
    case 'TREE':
      if ('nodes' in x)
        return {
          signature: 'TREE',
          nodes: x.nodes.map((n) => ({ name: toHex(n.name), entryCount: n.entryCount, subtreeCount: n.subtreeCount, oid: n.oid ?? null })),
        };
      break;
    case 'REUC':
      if ('records' in x)
        return {
          signature: 'REUC',
          records: x.records.map((r) => ({ path: toHex(r.path), modes: [...r.modes], oids: r.oids.map((o) => o ?? null) })),
        };
      break;
    case 'UNTR':
      if ('cache' in x) return { signature: 'UNTR', ...untrackedAnswer(x.cache) };
      break;
    case 'FSMN':
      if ('bitmap' in x) {
        const head =
          x.version === 1 ? { version: 1, sinceNanoseconds: x.sinceNanoseconds.toString() } : { version: 2, token: toHex(x.token) };
        return { signature: 'FSMN', ...head, bitmap: bitmapAnswer(x.bitmap), trailing: x.trailing ? toHex(x.trailing) : null };
      }
      break;
    case 'EOIE':
      if ('hash' in x) return { signature: 'EOIE', offset: x.offset, hash: x.hash };
      break;
    case 'IEOT':
      if ('blocks' in x)
        return { signature: 'IEOT', version: x.version, blocks: x.blocks.map((b) => ({ offset: b.offset, count: b.count })) };
      break;
    case 'link':
      if ('baseOid' in x)
        return {
          signature: 'link',
          baseOid: x.baseOid,
          deleteBitmap: bitmapAnswer(x.deleteBitmap),
          replaceBitmap: bitmapAnswer(x.replaceBitmap),
        };
      break;
    case 'sdir':
      return { signature: 'sdir' };
  }
  return { signature: x.signature, raw: toHex((x as { raw: Uint8Array }).raw) };
}

function untrackedAnswer(c: UntrackedCache): Record<string, unknown> {
  return {
    ident: toHex(c.ident),
    infoExclude: { oid: c.infoExcludeOid, stat: statAnswer(c.infoExcludeStat) },
    excludesFile: { oid: c.excludesFileOid, stat: statAnswer(c.excludesFileStat) },
    dirFlags: c.dirFlags,
    excludePerDir: toHex(c.excludePerDir),
    dirs: c.dirs.map((d) => ({
      name: toHex(d.name),
      untracked: d.untracked.map((u) => toHex(u)),
      dirCount: d.dirCount,
      valid: d.valid,
      checkOnly: d.checkOnly,
      stat: d.valid && d.stat ? statAnswer(d.stat) : null,
      excludeOid: d.excludeOid ?? null,
    })),
  };
}

/** A plain copy of a decoded extension, without the bytes it was read from (bitmaps' `raw`, UNTR's stored bitmaps, a TREE payload). */
function rebuildExtension(x: IndexExtension): IndexExtension {
  const bm = (b: EwahBitmap | undefined) => (b ? { bitSize: b.bitSize, bits: [...b.bits] } : undefined);
  switch (x.signature) {
    case 'TREE':
      if ('nodes' in x) return { signature: 'TREE', nodes: x.nodes.map((n) => ({ ...n })) };
      break;
    case 'REUC':
      if ('records' in x)
        return {
          signature: 'REUC',
          records: x.records.map((r) => ({ path: r.path, modes: [...r.modes] as typeof r.modes, oids: [...r.oids] as typeof r.oids })),
        };
      break;
    case 'UNTR':
      if ('cache' in x) {
        const { storedBitmaps: _stored, ...cache } = x.cache;
        return { signature: 'UNTR', cache: { ...cache, dirs: cache.dirs.map((d) => ({ ...d, untracked: [...d.untracked] })) } };
      }
      break;
    case 'FSMN':
      if ('bitmap' in x) return { ...x, bitmap: bm(x.bitmap)! };
      break;
    case 'link':
      if ('baseOid' in x) {
        const out: IndexExtension = { signature: 'link', baseOid: x.baseOid };
        if (x.deleteBitmap) out.deleteBitmap = bm(x.deleteBitmap);
        if (x.replaceBitmap) out.replaceBitmap = bm(x.replaceBitmap);
        return out;
      }
      break;
  }
  return { ...x };
}
