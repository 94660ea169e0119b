/**
 * git-scalpel/node — the root API with Node's platform as its default (what `git-scalpel` itself
 * gives under the `node` export condition), plus the node:fs adapter and Node's providers by name.
 * Importing it changes nothing anywhere: every default is bound, not installed.
 */
export * from './entry/root-node.js';
export { nodePlatform, nodeProcessInfo } from './platform/node.js';
export { nodeHash } from './hash/node-crypto.js';
export { nodeZlib } from './object/node-zlib.js';
export { nodeFs } from './fs/node.js';
export { watchWorktrees, type WatchHost, type WatchHostOptions, type WatchHostStatus } from './platform/node-watch.js';
