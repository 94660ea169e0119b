/**
 * Every platform gives the same bytes (DESIGN "Platform"): pure JS, node:crypto / node:zlib,
 * and the web providers (WebCrypto, DecompressionStream — Node has both globals, so they are
 * checked here as well as in Chromium by browser.test.ts). And no platform is module state:
 * importing Node's entry changes no default, and the entries bind theirs per call.
 */
import { execFileSync } from 'node:child_process';
import { makeTempRepo } from '../helpers/git.js';
import { deflateSync } from 'node:zlib';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { toHex } from '../../src/bytes/index.js';
import { isScalpelError } from '../../src/errors/index.js';
import { defaultHash, hashBytes, pureHash, type HashProvider, type ObjectFormat } from '../../src/hash/index.js';
import { nodeHash } from '../../src/hash/node-crypto.js';
import { defaultZlib, pakoZlib } from '../../src/object/zlib.js';
import { nodeZlib } from '../../src/object/node-zlib.js';
import { ByteWriter } from '../../src/bytes/writer.js';
import { purePlatform } from '../../src/platform/pure.js';
import { webDigest, webInflate, webPlatform } from '../../src/platform/web.js';
import { nodePlatform } from '../../src/platform/node.js';
import { digestWhole, inflateWhole, DIGEST_ASYNC_MIN, INFLATE_ASYNC_MIN } from '../../src/platform/whole.js';
import { bindPlatform } from '../../src/entry/bind.js';
import type { Platform } from '../../src/platform/types.js';
import { resolvePlatform } from '../../src/repo/repository.js';
import { loadIndexFixtures } from '../helpers/fixtures.js';
import { sample } from './browser/files.js';

async function reason(p: Promise<unknown>): Promise<unknown> {
  try {
    await p;
  } catch (e) {
    if (isScalpelError(e, 'BAD_ZLIB')) return e.data.reason;
    throw e;
  }
  throw new Error('expected BAD_ZLIB');
}

const SIZES = [0, 1, 55, 56, 64, 1000, DIGEST_ASYNC_MIN - 1, DIGEST_ASYNC_MIN, 1 << 20, 3 * (1 << 20) + 17];

describe('hash providers agree', () => {
  it.each(['sha1', 'sha256'] as ObjectFormat[])('%s: pure, node:crypto, WebCrypto and digestWhole on every platform', async (format) => {
    for (const n of SIZES) {
      const data = sample(n, n + 3);
      const want = toHex(hashBytes(format, data, pureHash));
      expect(toHex(hashBytes(format, data, nodeHash)), `node ${n}`).toBe(want);
      expect(toHex(await webDigest(format, data)), `web ${n}`).toBe(want);
      for (const p of [purePlatform, webPlatform(), nodePlatform()])
        expect(toHex(await digestWhole(p, format, data)), `${p.name} ${n}`).toBe(want);
    }
  });

  it('WebCrypto on a view into a larger buffer hashes only the view', async () => {
    const big = sample(1 << 17, 9);
    const view = big.subarray(100, 100 + DIGEST_ASYNC_MIN + 5);
    expect(toHex(await webDigest('sha1', view))).toBe(toHex(hashBytes('sha1', view, pureHash)));
  });

  it('digestWhole keeps small input synchronous and hands large input to the async digest', async () => {
    const calls: number[] = [];
    const p: Platform = { ...purePlatform, digest: async (f, d) => (calls.push(d.length), hashBytes(f, d, pureHash)) };
    await digestWhole(p, 'sha1', sample(DIGEST_ASYNC_MIN - 1));
    expect(calls).toEqual([]);
    await digestWhole(p, 'sha1', sample(DIGEST_ASYNC_MIN));
    expect(calls).toEqual([DIGEST_ASYNC_MIN]);
  });

  it('random inputs', async () => {
    await fc.assert(
      fc.asyncProperty(fc.uint8Array({ maxLength: 3000 }), fc.constantFrom<ObjectFormat>('sha1', 'sha256'), async (data, format) => {
        const want = toHex(hashBytes(format, data, pureHash));
        expect(toHex(hashBytes(format, data, nodeHash))).toBe(want);
        expect(toHex(await webDigest(format, data))).toBe(want);
      }),
      { numRuns: 100 },
    );
  });
});

describe('zlib providers agree', () => {
  it('pako, node:zlib, DecompressionStream and inflateWhole inflate every stream to the same bytes', async () => {
    for (const n of [0, 1, 1000, INFLATE_ASYNC_MIN * 3, 2 << 20]) {
      const data = sample(n, n + 1);
      for (const level of [-1, 0, 1, 6, 9]) {
        const z = pakoZlib.deflate(data, level);
        expect(toHex(nodeZlib.deflate(data, level)), `deflate ${n} @${level}`).toBe(toHex(z));
        for (const inflated of [
          pakoZlib.inflate(z),
          nodeZlib.inflate(z),
          await webInflate(z),
          await inflateWhole(webPlatform(), z),
          await inflateWhole(nodePlatform(), z),
        ]) {
          expect(inflated.length).toBe(n);
          expect(toHex(inflated.subarray(0, 64))).toBe(toHex(data.subarray(0, 64)));
          expect(Buffer.compare(Buffer.from(inflated), Buffer.from(data))).toBe(0);
        }
      }
    }
  });

  it('DecompressionStream failures are BAD_ZLIB with the reason pako gives', async () => {
    const z = deflateSync(sample(5000));
    const corrupt = Uint8Array.from(z);
    corrupt[corrupt.length - 1] ^= 1; // adler32
    const dict = Uint8Array.from([0x78, 0xbb, 0, 0, 0, 1, 0x03, 0x00]); // FDICT set, header checks
    const cases: Array<[string, Uint8Array]> = [
      ['truncated', z.subarray(0, z.length - 3)],
      ['truncated', z.subarray(0, 5)],
      ['truncated', new Uint8Array(0)],
      ['corrupt', corrupt],
      ['corrupt', Uint8Array.from([0x78, 0x9c, 0xff, 0xff])],
      ['needs-dictionary', dict],
    ];
    for (const [want, bytes] of cases) {
      let pako: unknown;
      try {
        pakoZlib.inflate(bytes);
      } catch (e) {
        pako = isScalpelError(e, 'BAD_ZLIB') ? e.data.reason : e;
      }
      expect(pako, want).toBe(want);
      expect(await reason(webInflate(bytes)), want).toBe(want);
    }
    // (Node's DecompressionStream ignores bytes after the stream's end; Chromium's reports them,
    // which browser.test.ts checks. Node's platform inflates with node:zlib, which reports them.)
  });
});

describe('no platform in module state', () => {
  it('importing git-scalpel/node installs nothing: defaults stay the pure constants', async () => {
    await import('../../src/node.js');
    expect(defaultHash()).toBe(pureHash);
    expect(defaultZlib()).toBe(pakoZlib);
    expect(Object.isFrozen(pureHash) && Object.isFrozen(pakoZlib) && Object.isFrozen(nodeHash) && Object.isFrozen(nodeZlib)).toBe(true);
    expect(Object.isFrozen(nodePlatform()) && Object.isFrozen(purePlatform) && Object.isFrozen(webPlatform())).toBe(true);
  });

  it("Node's platform: the same bytes as the pure helpers", () => {
    const p = nodePlatform();
    const bytes = Uint8Array.from({ length: 256 }, (_, i) => i);
    const s = p.latin1!(bytes);
    expect(s.length).toBe(256);
    for (let i = 0; i < 256; i++) expect(s.charCodeAt(i)).toBe(i);
    const w = new ByteWriter(4, p.alloc);
    for (let i = 0; i < 1000; i++) w.u32(i);
    const out = w.finish();
    const ref = new ByteWriter(4);
    for (let i = 0; i < 1000; i++) ref.u32(i);
    expect(toHex(out)).toBe(toHex(ref.finish()));
    expect(p.proc!.pid).toBe(process.pid);
    expect(p.proc!.isAlive(process.pid)).toBe(true);
  });

  it('a bound API uses its platform per call, and an explicit option wins', () => {
    const used: string[] = [];
    const spy = (name: string, base: HashProvider): HashProvider => ({ name, create: (f) => (used.push(name), base.create(f)) });
    const bound = bindPlatform(() => ({ ...purePlatform, hash: spy('bound', pureHash) }));
    const f = loadIndexFixtures()[0];
    const idx = bound.decodeIndex(f.bytes, { objectFormat: f.meta.objectFormat });
    expect(used).toEqual(['bound']);
    // (an untouched index may re-encode by copying its bytes, trailer included: no hash needed)
    expect(toHex(bound.encodeIndex(idx))).toBe(toHex(f.bytes));
    expect(new Set(used)).toEqual(new Set(['bound']));
    used.length = 0;
    bound.decodeIndex(f.bytes, { objectFormat: f.meta.objectFormat, hash: spy('explicit', nodeHash) });
    bound.decodeIndex(f.bytes, { objectFormat: f.meta.objectFormat, platform: { ...purePlatform, hash: spy('own-platform', pureHash) } });
    expect(used).toEqual(['explicit', 'own-platform']);
    expect(bound.objectId('blob', new Uint8Array(0))).toBe('e69de29bb2d1d6434b8b29ae775ad8c2e48c5391');
    expect(bound.hashBytes('sha1', new Uint8Array(0))).toEqual(pureHash.create('sha1').digest());
    expect(used.slice(2)).toEqual(['bound', 'bound']);
  });

  it('resolvePlatform: the pure platform by default; hash, zlib and proc override single parts', () => {
    expect(resolvePlatform({})).toBe(purePlatform);
    const node = nodePlatform();
    expect(resolvePlatform({ platform: node })).toBe(node);
    const mixed = resolvePlatform({ platform: node, hash: pureHash });
    expect([mixed.hash, mixed.zlib, mixed.proc, mixed.latin1]).toEqual([pureHash, nodeZlib, node.proc, node.latin1]);
    expect(resolvePlatform({ zlib: nodeZlib }).hash).toBe(pureHash);
  });
});

describe('the package entries', () => {
  const node = (code: string) =>
    execFileSync(process.execPath, ['--input-type=module', '-e', code], { cwd: process.cwd(), encoding: 'utf8' }).trim();

  it("`import fs from 'node:fs'` passed to the root entry's openRepository gets Node's platform and the node:fs adapter (not the generic one over fs.promises)", () => {
    const dir = makeTempRepo();
    for (const expr of ['fs', 'fs.promises', 'ns']) {
      const out = node(
        `import fs from 'node:fs'; import * as ns from 'node:fs'; import { openRepository } from 'git-scalpel';` +
          `const r = await openRepository({ fs: ${expr}, dir: ${JSON.stringify(dir)} });` +
          `console.log(JSON.stringify([r.platform.name, r.fsName]));`,
      );
      expect([expr, JSON.parse(out)]).toEqual([expr, ['node', 'node:fs']]);
    }
  });

  it("Node resolves `git-scalpel` through the `node` condition to Node's platform; the default condition is the web entry", () => {
    // one bundled module serves both Node entries: one copy of every class (instanceof holds across them)
    expect(node(`console.log(import.meta.resolve('git-scalpel'))`)).toMatch(/\/dist\/git-scalpel-node\.mjs$/);
    expect(node(`console.log(import.meta.resolve('git-scalpel/node'))`)).toMatch(/\/dist\/git-scalpel-node\.mjs$/);
    expect(
      node(
        `import * as a from 'git-scalpel'; import * as b from 'git-scalpel/node'; console.log(a.ScalpelError === b.ScalpelError && a.openRepository === b.openRepository)`,
      ),
    ).toBe('true');
    expect(node(`console.log(import.meta.resolve('git-scalpel/internal'))`)).toMatch(/\/dist\/internal\.js$/);
    const pkg = JSON.parse(node(`import p from 'git-scalpel/package.json' with { type: 'json' }; console.log(JSON.stringify(p))`));
    expect(pkg.exports['.'].default).toBe('./dist/index.js');
    expect(pkg.sideEffects).toBe(false);
  });
});
