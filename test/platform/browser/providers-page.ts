/**
 * Bundled by browser.test.ts for headless Chromium: the platform's providers side by side in a
 * real browser. `window.providers(streams)` hashes buffers of many sizes with the pure hash and
 * with WebCrypto (directly and through digestWhole), inflates zlib streams made by Node's zlib
 * with pako and with DecompressionStream (good ones and damaged ones), and times both on 10 MB.
 * Everything comes back as hex digests and error reasons, for the test to compare.
 */
import { isScalpelError } from '../../../src/errors/index.js';
import { toHex } from '../../../src/bytes/hex.js';
import { pureHash, type ObjectFormat } from '../../../src/hash/index.js';
import { pakoZlib } from '../../../src/object/zlib.js';
import { webPlatform, webDigest, webInflate } from '../../../src/platform/web.js';
import { digestWhole, inflateWhole } from '../../../src/platform/whole.js';
import { b64, sample } from './files.js';

export interface ProviderReport {
  platform: { name: string; digest: boolean; inflate: boolean };
  /** [format, size, pure hex, WebCrypto hex, digestWhole hex] */
  digests: Array<[ObjectFormat, number, string, string, string]>;
  /** [name, pako result, DecompressionStream result, inflateWhole result]: sha1 hex of the output, or `error:<reason>` */
  inflates: Array<[string, string, string, string]>;
  /** median milliseconds over 5 runs, 10 MB */
  timing: {
    sha1Pure: number;
    sha1WebCrypto: number;
    sha256Pure: number;
    sha256WebCrypto: number;
    inflatePako: number;
    inflateStream: number;
    size: number;
  };
}

const sha1 = (b: Uint8Array) => toHex(pureHash.create('sha1').update(b).digest());

async function outcome(f: () => Uint8Array | Promise<Uint8Array>): Promise<string> {
  try {
    return sha1(await f());
  } catch (e) {
    return isScalpelError(e, 'BAD_ZLIB') ? `error:${String(e.data.reason)}` : `throw:${String(e)}`;
  }
}

async function median(f: () => unknown): Promise<number> {
  const t: number[] = [];
  for (let i = 0; i < 6; i++) {
    const s = performance.now();
    await f();
    if (i > 0) t.push(performance.now() - s); // the first run warms the JIT
  }
  t.sort((a, b) => a - b);
  return Math.round(t[2] * 100) / 100;
}

async function providers(streams: Record<string, string>, sizes: number[]): Promise<ProviderReport> {
  const p = webPlatform();
  const digests: ProviderReport['digests'] = [];
  for (const format of ['sha1', 'sha256'] as ObjectFormat[]) {
    for (const n of sizes) {
      const data = sample(n, n + 7);
      digests.push([
        format,
        n,
        toHex(pureHash.create(format).update(data).digest()),
        toHex(await webDigest(format, data)),
        toHex(await digestWhole(p, format, data)),
      ]);
    }
  }
  const inflates: ProviderReport['inflates'] = [];
  for (const [name, encoded] of Object.entries(streams)) {
    const z = b64.decode(encoded);
    inflates.push([
      name,
      await outcome(() => pakoZlib.inflate(z)),
      await outcome(() => webInflate(z)),
      await outcome(() => inflateWhole(p, z)),
    ]);
  }
  const size = 10 << 20;
  const big = sample(size, 3);
  const z = pakoZlib.deflate(big, 1);
  const timing = {
    size,
    sha1Pure: await median(() => pureHash.create('sha1').update(big).digest()),
    sha1WebCrypto: await median(() => webDigest('sha1', big)),
    sha256Pure: await median(() => pureHash.create('sha256').update(big).digest()),
    sha256WebCrypto: await median(() => webDigest('sha256', big)),
    inflatePako: await median(() => pakoZlib.inflate(z)),
    inflateStream: await median(() => webInflate(z)),
  };
  return {
    platform: { name: p.name, digest: typeof p.digest === 'function', inflate: typeof p.inflate === 'function' },
    digests,
    inflates,
    timing,
  };
}

(globalThis as unknown as { providers: typeof providers }).providers = providers;
