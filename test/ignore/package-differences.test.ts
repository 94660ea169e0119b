/**
 * Each difference between the `ignore` package and git that src/ignore/index.ts lists: the
 * package used directly (one instance per file, as its README suggests) next to git's answer
 * (`git check-ignore --no-index`) and ours. If a new version of the package fixes one, the
 * `naive` expectation here fails and the workaround can be reconsidered.
 */
import { join } from 'node:path';
import ignore from 'ignore';
import { describe, expect, it } from 'vitest';
import { nodeFs } from '../../src/fs/node.js';
import { loadIgnoreRules } from '../../src/ignore/index.js';
import { git, makeTempRepo } from '../helpers/git.js';
import { gitCheckIgnore, writeRaw } from './oracle.js';

const fs = nodeFs();

interface Case {
  files: Record<string, string | Buffer>;
  ignoreCase?: boolean;
  /** path → is it a directory */
  paths: Record<string, boolean>;
}

/** git's, ours, and the package's answer (per-file instances, deepest .gitignore first). */
async function answers(c: Case): Promise<Record<string, { git: boolean; ours: boolean; naive: boolean }>> {
  const repo = makeTempRepo();
  if (c.ignoreCase) git(repo, ['config', 'core.ignoreCase', 'true']);
  for (const [p, data] of Object.entries(c.files)) writeRaw(repo, p, data);
  for (const [p, isDir] of Object.entries(c.paths)) {
    if (isDir) writeRaw(repo, `${p}/.keep`, '');
    else if (!(p in c.files)) writeRaw(repo, p, '');
  }
  const verdicts = gitCheckIgnore(repo, Object.keys(c.paths));
  const rules = await loadIgnoreRules(fs, { worktree: repo, gitDir: join(repo, '.git'), ignoreCase: c.ignoreCase ?? false, env: {} });
  const lists = Object.entries(c.files)
    .filter(([p]) => p.endsWith('.gitignore'))
    .map(([p, data]) => ({
      base: p === '.gitignore' ? '' : p.slice(0, -'/.gitignore'.length),
      ig: ignore({ ignorecase: c.ignoreCase ?? false }).add(String(data)),
    }))
    .sort((a, b) => b.base.length - a.base.length);
  const out: Record<string, { git: boolean; ours: boolean; naive: boolean }> = {};
  for (const [p, isDir] of Object.entries(c.paths)) {
    let naive = false;
    for (const l of lists) {
      if (l.base && !p.startsWith(l.base + '/')) continue;
      const r = l.ig.test((l.base ? p.slice(l.base.length + 1) : p) + (isDir ? '/' : ''));
      if (r.ignored || r.unignored) {
        naive = r.ignored;
        break;
      }
    }
    out[p] = { git: verdicts.get(p)!.ignored, ours: await rules.isIgnored(p, isDir), naive };
  }
  return out;
}

describe('the ignore package and git: the differences src/ignore handles', () => {
  it('1. a directory re-included by a deeper .gitignore: the package lets the root file exclude its files', async () => {
    const r = await answers({
      files: { '.gitignore': 'build/\n', 'sub/.gitignore': '!build/\n', 'sub/build/x.o': '' },
      paths: { 'sub/build/x.o': false, 'sub/build': true },
    });
    expect(r['sub/build/x.o']).toEqual({ git: false, ours: false, naive: true });
    expect(r['sub/build']).toEqual({ git: false, ours: false, naive: false });
  });

  it('2. bytes, not UTF-16 code units: ?, ranges and case folding of non-ASCII', async () => {
    const r = await answers({ files: { '.gitignore': 'x?y\nm[\u00c0-\u00c8]n\n' }, paths: { 'x\u00e9y': false, 'm\u00c1n': false } });
    expect(r['x\u00e9y']).toEqual({ git: false, ours: false, naive: true });
    expect(r['m\u00c1n']).toEqual({ git: false, ours: false, naive: true });
    const ic = await answers({
      files: { '.gitignore': '\u00c9.txt\n' },
      ignoreCase: true,
      paths: { '\u00e9.txt': false, '\u00c9.txt': false },
    });
    expect(ic['\u00e9.txt']).toEqual({ git: false, ours: false, naive: true });
    expect(ic['\u00c9.txt']).toEqual({ git: true, ours: true, naive: true });
  });

  it('3. a run of stars right after the literal prefix is a globstar in git', async () => {
    const r = await answers({
      files: { '.gitignore': 'a**/b\nx/a**\n!x/ab/\n' },
      paths: { ab: false, 'axy/z/b': false, 'a/b': false, 'x/ab/c': false },
    });
    expect(r.ab).toEqual({ git: true, ours: true, naive: false });
    expect(r['axy/z/b']).toEqual({ git: true, ours: true, naive: false });
    expect(r['a/b']).toEqual({ git: true, ours: true, naive: true });
    expect(r['x/ab/c']).toEqual({ git: true, ours: true, naive: false });
  });

  it('4. ** before an escaped slash: a globstar needing at least one directory (the package: exactly one)', async () => {
    const r = await answers({
      files: { '.gitignore': '**\\/c\nx/**\\/d\n' },
      paths: { c: false, 'y/c': false, 'q/r/c': false, 'x/d': false, 'x/e/d': false, 'x/e/f/d': false },
    });
    expect(r.c).toEqual({ git: false, ours: false, naive: false });
    expect(r['y/c']).toEqual({ git: true, ours: true, naive: true });
    expect(r['q/r/c']).toEqual({ git: true, ours: true, naive: false });
    expect(r['x/d']).toEqual({ git: false, ours: false, naive: false });
    expect(r['x/e/d']).toEqual({ git: true, ours: true, naive: true });
    expect(r['x/e/f/d']).toEqual({ git: true, ours: true, naive: false });
  });

  it('5. core.ignoreCase: escaped uppercase letters and uppercase class members never match in git', async () => {
    const r = await answers({
      files: { '.gitignore': 'v\\A\nx[A]\nz[!A]\nw[A-C]\n' },
      ignoreCase: true,
      paths: { va: false, vA: false, xA: false, xa: false, zA: false, wb: false },
    });
    expect(r.va).toEqual({ git: false, ours: false, naive: true });
    expect(r.vA).toEqual({ git: false, ours: false, naive: true });
    expect(r.xA).toEqual({ git: false, ours: false, naive: true });
    expect(r.xa).toEqual({ git: false, ours: false, naive: true });
    expect(r.zA).toEqual({ git: true, ours: true, naive: false });
    expect(r.wb).toEqual({ git: true, ours: true, naive: true });
  });

  it('6. a pattern ending in CR, given as one pattern, loses the CR in the package', async () => {
    const r = await answers({ files: { '.gitignore': 'cr\r\r\n' }, paths: { 'cr\r': false, cr: false } });
    // the whole file, split by the package, keeps it
    expect(r['cr\r']).toEqual({ git: true, ours: true, naive: true });
    expect(r.cr).toEqual({ git: false, ours: false, naive: false });
    // one line as a pattern object (how src/ignore hands patterns over) does not
    expect(
      ignore({ ignorecase: false })
        .add([{ pattern: 'cr\r' }])
        .ignores('cr\r'),
    ).toBe(false);
    expect(
      ignore({ ignorecase: false })
        .add([{ pattern: 'cr\r' }])
        .ignores('cr'),
    ).toBe(true);
  });

  it('7. ignorecase defaults to true in the package', async () => {
    expect(ignore().add('*.LOG').ignores('a.log')).toBe(true);
    const r = await answers({ files: { '.gitignore': '*.LOG\n' }, paths: { 'a.log': false } });
    expect(r['a.log']).toEqual({ git: false, ours: false, naive: false });
  });

  it('agreements worth knowing: negation below an excluded directory, trailing spaces, **/ forms', async () => {
    const r = await answers({
      files: { '.gitignore': 'node_modules/\n!node_modules/keep.js\nout/**\n!out/keep\ntrail  \nesc\\ \n**/deep/**/x\n' },
      paths: { 'node_modules/keep.js': false, 'out/keep': false, 'out/other': false, trail: false, 'esc ': false, 'a/deep/b/c/x': false },
    });
    for (const v of Object.values(r)) expect(v.ours).toBe(v.git);
    expect(r['node_modules/keep.js'].git).toBe(true);
    expect(r['out/keep'].git).toBe(false);
  });
});
