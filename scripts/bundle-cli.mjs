#!/usr/bin/env node
/**
 * Bundle the command line and the Node entry (dist/git-scalpel-node.mjs, below): dist/cli.cjs is src/cli/bin.ts with everything but node:* inlined
 * (the library, pako, @noble/hashes), as CommonJS; dist/git-scalpel.cjs (the package's `bin`,
 * from src/cli/loader.cjs) runs it through a V8 code cache, so a hook's fresh process does not
 * compile 0.5 MB of JavaScript every time. dist/mcp.cjs is the MCP server (`git-scalpel mcp`,
 * src/mcp/cli.ts) with the MCP SDK and zod, bundled apart so that no other command loads them
 * (loaded by the `mcp` command from beside dist/cli.cjs). dist/help.json is the command reference
 * and the version, which the loader prints for `--help`, `<command> --help` and `--version` on its own. Run by `npm run build` after tsc; the
 * unbundled dist/cli/bin.js behaves the same.
 */
import { build } from 'esbuild';
import { createHash } from 'node:crypto';
import { chmodSync, copyFileSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const { version } = JSON.parse(readFileSync(`${root}package.json`, 'utf8'));
// The build: the version and a hash of the compiled modules (tsc's output, before bundling), so
// that the warm server's socket (src/server/place.ts) is per build: a project on another version,
// or a checkout with other code, starts its own server instead of being answered by this one.
const compiled = (dir) =>
  readdirSync(`${root}dist/${dir}`, { withFileTypes: true })
    .filter((d) => d.name !== 'types')
    .flatMap((d) => (d.isDirectory() ? compiled(`${dir}${d.name}/`) : d.name.endsWith('.js') ? [`${dir}${d.name}`] : []));
const hash = createHash('sha256');
for (const f of compiled('').sort()) hash.update(`${f}\0`).update(readFileSync(`${root}dist/${f}`));
const buildId = `${version}-${hash.digest('hex').slice(0, 10)}`;
// jsonc-parser's `main` is a UMD build whose factory takes `require` as a parameter, which esbuild
// cannot follow (its modules would be left to a require() beside the bundle): take its ES build.
const alias = { 'jsonc-parser': 'jsonc-parser/lib/esm/main.js' };
/** One CommonJS bundle of a compiled entry: node:* stays imported, everything else is inlined; `--version` built in. */
const bundle = (entry, out) =>
  build({
    entryPoints: [`${root}dist/${entry}`],
    outfile: `${root}dist/${out}`,
    bundle: true,
    platform: 'node',
    format: 'cjs',
    target: 'node20',
    logLevel: 'warning',
    legalComments: 'none',
    absWorkingDir: root,
    alias,
    define: { __GIT_SCALPEL_VERSION__: JSON.stringify(version), __GIT_SCALPEL_BUILD__: JSON.stringify(buildId) },
  });
await bundle('cli/bin.js', 'cli.cjs');
// install, status and conformance (and their config file parsers), which no hook runs: loaded on demand (src/cli/lazy.ts)
await bundle('cli/tools.js', 'tools.cjs');
// The package's entry in Node (`git-scalpel` under the `node` condition, and `git-scalpel/node`):
// one CommonJS bundle (dist/git-scalpel-node.cjs, its dependencies left to node_modules) compiled
// through the V8 code cache (src/entry/code-cache.cjs), behind an ES module that names every
// export (dist/git-scalpel-node.mjs, written below). One bundle instead of ~120 modules saved a
// fresh process ~90 ms; the code cache saves it compiling the bundle again. One file for both
// entries keeps one copy of every class. Bundlers (the `module` condition) take dist/node.js.
await build({
  entryPoints: [`${root}dist/node.js`],
  outfile: `${root}dist/git-scalpel-node.cjs`,
  bundle: true,
  platform: 'node',
  format: 'cjs',
  target: 'node20',
  logLevel: 'warning',
  legalComments: 'none',
});
copyFileSync(`${root}src/entry/code-cache.cjs`, `${root}dist/code-cache.cjs`);
const names = Object.keys(await import(`${root}dist/node.js`)).sort();
if (names.includes('default')) throw new Error('dist/node.js has a default export: the Node entry names its exports one by one');
writeFileSync(
  `${root}dist/git-scalpel-node.mjs`,
  `// The package's entry in Node, written by scripts/bundle-cli.mjs: dist/git-scalpel-node.cjs through the
// V8 code cache (dist/code-cache.cjs), or required the ordinary way where that cannot be read.
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
const require = createRequire(import.meta.url);
const lib = require('./code-cache.cjs').loadCached(fileURLToPath(new URL('./git-scalpel-node.cjs', import.meta.url)), 'node', require) ?? require('./git-scalpel-node.cjs');
export const { ${names.join(', ')} } = lib;
`,
);
await bundle('mcp/cli.js', 'mcp.cjs');
// the warm hook server and its `server` command, which no hook's process loads (src/cli/lazy.ts)
await bundle('server/cli.js', 'server.cjs');
// the hook client install writes as the hook command, with this build's name in it
const client = readFileSync(`${root}src/server/hook-client.sh`, 'utf8');
if (!client.includes("b='@BUILD@'")) throw new Error('src/server/hook-client.sh has no @BUILD@ to fill in');
writeFileSync(`${root}dist/git-scalpel-hook.sh`, client.replace("b='@BUILD@'", `b='${buildId}'`));
// the loader prints these for `--help`, `<command> --help` and `--version` without loading dist/cli.cjs
const { USAGE, allCommandHelp } = await import(`${root}dist/cli/usage.js`);
writeFileSync(`${root}dist/help.json`, JSON.stringify({ version, usage: USAGE, commands: allCommandHelp() }) + '\n');
const bin = `${root}dist/git-scalpel.cjs`;
copyFileSync(`${root}src/cli/loader.cjs`, bin);
chmodSync(bin, 0o755);
