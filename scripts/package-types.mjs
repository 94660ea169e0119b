#!/usr/bin/env node
/**
 * The declarations the package ships: those the entries reach (dist/index.d.ts, node.d.ts,
 * internal.d.ts and what they import), copied unchanged from tsc's output beside the JavaScript
 * into two trees, which package.json's `exports` name under the `types` condition:
 *
 *   dist/types/esm/   for `import` (ES module declarations, as the package is "type": "module")
 *   dist/types/cjs/   for `require`, beside a package.json saying "type": "commonjs"
 *
 * TypeScript reads a .d.ts in the module format of the package.json above it, so under
 * `module: node16` a CommonJS file could not `require` the ES module declarations (TS1479), though
 * Node.js runs that call (require of an ES module, Node.js >= 20.19). Declarations no entry's
 * declarations reach (those of modules only the JavaScript uses) are not shipped: nothing could
 * import them. Run by `npm run build` after tsc.
 */
import ts from 'typescript';
import { copyFileSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const dist = fileURLToPath(new URL('../dist/', import.meta.url));
const ENTRIES = ['index.d.ts', 'node.d.ts', 'internal.d.ts'];

/** Every declaration file reachable from the entries through relative imports (`./x.js` is `./x.d.ts`). */
function reachable() {
  const seen = new Set();
  const stack = ENTRIES.map((e) => join(dist, e));
  while (stack.length > 0) {
    const file = stack.pop();
    if (seen.has(file)) continue;
    seen.add(file);
    const text = readFileSync(file, 'utf8');
    const specs = ts.preProcessFile(text, true, true).importedFiles.map((f) => f.fileName);
    // type queries (`import("./x.js").T`) too
    for (const m of text.matchAll(/import\(\s*["']([^"']+)["']\s*\)/g)) specs.push(m[1]);
    for (const spec of specs) {
      if (!spec.startsWith('.')) continue;
      const target = resolve(dirname(file), spec.replace(/\.js$/, '.d.ts'));
      if (!existsSync(target)) throw new Error(`${relative(dist, file)} imports ${spec}, which is not in dist/`);
      stack.push(target);
    }
  }
  return [...seen].sort();
}

const files = reachable();
const out = join(dist, 'types');
rmSync(out, { recursive: true, force: true });
for (const flavour of ['esm', 'cjs']) {
  for (const file of files) {
    const dest = join(out, flavour, relative(dist, file));
    mkdirSync(dirname(dest), { recursive: true });
    copyFileSync(file, dest);
  }
}
writeFileSync(join(out, 'cjs', 'package.json'), JSON.stringify({ type: 'commonjs' }, null, 2) + '\n');
