/**
 * Node's platform (also Bun's, Deno's and a WebContainer's Node): node:crypto for hashing (about
 * 10× the pure SHA-1), node:zlib for deflate and inflate (2–3× pako), process ids for lock
 * recovery, Buffer's Latin-1 slice and unzeroed allocation. Every provider gives the same bytes
 * as the pure ones (test/platform/providers.test.ts). Only Node entries import this file.
 */
import { Buffer } from 'node:buffer';
import { nodeHash } from '../hash/node-crypto.js';
import { nodeZlib } from '../object/node-zlib.js';
import type { ObjectFormat } from '../hash/index.js';
import type { Platform, ProcessInfo } from './types.js';

/** This process, and whether another one runs (signal 0 probes without signalling). */
export const nodeProcessInfo: ProcessInfo = Object.freeze({
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

const NODE_PLATFORM: Platform = Object.freeze({
  name: 'node',
  hash: nodeHash,
  zlib: nodeZlib,
  proc: nodeProcessInfo,
  latin1: (b: Uint8Array) => Buffer.from(b.buffer, b.byteOffset, b.byteLength).toString('latin1'),
  alloc: (n: number) => {
    const b = Buffer.allocUnsafeSlow(n);
    return new Uint8Array(b.buffer, b.byteOffset, n);
  },
  // OpenSSL is synchronous and faster than a round trip through WebCrypto's promise
  digest: (format: ObjectFormat, data: Uint8Array) => Promise.resolve(nodeHash.create(format).update(data).digest()),
});

/** Node's platform (one immutable object; every call returns the same one). */
export function nodePlatform(): Platform {
  return NODE_PLATFORM;
}
