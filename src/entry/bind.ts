/**
 * The root API with one platform as its default: what the package's entries export (`git-scalpel`
 * with the web platform; `git-scalpel` under the `node` export condition and `git-scalpel/node`
 * with Node's). It wraps the engine and the codecs, above every other layer. An explicit option (`platform`, `hash`, `zlib`, `proc`) always wins
 * over the bound default; nothing is installed anywhere.
 */
import type { Platform } from '../platform/types.js';
import { hashBytes as rawHashBytes, type HashProvider, type ObjectFormat } from '../hash/index.js';
import { decodeIndex as rawDecodeIndex, type DecodeOptions, type GitIndex } from '../index/decode.js';
import { encodeIndex as rawEncodeIndex, type EncodeOptions } from '../index/encode.js';
import {
  objectId as rawObjectId,
  encodeLooseObject as rawEncodeLoose,
  decodeLooseObject as rawDecodeLoose,
  readLooseHeader as rawReadLooseHeader,
  type DecodeLooseOptions,
  type EncodeLooseOptions,
  type FrameHeader,
  type Framed,
  type ObjectType,
} from '../object/loose.js';
import type { ZlibProvider } from '../object/zlib.js';
import {
  encodePack as rawEncodePack,
  encodePackIndex as rawEncodePackIndex,
  type EncodePackOptions,
  type EncodedPack,
  type PackIndexEntry,
  type PackObjectInput,
} from '../object/pack-write.js';
import {
  verifyPackIndex as rawVerifyPackIndex,
  verifyPackChecksum as rawVerifyPackChecksum,
  type PackIndex,
  type PackSource,
} from '../object/pack.js';
import {
  parseCommitGraphLayer as rawParseCommitGraphLayer,
  type CommitGraphLayer,
  type CommitGraphLayerOptions,
} from '../object/commit-graph.js';
import type { Fs } from '../fs/types.js';
import { readIndexFile as rawReadIndexFile, type ReadIndexResult } from '../repo/index-file.js';
import type { ProcessInfo } from '../repo/journal.js';
import { openRepository as openEngine, type OpenOptions as EngineOpenOptions, type ScalpelRepository } from '../snapshot/engine.js';
import { handleHookEvent as rawHandleHookEvent, type HookOptions as EngineHookOptions, type HookOutcome } from '../hooks/handle.js';
import type { HookEvent } from '../hooks/harness.js';

export interface OpenOptions extends EngineOpenOptions {
  /**
   * Hashing, zlib, process information and byte helpers (see Platform). Default: the best one for
   * the runtime the package was imported in (`node` export condition: node:crypto and node:zlib;
   * elsewhere WebCrypto and DecompressionStream for whole buffers, pure JS for the rest).
   * `hash`, `zlib` and `proc` override single parts of it.
   */
  platform?: Platform;
}

export interface HookOptions extends EngineHookOptions {
  /** The platform repositories are opened with (see OpenOptions.platform); ignored when `open` is given. */
  platform?: Platform;
}

/** Codec options may name a platform too; an explicit `hash` or `zlib` beside it wins. */
export type WithPlatform<T> = T & { platform?: Platform };

/** The functions whose default platform an entry binds; every other root export is platform-free. */
export interface BoundApi {
  openRepository(opts: OpenOptions): Promise<ScalpelRepository>;
  handleHookEvent(event: HookEvent, opts: HookOptions): Promise<HookOutcome>;
  decodeIndex(bytes: Uint8Array, opts?: WithPlatform<DecodeOptions>): GitIndex;
  encodeIndex(index: GitIndex, opts?: WithPlatform<EncodeOptions>): Uint8Array;
  readIndexFile(
    fs: Fs,
    gitDir: string,
    objectFormat: ObjectFormat,
    hash?: HashProvider,
    opts?: Parameters<typeof rawReadIndexFile>[4],
  ): Promise<ReadIndexResult | null>;
  hashBytes(format: ObjectFormat, data: Uint8Array, provider?: HashProvider): Uint8Array;
  objectId(type: ObjectType, content: Uint8Array, format?: ObjectFormat, hash?: HashProvider): string;
  encodeLooseObject(type: ObjectType, content: Uint8Array, opts?: WithPlatform<EncodeLooseOptions>): Uint8Array;
  decodeLooseObject(bytes: Uint8Array, opts?: WithPlatform<DecodeLooseOptions>): Framed;
  readLooseHeader(bytes: Uint8Array, opts?: WithPlatform<{ zlib?: ZlibProvider }>): FrameHeader;
  encodePack(objects: readonly PackObjectInput[], opts?: WithPlatform<EncodePackOptions>): EncodedPack;
  encodePackIndex(entries: readonly PackIndexEntry[], packChecksum: Uint8Array, format: ObjectFormat, hash?: HashProvider): Uint8Array;
  verifyPackIndex(index: PackIndex, hash?: HashProvider): void;
  verifyPackChecksum(
    pack: PackSource,
    format: ObjectFormat,
    opts?: WithPlatform<{ hash?: HashProvider; index?: PackIndex }>,
  ): Promise<string>;
  parseCommitGraphLayer(bytes: Uint8Array, format: ObjectFormat, opts?: WithPlatform<CommitGraphLayerOptions>): CommitGraphLayer;
}

/**
 * Opens through the engine with `platform` (or the options' own) resolved into the engine's
 * options. `platform` itself is passed along too, for the Repository's whole-buffer helpers.
 */
export function openWithPlatform(opts: OpenOptions, fallback: Platform): Promise<ScalpelRepository> {
  const p = opts.platform ?? fallback;
  const resolved: EngineOpenOptions & { platform: Platform; proc?: ProcessInfo } = {
    ...opts,
    platform: p,
    hash: opts.hash ?? p.hash,
    zlib: opts.zlib ?? p.zlib,
    proc: opts.proc ?? p.proc,
  };
  return openEngine(resolved);
}

type Get = () => Platform;

/** The options' own platform, else the bound one; `hash` and `zlib` beside it win. */
function withHashZlib<T extends { platform?: Platform; hash?: HashProvider; zlib?: ZlibProvider }>(
  get: Get,
  { platform: own, ...rest }: T,
) {
  const p = own ?? get();
  return { ...rest, hash: rest.hash ?? p.hash, zlib: rest.zlib ?? p.zlib };
}

function withHash<T extends { platform?: Platform; hash?: HashProvider }>(get: Get, { platform: own, ...rest }: T) {
  return { ...rest, hash: rest.hash ?? (own ?? get()).hash };
}

// One factory per function, so that an entry's `export const x = /* @__PURE__ */ xWith(p)` is
// dropped by a bundler when unused (a property read off one bound object would keep everything).
export const openRepositoryWith =
  (get: Get): BoundApi['openRepository'] =>
  (opts) =>
    openWithPlatform(opts, get());
export const handleHookEventWith =
  (get: Get): BoundApi['handleHookEvent'] =>
  (event, { platform: own, ...opts }) =>
    rawHandleHookEvent(
      event,
      opts.open ? opts : { ...opts, open: (dir) => openWithPlatform({ fs: opts.fs, dir, now: opts.now, env: opts.env }, own ?? get()) },
    );
export const decodeIndexWith =
  (get: Get): BoundApi['decodeIndex'] =>
  (bytes, opts = {}) => {
    const o = withHash(get, opts);
    return rawDecodeIndex(bytes, { ...o, latin1: o.latin1 ?? (opts.platform ?? get()).latin1 });
  };
export const encodeIndexWith =
  (get: Get): BoundApi['encodeIndex'] =>
  (index, opts = {}) => {
    const o = withHash(get, opts);
    return rawEncodeIndex(index, { ...o, alloc: o.alloc ?? (opts.platform ?? get()).alloc });
  };
export const readIndexFileWith =
  (get: Get): BoundApi['readIndexFile'] =>
  (fs, gitDir, objectFormat, hash, opts = {}) =>
    rawReadIndexFile(fs, gitDir, objectFormat, hash ?? get().hash, { ...opts, latin1: opts.latin1 ?? get().latin1 });
export const hashBytesWith =
  (get: Get): BoundApi['hashBytes'] =>
  (format, data, provider) =>
    rawHashBytes(format, data, provider ?? get().hash);
export const objectIdWith =
  (get: Get): BoundApi['objectId'] =>
  (type, content, format, hash) =>
    rawObjectId(type, content, format, hash ?? get().hash);
export const encodeLooseObjectWith =
  (get: Get): BoundApi['encodeLooseObject'] =>
  (type, content, opts = {}) =>
    rawEncodeLoose(type, content, withHashZlib(get, opts));
export const decodeLooseObjectWith =
  (get: Get): BoundApi['decodeLooseObject'] =>
  (bytes, opts = {}) =>
    rawDecodeLoose(bytes, withHashZlib(get, opts));
export const readLooseHeaderWith =
  (get: Get): BoundApi['readLooseHeader'] =>
  (bytes, opts = {}) =>
    rawReadLooseHeader(bytes, { zlib: withHashZlib(get, opts).zlib });
export const encodePackWith =
  (get: Get): BoundApi['encodePack'] =>
  (objects, opts = {}) =>
    rawEncodePack(objects, withHashZlib(get, opts));
export const encodePackIndexWith =
  (get: Get): BoundApi['encodePackIndex'] =>
  (entries, packChecksum, format, hash) =>
    rawEncodePackIndex(entries, packChecksum, format, hash ?? get().hash);
export const verifyPackIndexWith =
  (get: Get): BoundApi['verifyPackIndex'] =>
  (index, hash) =>
    rawVerifyPackIndex(index, hash ?? get().hash);
export const verifyPackChecksumWith =
  (get: Get): BoundApi['verifyPackChecksum'] =>
  (pack, format, opts = {}) =>
    rawVerifyPackChecksum(pack, format, withHash(get, opts));
export const parseCommitGraphLayerWith =
  (get: Get): BoundApi['parseCommitGraphLayer'] =>
  (bytes, format, opts = {}) =>
    rawParseCommitGraphLayer(bytes, format, withHash(get, opts));

/** Every platform-dependent function of the root API with `platform()` as its default (called per use: cheap, and never kept in module state). */
export function bindPlatform(platform: Get): BoundApi {
  return {
    openRepository: openRepositoryWith(platform),
    handleHookEvent: handleHookEventWith(platform),
    decodeIndex: decodeIndexWith(platform),
    encodeIndex: encodeIndexWith(platform),
    readIndexFile: readIndexFileWith(platform),
    hashBytes: hashBytesWith(platform),
    objectId: objectIdWith(platform),
    encodeLooseObject: encodeLooseObjectWith(platform),
    decodeLooseObject: decodeLooseObjectWith(platform),
    readLooseHeader: readLooseHeaderWith(platform),
    encodePack: encodePackWith(platform),
    encodePackIndex: encodePackIndexWith(platform),
    verifyPackIndex: verifyPackIndexWith(platform),
    verifyPackChecksum: verifyPackChecksumWith(platform),
    parseCommitGraphLayer: parseCommitGraphLayerWith(platform),
  };
}
