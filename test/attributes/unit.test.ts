/**
 * The pieces of src/attributes on their own: reading a gitattributes file's bytes, the
 * conversion table, the config, the sources (system, global, info, index), unreadable and
 * oversized files, and what a walk and a one-path query cost in filesystem calls.
 */
import { describe, expect, it } from 'vitest';
import { decodePath } from '../../src/bytes/text.js';
import {
  ATTR_MAX_FILE_SIZE,
  attributeOptionsFromConfig,
  attributesFilePath,
  conversionOf,
  loadAttributeRules,
  parseAttributesBuffer,
  sameEncodingAsUtf8,
  type AttributeOptions,
  type ConversionConfig,
} from '../../src/attributes/index.js';
import type { Fs } from '../../src/fs/types.js';
import { GitConfig } from '../../src/repo/config.js';
import { newMemoryFs } from '../helpers/memfs.js';

const enc = (s: string) => new TextEncoder().encode(s);

function lines(text: string | Uint8Array, opts: { macros?: boolean; from?: 'file' | 'blob' } = {}) {
  const warnings: string[] = [];
  const rules = parseAttributesBuffer(
    typeof text === 'string' ? enc(text) : text,
    { macros: opts.macros ?? true, source: 'f', from: opts.from },
    (m) => warnings.push(m),
  );
  return {
    warnings,
    rules: rules.map((r) => ({
      line: r.line,
      ...(r.macro !== null ? { macro: r.macro } : { pattern: decodePath(r.pattern!.body) + (r.pattern!.mustBeDir ? '/' : '') }),
      states: r.states
        .map((s) =>
          s.value === true ? s.name : s.value === false ? `-${s.name}` : s.value === null ? `!${s.name}` : `${s.name}=${s.value}`,
        )
        .join(' '),
    })),
  };
}

describe('parseAttributesBuffer (attr.c parse_attr_line)', () => {
  it('comments (indented too), blank lines, CRLF, a BOM on line 1, a last line without LF, tabs', () => {
    expect(lines('\ufeff# c\r\n  # indented\r\n\r\n*.c text\r\n\tdir/x\t-text  eol=lf\nlast ident').rules).toEqual([
      { line: 4, pattern: '*.c', states: 'text' },
      { line: 5, pattern: 'dir/x', states: '-text eol=lf' },
      { line: 6, pattern: 'last', states: 'ident' },
    ]);
  });

  it('states: set, -unset, !unspecified, values (empty, with =), -x=v is unset, !x=v unspecified', () => {
    expect(lines('p a -b !c d= e=f=g -h=v !i=v').rules[0].states).toBe('a -b !c d= e=f=g -h !i');
  });

  it('one invalid name drops the whole line, with git message', () => {
    for (const bad of ['x bad@ text', 'x - text', 'x =v', 'x --y', 'x -=v', 'x a!b']) {
      const r = lines(bad);
      expect(r.rules).toEqual([]);
      expect(r.warnings.join()).toMatch(/is not a valid attribute name: f:1/);
    }
    expect(lines('x').rules).toEqual([{ line: 1, pattern: 'x', states: '' }]); // no states: a line that matches and sets nothing
  });

  it('macros: [attr]name, only where allowed; the name must be valid; `[attr]` alone is a pattern (a class)', () => {
    expect(lines('[attr]bin -text -diff\n').rules).toEqual([{ line: 1, macro: 'bin', states: '-text -diff' }]);
    const r = lines('[attr]bin -text\n', { macros: false });
    expect(r.rules).toEqual([]);
    expect(r.warnings).toEqual(['[attr]bin not allowed: f:1']);
    expect(lines('[attr]b@d text\n').rules).toEqual([]);
    expect(lines('[attr] text\n').rules).toEqual([{ line: 1, pattern: '[attr]', states: 'text' }]);
  });

  it('negative patterns are ignored with git warning; \\! is a literal', () => {
    const r = lines('!x text\n\\!y text\n');
    expect(r.rules).toEqual([{ line: 2, pattern: '\\!y', states: 'text' }]);
    expect(r.warnings[0]).toMatch(/Negative patterns are ignored/);
  });

  it('quoted patterns: C escapes and octal; a pattern git cannot unquote is read as written', () => {
    expect(lines('"a b" text\n"t\\tq\\"\\\\" x\n"\\101\\303\\251" y\n"bad\\q" z\n"open text\n"a"text\n').rules).toEqual([
      { line: 1, pattern: 'a b', states: 'text' },
      { line: 2, pattern: 't\tq"\\', states: 'x' },
      { line: 3, pattern: 'A\u00e9', states: 'y' },
      { line: 4, pattern: '"bad\\q"', states: 'z' },
      { line: 5, pattern: '"open', states: 'text' },
      { line: 6, pattern: 'a', states: 'text' },
    ]);
    // \000 ends the (C string) pattern
    expect(lines('"ab\\000cd" x\n').rules[0]).toMatchObject({ pattern: 'ab' });
  });

  it('a line of 2048 bytes or more is ignored (a comment that long is just a comment)', () => {
    const long = 'x'.repeat(2043) + ' text';
    expect(lines(long).rules.length).toBe(0);
    expect(lines(long).warnings[0]).toMatch(/overly long/);
    expect(lines('y'.repeat(2042) + ' text').rules.length).toBe(1);
    expect(lines('#' + 'x'.repeat(3000)).warnings).toEqual([]);
  });

  it('a NUL ends the line in a file; in an index blob it ends the whole buffer; a blob keeps its BOM', () => {
    const b = new Uint8Array([...enc('a text'), 0, ...enc(' ident\nb text\n')]);
    expect(lines(b).rules).toEqual([
      { line: 1, pattern: 'a', states: 'text' },
      { line: 2, pattern: 'b', states: 'text' },
    ]);
    expect(lines(b, { from: 'blob' }).rules).toEqual([{ line: 1, pattern: 'a', states: 'text' }]);
    expect(lines('\ufeffa text\n', { from: 'blob' }).rules[0]).toMatchObject({ pattern: '\ufeffa' });
  });

  it('trailing / is kept as directory-only; the pattern is not trimmed', () => {
    expect(lines('dir/ text\n').rules).toEqual([{ line: 1, pattern: 'dir/', states: 'text' }]);
  });
});

const cfg = (c: Partial<ConversionConfig> = {}): ConversionConfig => ({
  autocrlf: false,
  eol: undefined,
  nativeEol: 'lf',
  filterConverts: (n) => n === 'lfs',
  ...c,
});

describe('conversionOf (convert.c convert_attrs, output_eol)', () => {
  it('the crlf action and the checkout eol', () => {
    const c = (values: Parameters<typeof conversionOf>[0], config = cfg()) => {
      const r = conversionOf(values, config);
      return [r.crlfAction, r.checkoutEol, r.mayDiffer];
    };
    expect(c({})).toEqual(['binary', null, false]);
    expect(c({}, cfg({ autocrlf: true }))).toEqual(['auto-crlf', 'crlf', true]);
    expect(c({}, cfg({ autocrlf: 'input' }))).toEqual(['auto-input', 'lf', true]);
    expect(c({ text: true })).toEqual(['text-input', 'lf', true]);
    expect(c({ text: true }, cfg({ eol: 'crlf' }))).toEqual(['text-crlf', 'crlf', true]);
    expect(c({ text: true }, cfg({ nativeEol: 'crlf' }))).toEqual(['text-crlf', 'crlf', true]);
    expect(c({ text: true }, cfg({ eol: 'native', nativeEol: 'crlf' }))).toEqual(['text-crlf', 'crlf', true]);
    expect(c({ text: true }, cfg({ eol: 'crlf', autocrlf: 'input' }))).toEqual(['text-input', 'lf', true]);
    expect(c({ text: 'auto' })).toEqual(['auto', 'lf', true]);
    expect(c({ text: 'auto' }, cfg({ autocrlf: true }))).toEqual(['auto', 'crlf', true]);
    expect(c({ text: 'auto', eol: 'crlf' })).toEqual(['auto-crlf', 'crlf', true]);
    expect(c({ eol: 'lf' })).toEqual(['text-input', 'lf', true]);
    expect(c({ text: false, eol: 'crlf' })).toEqual(['binary', null, false]);
    expect(c({ text: false }, cfg({ autocrlf: true }))).toEqual(['binary', null, false]);
    expect(c({ crlf: false }, cfg({ autocrlf: true }))).toEqual(['binary', null, false]);
    expect(c({ crlf: 'input' })).toEqual(['text-input', 'lf', true]);
    expect(c({ text: 'bogus', crlf: false })).toEqual(['binary', null, false]);
    expect(c({ text: true, crlf: false })).toEqual(['text-input', 'lf', true]);
    expect(c({ eol: true })).toEqual(['binary', null, false]);
    expect(c({ eol: 'CRLF' })).toEqual(['binary', null, false]);
  });

  it('ident, filters, working-tree-encoding', () => {
    expect(conversionOf({ ident: true }, cfg()).reasons).toEqual(['ident']);
    expect(conversionOf({ ident: 'x' }, cfg()).mayDiffer).toBe(false);
    expect(conversionOf({ filter: 'lfs' }, cfg()).reasons).toEqual(['filter']);
    expect(conversionOf({ filter: 'other' }, cfg()).mayDiffer).toBe(false);
    expect(conversionOf({ filter: true }, cfg({ filterConverts: () => true })).mayDiffer).toBe(false);
    expect(conversionOf({ 'working-tree-encoding': 'UTF-16' }, cfg()).reasons).toEqual(['working-tree-encoding']);
    expect(conversionOf({ 'working-tree-encoding': true }, cfg()).mayDiffer).toBe(true); // git dies: read the file
    expect(conversionOf({ 'working-tree-encoding': 'utf8' }, cfg()).mayDiffer).toBe(false);
    expect(conversionOf({ 'working-tree-encoding': '' }, cfg()).mayDiffer).toBe(false);
    expect(['utf8', 'UTF-8', 'Utf-8', 'utf-8'].every(sameEncodingAsUtf8)).toBe(true);
    expect(['utf--8', 'utf-16', 'latin1', 'UTF8x'].some(sameEncodingAsUtf8)).toBe(false);
  });
});

describe('attributeOptionsFromConfig', () => {
  it('a later config wins; autocrlf input/true/bare; core.eol; ignoreCase', () => {
    const sys = GitConfig.parse('[core]\n\tautocrlf = true\n\teol = crlf\n');
    const repo = GitConfig.parse('[core]\n\tautocrlf = Input\n\tignorecase\n');
    expect(attributeOptionsFromConfig([sys, repo])).toMatchObject({
      autocrlf: 'input',
      eol: 'crlf',
      ignoreCase: true,
      attributesFile: undefined,
    });
    expect(attributeOptionsFromConfig(GitConfig.parse('[core]\n\tautocrlf\n\teol = bogus\n'))).toMatchObject({
      autocrlf: true,
      eol: undefined,
    });
    expect(attributeOptionsFromConfig()).toMatchObject({ autocrlf: false, eol: undefined, ignoreCase: false });
    expect(() => attributeOptionsFromConfig(GitConfig.parse('[core]\n\tattributesFile\n'))).toThrow(/no value/);
    expect(() => attributeOptionsFromConfig(GitConfig.parse('[core]\n\tautocrlf = maybe\n'))).toThrow(/bad boolean/);
  });

  it('a filter converts when it has a non-empty clean, smudge or process command, or is required', () => {
    const c = GitConfig.parse(
      '[filter "lfs"]\n\tclean = git-lfs clean -- %f\n[filter "s"]\n\tsmudge = x\n[filter "p"]\n\tprocess = y\n[filter "e"]\n\tclean =\n[filter "r"]\n\trequired = true\n[filter "n"]\n\tother = 1\n[filter "a.b"]\n\tclean = z\n',
    );
    const f = attributeOptionsFromConfig(c, { complete: true }).filterConverts!;
    expect(['lfs', 's', 'p', 'r', 'a.b'].every(f)).toBe(true);
    expect(['e', 'n', 'LFS', 'none', ''].some(f)).toBe(false);
    // without `complete`, a driver no config names may be configured elsewhere: it converts
    const g = attributeOptionsFromConfig(c).filterConverts!;
    expect(['lfs', 'LFS', 'none', 'n'].every(g)).toBe(true);
    expect(g('e')).toBe(false);
  });
});

describe('attributesFilePath (get_home_gitattributes)', () => {
  it('$XDG_CONFIG_HOME/git/attributes, else $HOME/.config/git/attributes; ~/ and relative paths', () => {
    expect(attributesFilePath({ worktree: '/w', env: { XDG_CONFIG_HOME: '/x', HOME: '/h' } })).toBe('/x/git/attributes');
    expect(attributesFilePath({ worktree: '/w', env: { XDG_CONFIG_HOME: '', HOME: '/h' } })).toBe('/h/.config/git/attributes');
    expect(attributesFilePath({ worktree: '/w', env: {} })).toBeNull();
    expect(attributesFilePath({ worktree: '/w', attributesFile: '~/a', env: { HOME: '/h' } })).toBe('/h/a');
    expect(attributesFilePath({ worktree: '/w', attributesFile: 'rel/a', env: {} })).toBe('/w/rel/a');
    expect(attributesFilePath({ worktree: '/w', attributesFile: null, env: { HOME: '/h' } })).toBeNull();
  });
});

/** A memfs worktree at /w with these files; `calls` counts lstat and readFile per path. */
function memTree(files: Record<string, string>, wrap: Partial<Fs> = {}) {
  const mem = newMemoryFs();
  mem.volume.mkdirSync('/w/.git/info', { recursive: true });
  for (const [p, data] of Object.entries(files)) {
    const abs = p.startsWith('/') ? p : `/w/${p}`;
    mem.volume.mkdirSync(abs.slice(0, abs.lastIndexOf('/')) || '/', { recursive: true });
    mem.volume.writeFileSync(abs, data);
  }
  const calls: string[] = [];
  const fs: Fs = Object.assign(Object.create(mem) as Fs, {
    lstat: (p: string) => (calls.push(`lstat ${p}`), mem.lstat(p)),
    stat: (p: string) => (calls.push(`stat ${p}`), mem.stat(p)),
    readFile: (p: string) => (calls.push(`read ${p}`), mem.readFile(p)),
    ...wrap,
  });
  return { fs, mem, calls };
}

const base = (o: Partial<AttributeOptions> = {}): AttributeOptions => ({
  worktree: '/w',
  gitDir: '/w/.git',
  env: {},
  systemFile: null,
  ...o,
});

describe('loadAttributeRules: sources, costs, flags', () => {
  it('nothing anywhere: none everywhere, and a walk that saw no .gitattributes touches no file', async () => {
    const { fs, calls } = memTree({ 'a/b/c.txt': 'x' });
    const rules = await loadAttributeRules(fs, base());
    expect(rules.none).toBe(true);
    calls.length = 0;
    const a = await rules.root.enter('a', false);
    const b = await a.enter('b', false);
    expect([a.none, b.none, b.uniform, b.mayConvert('c.txt')]).toEqual([true, true, false, false]);
    expect(calls).toEqual([]);
  });

  it('a one-path query lstats the .gitattributes of each directory above it once', async () => {
    const { fs, calls } = memTree({
      '.gitattributes': '*.md linguist-documentation\n',
      'a/.gitattributes': '*.sh eol=lf\n',
      'a/b/c.sh': 'x',
    });
    const rules = await loadAttributeRules(fs, base());
    // the root's line sets nothing git's conversion reads
    expect(rules.none).toBe(true);
    calls.length = 0;
    expect(await rules.mayConvert('a/b/c.sh')).toBe(true);
    expect(await rules.mayConvert('a/b/d.txt')).toBe(false);
    expect(await rules.mayConvert('a/x.sh')).toBe(true);
    expect(calls).toEqual(['lstat /w/a/.gitattributes', 'read /w/a/.gitattributes', 'lstat /w/a/b/.gitattributes']);
    expect((await rules.conversion('a/b/c.sh')).reasons).toEqual(['eol']);
    // a caller that knows which directories hold one (a sync walk's readdir) saves the lstats
    const again = await loadAttributeRules(fs, base());
    calls.length = 0;
    expect(await again.mayConvert('a/b/c.sh', (d) => d === 'a')).toBe(true);
    expect(calls).toEqual(['lstat /w/a/.gitattributes', 'read /w/a/.gitattributes']);
  });

  it('uniform answers: core.autocrlf, `* text=auto`, `* -text`; per name otherwise; a directory without rules of its own shares its parent’s view', async () => {
    const auto = await loadAttributeRules(memTree({}).fs, base({ autocrlf: true }));
    expect([auto.none, auto.root.uniform]).toEqual([false, true]);
    const { fs } = memTree({ '.gitattributes': '* text=auto\n*.png binary\n', 'sub/.gitattributes': '* -text\n' });
    const rules = await loadAttributeRules(fs, base());
    expect(rules.root.uniform).toBeUndefined();
    expect([rules.root.mayConvert('a.txt'), rules.root.mayConvert('a.png'), rules.root.mayConvert('A.PNG')]).toEqual([true, false, true]);
    const sub = await rules.dir('sub');
    expect([sub.uniform, sub.none]).toEqual([false, true]);
    const x = await rules.dir('x/y');
    expect(x.uniform).toBeUndefined();
    expect(x.mayConvert('b.png')).toBe(false);
  });

  it('the system file: /etc/gitattributes unless GIT_ATTR_NOSYSTEM; the global file; info/attributes above all', async () => {
    const { fs } = memTree({
      '/etc/gitattributes': '*.s text\n',
      '/h/.config/git/attributes': '*.g text\n*.i text\n',
      '.git/info/attributes': '*.i -text\n',
    });
    const on = await loadAttributeRules(fs, { worktree: '/w', gitDir: '/w/.git', env: { HOME: '/h' } });
    expect([await on.mayConvert('a.s'), await on.mayConvert('a.g'), await on.mayConvert('a.i')]).toEqual([true, true, false]);
    const off = await loadAttributeRules(fs, { worktree: '/w', gitDir: '/w/.git', env: { HOME: '/h', GIT_ATTR_NOSYSTEM: 'true' } });
    expect(await off.mayConvert('a.s')).toBe(false);
  });

  it('macros: recursive definitions end; a macro set expands, unset does not; the highest definition wins', async () => {
    const { fs } = memTree({
      '.gitattributes': '[attr]m1 m2 ident\n[attr]m2 m1 text\n[attr]t text\n*.a m1\n*.b -m2\n*.c t\n',
      '.git/info/attributes': '[attr]t -text\n',
    });
    const rules = await loadAttributeRules(fs, base());
    expect(Object.fromEntries(await rules.check('x.a'))).toEqual({ m1: true, m2: true, ident: true, text: true });
    expect(await rules.mayConvert('x.b')).toBe(false);
    expect(Object.fromEntries(await rules.check('x.c'))).toEqual({ t: true, text: false });
    expect(await rules.mayConvert('x.c')).toBe(false);
  });

  it('an unreadable file throws UNREADABLE naming it, or (onUnreadable: converts) makes every file it covers convert', async () => {
    const eacces = (p: string) => Promise.reject(Object.assign(new Error(`EACCES: ${p}`), { code: 'EACCES' }));
    const files = { '.gitattributes': '* -text\n', 'sub/.gitattributes': '* -text\n' };
    const { mem } = memTree(files);
    const fs2: Fs = Object.assign(Object.create(mem) as Fs, {
      readFile: (p: string) => (p.endsWith('sub/.gitattributes') ? eacces(p) : mem.readFile(p)),
    });
    const rules = await loadAttributeRules(fs2, base());
    await expect(rules.mayConvert('sub/a')).rejects.toMatchObject({
      code: 'UNREADABLE',
      data: { path: '/w/sub/.gitattributes', cause: 'EACCES' },
    });
    const lenient = await loadAttributeRules(fs2, base({ onUnreadable: 'converts' }));
    expect(await lenient.mayConvert('a')).toBe(false);
    expect(await lenient.mayConvert('sub/a')).toBe(true);
    expect(await lenient.mayConvert('sub/deeper/a')).toBe(true);
    expect((await lenient.conversion('sub/a')).reasons).toContain('unknown');
    expect(lenient.warnings.join()).toMatch(/EACCES/);
    const fs3: Fs = Object.assign(Object.create(mem) as Fs, {
      readFile: (p: string) => (p.endsWith('info/attributes') ? eacces(p) : mem.readFile(p)),
    });
    await mem.writeFile('/w/.git/info/attributes', new TextEncoder().encode('x text\n'));
    await expect(loadAttributeRules(fs3, base())).rejects.toMatchObject({ code: 'UNREADABLE' });
    expect((await loadAttributeRules(fs3, base({ onUnreadable: 'converts' }))).none).toBe(false);
  });

  it('a file of 100 MiB or more is ignored (with git warning), and git falls back to the index’s blob; a directory named .gitattributes reads as nothing', async () => {
    const { mem } = memTree({ 'big/.gitattributes': '* text\n', 'd/x': 'x' });
    mem.volume.mkdirSync('/w/d/.gitattributes');
    const fs: Fs = Object.assign(Object.create(mem) as Fs, {
      lstat: async (p: string) => {
        const st = await mem.lstat(p);
        return st && p.endsWith('big/.gitattributes') ? { ...st, size: ATTR_MAX_FILE_SIZE } : st;
      },
    });
    const indexBlob = (rel: string) => (rel === 'big/.gitattributes' || rel === 'd/.gitattributes' ? enc('* ident\n') : null);
    const rules = await loadAttributeRules(fs, base({ indexBlob }));
    expect(Object.fromEntries(await rules.check('big/a'))).toEqual({ ident: true });
    expect(rules.warnings.join()).toMatch(/overly large/);
    expect(Object.fromEntries(await rules.check('d/a'))).toEqual({});
  });

  it('no state between rules objects: two configs side by side', async () => {
    const { fs } = memTree({ '.gitattributes': '*.t text\n' });
    const [a, b] = await Promise.all([loadAttributeRules(fs, base()), loadAttributeRules(fs, base({ autocrlf: 'input' }))]);
    expect([await a.mayConvert('x.u'), await b.mayConvert('x.u'), await a.mayConvert('x.t')]).toEqual([false, true, true]);
  });
});
