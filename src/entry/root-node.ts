/**
 * git-scalpel's root entry under the `node` export condition (Node, Bun, Deno, a WebContainer's
 * Node): the root API of the web entry with Node's platform (node:crypto, node:zlib, process ids,
 * Buffer helpers) as the default, so `import { openRepository } from 'git-scalpel'` runs at full
 * speed without knowing about platforms. Bundlers targeting browsers never take this condition.
 * Same exports as the web entry (its declarations serve both); local exports shadow the `export *`.
 */
import * as bind from './bind.js';
import { nodePlatform } from '../platform/node.js';
import nodeFsModule from 'node:fs';
import { nodeFs } from '../fs/node.js';

export * from '../index.js';

/**
 * Node's own fs module, as isomorphic-git's convention passes it (`import fs from 'node:fs'`, its
 * namespace, or `fs.promises`): the node:fs adapter (sync stat calls, reads into a reused buffer,
 * capabilities known without probing) instead of the generic one over `fs.promises`, which costs
 * a probe on open and a promise per call.
 */
function ownFs<T extends { fs?: unknown }>(opts: T): T {
  const f = opts.fs as { promises?: unknown; lstatSync?: unknown } | undefined;
  const isNode =
    f === nodeFsModule ||
    f === nodeFsModule.promises ||
    (f !== undefined && f.promises === nodeFsModule.promises && f.lstatSync === nodeFsModule.lstatSync);
  return isNode ? { ...opts, fs: nodeFs() } : opts;
}
/** Every platform-taking function of the root API, bound to Node's platform (the node entry is never tree-shaken for a browser). */
const api = bind.bindPlatform(nodePlatform);

/** Open the repository containing `opts.dir` (`opts.fs`: node:fs, memfs, …), on Node's platform. */
export const openRepository = (opts: bind.OpenOptions) => api.openRepository(ownFs(opts));
export const handleHookEvent = (event: Parameters<typeof api.handleHookEvent>[0], opts: bind.HookOptions) =>
  api.handleHookEvent(event, ownFs(opts));
export const {
  decodeIndex,
  encodeIndex,
  readIndexFile,
  hashBytes,
  objectId,
  encodeLooseObject,
  decodeLooseObject,
  readLooseHeader,
  encodePack,
  encodePackIndex,
  verifyPackIndex,
  verifyPackChecksum,
  parseCommitGraphLayer,
} = api;
