/**
 * Cost of src/attributes' question "may git's conversion make this file differ from its blob?".
 *
 *   npx tsx test/attributes/bench.ts [--files 100000] [--dirs 2000] [--disk]
 *
 * The tree is test/ignore/bench.ts's kind (synthetic names in ~2,000 directories 2–4 deep) and
 * lives in memory: the listing is made before the clock starts, the attribute files are on
 * memfs, so what is timed is the rules, not the filesystem. Measured, per file of a walk that
 * enters each directory once (`DirAttributes.enter(name, hasAttributesFile)`, reading the
 * directory's .gitattributes when the walk saw one) and asks per file (`mayConvert(name)`):
 *
 * - none: no attribute file, core.autocrlf=false (the common case: every directory is `none`);
 * - autocrlf: no attribute file, core.autocrlf=true (every directory `uniform`: true);
 * - typical: a 40-line root .gitattributes (`* text=auto`, `*.png binary`, `*.sh text eol=lf`,
 *   linguist lines...) and a small one in one directory out of 25;
 * - many: the same plus `*.<ext> text` / `*.<ext> binary` for 120 extensions.
 *
 * And the one-path case: load the rules (root .gitattributes, info/attributes, the global
 * file) and ask 3 paths 3 directories deep, on memfs and (--disk) on node:fs in a temp dir.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadAttributeRules, type AttributeOptions, type DirAttributes } from '../../src/attributes/index.js';
import { nodeFs } from '../../src/fs/node.js';
import type { Fs } from '../../src/fs/types.js';
import { newMemoryFs } from '../helpers/memfs.js';
import { benchArg, syntheticTree } from '../helpers/bench-tree.js';
import { prng } from '../helpers/prng.js';

const FILES = benchArg('files', 100_000);
const DIRS = benchArg('dirs', 2_000);

const TOP = [
  'src',
  'lib',
  'test',
  'docs',
  'packages',
  'tools',
  'vendor',
  'apps',
  'internal',
  'scripts',
  'examples',
  'assets',
  'dist',
  'coverage',
];
const EXTS = ['ts', 'ts', 'ts', 'js', 'js', 'tsx', 'json', 'md', 'css', 'png', 'svg', 'txt', 'sh', 'py', 'bat', 'jpg'];

/** A typical root .gitattributes (the common part of the gitattributes templates). */
const ROOT = `# Auto detect text files and perform LF normalization
* text=auto
*.ts text
*.tsx text
*.js text
*.json text
*.md text diff=markdown
*.css text diff=css
*.html text diff=html
*.svg text
*.sh text eol=lf
*.bash text eol=lf
*.bat text eol=crlf
*.cmd text eol=crlf
*.ps1 text eol=crlf
*.png binary
*.jpg binary
*.jpeg binary
*.gif binary
*.ico binary
*.webp binary
*.pdf binary
*.zip binary
*.gz binary
*.woff binary
*.woff2 binary
*.ttf binary
*.eot binary
*.mp4 binary
*.lock -diff linguist-generated
package-lock.json -diff linguist-generated
*.min.js -diff
dist/** linguist-generated
docs/** linguist-documentation
vendor/** linguist-vendored
*.snap -diff
.gitattributes export-ignore
.github export-ignore
*.pbxproj binary merge=union
Makefile text eol=lf
`;
const NESTED = '*.generated.ts -diff linguist-generated\n*.sh eol=lf\n*.fixture -text\n';
const MANY_EXTS = Array.from({ length: 120 }, (_, i) => `*.e${i} ${i % 2 ? 'text' : 'binary'}`).join('\n') + '\n';

interface Tree {
  dirs: string[];
  files: string[];
  /** directory → [subdirectory names, file names] */
  listing: Map<string, { subdirs: string[]; files: string[]; hasAttributes: Map<string, boolean> }>;
  attrDirs: string[];
}

function makeTree(): Tree {
  const rnd = prng(42);
  const { dirs, files } = syntheticTree(rnd, { top: TOP, exts: EXTS, dirs: DIRS, files: FILES });
  const attrDirs = dirs.filter(() => rnd() < 0.04);
  const listing = new Map<string, { subdirs: string[]; files: string[]; hasAttributes: Map<string, boolean> }>();
  const at = (d: string) => {
    let l = listing.get(d);
    if (!l) listing.set(d, (l = { subdirs: [], files: [], hasAttributes: new Map() }));
    return l;
  };
  at('');
  for (const d of dirs) {
    const i = d.lastIndexOf('/');
    at(i < 0 ? '' : d.slice(0, i)).subdirs.push(d.slice(i + 1));
    at(d);
  }
  for (const f of files) {
    const i = f.lastIndexOf('/');
    at(f.slice(0, i)).files.push(f.slice(i + 1));
  }
  const attrSet = new Set(attrDirs);
  for (const [d, l] of listing) for (const s of l.subdirs) l.hasAttributes.set(s, attrSet.has(d === '' ? s : `${d}/${s}`));
  return { dirs, files, listing, attrDirs };
}

/** CPU time of this process in ms (user + system): on a loaded machine, what the work itself took. */
function cpuMs(): number {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
}

async function walk(
  fs: Fs,
  tree: Tree,
  opts: Partial<AttributeOptions>,
): Promise<{ ms: number; enterMs: number; askMs: number; askCpuMs: number; enterCpuMs: number; yes: number; asked: number }> {
  const c0 = cpuMs();
  const t0 = performance.now();
  const rules = await loadAttributeRules(fs, { worktree: '/w', gitDir: '/w/.git', env: {}, systemFile: null, ...opts });
  // enter every directory (reading the .gitattributes the listing shows), then ask per file
  const visited: DirAttributes[] = [];
  const enterAll = async (dir: DirAttributes): Promise<void> => {
    visited.push(dir);
    const l = tree.listing.get(dir.path)!;
    for (const s of l.subdirs) await enterAll(await dir.enter(s, l.hasAttributes.get(s)));
  };
  await enterAll(rules.root);
  const t1 = performance.now();
  const c1 = cpuMs();
  let yes = 0;
  let asked = 0;
  for (const dir of visited) {
    if (dir.none) continue;
    const names = tree.listing.get(dir.path)!.files;
    for (let i = 0; i < names.length; i++) if (dir.mayConvert(names[i])) yes++;
    asked += names.length;
  }
  const t2 = performance.now();
  const c2 = cpuMs();
  return { ms: t2 - t0, enterMs: t1 - t0, askMs: t2 - t1, enterCpuMs: c1 - c0, askCpuMs: c2 - c1, yes, asked };
}

/** What this machine takes for a name's extension looked up in a Map (lastIndexOf, slice, get): the scale the per-file numbers are on. */
function calibrate(tree: Tree): number {
  const m = new Map([
    ['ts', true],
    ['png', false],
  ]);
  const t0 = performance.now();
  let y = 0;
  for (const f of tree.files) {
    const d = f.lastIndexOf('.');
    if (m.get(d < 0 ? '/' : f.slice(d + 1))) y++;
  }
  void y;
  return ((performance.now() - t0) * 1e6) / tree.files.length;
}

function memWorktree(tree: Tree, root: string | null, nested: string | null): Fs {
  const mem = newMemoryFs();
  mem.volume.mkdirSync('/w/.git/info', { recursive: true });
  for (const d of tree.dirs) mem.volume.mkdirSync('/w/' + d, { recursive: true });
  if (root !== null) mem.volume.writeFileSync('/w/.gitattributes', root);
  if (nested !== null) for (const d of tree.attrDirs) mem.volume.writeFileSync(`/w/${d}/.gitattributes`, nested);
  return mem;
}

async function onePath(fs: Fs, worktree: string, paths: string[], rounds: number): Promise<{ loadUs: number; askUs: number }> {
  let load = 0;
  let ask = 0;
  for (let r = 0; r < rounds; r++) {
    const t0 = performance.now();
    const rules = await loadAttributeRules(fs, { worktree, gitDir: `${worktree}/.git`, env: {}, systemFile: null });
    const t1 = performance.now();
    for (const p of paths) await rules.mayConvert(p);
    const t2 = performance.now();
    load += t1 - t0;
    ask += t2 - t1;
  }
  return { loadUs: (load * 1000) / rounds, askUs: (ask * 1000) / rounds / paths.length };
}

async function main(): Promise<void> {
  const tree = makeTree();
  const files = tree.files.length;
  console.log(`tree: ${files} files, ${tree.dirs.length} directories; .gitattributes in ${tree.attrDirs.length} of them for 'typical'`);
  const cases: Array<[string, Fs, Partial<AttributeOptions>]> = [
    ['none (no attribute file, autocrlf=false)', memWorktree(tree, null, null), {}],
    ['autocrlf=true, no attribute file', memWorktree(tree, null, null), { autocrlf: true }],
    ['typical (40-line root file + nested ones)', memWorktree(tree, ROOT, NESTED), {}],
    ['many (+120 extension lines)', memWorktree(tree, ROOT + MANY_EXTS, NESTED), {}],
  ];
  for (let round = 1; round <= 3; round++) {
    const parts: string[] = [];
    for (const [name, fs, opts] of cases) {
      const w = await walk(fs, tree, opts);
      const ns = (ms: number) => ((ms * 1e6) / files).toFixed(0);
      const perAsk = (ms: number) => (w.asked ? ((ms * 1e6) / w.asked).toFixed(0) : '-');
      parts.push(
        `${name}: ${w.ms.toFixed(1)} ms = ${ns(w.ms)} ns/file (entering ${tree.dirs.length} directories ${w.enterMs.toFixed(1)} ms, cpu ${w.enterCpuMs.toFixed(1)} ms; ` +
          `asking ${w.asked} files ${w.askMs.toFixed(1)} ms = ${perAsk(w.askMs)} ns/file, cpu ${perAsk(w.askCpuMs)} ns/file; may differ ${w.yes})`,
      );
    }
    console.log(`round ${round} (calibration: an extension looked up in a Map ${calibrate(tree).toFixed(0)} ns):\n  ${parts.join('\n  ')}`);
  }
  const paths = ['src/api/client/a.ts', 'lib/core/b.sh', 'assets/c.png'];
  const mem = memWorktree(tree, ROOT, NESTED);
  for (const d of ['src/api/client', 'lib/core', 'assets'])
    (mem as unknown as { volume: { mkdirSync: (p: string, o: object) => void } }).volume.mkdirSync('/w/' + d, { recursive: true });
  await onePath(mem, '/w', paths, 50);
  const m = await onePath(mem, '/w', paths, 500);
  console.log(
    `one path (memfs): load the rules ${m.loadUs.toFixed(1)} µs, then ${m.askUs.toFixed(1)} µs a path (3 paths, 3 directories deep, each directory's .gitattributes lstat'ed)`,
  );
  if (process.argv.includes('--disk')) {
    const root = mkdtempSync(join(tmpdir(), 'scalpel-attr-bench-'));
    try {
      mkdirSync(join(root, '.git', 'info'), { recursive: true });
      writeFileSync(join(root, '.gitattributes'), ROOT);
      for (const d of ['src/api/client', 'lib/core', 'assets']) mkdirSync(join(root, d), { recursive: true });
      writeFileSync(join(root, 'lib', '.gitattributes'), NESTED);
      const fs = nodeFs();
      await onePath(fs, root, paths, 50);
      const d = await onePath(fs, root, paths, 500);
      console.log(`one path (node:fs): load the rules ${d.loadUs.toFixed(1)} µs, then ${d.askUs.toFixed(1)} µs a path`);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  }
}

await main();
