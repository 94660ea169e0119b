#!/usr/bin/env node
/**
 * Bundle the command line into one file, dist/git-scalpel.mjs (the package's `bin`): node:*
 * imports stay imports, everything else (the library, pako, @noble/hashes) is inlined. Run by
 * `npm run build` after tsc; the unbundled dist/cli/bin.js behaves the same.
 */
import { build } from 'esbuild';
import { chmodSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const outfile = `${root}dist/git-scalpel.mjs`;
await build({
  entryPoints: [`${root}dist/cli/bin.js`],
  outfile,
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node20',
  logLevel: 'warning',
  legalComments: 'none',
});
chmodSync(outfile, 0o755);
