import { describe, expect, it } from 'vitest';
import { build } from 'esbuild';
import { fileURLToPath } from 'node:url';
import { runInNewContext } from 'node:vm';
import { loadIndexFixtures } from '../helpers/fixtures.js';

const entry = fileURLToPath(new URL('../../src/index.ts', import.meta.url));

/** Bundles `code` (importing the package by its name, as a user does) against the built dist/. */
async function bundlePackage(code: string, platform: 'browser' | 'node') {
  const root = fileURLToPath(new URL('../..', import.meta.url));
  return build({
    stdin: { contents: code, resolveDir: root, loader: 'js' },
    absWorkingDir: root,
    bundle: true,
    platform,
    format: 'esm',
    write: false,
    metafile: true,
    logLevel: 'silent',
    external: ['node:*'],
  });
}

describe('the package as bundlers see it (dist/, package.json exports)', () => {
  it('a browser bundle of `git-scalpel` takes the default entry: no node: import, no Node platform', async () => {
    const result = await bundlePackage(`export { openRepository, decodeIndex, webPlatform } from 'git-scalpel';`, 'browser');
    const inputs = Object.keys(result.metafile.inputs);
    expect(inputs).toContain('dist/index.js');
    expect(
      inputs.some(
        (p) =>
          p.includes('root-node') ||
          p.includes('platform/node') ||
          p.includes('node-crypto') ||
          p.includes('node-zlib') ||
          p.includes('fs/node'),
      ),
    ).toBe(false);
    for (const [, meta] of Object.entries(result.metafile.inputs)) {
      for (const imp of meta.imports) expect(imp.path.startsWith('node:'), imp.path).toBe(false);
    }
  });

  it('a bundler targeting Node takes the `node` and `module` conditions: the Node entry as ES modules (not the code-cached bundle, which reads files beside it), with node:crypto and node:zlib', async () => {
    const result = await bundlePackage(`export { openRepository, decodeIndex } from 'git-scalpel';`, 'node');
    const inputs = Object.keys(result.metafile.inputs);
    expect(inputs).toContain('dist/node.js');
    expect(inputs.some((p) => p.includes('git-scalpel-node'))).toBe(false);
    const imports = Object.values(result.metafile.inputs).flatMap((m) => m.imports.map((i) => i.path));
    expect(imports).toEqual(expect.arrayContaining(['node:crypto', 'node:zlib']));
  });

  it('sideEffects: false lets a bundler keep only what is used (a hex helper pulls in no hash, zlib or engine)', async () => {
    const result = await bundlePackage(`export { toHex } from 'git-scalpel';`, 'browser');
    const kept = Object.entries(result.metafile.outputs)[0][1].inputs;
    const used = Object.entries(kept)
      .filter(([, v]) => v.bytesInOutput > 0)
      .map(([k]) => k);
    expect(
      used.some((p) => /pako|noble|snapshot\/engine/.test(p)),
      used.join(' '),
    ).toBe(false);
    expect(result.outputFiles[0].text.length).toBeLessThan(4000);
  });
});

describe('root module in a browser', () => {
  it('bundles for the browser with no Node built-in in its module graph', async () => {
    const result = await build({
      entryPoints: [entry],
      bundle: true,
      platform: 'browser',
      format: 'esm',
      write: false,
      metafile: true,
      logLevel: 'silent',
    });
    const inputs = Object.keys(result.metafile.inputs);
    expect(inputs.some((p) => p.includes('node-crypto') || p.includes('node-zlib') || p.includes('fs/node'))).toBe(false);
    for (const [, meta] of Object.entries(result.metafile.inputs)) {
      for (const imp of meta.imports) expect(imp.path.startsWith('node:'), imp.path).toBe(false);
    }
    const text = result.outputFiles[0].text;
    expect(text).not.toMatch(/\bBuffer\b/);
    expect(text).not.toMatch(/\brequire\(/);
  });

  it('decodes and re-encodes every fixture in a context with only web globals (no process, Buffer, require)', async () => {
    const result = await build({
      entryPoints: [entry],
      bundle: true,
      platform: 'browser',
      format: 'iife',
      globalName: 'scalpel',
      write: false,
      logLevel: 'silent',
    });
    const code = result.outputFiles[0].text;
    const fixtures = loadIndexFixtures().map((f) => ({ name: f.name, fmt: f.meta.objectFormat, bytes: f.bytes.slice() }));
    const sandbox: Record<string, unknown> = { TextEncoder, TextDecoder, fixtures, results: [] as unknown[] };
    runInNewContext(
      `${code}
      for (const f of fixtures) {
        const b = new Uint8Array(f.bytes);
        const idx = scalpel.decodeIndex(b, { objectFormat: f.fmt });
        const out = scalpel.encodeIndex(idx);
        let same = out.length === b.length;
        for (let i = 0; same && i < b.length; i++) same = out[i] === b[i];
        results.push([f.name, same, idx.entries.length, typeof process, typeof Buffer, typeof require]);
      }`,
      sandbox,
    );
    const results = sandbox.results as Array<[string, boolean, number, string, string, string]>;
    expect(results.length).toBe(fixtures.length);
    for (const [name, same, , p, b, r] of results) {
      expect(same, name).toBe(true);
      expect([p, b, r]).toEqual(['undefined', 'undefined', 'undefined']);
    }
  });
});
