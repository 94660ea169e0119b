/**
 * git-scalpel/node — the root API with Node's fast paths installed (node:crypto for hashing,
 * node:zlib for deflate; both give the same bytes as the pure defaults) and the node:fs adapter.
 */
import { setDefaultHash } from './hash/index.js';
import { nodeHash } from './hash/node-crypto.js';
import { setDefaultZlib } from './object/zlib.js';
import { nodeZlib } from './object/node-zlib.js';
import { setDefaultProcessInfo } from './repo/journal.js';
import { setLatin1Decoder } from './bytes/text.js';
import { setByteAllocator } from './bytes/writer.js';
import { Buffer } from 'node:buffer';

setDefaultHash(nodeHash);
setByteAllocator((n) => {
  const b = Buffer.allocUnsafeSlow(n);
  return new Uint8Array(b.buffer, b.byteOffset, n);
});
setLatin1Decoder((b) => Buffer.from(b.buffer, b.byteOffset, b.byteLength).toString('latin1'));
setDefaultZlib(nodeZlib);
setDefaultProcessInfo({
  pid: process.pid,
  isAlive(pid: number): boolean {
    try {
      process.kill(pid, 0);
      return true;
    } catch (e) {
      // EPERM: it exists but belongs to someone else
      return (e as { code?: string }).code === 'EPERM';
    }
  },
});

export * from './index.js';
export { nodeHash } from './hash/node-crypto.js';
export { nodeZlib } from './object/node-zlib.js';
export { nodeFs } from './fs/node.js';
