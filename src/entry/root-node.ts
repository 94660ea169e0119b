/**
 * git-scalpel's root entry under the `node` export condition (Node, Bun, Deno, a WebContainer's
 * Node): the root API of src/index.ts with Node's platform (node:crypto, node:zlib, process ids,
 * Buffer helpers) as the default, so `import { openRepository } from 'git-scalpel'` runs at full
 * speed without knowing about platforms. Bundlers targeting browsers never take this condition.
 * Same exports as src/index.ts (its declarations serve both); local exports shadow the `export *`.
 */
import {
  openRepositoryWith,
  handleHookEventWith,
  decodeIndexWith,
  encodeIndexWith,
  readIndexFileWith,
  hashBytesWith,
  objectIdWith,
  encodeLooseObjectWith,
  decodeLooseObjectWith,
  readLooseHeaderWith,
  encodePackWith,
  encodePackIndexWith,
  verifyPackIndexWith,
  verifyPackChecksumWith,
  parseCommitGraphLayerWith,
} from './bind.js';
import { nodePlatform } from '../platform/node.js';
import nodeFsModule from 'node:fs';
import { nodeFs } from '../fs/node.js';
import type { OpenOptions, HookOptions } from './bind.js';

export * from '../index.js';

/**
 * Node's own fs module, as isomorphic-git's convention passes it (`import fs from 'node:fs'`, its
 * namespace, or `fs.promises`): the node:fs adapter (sync stat calls, reads into a reused buffer,
 * capabilities known without probing) instead of the generic one over `fs.promises`, which costs
 * a probe on open and a promise per call.
 */
function ownFs<T extends { fs?: unknown }>(opts: T): T {
  const f = opts.fs as { promises?: unknown; lstatSync?: unknown } | undefined;
  const isNode = f === nodeFsModule || f === nodeFsModule.promises || (f !== undefined && f.promises === nodeFsModule.promises && f.lstatSync === nodeFsModule.lstatSync);
  return isNode ? { ...opts, fs: nodeFs() } : opts;
}
const open = openRepositoryWith(nodePlatform);
const hook = handleHookEventWith(nodePlatform);

/** Open the repository containing `opts.dir` (`opts.fs`: node:fs, memfs, …), on Node's platform. */
export const openRepository = (opts: OpenOptions) => open(ownFs(opts));
export const handleHookEvent = (event: Parameters<typeof hook>[0], opts: HookOptions) => hook(event, ownFs(opts));
export const decodeIndex = /* @__PURE__ */ decodeIndexWith(nodePlatform);
export const encodeIndex = /* @__PURE__ */ encodeIndexWith(nodePlatform);
export const readIndexFile = /* @__PURE__ */ readIndexFileWith(nodePlatform);
export const hashBytes = /* @__PURE__ */ hashBytesWith(nodePlatform);
export const objectId = /* @__PURE__ */ objectIdWith(nodePlatform);
export const encodeLooseObject = /* @__PURE__ */ encodeLooseObjectWith(nodePlatform);
export const decodeLooseObject = /* @__PURE__ */ decodeLooseObjectWith(nodePlatform);
export const readLooseHeader = /* @__PURE__ */ readLooseHeaderWith(nodePlatform);
export const encodePack = /* @__PURE__ */ encodePackWith(nodePlatform);
export const encodePackIndex = /* @__PURE__ */ encodePackIndexWith(nodePlatform);
export const verifyPackIndex = /* @__PURE__ */ verifyPackIndexWith(nodePlatform);
export const verifyPackChecksum = /* @__PURE__ */ verifyPackChecksumWith(nodePlatform);
export const parseCommitGraphLayer = /* @__PURE__ */ parseCommitGraphLayerWith(nodePlatform);
