/**
 * Attribute corpora against git: every file's attributes next to `git check-attr -a`, and the
 * final answer ("may the worktree bytes differ from the blob?") next to what git really does
 * when it adds and checks out each file, under every core.autocrlf × core.eol.
 */
import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { attributeOptionsFromConfig, loadAttributeRules, type AttributeOptions } from '../../src/attributes/index.js';
import { nodeFs } from '../../src/fs/node.js';
import { GitConfig } from '../../src/repo/config.js';
import { discoverRepository, readRepoConfig } from '../../src/repo/discover.js';
import { writeRaw } from '../ignore/oracle.js';
import { git, gitEnv, makeTempDir, makeTempRepo } from '../helpers/git.js';
import { expectAgreesWithGit, gitConverts, indexAttributeBlobs, walkAnswers } from './oracle.js';

const fs = nodeFs();
const raw = (b: number) => String.fromCharCode(0xdc00 + b);

function envOf(extra: NodeJS.ProcessEnv = {}): AttributeOptions['env'] {
  const e = gitEnv(extra);
  return { HOME: e.HOME, XDG_CONFIG_HOME: e.XDG_CONFIG_HOME };
}

/** Options as the repository's config (and the test's global config) give them. */
async function optionsOf(repo: string, env: NodeJS.ProcessEnv = {}, extra: Partial<AttributeOptions> = {}): Promise<AttributeOptions> {
  const e = envOf(env);
  const configs: GitConfig[] = [];
  for (const f of [join(e!.XDG_CONFIG_HOME!, 'git', 'config'), join(e!.HOME!, '.gitconfig')]) {
    const st = await fs.lstat(f);
    if (st) configs.push(GitConfig.parse(await fs.readFile(f), f));
  }
  configs.push(await readRepoConfig(fs, await discoverRepository(fs, repo)));
  return {
    worktree: repo,
    gitDir: join(repo, '.git'),
    env: e,
    systemFile: null,
    ...attributeOptionsFromConfig(configs, { complete: true }),
    ...extra,
  };
}

async function check(repo: string, env: NodeJS.ProcessEnv = {}, extra: Partial<AttributeOptions> = {}, extraPaths: string[] = []) {
  const opts = await optionsOf(repo, env, extra);
  const rules = await loadAttributeRules(fs, opts);
  await expectAgreesWithGit(fs, repo, rules, () => loadAttributeRules(fs, opts), env, extraPaths);
  return rules;
}

describe('attribute corpus against git check-attr -a', () => {
  it('nested files, precedence, macros (and where they are allowed), set/unset/unspecified/values, quoted patterns, path patterns, **, classes, trailing /, non-UTF-8, info/attributes, core.attributesFile, a symlinked .gitattributes', async () => {
    const repo = makeTempRepo();
    writeRaw(
      repo,
      '.gitattributes',
      [
        '# comment',
        '   # indented comment',
        '[attr]conv text eol=crlf',
        '[attr]nested conv ident',
        '[attr]offmacro -text -ident',
        '[attr]binary -text diff=custom', // redefines the built-in: this one wins
        '*.txt text',
        '*.TXT -text',
        '*.bin binary',
        '*.conv conv',
        '*.nest nested',
        '*.off offmacro',
        '*.noconv -conv',
        '*.unspec conv !eol',
        'last.* text -text', // the last state of a line is applied first
        'both.* -text text',
        '*.val text=auto eol=lf filter=lfs working-tree-encoding=UTF-16 x=a=b empty=',
        '*.bad text bad@name', // one invalid name: the whole line is ignored
        '*.neg -text=value !eol=crlf',
        '!negated text', // negative patterns are ignored with a warning
        '"quoted name.q" ident',
        '"oct\\101l.q" ident', // \101 is A
        '"bad\\q.q" ident', // not unquotable: read as the pattern `"bad\q.q"`
        '/rootonly.r text',
        'dir/*.d eol=lf',
        'dir/ text', // matches only `dir/` given with a slash: never a file
        '**/deep/*.g ident',
        'a**/glob text',
        '[abc]cls.c text',
        '[!x]neg.c -text',
        '*.[ch] crlf',
        `caf${raw(0xe9)}.* text`,
        'u[\u00e9]v ident',
        '\\!lit text', // an escaped ! is a literal
        'sp\\ ace text', // the pattern ends at the blank: `sp\` (can never match) with states `ace text`
        'ws\ttab text',
        '*.crlf text\r',
        '',
      ].join('\n'),
    );
    writeRaw(
      repo,
      'sub/.gitattributes',
      [
        '[attr]notallowed text', // macros only at the top level
        '*.txt -text eol=lf', // deeper wins over the root
        '*.sub notallowed',
        'local.* ident',
        '/anch.* text',
        'inner/*.i eol=crlf',
        '',
      ].join('\n'),
    );
    writeRaw(repo, 'sub/inner/.gitattributes', Buffer.from('\ufeffbom.* text\r\n*.txt !text\r\nlast\tx=1', 'utf8'));
    writeRaw(repo, 'linktarget', '* ident\n');
    mkdirSync(join(repo, 'linkdir'));
    symlinkSync('../linktarget', join(repo, 'linkdir', '.gitattributes'));
    mkdirSync(join(repo, 'dirattr', '.gitattributes'), { recursive: true });
    writeRaw(repo, '.git/info/attributes', '[attr]conv -text\n*.info text\nover.txt -text\n*.crlf -text\n');
    const globalDir = makeTempDir('scalpel-attr-');
    writeFileSync(join(globalDir, 'attributes'), '*.glob ident\n*.txt eol=crlf\n[attr]fromglobal text\n*.fg fromglobal\n');
    git(repo, ['config', 'core.attributesFile', join(globalDir, 'attributes')]);

    const files = [
      'a.txt',
      'A.TXT',
      'b.bin',
      'c.conv',
      'd.nest',
      'e.off',
      'f.noconv',
      'g.unspec',
      'last.x',
      'both.x',
      'h.val',
      'i.bad',
      'j.neg',
      'negated',
      '!negated',
      'quoted name.q',
      'octAl.q',
      'oct\\101l.q',
      '"bad\\q.q"',
      'bad\\q.q',
      'rootonly.r',
      'x/rootonly.r',
      'dir/a.d',
      'dir/x/a.d',
      'other/dir/a.d',
      'dir/f',
      'deep/a.g',
      'x/deep/a.g',
      'x/y/deep/a.g',
      'deep/x/a.g',
      'aglob',
      'a/glob',
      'axy/z/glob',
      'acls.c',
      'dcls.c',
      'yneg.c',
      'xneg.c',
      'm.c',
      'm.h',
      'm.cc',
      `caf${raw(0xe9)}.x`,
      'caf\u00e9.x',
      'u\u00e9v',
      `u${raw(0xc3)}v`,
      'uev',
      '!lit',
      'sp\\',
      'sp ace',
      'ws',
      'z.crlf',
      'sub/a.txt',
      'sub/b.sub',
      'sub/local.x',
      'sub/q/local.x',
      'sub/anch.x',
      'sub/q/anch.x',
      'anch.x',
      'sub/inner/a.i',
      'sub/inner/q/a.i',
      'sub/x.i',
      'sub/inner/bom.x',
      'sub/inner/a.txt',
      'sub/inner/last',
      'linkdir/a',
      'dirattr/a',
      'x.info',
      'over.txt',
      'sub/over.txt',
      'k.glob',
      'k.fg',
    ];
    for (const f of files) writeRaw(repo, f, 'x\n');
    const rules = await check(repo, {}, {}, ['dir', 'never/written.txt']);
    // a few answers spelled out
    const attrs = async (p: string) => Object.fromEntries(await rules.check(p));
    expect(await attrs('b.bin')).toEqual({ binary: true, text: false, diff: 'custom' });
    expect(await attrs('c.conv')).toEqual({ conv: true, text: false }); // info/attributes' definition of conv wins
    expect(await attrs('sub/a.txt')).toEqual({ text: false, eol: 'lf' });
    expect(await attrs('sub/inner/a.txt')).toEqual({ eol: 'lf' }); // `!text`: unspecified, a deeper file's say
    expect(await attrs('linkdir/a')).toEqual({});
    expect(rules.warnings.some((w) => w.includes('symbolic links'))).toBe(true);
    expect(rules.warnings.some((w) => w.includes('not allowed'))).toBe(true);
    expect(rules.warnings.some((w) => w.includes('bad@name is not a valid attribute name'))).toBe(true);
    expect(rules.warnings.some((w) => w.includes('Negative patterns'))).toBe(true);
  });

  it('core.ignoreCase=true: patterns fold ASCII only', async () => {
    const repo = makeTempRepo();
    git(repo, ['config', 'core.ignoreCase', 'true']);
    writeRaw(
      repo,
      '.gitattributes',
      [
        '*.TXT text',
        'Name ident',
        'x[A] text',
        'y[a] text',
        'v\\A text',
        '[[:upper:]]up text',
        'Dir/*.d eol=crlf',
        '\u00c9t\u00e9 text',
        '',
      ].join('\n'),
    );
    writeRaw(repo, 'Sub/.gitattributes', '*.s ident\n');
    const files = [
      'a.txt',
      'b.TXT',
      'c.Txt',
      'name',
      'NAME',
      'xA',
      'xa',
      'ya',
      'yA',
      'vA',
      'va',
      'Aup',
      'aup',
      'Dir/x.d',
      'dir/x.d',
      '\u00c9t\u00e9',
      '\u00e9t\u00e9',
      'Sub/a.s',
    ];
    for (const f of files) writeRaw(repo, f, 'x\n');
    await check(repo);
  });

  it('the default attributes file: $XDG_CONFIG_HOME/git/attributes, else $HOME/.config/git/attributes; ~/ in core.attributesFile', async () => {
    const repo = makeTempRepo();
    for (const f of ['a.xdg', 'a.home', 'a.tilde', 'plain']) writeRaw(repo, f, 'x\n');
    const xdg = makeTempDir('scalpel-xdg-');
    writeRaw(xdg, 'git/attributes', '*.xdg text\n');
    await check(repo, { XDG_CONFIG_HOME: xdg });
    const home = makeTempDir('scalpel-home2-');
    writeRaw(home, '.config/git/attributes', '*.home text\n');
    writeRaw(home, 'my-attributes', '*.tilde ident\n');
    await check(repo, { HOME: home, XDG_CONFIG_HOME: '' });
    git(repo, ['config', 'core.attributesFile', '~/my-attributes'], { env: { HOME: home } });
    await check(repo, { HOME: home, XDG_CONFIG_HOME: '' });
  });

  it('a linked worktree: info/attributes of the common directory', async () => {
    const repo = makeTempRepo();
    writeRaw(repo, 'a.x', 'x\n');
    git(repo, ['add', '-A']);
    git(repo, ['commit', '-qm', 'c']);
    const linked = join(makeTempDir('scalpel-wt-'), 'linked');
    git(repo, ['worktree', 'add', '-q', linked]);
    writeRaw(repo, '.git/info/attributes', '*.x text\n');
    writeRaw(linked, 'b.x', 'x\n');
    const loc = await discoverRepository(fs, linked);
    const opts: AttributeOptions = {
      worktree: linked,
      gitDir: loc.commonDir,
      env: envOf(),
      systemFile: null,
      ...attributeOptionsFromConfig(await readRepoConfig(fs, loc), { complete: true }),
    };
    const rules = await loadAttributeRules(fs, opts);
    await expectAgreesWithGit(fs, linked, rules, () => loadAttributeRules(fs, opts));
    expect(await rules.mayConvert('b.x')).toBe(true);
  });

  it('the index: a .gitattributes deleted from the worktree or replaced by a symlink is read from the index (checkin); checkout direction prefers the index', async () => {
    const repo = makeTempRepo();
    writeRaw(repo, 'sub/.gitattributes', '*.x text\n');
    writeRaw(repo, 'lnk/.gitattributes', '*.x ident\n');
    for (const f of ['sub/a.x', 'lnk/a.x', 'a.x']) writeRaw(repo, f, 'x\n');
    git(repo, ['add', '-A']);
    const blobs = indexAttributeBlobs(repo);
    const indexBlob = (rel: string) => blobs.get(rel) ?? null;
    git(repo, ['rm', '-q', '--cached', 'lnk/.gitattributes']);
    git(repo, ['add', '-A']);
    // now: sub/.gitattributes deleted in the worktree, lnk/.gitattributes a symlink staged as one
    const { rmSync } = await import('node:fs');
    rmSync(join(repo, 'sub', '.gitattributes'));
    rmSync(join(repo, 'lnk', '.gitattributes'));
    writeRaw(repo, 'target', '*.x eol=crlf\n');
    symlinkSync('../target', join(repo, 'lnk', '.gitattributes'));
    git(repo, ['add', 'lnk/.gitattributes']);
    const staged = indexAttributeBlobs(repo);
    const rules = await check(repo, {}, { indexBlob: (rel) => staged.get(rel) ?? null });
    expect(await rules.mayConvert('sub/a.x')).toBe(true);
    // the staged symlink's blob is its target's name: git reads `../target` as an attributes line
    expect(Object.fromEntries(await rules.check('lnk/a.x'))).toEqual({});
    // without the index, nothing says sub/a.x is text
    const bare = await loadAttributeRules(fs, await optionsOf(repo));
    expect(await bare.mayConvert('sub/a.x')).toBe(false);
    // checkout direction: the index's blob first (the one written before the edits)
    writeRaw(repo, 'sub/.gitattributes', '*.x -text\n');
    const checkin = await loadAttributeRules(fs, await optionsOf(repo, {}, { indexBlob }));
    const checkout = await loadAttributeRules(fs, await optionsOf(repo, {}, { indexBlob, direction: 'checkout' }));
    expect(await checkin.mayConvert('sub/a.x')).toBe(false);
    expect(await checkout.mayConvert('sub/a.x')).toBe(true);
  });
});

/** The conversion cases: one attribute line each (`kNN.* states`), four content variants each. */
const CASES: Array<[string, string]> = [
  ['k00', 'text'],
  ['k01', '-text'],
  ['k02', 'text=auto'],
  ['k03', 'text eol=lf'],
  ['k04', 'text eol=crlf'],
  ['k05', 'eol=lf'],
  ['k06', 'eol=crlf'],
  ['k07', 'text=auto eol=crlf'],
  ['k08', 'text=auto eol=lf'],
  ['k09', 'crlf'],
  ['k10', '-crlf'],
  ['k11', 'crlf=input'],
  ['k12', 'binary'],
  ['k13', 'binary eol=crlf'],
  ['k14', '-text eol=crlf'],
  ['k15', 'ident'],
  ['k16', '-text ident'],
  ['k17', 'filter=up'],
  ['k18', '-text filter=cleanonly'],
  ['k19', '-text filter=smudgeonly'],
  ['k20', '-text filter=nodriver'],
  ['k21', '-text filter=nocmd'],
  ['k22', '-text working-tree-encoding=UTF-16LE'],
  ['k23', '-text working-tree-encoding=utf8'],
  ['k24', '-text working-tree-encoding=ISO-8859-1'],
  ['k25', 'conv'],
  ['k26', '-conv'],
  ['k27', 'plain'],
  ['k28', 'text=input'],
  ['k29', 'text=bogus'],
  ['k30', 'eol=bogus'],
  ['k31', '!text'],
  ['k32', 'text -text'],
  ['k33', 'eol=crlf'], // sub/.gitattributes: -text
  ['k34', ''], // no attribute at all
  ['k35', 'text'], // info/attributes: -text
  ['k36', '-text filter=up -filter'],
  ['k37', 'crlf -text'],
  ['k38', '-crlf text'],
  ['k39', 'eol'],
  ['k40', 'text=auto -eol'],
  ['k41', '-text filter'],
  ['k42', '-text -ident'],
  ['k43', 'textmacro'], // [attr]textmacro text in info/attributes (info's macro wins over the root's -text)
];

/** Content variants, all of even length (UTF-16LE needs it): LF, CRLF, an $Id$, a Latin-1 byte. */
const VARIANTS: Array<[string, Buffer]> = [
  ['lf', Buffer.from('a\nb\n')],
  ['crlf', Buffer.from('a\r\nb\r\n')],
  ['id', Buffer.from('$Id$\n\n')],
  ['hi', Buffer.from([0xe9, 0x0a, 0xe9, 0x0a])],
];

const CONFIGS: Array<{ autocrlf: string | null; eol: string | null }> = [];
for (const autocrlf of [null, 'true', 'input']) for (const eol of [null, 'lf', 'crlf', 'native']) CONFIGS.push({ autocrlf, eol });

function conversionRepo(cfg: { autocrlf: string | null; eol: string | null }): string {
  const repo = makeTempRepo();
  const root = [
    '[attr]conv text eol=crlf',
    '[attr]textmacro -text',
    ...CASES.filter(([, s]) => s !== '').map(([k, s]) => `${k}.* ${s}`),
    '',
  ].join('\n');
  writeRaw(repo, '.gitattributes', root);
  writeRaw(repo, 'sub/.gitattributes', 'k33.* -text\nk00.* -text\n');
  writeRaw(repo, '.git/info/attributes', 'k35.* -text\n[attr]textmacro text\n');
  for (const dir of ['', 'sub/']) for (const [k] of CASES) for (const [v, bytes] of VARIANTS) writeRaw(repo, `${dir}${k}.${v}`, bytes);
  git(repo, ['config', 'filter.up.clean', 'tr a-z A-Z']);
  git(repo, ['config', 'filter.up.smudge', 'tr A-Z a-z']);
  git(repo, ['config', 'filter.cleanonly.clean', 'tr a-z A-Z']);
  git(repo, ['config', 'filter.smudgeonly.smudge', 'tr a-z A-Z']);
  git(repo, ['config', 'filter.nocmd.other', 'x']); // a driver with no command: git does nothing
  if (cfg.autocrlf) git(repo, ['config', 'core.autocrlf', cfg.autocrlf]);
  if (cfg.eol) git(repo, ['config', 'core.eol', cfg.eol]);
  return repo;
}

describe('the final answer against real checkouts', () => {
  it.each(CONFIGS)(
    'core.autocrlf=$autocrlf core.eol=$eol: may differ exactly when git add or a checkout changes some variant',
    async (cfg) => {
      const repo = conversionRepo(cfg);
      const opts = await optionsOf(repo);
      const rules = await loadAttributeRules(fs, opts);
      await expectAgreesWithGit(fs, repo, rules, () => loadAttributeRules(fs, opts));
      const walked = await walkAnswers(fs, repo, rules);
      const real = gitConverts(repo);
      const wrong: unknown[] = [];
      for (const dir of ['', 'sub/']) {
        for (const [k, states] of CASES) {
          const answers = VARIANTS.map(([v]) => walked.get(`${dir}${k}.${v}`)!.mayConvert);
          expect(new Set(answers).size).toBe(1);
          const byVariant = Object.fromEntries(VARIANTS.map(([v]) => [v, real.get(`${dir}${k}.${v}`)]));
          const gitDiffers = Object.values(byVariant).some((r) => r!.checkin || r!.checkout);
          if (answers[0] !== gitDiffers)
            wrong.push({
              file: `${dir}${k}`,
              states,
              ours: answers[0],
              reasons: (await rules.conversion(`${dir}${k}.lf`)).reasons,
              git: byVariant,
            });
        }
      }
      expect(wrong).toEqual([]);
      // both answers occur, and for the reasons the table says
      const yes = CASES.filter(([k]) => walked.get(`${k}.lf`)!.mayConvert).map(([k]) => k);
      if (process.env.ATTR_CORPUS_PRINT) console.log(JSON.stringify(cfg), 'may differ:', yes.join(' '));
      for (const k of ['k15', 'k17', 'k18', 'k19', 'k22', 'k04', 'k06', 'k25', 'k43']) expect(yes).toContain(k);
      for (const k of ['k01', 'k10', 'k12', 'k13', 'k14', 'k20', 'k21', 'k23', 'k35', 'k36', 'k37', 'k41', 'k42'])
        expect(yes).not.toContain(k);
      // no attribute, or only an unset macro: the config decides
      expect(yes.includes('k34')).toBe(cfg.autocrlf !== null);
      expect(yes.includes('k26')).toBe(cfg.autocrlf !== null);
      // the conservative default: a filter no config names is taken as converting
      const conservative = await loadAttributeRules(fs, { ...opts, filterConverts: undefined });
      expect(await conservative.mayConvert('k20.lf')).toBe(true);
      expect(await rules.mayConvert('k20.lf')).toBe(false);
    },
    60_000,
  );
});
