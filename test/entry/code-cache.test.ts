/**
 * The V8 code cache behind the Node entry and the command line (src/entry/code-cache.cjs, built to
 * dist/code-cache.cjs): a fresh process through `import ... from 'git-scalpel'` writes the cache
 * when it exits, later ones start from it and grow it a bounded number of times, a damaged or
 * foreign cache is replaced, an unsafe directory is not used, and the entry works the same with
 * the cache, without it, from CommonJS, and where the bundle cannot be read.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { chmodSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { makeTempDir, makeTempRepo } from '../helpers/git.js';

const ROOT = process.cwd();

/** A fresh Node process running an ES module snippet inside the package (so `git-scalpel` resolves to dist/). */
function run(code: string, env: NodeJS.ProcessEnv) {
  const p = spawnSync(process.execPath, ['--input-type=module', '-e', code], {
    cwd: ROOT,
    encoding: 'utf8',
    env: { ...process.env, ...env },
  });
  expect(p.stderr).toBe('');
  expect(p.status).toBe(0);
  return p.stdout.trim();
}

const caches = (dir: string) =>
  readdirSync(dir)
    .filter((f) => f.endsWith('.v8'))
    .sort();
const generation = (name: string) => Number(/-g(\d+)\.v8$/.exec(name)?.[1]);

describe('the code cache of the Node entry', () => {
  const IMPORT_ONLY = `import { openRepository } from 'git-scalpel'; console.log(typeof openRepository);`;
  const work = (dir: string) =>
    `import fs from 'node:fs'; import { openRepository } from 'git-scalpel';` +
    `const r = await openRepository({ fs, dir: ${JSON.stringify(dir)} }); await r.snapshot(['a.txt'], { session: 's' });` +
    `console.log((await r.list({ session: 's' })).length); await new Promise((ok) => setTimeout(ok, 60));`;
  const IDLE = `import 'git-scalpel'; await new Promise((ok) => setTimeout(ok, 60)); console.log('idle');`;

  it('is written at exit, grown by a process that compiled more, then final; the entry gives the same results throughout', () => {
    const cache = makeTempDir('scalpel-cache-');
    const repo = makeTempRepo();
    writeFileSync(join(repo, 'a.txt'), 'one\n');
    const env = { GIT_SCALPEL_CACHE_DIR: cache };

    expect(run(IMPORT_ONLY, env)).toBe('function');
    const [first] = caches(cache);
    expect(first).toMatch(/^node-[0-9a-f]{8}-v\d+\.\d+\.\d+-[a-z0-9]+-\d+-\d+-g1\.v8$/);
    const firstSize = statSync(join(cache, first)).size;
    expect(firstSize).toBeGreaterThan(10_000);

    // a process that ran the engine compiled much more: the next generation holds it
    expect(run(work(repo), env)).toBe('1');
    const [second] = caches(cache);
    expect(generation(second)).toBe(2);
    expect(statSync(join(cache, second)).size).toBeGreaterThan(firstSize + 4096);

    // one that compiled nothing new leaves the cache final (generation 4): no process checks it again
    expect(run(IDLE, env)).toBe('idle');
    const [final] = caches(cache);
    expect(generation(final)).toBe(4);
    const before = readFileSync(join(cache, final));
    const mtime = statSync(join(cache, final)).mtimeMs;
    expect(run(work(repo), env)).toBe('2');
    expect(caches(cache)).toEqual([final]);
    expect(statSync(join(cache, final)).mtimeMs).toBe(mtime);
    expect(readFileSync(join(cache, final)).equals(before)).toBe(true);
  });

  it('a damaged cache is rejected by V8 and written again; caches of other builds at the same place go, other installs and bundles stay', () => {
    const cache = makeTempDir('scalpel-cache-');
    const env = { GIT_SCALPEL_CACHE_DIR: cache };
    run(IMPORT_ONLY, env);
    const [name] = caches(cache);
    const place = name.split('-')[1];
    writeFileSync(join(cache, name), 'not a code cache');
    writeFileSync(join(cache, `node-${place}-v1.0.0-x64-1-1-g4.v8`), 'an older build installed here');
    const otherInstall = `node-${place === '00000000' ? '11111111' : '00000000'}-v1.0.0-x64-1-1-g4.v8`;
    writeFileSync(join(cache, otherInstall), 'another install of the package');
    writeFileSync(join(cache, 'cli-00000000-v1.0.0-x64-1-1-g1.v8'), 'the command line, another bundle');
    expect(run(IMPORT_ONLY, env)).toBe('function');
    expect(caches(cache)).toEqual(['cli-00000000-v1.0.0-x64-1-1-g1.v8', otherInstall, name.replace(/-g\d+\.v8$/, '-g1.v8')].sort());
    expect(readFileSync(join(cache, name.replace(/-g\d+\.v8$/, '-g1.v8'))).length).toBeGreaterThan(10_000);
  });

  it('is not used in a directory others can write, nor with GIT_SCALPEL_CODE_CACHE=0; the entry works the same', () => {
    const shared = join(makeTempDir('scalpel-cache-'), 'shared');
    mkdirSync(shared);
    chmodSync(shared, 0o777);
    expect(run(IMPORT_ONLY, { GIT_SCALPEL_CACHE_DIR: shared })).toBe('function');
    expect(readdirSync(shared)).toEqual([]);
    const off = makeTempDir('scalpel-cache-');
    expect(run(IMPORT_ONLY, { GIT_SCALPEL_CACHE_DIR: off, GIT_SCALPEL_CODE_CACHE: '0' })).toBe('function');
    expect(readdirSync(off)).toEqual([]);
  });

  it('CommonJS can require the entry (require of an ES module, Node ≥ 20.19), and gets the same classes', () => {
    const out = execFileSync(
      process.execPath,
      [
        '-e',
        `const a = require('git-scalpel'); const b = require('git-scalpel/node'); console.log(typeof a.openRepository, a.ScalpelError === b.ScalpelError)`,
      ],
      { cwd: ROOT, encoding: 'utf8', env: { ...process.env, GIT_SCALPEL_CACHE_DIR: makeTempDir('scalpel-cache-') } },
    );
    expect(out.trim()).toBe('function true');
  });

  it('returns null where the bundle cannot be read (the entry then requires it the ordinary way)', () => {
    const req = createRequire(join(ROOT, 'dist', 'x.cjs'));
    const { loadCached } = req('./code-cache.cjs') as { loadCached: (file: string, tag: string, r: NodeRequire) => unknown };
    expect(loadCached(join(makeTempDir('scalpel-gone-'), 'missing.cjs'), 'node', req)).toBe(null);
  });
});
