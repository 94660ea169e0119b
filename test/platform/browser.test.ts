import { bundlePage, CHROMIUM, collectFiles, expectRestoredOnDisk, LAUNCH_ARGS, inChromium, servePage } from './harness.js';
import { describe, expect, it } from 'vitest';
import type { AddressInfo } from 'node:net';
import { chromium } from 'playwright-core';
import { personRepo } from '../e2e/scenario.js';
import { gitView, worktreeView } from '../helpers/view.js';
import { deflateSync, inflateSync } from 'node:zlib';
import { createHash } from 'node:crypto';
import type { FileSpec } from './browser/files.js';
import type { ProviderReport } from './browser/providers-page.js';

/**
 * DESIGN "Tests": the package in headless Chromium against an in-browser filesystem. The root
 * module is bundled for the browser with @isomorphic-git/lightning-fs (IndexedDB); a repository
 * made by git (the person's work in progress: a staged hunk with unstaged edits on top, an
 * untracked and an ignored file, an executable, symlinks, a dangling one) is copied into it; the
 * page snapshots a scope, edits it as an agent would (worktree and index), restores, and sends
 * every file back. Written to disk, the result must be what git said before the snapshot.
 *
 * Chromium comes from Debian's package (.ci/run installs it). Without it the test is skipped,
 * except in CI, where it fails.
 */

describe.runIf(inChromium)('in headless Chromium', () => {
  it('every provider gives the same bytes: pure hash and WebCrypto, pako and DecompressionStream (and how fast each is)', async () => {
    const z = deflateSync(Buffer.alloc(300_000, 'abcdefghij'), { level: 1 });
    const big = Buffer.alloc(2 << 20);
    for (let i = 0; i < big.length; i++) big[i] = (i * 2654435761) >>> 27;
    const corrupt = Buffer.from(z);
    corrupt[corrupt.length - 1] ^= 1;
    const streams: Record<string, string> = {
      small: deflateSync(Buffer.from('hello, git')).toString('base64'),
      level1: z.toString('base64'),
      level9: deflateSync(big, { level: 9 }).toString('base64'),
      stored: deflateSync(big.subarray(0, 100_000), { level: 0 }).toString('base64'),
      truncated: z.subarray(0, z.length - 5).toString('base64'),
      trailing: Buffer.concat([z, Buffer.from('junk')]).toString('base64'),
      corrupt: corrupt.toString('base64'),
      dictionary: Buffer.from([0x78, 0xbb, 0, 0, 0, 1, 0x03, 0x00]).toString('base64'),
    };
    const sizes = [0, 1, 55, 56, 64, 1000, 65_535, 65_536, 1 << 20, (3 << 20) + 17];
    const server = await servePage(await bundlePage('./browser/providers-page.ts'));
    const browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: LAUNCH_ARGS });
    try {
      const page = await browser.newPage();
      await page.goto(`http://127.0.0.1:${(server.address() as AddressInfo).port}/`);
      await page.waitForFunction(() => typeof (globalThis as { providers?: unknown }).providers === 'function');
      const r = (await page.evaluate(
        ([s, n]) => (globalThis as unknown as { providers: (s: Record<string, string>, n: number[]) => Promise<unknown> }).providers(s, n),
        [streams, sizes] as [Record<string, string>, number[]],
      )) as ProviderReport;
      expect(r.platform).toEqual({ name: 'web', digest: true, inflate: true });
      expect(r.digests.length).toBe(sizes.length * 2);
      for (const [format, n, pure, web, whole] of r.digests) {
        expect(web, `${format} ${n}`).toBe(pure);
        expect(whole, `${format} ${n}`).toBe(pure);
      }
      const want = (name: string) =>
        createHash('sha1')
          .update(inflateSync(Buffer.from(streams[name], 'base64')))
          .digest('hex');
      const byName = Object.fromEntries(r.inflates.map(([n, ...rest]) => [n, rest]));
      for (const name of ['small', 'level1', 'level9', 'stored']) expect(byName[name], name).toEqual([want(name), want(name), want(name)]);
      expect(byName.truncated).toEqual(['error:truncated', 'error:truncated', 'error:truncated']);
      expect(byName.trailing).toEqual(['error:trailing-data', 'error:trailing-data', 'error:trailing-data']);
      expect(byName.corrupt).toEqual(['error:corrupt', 'error:corrupt', 'error:corrupt']);
      expect(byName.dictionary).toEqual(['error:needs-dictionary', 'error:needs-dictionary', 'error:needs-dictionary']);
      console.log(
        `Chromium, 10 MB: SHA-1 pure ${r.timing.sha1Pure} ms, WebCrypto ${r.timing.sha1WebCrypto} ms; SHA-256 pure ${r.timing.sha256Pure} ms, WebCrypto ${r.timing.sha256WebCrypto} ms; inflate pako ${r.timing.inflatePako} ms, DecompressionStream ${r.timing.inflateStream} ms`,
      );
    } finally {
      await browser.close();
      server.close();
    }
  }, 60_000);

  it('snapshot, agent edit and restore on an IndexedDB filesystem leave what git saw before', async () => {
    const dir = personRepo();
    const before = { tree: worktreeView(dir), git: gitView(dir) };
    const files = collectFiles(dir);
    const server = await servePage(await bundlePage('./browser/page.ts'));
    // as root, without the sandbox; no background traffic on a closed network
    const browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: LAUNCH_ARGS });
    try {
      const page = await browser.newPage();
      const errors: string[] = [];
      page.on('pageerror', (e) => errors.push(String(e)));
      await page.goto(`http://127.0.0.1:${(server.address() as AddressInfo).port}/`);
      await page.waitForFunction(() => typeof (globalThis as { scenario?: unknown }).scenario === 'function');
      // the snapshot's objects loose (the default for a few paths), then as one pack
      for (const packThreshold of [undefined, 1]) {
        const result = (await page.evaluate(
          ([f, scope, t]) =>
            (globalThis as unknown as { scenario: (f: unknown, s: string[], t?: number) => Promise<unknown> }).scenario(f, scope, t),
          [files, ['src', 'README.md', 'run.sh'], packThreshold] as [FileSpec[], string[], number | undefined],
        )) as {
          snapshot: { paths: string[]; items: number; entries: number };
          restored: number;
          indexWritten: boolean;
          files: FileSpec[];
          globals: string[];
          userAgent: string;
        };
        const packs = result.files
          .filter((f) => /^\.git\/objects\/pack\/pack-[0-9a-f]{40}\.(pack|idx)$/.test(f.path))
          .map((f) => f.path.slice(-4));
        expect(packs.sort()).toEqual(packThreshold === 1 ? ['.idx', 'pack'] : []);
        expect(errors).toEqual([]);
        expect(result.userAgent).toMatch(/Chrome/);
        expect(result.globals).toEqual(['undefined', 'undefined', 'undefined']);
        expect(result.snapshot.paths).toEqual(['README.md', 'run.sh', 'src']);
        expect(result.snapshot.entries).toBeGreaterThanOrEqual(4);
        expect(result.restored).toBe(1);
        expect(result.indexWritten).toBe(true);
        // the browser's files, on disk, judged by git
        expectRestoredOnDisk(result.files, before, 'scalpel-browser-');
      }
    } finally {
      await browser.close();
      server.close();
    }
  }, 60_000);
});
