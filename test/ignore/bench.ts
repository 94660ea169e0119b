/**
 * Cost of classifying every path of a 100,000-file tree with src/ignore, per path.
 *
 *   npx tsx test/ignore/bench.ts [--files 100000] [--dirs 2000]
 *
 * The tree is synthetic (test/helpers/bench-tree.ts: names like bench/make-repo.mjs makes, in ~2,000 directories 2–4 deep)
 * and lives in memory: the paths are a list, the .gitignore files are on memfs, so what is timed
 * is the rules, not the filesystem. Measured: a walk that enters each directory once
 * (`DirRules.enter`, which reads the directory's .gitignore when the walk saw one) and asks per
 * entry (`isIgnored(name, isDir)`); the same through `IgnoreRules.isIgnored(rel)` one path at a
 * time; and, for scale, the `ignore` package alone with the root patterns (`ig.ignores(path)`),
 * which is not git's answer when several files are involved.
 *
 * With --disk, the same tree is also written under os.tmpdir() as an untracked worktree (and
 * removed after): `git status --porcelain=v2 --ignored -uall` (a process) next to a walk of it
 * through node:fs (readdir + lstat per entry, as the Fs contract has no d_type) with the rules.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import ignore from 'ignore';
import { nodeFs } from '../../src/fs/node.js';
import { loadIgnoreRules, type DirRules } from '../../src/ignore/index.js';
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
  'node_modules',
  'dist',
  'coverage',
];
const EXTS = ['ts', 'ts', 'ts', 'js', 'js', 'tsx', 'json', 'md', 'css', 'log', 'map', 'txt', 'sh', 'py', 'tmp', 'swp'];

/** A typical Node project's .gitignore (the common part of GitHub's Node.gitignore). */
const ROOT_GITIGNORE = `# Logs
logs
*.log
npm-debug.log*
yarn-debug.log*
yarn-error.log*
lerna-debug.log*
report.[0-9]*.[0-9]*.[0-9]*.[0-9]*.json
pids
*.pid
*.seed
*.pid.lock
lib-cov
coverage
*.lcov
.nyc_output
.grunt
bower_components
.lock-wscript
build/Release
node_modules/
jspm_packages/
web_modules/
*.tsbuildinfo
.npm
.eslintcache
.stylelintcache
.rpt2_cache/
.node_repl_history
*.tgz
.yarn-integrity
.env
.env.*
!.env.example
.cache
.parcel-cache
.next
out
dist
.vuepress/dist
.temp
.docusaurus
.serverless/
.fusebox/
.dynamodb/
.tern-port
.vscode-test
.yarn/cache
.yarn/unplugged
.yarn/build-state.yml
.yarn/install-state.gz
.pnp.*
/tmp/
**/*.swp
*.map
!src/**/*.map
`;

const INFO_EXCLUDE = `# git ls-files --others --exclude-from=.git/info/exclude
# Lines that start with '#' are comments.
# For a project mostly in C, the following would be a good set of
# exclude patterns (uncomment them if you want to use them):
# *.[oa]
# *~
`;

interface Tree {
  dirs: string[];
  files: string[];
  /** directory → its entries (name, isDir) */
  entries: Map<string, Array<[string, boolean]>>;
  gitignores: string[];
}

function makeTree(): Tree {
  const rnd = prng(42);
  const { dirs, files } = syntheticTree(rnd, { top: TOP, exts: EXTS, dirs: DIRS, files: FILES });
  const entries = new Map<string, Array<[string, boolean]>>();
  const add = (parent: string, name: string, isDir: boolean) => {
    let l = entries.get(parent);
    if (!l) entries.set(parent, (l = []));
    l.push([name, isDir]);
  };
  for (const d of dirs) {
    const i = d.lastIndexOf('/');
    add(i < 0 ? '' : d.slice(0, i), d.slice(i + 1), true);
  }
  // a .gitignore in one directory out of 25
  const gitignores = dirs.filter(() => rnd() < 0.04);
  for (const d of gitignores) add(d, '.gitignore', false);
  add('', '.gitignore', false);
  for (const f of files) {
    const i = f.lastIndexOf('/');
    add(f.slice(0, i), f.slice(i + 1), false);
  }
  return { dirs, files, entries, gitignores };
}

async function main(): Promise<void> {
  const tree = makeTree();
  const mem = newMemoryFs();
  mem.volume.mkdirSync('/w/.git/info', { recursive: true });
  mem.volume.writeFileSync('/w/.git/info/exclude', INFO_EXCLUDE);
  mem.volume.writeFileSync('/w/.gitignore', ROOT_GITIGNORE);
  for (const d of tree.dirs) mem.volume.mkdirSync('/w/' + d, { recursive: true });
  for (const d of tree.gitignores) mem.volume.writeFileSync(`/w/${d}/.gitignore`, '*.generated.ts\n!keep.log\n/local/\n');
  const paths = tree.files.length + tree.dirs.length;

  /** Enter every directory (reading its .gitignore when it has one), then ask for every entry. */
  // the walk's own data (what readdir and lstat would give), made before the clock starts
  const listing = new Map<string, { names: string[]; isDir: boolean[]; subdirs: string[]; hasGitignore: Map<string, boolean> }>();
  for (const [d, list] of tree.entries) {
    const subdirs = list.filter(([, isDir]) => isDir).map(([n]) => n);
    const hasGitignore = new Map(
      subdirs.map((n) => [n, (tree.entries.get(d === '' ? n : `${d}/${n}`) ?? []).some(([e]) => e === '.gitignore')]),
    );
    listing.set(d, { names: list.map(([n]) => n), isDir: list.map(([, x]) => x), subdirs, hasGitignore });
  }
  const walkOnce = async (): Promise<{ ms: number; enterMs: number; askMs: number; ignored: number; excludedDirs: number }> => {
    const t0 = performance.now();
    const rules = await loadIgnoreRules(mem, { worktree: '/w', gitDir: '/w/.git', env: {} });
    const visited: Array<{ dir: DirRules; names: string[]; isDir: boolean[] }> = [];
    let excludedDirs = 0;
    const enterAll = async (dir: DirRules): Promise<void> => {
      const l = listing.get(dir.path);
      if (!l) return;
      visited.push({ dir, names: l.names, isDir: l.isDir });
      for (const name of l.subdirs) {
        const sub = await dir.enter(name, l.hasGitignore.get(name));
        // a capture stops at an excluded directory; to time every path, this goes on
        if (sub.excluded) excludedDirs++;
        await enterAll(sub);
      }
    };
    await enterAll(rules.root);
    const t1 = performance.now();
    let ignored = 0;
    for (const { dir, names, isDir } of visited) {
      for (let i = 0; i < names.length; i++) if (dir.isIgnored(names[i], isDir[i])) ignored++;
    }
    const t2 = performance.now();
    return { ms: t2 - t0, enterMs: t1 - t0, askMs: t2 - t1, ignored, excludedDirs };
  };

  /** As a capture walks: entries of excluded directories are not visited. */
  const captureWalk = async (): Promise<{ ms: number; visited: number }> => {
    const t0 = performance.now();
    const rules = await loadIgnoreRules(mem, { worktree: '/w', gitDir: '/w/.git', env: {} });
    let visited = 0;
    const walk = async (dir: DirRules): Promise<void> => {
      const l = listing.get(dir.path);
      if (!l) return;
      for (let i = 0; i < l.names.length; i++) {
        visited++;
        if (!l.isDir[i]) {
          dir.isIgnored(l.names[i], false);
          continue;
        }
        const sub = await dir.enter(l.names[i], l.hasGitignore.get(l.names[i]));
        if (!sub.excluded) await walk(sub);
      }
    };
    await walk(rules.root);
    return { ms: performance.now() - t0, visited };
  };

  const onePathAtATime = async (): Promise<number> => {
    const t0 = performance.now();
    const rules = await loadIgnoreRules(mem, { worktree: '/w', gitDir: '/w/.git', env: {} });
    let n = 0;
    for (const d of tree.dirs) if (await rules.isIgnored(d, true)) n++;
    for (const f of tree.files) if (await rules.isIgnored(f, false)) n++;
    void n;
    return performance.now() - t0;
  };

  const packageAlone = (): number => {
    const t0 = performance.now();
    const ig = ignore({ ignorecase: false }).add(ROOT_GITIGNORE);
    let n = 0;
    for (const d of tree.dirs) if (ig.ignores(d + '/')) n++;
    for (const f of tree.files) if (ig.ignores(f)) n++;
    void n;
    return performance.now() - t0;
  };

  const ns = (ms: number) => ((ms * 1e6) / paths).toFixed(0);
  console.log(
    `tree: ${tree.files.length} files, ${tree.dirs.length} directories, ${tree.gitignores.length + 1} .gitignore files (root: ${ROOT_GITIGNORE.split('\n').filter((l) => l && !l.startsWith('#')).length} patterns)`,
  );
  if (process.argv.includes('--walk-only')) {
    for (let round = 1; round <= 10; round++) {
      const w = await walkOnce();
      console.log(`walk ${ns(w.ms)} ns/path (asking ${ns(w.askMs)} ns/path)`);
    }
    return;
  }
  for (let round = 1; round <= 3; round++) {
    const w = await walkOnce();
    const c = await captureWalk();
    const one = await onePathAtATime();
    const pkg = packageAlone();
    console.log(
      `round ${round}: walk ${w.ms.toFixed(1)} ms = ${ns(w.ms)} ns/path (entering the directories ${w.enterMs.toFixed(1)} ms, asking per entry ${w.askMs.toFixed(1)} ms = ${ns(w.askMs)} ns/path; ` +
        `${w.ignored} entries ignored, ${w.excludedDirs} directories excluded); ` +
        `a capture's walk (not into excluded directories: ${c.visited} entries) ${c.ms.toFixed(1)} ms = ${((c.ms * 1e6) / c.visited).toFixed(0)} ns/entry; ` +
        `isIgnored(rel) one at a time ${one.toFixed(1)} ms = ${ns(one)} ns/path; ignore package alone (root file only) ${pkg.toFixed(1)} ms = ${ns(pkg)} ns/path`,
    );
  }
}

async function disk(): Promise<void> {
  const tree = makeTree();
  const root = mkdtempSync(join(tmpdir(), 'scalpel-ignore-bench-'));
  try {
    execFileSync('git', ['init', '-q', root]);
    writeFileSync(join(root, '.gitignore'), ROOT_GITIGNORE);
    for (const d of tree.dirs) mkdirSync(join(root, d), { recursive: true });
    for (const d of tree.gitignores) writeFileSync(join(root, d, '.gitignore'), '*.generated.ts\n!keep.log\n/local/\n');
    for (const f of tree.files) writeFileSync(join(root, f), '');
    const env = { ...process.env, GIT_CONFIG_NOSYSTEM: '1', HOME: root, XDG_CONFIG_HOME: root };
    const fs = nodeFs();
    for (let round = 1; round <= 3; round++) {
      let t = performance.now();
      execFileSync('git', ['status', '--porcelain=v2', '--ignored', '-uall'], { cwd: root, env, maxBuffer: 1 << 28 });
      const gitMs = performance.now() - t;
      t = performance.now();
      const rules = await loadIgnoreRules(fs, { worktree: root, gitDir: join(root, '.git'), env: {} });
      let entries = 0;
      let rulesMs = 0;
      const walk = async (dir: DirRules, abs: string): Promise<void> => {
        const names = fs.readdirSync!(abs).filter((n) => n !== '.git');
        const types = names.map((n) => fs.lstatSync!(abs + '/' + n)?.type);
        entries += names.length;
        const r0 = performance.now();
        for (let i = 0; i < names.length; i++) if (types[i] !== 'directory') dir.isIgnored(names[i], false);
        rulesMs += performance.now() - r0;
        for (let i = 0; i < names.length; i++) {
          if (types[i] !== 'directory') continue;
          const e0 = performance.now();
          const sub = await dir.enter(names[i]);
          rulesMs += performance.now() - e0;
          if (!sub.excluded) await walk(sub, abs + '/' + names[i]);
        }
      };
      await walk(rules.root, root);
      const walkMs = performance.now() - t;
      console.log(
        `disk round ${round}: git status --ignored -uall ${gitMs.toFixed(0)} ms; our walk (readdir + lstat + rules, not into excluded directories) ${walkMs.toFixed(0)} ms for ${entries} entries, of which the rules (isIgnored, and enter with its .gitignore lookup) ${rulesMs.toFixed(0)} ms`,
      );
    }
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}

await main();
if (process.argv.includes('--disk')) await disk();
