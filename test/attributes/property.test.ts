/**
 * Random trees with random .gitattributes files (nested, CRLF, BOM, symlinked, quoted patterns,
 * macros where they are allowed and where they are not, invalid names), a random
 * info/attributes and core.attributesFile, random core.ignoreCase / core.autocrlf / core.eol:
 *
 * 1. for every path, our attributes are `git check-attr -a`'s, and the walk's answer, a
 *    one-path query's and the full conversion's are what git's own attribute values give;
 * 2. (fewer runs: two git processes more each) with the attribute values git can convert
 *    with, every file holds content every conversion changes, and our answer is true exactly
 *    when `git add` or a checkout changed the file's bytes.
 *
 *   ATTR_PROPERTY_RUNS=1000 ATTR_PROPERTY_SEED=42 npx vitest run test/attributes/property.test.ts
 *
 * fuzzes longer (ATTR_PROPERTY_CHECKOUT_RUNS for the second); a failure prints its seed and
 * path, which ATTR_PROPERTY_SEED and ATTR_PROPERTY_PATH (ATTR_PROPERTY_CHECKOUT_PATH) replay.
 */
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { encodePath } from '../../src/bytes/text.js';
import { attributeOptionsFromConfig, loadAttributeRules, type AttributeOptions } from '../../src/attributes/index.js';
import { nodeFs } from '../../src/fs/node.js';
import { discoverRepository, readRepoConfig } from '../../src/repo/discover.js';
import { NAMES, pattern as ignorePattern, raw, specDir, type SpecDir } from '../ignore/arbitraries.js';
import { clearWorktree, rulesFileBytes, writeRaw, writeSpecTree } from '../ignore/oracle.js';
import { makeTempDir, makeTempRepo } from '../helpers/git.js';
import { expectAgreesWithGit, gitConverts, walkAnswers } from './oracle.js';

const fs = nodeFs();

// ---- lines ---------------------------------------------------------------------------------

const ATTRS = [
  'text',
  'crlf',
  'eol',
  'filter',
  'ident',
  'working-tree-encoding',
  'diff',
  'merge',
  'binary',
  'conv',
  'm1',
  'm2',
  'foo',
  'Text',
  'a.b_c-d',
];
const VALUES = [
  'auto',
  'input',
  'lf',
  'crlf',
  'LF',
  'up',
  'nodriver',
  'UTF-16LE',
  'utf8',
  'UTF-8',
  'utf-8',
  'latin1',
  '',
  'true',
  'a=b',
  'set',
  'unset',
  `x${raw(0xe9)}`,
];
const MACROS = ['conv', 'm1', 'm2', 'binary', 'text', 'foo', 'eol'];

const state = (attrs: readonly string[], values: readonly string[], forms: readonly string[]) =>
  fc
    .tuple(fc.constantFrom(...forms), fc.constantFrom(...attrs), fc.constantFrom(...values))
    .map(([f, n, v]) => f.replace('%N', n).replace('%V', v));
const FORMS = ['%N', '%N', '-%N', '!%N', '%N=%V', '%N=%V', '-%N=%V', '!%N=%V'];
const anyState = fc.oneof(
  { weight: 30, arbitrary: state(ATTRS, VALUES, FORMS) },
  { weight: 1, arbitrary: fc.constantFrom('bad@', '-', '=x', '--x', '!', 'x!y', '-=v', `n${raw(0xe9)}`) },
);
const sep = fc.constantFrom(' ', ' ', ' ', '\t', '  ', ' \t');
const statesOf = (st: fc.Arbitrary<string>) => fc.array(fc.tuple(st, sep), { maxLength: 4 }).map((a) => a.map(([s, w]) => w + s).join(''));

/** A C-quoted pattern, as git's unquote_c_style reads it. */
function cQuote(p: string): string {
  let out = '"';
  for (const b of encodePath(p)) {
    if (b === 0x22) out += '\\"';
    else if (b === 0x5c) out += '\\\\';
    else if (b < 0x20 || b === 0x7f) out += '\\' + b.toString(8).padStart(3, '0');
    else out += b < 0x80 ? String.fromCharCode(b) : raw(b);
  }
  return out + '"';
}

/** Patterns: gitignore's generators (most), plain names of the tree and `*.ext` forms; quoted or not. */
const plainPattern = fc.oneof(
  { weight: 4, arbitrary: ignorePattern },
  { weight: 4, arbitrary: fc.constantFrom(...NAMES) },
  {
    weight: 3,
    arbitrary: fc.constantFrom(
      '*',
      '*.log',
      '*.LOG',
      'x.*',
      '*/*',
      'sub/*',
      '/a',
      'a/**',
      '**/b',
      '**',
      '*.[ab]',
      '[ab]*',
      'sub/',
      'd/a',
      '/sub/*.log',
    ),
  },
);
const patternField = fc.tuple(plainPattern, fc.nat(9)).map(([p, q]) => (q < 3 ? cQuote(p) : q === 3 ? `"${p}` : p));

const patternLine = (st: fc.Arbitrary<string>) =>
  fc
    .tuple(fc.constantFrom('', '', '', ' ', '\t'), patternField, statesOf(st), fc.constantFrom('', '', '', ' ', '\t', '\r'))
    .map(([lead, p, s, trail]) => lead + p + s + trail);
const macroLine = (st: fc.Arbitrary<string>) =>
  fc.tuple(fc.constantFrom(...MACROS, 'bad@'), statesOf(st)).map(([m, s]) => `[attr]${m}${s}`);
const otherLine = fc.constantFrom('', '# comment', '   # indented', '\t', `x${'y'.repeat(2100)} text`);

const lineOf = (st: fc.Arbitrary<string>) =>
  fc.oneof({ weight: 8, arbitrary: patternLine(st) }, { weight: 2, arbitrary: macroLine(st) }, { weight: 1, arbitrary: otherLine });
const fileOf = (st: fc.Arbitrary<string>) =>
  fc.record({ lines: fc.array(lineOf(st), { minLength: 1, maxLength: 6 }), crlf: fc.boolean(), bom: fc.nat(5).map((n) => n === 0) });
type AttrFileSpec = { lines: string[]; crlf: boolean; bom: boolean };

function fileBytes(f: AttrFileSpec): Buffer {
  return rulesFileBytes(f.lines, f);
}

// ---- trees ---------------------------------------------------------------------------------

type DirSpec = SpecDir<AttrFileSpec>;

const TREE_NAMES = NAMES.filter((n) => n !== '.Git');

const dirSpec = (depth: number, file: fc.Arbitrary<AttrFileSpec>, minLength = 0) =>
  specDir(depth, { names: TREE_NAMES, fileWeight: 4, maxLength: 5, file, symlinkOdds: 8 }, minLength);

/** Content every conversion changes: CRLF, a lone LF, an $Id$, a Latin-1 byte; even length (UTF-16LE). */
const MIXED = Buffer.from([...Buffer.from('a\r\nb\n$Id$\n'), 0xe9, 0x0a]);

const GITATTRIBUTES = { name: '.gitattributes', target: 'ga-target', bytes: fileBytes };

function dirsOf(d: DirSpec, rel = ''): string[] {
  const out: string[] = [];
  for (const [name, node] of d.entries) {
    if (node.kind !== 'dir') continue;
    const p = rel ? `${rel}/${name}` : name;
    out.push(p, ...dirsOf(node.dir, p));
  }
  return out;
}

const CONFIG_HEAD = '[core]\n\trepositoryformatversion = 0\n\tfilemode = true\n\tbare = false\n';

const configArb = fc.record({
  ignoreCase: fc.boolean(),
  autocrlf: fc.constantFrom(null, null, 'true', 'false', 'input', 'INPUT'),
  eol: fc.constantFrom(null, null, 'lf', 'crlf', 'native', 'bogus'),
});

function resetRepo(repo: string, outside: string): void {
  clearWorktree(repo);
  rmSync(join(repo, '.git', 'index'), { force: true });
  rmSync(join(outside, 'attributes'), { force: true });
}

function writeConfig(repo: string, outside: string, c: { ignoreCase: boolean; autocrlf: string | null; eol: string | null }): void {
  let text = `${CONFIG_HEAD}\tignorecase = ${c.ignoreCase}\n\tattributesFile = ${join(outside, 'attributes')}\n`;
  if (c.autocrlf) text += `\tautocrlf = ${c.autocrlf}\n`;
  if (c.eol) text += `\teol = ${c.eol}\n`;
  text += '[filter "up"]\n\tclean = tr a-z A-Z\n\tsmudge = tr A-Z a-z\n[filter "empty"]\n\tclean = \n';
  writeFileSync(join(repo, '.git', 'config'), text);
}

async function optionsOf(repo: string): Promise<AttributeOptions> {
  const config = await readRepoConfig(fs, await discoverRepository(fs, repo));
  return {
    worktree: repo,
    gitDir: join(repo, '.git'),
    env: {},
    systemFile: null,
    ...attributeOptionsFromConfig(config, { complete: true }),
  };
}

const seedOpts = (pathVar: string) => ({
  ...(process.env.ATTR_PROPERTY_SEED ? { seed: Number(process.env.ATTR_PROPERTY_SEED) } : {}),
  ...(process.env[pathVar] ? { path: process.env[pathVar] } : {}),
});

const RUNS = Number(process.env.ATTR_PROPERTY_RUNS ?? 250);
/** ATTR_PROPERTY_STATS=1 prints how often the runs hit what (paths with attributes, answers, real conversions). */
const stats = { paths: 0, withAttrs: 0, yes: 0, realFiles: 0, realYes: 0 };
const CHECKOUT_RUNS = Number(process.env.ATTR_PROPERTY_CHECKOUT_RUNS ?? 40);

describe('attributes: random trees and files against git', () => {
  it(
    'every path: our attributes = git check-attr -a; the walk, a one-path query and the conversion = what git’s values give',
    async () => {
      const repo = makeTempRepo();
      const outside = makeTempDir('scalpel-attr-');
      const file = fileOf(anyState);
      const scenario = fc.record({
        tree: fc.oneof({ weight: 3, arbitrary: dirSpec(2, file, 1) }, { weight: 1, arbitrary: dirSpec(3, file, 1) }),
        info: fc.option(file, { freq: 2 }),
        global: fc.option(file, { freq: 2 }),
        config: configArb,
      });
      await fc.assert(
        fc.asyncProperty(scenario, async (s) => {
          resetRepo(repo, outside);
          const files: string[] = [];
          writeSpecTree(repo, '', s.tree, GITATTRIBUTES, Buffer.from('x\n'), files);
          if (s.info) writeRaw(repo, '.git/info/attributes', fileBytes(s.info));
          if (s.global) writeFileSync(join(outside, 'attributes'), fileBytes(s.global));
          writeConfig(repo, outside, s.config);
          const opts = await optionsOf(repo);
          const rules = await loadAttributeRules(fs, opts);
          const walked = await expectAgreesWithGit(fs, repo, rules, () => loadAttributeRules(fs, opts), {}, dirsOf(s.tree));
          for (const [p, w] of walked) {
            stats.paths++;
            if ((await rules.check(p)).size > 0) stats.withAttrs++;
            if (w.mayConvert) stats.yes++;
          }
        }),
        { numRuns: RUNS, ...seedOpts('ATTR_PROPERTY_PATH') },
      );
    },
    Math.max(120_000, RUNS * 1_500),
  );

  it(
    'real conversions: our answer is true exactly when git add or a checkout changes the file',
    async () => {
      const repo = makeTempRepo();
      const outside = makeTempDir('scalpel-attr-');
      // only what git can add and check out: no set/unset working-tree-encoding, no encoding iconv does not know
      const convState = fc.oneof(
        state(['text', 'crlf', 'eol', 'ident', 'binary', 'conv', 'm1', 'foo'], ['auto', 'input', 'lf', 'crlf', 'x', ''], FORMS),
        state(['filter'], ['up', 'nodriver', 'empty', ''], ['%N=%V', '%N', '-%N', '!%N']),
        state(['working-tree-encoding'], ['UTF-16LE', 'utf8', 'ISO-8859-1', ''], ['%N=%V', '!%N']),
      );
      const file = fileOf(convState);
      const scenario = fc.record({
        tree: dirSpec(2, file, 1),
        info: fc.option(file, { freq: 2 }),
        // core.ignoreCase on a case-sensitive filesystem makes git stage `aB/x` and `ab/x` as one path
        config: configArb.map((c) => ({ ...c, ignoreCase: false })),
      });
      await fc.assert(
        fc.asyncProperty(scenario, async (s) => {
          resetRepo(repo, outside);
          const files: string[] = [];
          writeSpecTree(repo, '', s.tree, GITATTRIBUTES, MIXED, files);
          if (s.info) writeRaw(repo, '.git/info/attributes', fileBytes(s.info));
          writeConfig(repo, outside, s.config);
          const opts = await optionsOf(repo);
          const rules = await loadAttributeRules(fs, opts);
          const walked = await walkAnswers(fs, repo, rules);
          const real = gitConverts(repo, { GIT_LITERAL_PATHSPECS: '1' }, files);
          const wrong: unknown[] = [];
          for (const p of files) {
            const r = real.get(p)!;
            const ours = walked.get(p)!.mayConvert;
            stats.realFiles++;
            if (ours) stats.realYes++;
            if (ours !== (r.checkin || r.checkout)) wrong.push({ path: p, ours, git: r, attrs: Object.fromEntries(await rules.check(p)) });
          }
          expect(wrong).toEqual([]);
        }),
        { numRuns: CHECKOUT_RUNS, ...seedOpts('ATTR_PROPERTY_CHECKOUT_PATH') },
      );
      if (process.env.ATTR_PROPERTY_STATS) console.log(JSON.stringify(stats));
    },
    Math.max(120_000, CHECKOUT_RUNS * 3_000),
  );
});
