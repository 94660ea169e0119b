/** The platform object and its portable providers (Node's is in node.ts, reached only from Node entries). */
export type { Platform, ProcessInfo, ZlibProvider, InflateStream } from './types.js';
export { purePlatform } from './pure.js';
export { webPlatform, webDigest, webInflate } from './web.js';
export { digestWhole, inflateWhole, DIGEST_ASYNC_MIN, INFLATE_ASYNC_MIN } from './whole.js';
