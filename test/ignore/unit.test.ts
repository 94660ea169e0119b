/**
 * The pieces of src/ignore on their own: reading a gitignore file's bytes, the excludes file
 * git picks, warnings, explanations, the cheap paths a walk takes.
 */
import { describe, expect, it } from 'vitest';
import { decodePath } from '../../src/bytes/text.js';
import { excludesFilePath, isGitDirName, loadIgnoreRules, matchKey, parseIgnoreBuffer, partitionIgnored } from '../../src/ignore/index.js';
import { newMemoryFs } from '../helpers/memfs.js';

const lines = (text: string | Uint8Array) =>
  parseIgnoreBuffer(typeof text === 'string' ? new TextEncoder().encode(text) : text).map((p) => ({
    line: p.line,
    body: decodePath(p.body),
    neg: p.negative,
    dir: p.mustBeDir,
    nodir: p.noDir,
  }));

describe('parseIgnoreBuffer (dir.c add_patterns_from_buffer)', () => {
  it('BOM, CRLF, comments, blank lines, a last line without LF', () => {
    expect(lines('\ufeff#c\r\n\r\na\r\n b\n#\n\\#c\nlast')).toEqual([
      { line: 3, body: 'a', neg: false, dir: false, nodir: true },
      { line: 4, body: ' b', neg: false, dir: false, nodir: true },
      { line: 6, body: '\\#c', neg: false, dir: false, nodir: true },
      { line: 7, body: 'last', neg: false, dir: false, nodir: true },
    ]);
    // a BOM only counts at the very start; one CR is dropped before LF
    expect(lines('a\n\ufeffb\nc\r\r\n').map((l) => l.body)).toEqual(['a', '\ufeffb', 'c\r']);
  });

  it('trailing spaces: cut unless escaped; tabs stay; a NUL ends the line', () => {
    expect(lines('a  \nb\\ \nc\\  \nd\\\\ \ne\t\nf\\\n').map((l) => l.body)).toEqual(['a', 'b\\ ', 'c\\ ', 'd\\\\', 'e\t', 'f\\']);
    expect(lines(new Uint8Array([0x61, 0x00, 0x62, 0x0a, 0x63])).map((l) => l.body)).toEqual(['a', 'c']);
  });

  it('!, trailing /, nodir; empty patterns are dropped', () => {
    expect(lines('!a/\n/b\nc/d/\n!\n/\n   \n\\!e\n')).toEqual([
      { line: 1, body: 'a', neg: true, dir: true, nodir: true },
      { line: 2, body: '/b', neg: false, dir: false, nodir: false },
      { line: 3, body: 'c/d', neg: false, dir: true, nodir: false },
      { line: 7, body: '\\!e', neg: false, dir: false, nodir: true },
    ]);
  });
});

describe('excludesFilePath (setup_standard_excludes)', () => {
  const worktree = '/w';
  it('the default: $XDG_CONFIG_HOME/git/ignore, else $HOME/.config/git/ignore, else none', () => {
    expect(excludesFilePath({ worktree, env: { XDG_CONFIG_HOME: '/x', HOME: '/h' } })).toBe('/x/git/ignore');
    expect(excludesFilePath({ worktree, env: { XDG_CONFIG_HOME: '', HOME: '/h' } })).toBe('/h/.config/git/ignore');
    expect(excludesFilePath({ worktree, env: {} })).toBeNull();
  });
  it('a configured path: ~/ expanded, relative to the worktree; empty means none', () => {
    expect(excludesFilePath({ worktree, excludesFile: '~/ig', env: { HOME: '/h' } })).toBe('/h/ig');
    expect(excludesFilePath({ worktree, excludesFile: 'rel/ig', env: {} })).toBe('/w/rel/ig');
    expect(excludesFilePath({ worktree, excludesFile: '', env: { HOME: '/h' } })).toBeNull();
    expect(excludesFilePath({ worktree, excludesFile: null, env: { HOME: '/h' } })).toBeNull();
    expect(() => excludesFilePath({ worktree, excludesFile: '~/ig', env: {} })).toThrow(/HOME/);
    expect(() => excludesFilePath({ worktree, excludesFile: '~bob/ig', env: {} })).toThrow(/only ~\//);
  });
});

describe('loadIgnoreRules on memfs', () => {
  async function setup(files: Record<string, string>, links: Record<string, string> = {}) {
    const mem = newMemoryFs();
    mem.volume.mkdirSync('/w/.git/info', { recursive: true });
    for (const [p, data] of Object.entries(files)) {
      mem.volume.mkdirSync(('/w/' + p).replace(/\/[^/]*$/, ''), { recursive: true });
      mem.volume.writeFileSync('/w/' + p, data);
    }
    for (const [p, target] of Object.entries(links)) mem.volume.symlinkSync(target, '/w/' + p);
    return { mem, rules: await loadIgnoreRules(mem, { worktree: '/w', gitDir: '/w/.git', env: {} }) };
  }

  it('a symlinked .gitignore is not read, and says so', async () => {
    const { rules } = await setup({ real: '*\n', 'd/f': '' }, { 'd/.gitignore': '../real' });
    expect(await rules.isIgnored('d/f', false)).toBe(false);
    expect(rules.warnings.join('\n')).toMatch(/d\/\.gitignore.*symbolic links/);
  });

  it('explain: the deciding pattern, its file and line; a parent directory that decides', async () => {
    const { rules } = await setup({ '.gitignore': '# c\nbuild/\n*.log\n', 'sub/.gitignore': '!x.log\n', '.git/info/exclude': 'y\n' });
    expect(await rules.explain('a.log', false)).toEqual({
      source: '/w/.gitignore',
      kind: 'gitignore',
      line: 3,
      pattern: '*.log',
      negative: false,
    });
    expect(await rules.explain('sub/x.log', false)).toEqual({
      source: '/w/sub/.gitignore',
      kind: 'gitignore',
      line: 1,
      pattern: '!x.log',
      negative: true,
    });
    expect(await rules.explain('build/a/b', false)).toEqual({
      source: '/w/.gitignore',
      kind: 'gitignore',
      line: 2,
      pattern: 'build/',
      negative: false,
      directory: 'build',
    });
    expect(await rules.explain('q/y', false)).toMatchObject({ source: '/w/.git/info/exclude', kind: 'info/exclude', line: 1 });
    expect(await rules.explain('none', false)).toBeNull();
  });

  it('a walk enters directories once; an excluded directory answers for everything beneath it without reading', async () => {
    const { rules } = await setup({ '.gitignore': 'dist/\n', 'dist/.gitignore': '!*\n', 'src/.gitignore': '*.tmp\n' });
    const dist = await rules.root.enter('dist');
    expect(dist.excluded).toBe(true);
    expect(dist.isIgnored('anything', false)).toBe(true);
    expect((await dist.enter('deeper')).excluded).toBe(true);
    const src = await rules.root.enter('src');
    expect(await rules.root.enter('src')).toBe(src);
    expect(await rules.dir('src')).toBe(src);
    expect(src.isIgnored('a.tmp', false)).toBe(true);
    // hasGitignore: false skips the lookup (the walk's readdir saw none)
    const src2 = await (await setup({ 'src/.gitignore': '*.tmp\n' })).rules.root.enter('src', false);
    expect(src2.isIgnored('a.tmp', false)).toBe(false);
  });

  it('isGitDirName, matchKey', () => {
    expect(isGitDirName('.git', false)).toBe(true);
    expect(isGitDirName('.GIT', false)).toBe(false);
    expect(isGitDirName('.GIT', true)).toBe(true);
    expect(matchKey('abc')).toBe('abc');
    expect(matchKey('\u00e9')).toBe('\ue0c3\ue0a9');
    expect(matchKey('a\udce9')).toBe('a\ue0e9');
  });

  it('partitionIgnored: strict (excluded directories) and collapsed (as git status --ignored)', () => {
    const entries = [
      { path: '.env', type: 'file' as const, ignored: true },
      { path: 'dist', type: 'directory' as const, ignored: true },
      { path: 'dist/a.js', type: 'file' as const, ignored: true },
      { path: 'logs', type: 'directory' as const, ignored: false },
      { path: 'logs/a.log', type: 'file' as const, ignored: true },
      { path: 'logs/empty', type: 'directory' as const, ignored: false },
      { path: 'src', type: 'directory' as const, ignored: false },
      { path: 'src/a.ts', type: 'file' as const, ignored: false },
      { path: 'src/b.log', type: 'file' as const, ignored: true },
      { path: 'empty-ignored', type: 'directory' as const, ignored: true, entered: true },
      { path: 'empty-ignored/e', type: 'directory' as const, ignored: true, entered: true },
      // the walk stopped here: counted as holding ignored files
      { path: 'node_modules', type: 'directory' as const, ignored: true },
    ];
    expect(partitionIgnored(entries)).toEqual({
      handKept: ['.env', 'logs/a.log', 'src/b.log'],
      ignoredDirs: ['dist', 'empty-ignored', 'node_modules'],
    });
    expect(partitionIgnored(entries, { collapse: true })).toEqual({
      handKept: ['.env', 'src/b.log'],
      ignoredDirs: ['dist', 'logs', 'node_modules'],
    });
  });
});
