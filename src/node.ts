/**
 * git-scalpel/node — the root API with Node's fast paths installed (node:crypto for hashing,
 * node:zlib for deflate; both give the same bytes as the pure defaults) and the node:fs adapter.
 */
import { setDefaultHash } from './hash/index.js';
import { nodeHash } from './hash/node-crypto.js';
import { setDefaultZlib } from './object/zlib.js';
import { nodeZlib } from './object/node-zlib.js';

setDefaultHash(nodeHash);
setDefaultZlib(nodeZlib);

export * from './index.js';
export { nodeHash } from './hash/node-crypto.js';
export { nodeZlib } from './object/node-zlib.js';
export { nodeFs } from './fs/node.js';
