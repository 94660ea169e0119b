/**
 * Random small trees with random .gitignore files (nested, CRLF, BOM, symlinked), a random
 * info/exclude and core.excludesFile, core.ignoreCase on or off: our answer for every path is
 * git's. Each run costs three git processes (one `check-ignore --stdin` for every path, two
 * `status`); the repository is made once and its worktree rewritten per run.
 *
 *   IGNORE_PROPERTY_RUNS=1500 IGNORE_PROPERTY_SEED=42 npx vitest run test/ignore/property.test.ts
 *
 * fuzzes longer with a chosen seed (the test's timeout grows with the runs: ~60 ms a run alone
 * on 2 cores, several times that on a loaded machine); a failure prints its seed and path, which
 * IGNORE_PROPERTY_SEED and IGNORE_PROPERTY_PATH replay.
 */
import { mkdirSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, it } from 'vitest';
import { encodePath } from '../../src/bytes/text.js';
import { nodeFs } from '../../src/fs/node.js';
import { ignoreOptionsFromConfig, loadIgnoreRules } from '../../src/ignore/index.js';
import { discoverRepository, readRepoConfig } from '../../src/repo/discover.js';
import { makeTempDir, makeTempRepo } from '../helpers/git.js';
import { expectAgreesWithGit, writeRaw } from './oracle.js';

const fs = nodeFs();
const raw = (b: number) => String.fromCharCode(0xdc00 + b);

/** Names in the trees; pattern literals are drawn from the same pieces so that patterns hit. */
const NAMES = [
  'a', 'b', 'A', 'ab', 'aB', 'x.log', 'X.LOG', 'build', 'Build', 'node_modules', '.env', 'foo bar', 'keep', 'd', 'sub',
  '\u00e9', 'x\u00e9y', `caf${raw(0xe9)}`, `${raw(0xff)}`, 'tr ', '#h', '!b', '[ab]', 'a*', 'x?', 'back\\slash', 'cr\r', 'z1', '-', ']',
  // ASCII-only folding: É (C3 89) and é (C3 A9) are different names under core.ignoreCase too
  '\u00c9', 'x\u00c9y',
  // git's ctype: \v and \f are not [:space:] (sane_ctype), DEL is [:cntrl:]
  'v\u000b', 'f\u000c', 'del\u007f', 'tab\t',
  // `.Git` is git's own directory under core.ignoreCase only
  '.Git', ' ', 'a\\ ', '*',
];

const LITERALS = [
  'a', 'b', 'A', 'B', 'x', 'log', '.log', '.LOG', 'build', 'node_modules', '.env', 'foo bar', 'keep', 'd', 'sub', 'z', '1', '\u00e9', `${raw(0xe9)}`, `${raw(0xff)}`, ' ', '-', 'caf', 'cr\r',
  '\u00c9', `${raw(0xc3)}`, 'Build', 'tr', '.Git', 'v\u000b', '\u000c', '\t', 'del\u007f',
];
const WILD = [
  '*', '?', '??', '**', '***', '[ab]', '[!a]', '[a-c]', '[A-Z]', '[Z-a]', '[c-a]', '[[:upper:]]', '[[:alpha:]]', '[[:digit:]]', '[[:space:]]', '[]a]', '[\u00e9]', `[${raw(0xe9)}-${raw(0xff)}]`,
  '[/]', '[!/]', '[a/]', '[\\a-\\c]', '[[:lower:]]', '[[:punct:]]', '[--0]', '[!--0]', '*[ab]*', '//',
  '[\\]]', '[a-]', '[!]]', '[A]', '[!A]', '\\*', '\\?', '\\[', '\\a', '\\A', '\\ ', '\\#', '\\!', '\\\\', '\\/', '[', '[[:nope:]]', '\\',
  // classes: every POSIX name, `^`, `]` and `-` as members, `[:` without `:]`, ranges over `/`, non-ASCII upper case
  '[[:cntrl:]]', '[[:blank:]]', '[[:graph:]]', '[[:print:]]', '[[:xdigit:]]', '[[:alnum:]]', '[^a]', '[]-a]', '[!]-a]', '[[]', '[[:]', '[[:a]', '[[::]]',
  '[a-[:alpha:]]', '[.-0]', '[!.-0]', '[\\/]', '[!\\/]', '[ ]', '[\u00c9]', '[!\u00c9]', '[\u00c9-\u00e9]', `[${raw(0x80)}-${raw(0xbf)}]`, '[B]', '[!B]', '[\\B]', '[a-B]', '[A-b]',
  // stars next to escapes
  '\\**', '**\\*', '*\\', '\\*\\*', '*\\/', '\\\\**',
];

const segment = fc.array(fc.oneof({ weight: 3, arbitrary: fc.constantFrom(...LITERALS) }, { weight: 2, arbitrary: fc.constantFrom(...WILD) }), { minLength: 1, maxLength: 3 }).map((a) => a.join(''));
/** What joins two segments: mostly one slash, sometimes doubled, escaped or with a globstar. */
const joiner = fc.constantFrom('/', '/', '/', '/', '//', '\\/', '/**/', '**/', '/**', '\\//', '/\\/');
const generic = fc
  .tuple(
    fc.constantFrom('', '', '', '!', '!', '/', '!/', '\\#', '\\!', '#', '//', '!//', '**/', '!**/', '/**/', '*/', ' ', '\\ ', '!\\!', '\\\\', '!#'),
    fc.array(fc.tuple(segment, joiner), { minLength: 1, maxLength: 3 }),
    fc.constantFrom(
      '', '', '', '/', ' ', '  ', '\\ ', '/ ', '\t',
      // trailing spaces after backslashes (an escaped space stays, an escaped backslash does not protect the space after it)
      '\\\\ ', '\\ \\ ', ' \\ ', '\\  ', '/  ', '\\ /', '\\\\',
      // odd slashes at the end, a pattern ending in `/` after `**`
      '\\/', '//', '/**', '/**/', '**/', '/**//', '\\',
      // a CR that stays (escaped, or before another CR in a CRLF file), a NUL that ends the line
      '\r', '\\\r', '\u0000x', '\u0000',
    ),
  )
  .map(([pre, segs, post]) => pre + segs.map(([seg, j], i) => (i === 0 ? '' : j) + seg).join('') + post);
/** Where git and the package read runs of stars differently: after the literal prefix (`a**`), around an escaped slash. */
const starry = fc
  .tuple(
    fc.constantFrom('', '!', '/', 'a/', 'sub/', '!a/', '**/', 'a/**/', '\\*'),
    fc.constantFrom('a', 'b', 'ab', 'd', '', 'a?', '\\a', 'a\\', '[a]'),
    fc.constantFrom('**', '***', '**/**', '*', '\\**', '**\\*'),
    fc.constantFrom('/', '\\/', '', '/**/', '\\/**/', '//', '/**\\/'),
    fc.constantFrom('b', 'a', 'ab', '', '*', 'b/', 'x.log', '**', '**/', '/', 'b\\ ', '*/'),
  )
  .map(([pre, lit, stars, sep, rest]) => pre + lit + stars + sep + rest);
/** Directories excluded and re-included: directory-only negations under excluded parents, `*` next to `!*` + `/`. */
const DIR_FORMS = [
  '%A/', '%A', '/%A/', '%A/*', '%A/**', '%A/**/', '%A/*/', '%A/%B/', '*', '/*', '**', '*/', '**/%B/**',
  '!%A/%B/', '!%A/%B', '!%B/', '!%B', '!**/%B/', '!*/', '!/%A/', '!%A/*/', '!%A/**/%B/', '!%A/**/', '!%A/**', '!*', '!/%A/%B/',
];
const dirName = fc.constantFrom('a', 'b', 'A', 'ab', 'build', 'Build', 'd', 'sub', 'keep', '\u00e9', '\u00c9', '*', '?', 'x.log', '[ab]');
const dirRule = fc.tuple(fc.constantFrom(...DIR_FORMS), dirName, dirName).map(([f, a, b]) => f.replace('%A', a).replace('%B', b));
/**
 * Near misses: a path of the tree's names, byte by byte kept (escaped where git would read it
 * as a wildcard), or written as a wildcard, a class, an escape or the other case, so that most
 * patterns match, or just fail to match, real entries (a byte of a multi-byte name, a name
 * with a trailing space, `**` glued to a name, an escaped upper-case letter under core.ignoreCase).
 */
const byteChar = (b: number) => (b < 0x80 ? String.fromCharCode(b) : raw(b));
const isAlpha = (b: number) => (b >= 0x41 && b <= 0x5a) || (b >= 0x61 && b <= 0x7a);
const classOf = (b: number) =>
  b >= 0x80 ? `[${raw(0x80)}-${raw(0xff)}]` : isAlpha(b) ? '[[:alpha:]]' : b >= 0x30 && b <= 0x39 ? '[[:digit:]]' : b < 0x20 || b === 0x7f ? '[[:cntrl:]]' : b === 0x20 ? '[[:blank:]]' : '[[:punct:]]';
const nearMiss = fc
  .tuple(
    fc.array(fc.constantFrom(...NAMES), { minLength: 1, maxLength: 3 }),
    fc.array(fc.nat(31), { minLength: 40, maxLength: 40 }),
    fc.constantFrom('', '', '', '/', '!', '!/', '**/', '!**/', '*/'),
    fc.constantFrom('', '', '', '/', '/**', '/*', '*', '/**/', '**', '\\ '),
  )
  .map(([names, ops, pre, post]) => {
    let k = 0;
    const op = () => (k < ops.length ? ops[k++] : 0);
    let out = '';
    names.forEach((name, n) => {
      if (n > 0) {
        const o = op();
        out += o < 26 ? '/' : o < 28 ? '/**/' : o < 29 ? '**/' : o < 30 ? '\\/' : o < 31 ? '//' : '/*/';
      }
      const bytes = encodePath(name);
      for (let i = 0; i < bytes.length; i++) {
        const b = bytes[i];
        const c = byteChar(b);
        const lit = '*?[\\'.includes(c) || (out === '' && (c === '!' || c === '#')) ? '\\' + c : c;
        const o = op();
        if (o < 16) out += lit;
        else if (o < 18) out += '?';
        else if (o < 20) out += '*';
        else if (o < 21) {
          out += '*';
          i++; // the star stands for two bytes
        } else if (o < 22) out += '[' + (']\\!^-['.includes(c) ? '\\' + c : c) + ']';
        else if (o < 23) out += c === 'q' ? '[!z]' : '[!q]';
        else if (o < 24) out += '\\' + c;
        else if (o < 26) out += isAlpha(b) ? String.fromCharCode(b ^ 0x20) : lit;
        else if (o < 27) out += classOf(b);
        else if (o < 28) out += lit + '**';
        else if (o < 29) out += '**' + lit;
        else if (o < 30) out += '[!' + (']\\!^-['.includes(c) ? '\\' + c : c) + ']'; // a miss
        else out += lit;
      }
    });
    return pre + out + post;
  });
const pattern = fc.oneof({ weight: 4, arbitrary: generic }, { weight: 1, arbitrary: starry }, { weight: 2, arbitrary: dirRule }, { weight: 4, arbitrary: nearMiss });
const patternFile = fc.record({
  patterns: fc.array(pattern, { minLength: 1, maxLength: 6 }),
  crlf: fc.boolean(),
  bom: fc.boolean(),
});

type Node = { kind: 'file' } | { kind: 'symlink'; target: string } | { kind: 'dir'; dir: DirSpec };
interface DirSpec {
  entries: Array<[string, Node]>;
  gitignore: { file: { patterns: string[]; crlf: boolean; bom: boolean }; symlink: boolean } | null;
}

const dirSpec = (depth: number, minLength = 0): fc.Arbitrary<DirSpec> =>
  fc.record({
    entries: fc.uniqueArray(
      fc.tuple(
        fc.constantFrom(...NAMES),
        depth > 0
          ? fc.oneof(
              { weight: 3, arbitrary: fc.constant<Node>({ kind: 'file' }) },
              { weight: 1, arbitrary: fc.constantFrom(...NAMES).map<Node>((t) => ({ kind: 'symlink', target: t })) },
              { weight: 3, arbitrary: fc.constant(null).chain(() => dirSpec(depth - 1).map<Node>((dir) => ({ kind: 'dir', dir }))) },
            )
          : fc.oneof({ weight: 3, arbitrary: fc.constant<Node>({ kind: 'file' }) }, { weight: 1, arbitrary: fc.constantFrom(...NAMES).map<Node>((t) => ({ kind: 'symlink', target: t })) }),
      ),
      { selector: (t) => t[0], minLength, maxLength: 4 },
    ),
    gitignore: fc.option(fc.record({ file: patternFile, symlink: fc.nat(6).map((n) => n === 0) }), { freq: 2 }),
  });

function fileBytes(f: { patterns: string[]; crlf: boolean; bom: boolean }): Buffer {
  const text = f.patterns.join(f.crlf ? '\r\n' : '\n') + (f.crlf ? '\r\n' : '\n');
  return Buffer.concat([f.bom ? Buffer.from([0xef, 0xbb, 0xbf]) : Buffer.alloc(0), Buffer.from(encodePath(text))]);
}

function writeTree(root: string, rel: string, d: DirSpec): void {
  if (d.gitignore) {
    const at = rel ? `${rel}/` : '';
    if (d.gitignore.symlink) {
      writeRaw(root, `${at}gi-target`, fileBytes(d.gitignore.file));
      symlinkSync('gi-target', Buffer.from(encodePath(`${root}/${at}.gitignore`)));
    } else writeRaw(root, `${at}.gitignore`, fileBytes(d.gitignore.file));
  }
  for (const [name, node] of d.entries) {
    const p = rel ? `${rel}/${name}` : name;
    if (node.kind === 'file') writeRaw(root, p, 'x');
    else if (node.kind === 'symlink') symlinkSync(Buffer.from(encodePath(node.target)), Buffer.from(encodePath(`${root}/${p}`)));
    else {
      mkdirSync(Buffer.from(encodePath(`${root}/${p}`)), { recursive: true });
      writeTree(root, p, node.dir);
    }
  }
}

/** The [core] section of the config; core.ignoreCase and core.excludesFile are added per run. */
const CONFIG_HEAD = '[core]\n\trepositoryformatversion = 0\n\tfilemode = true\n\tbare = false\n';

const scenario = fc.record({
  tree: fc.oneof({ weight: 3, arbitrary: dirSpec(2, 1) }, { weight: 1, arbitrary: dirSpec(3, 1) }),
  info: fc.option(patternFile, { freq: 2 }),
  global: fc.option(patternFile, { freq: 2 }),
  ignoreCase: fc.boolean(),
});

/** Runs of the property (IGNORE_PROPERTY_RUNS to fuzz longer); the test's timeout grows with it. */
const RUNS = Number(process.env.IGNORE_PROPERTY_RUNS ?? 300);

describe('ignore rules: random trees and patterns against git', () => {
  it('every path of the tree: ours = git check-ignore --no-index = git status --ignored -uall, the same deciding pattern, and the same collapsed ignored directories as git status --ignored', async () => {
    const repo = makeTempRepo();
    const outside = makeTempDir('scalpel-xf-');
    const literal = {};
    await fc.assert(
      fc.asyncProperty(scenario, async (s) => {
        for (const name of readdirSync(repo, { encoding: 'buffer' })) {
          if (name.toString('latin1') !== '.git') rmSync(Buffer.concat([Buffer.from(repo + '/'), name]), { recursive: true, force: true });
        }
        rmSync(join(repo, '.git', 'info'), { recursive: true, force: true });
        rmSync(join(outside, 'ignore'), { force: true });
        writeTree(repo, '', s.tree);
        if (s.info) writeRaw(repo, '.git/info/exclude', fileBytes(s.info));
        if (s.global) writeFileSync(join(outside, 'ignore'), fileBytes(s.global));
        writeFileSync(join(repo, '.git', 'config'), `${CONFIG_HEAD}\tignorecase = ${s.ignoreCase}\n\texcludesFile = ${join(outside, 'ignore')}\n`);

        const config = await readRepoConfig(fs, await discoverRepository(fs, repo));
        const rules = await loadIgnoreRules(fs, { worktree: repo, gitDir: join(repo, '.git'), env: {}, ...ignoreOptionsFromConfig(config) });
        await expectAgreesWithGit(fs, repo, rules, literal);
      }),
      {
        numRuns: RUNS,
        // IGNORE_PROPERTY_SEED replays a run (fast-check prints the seed of a failure); IGNORE_PROPERTY_PATH too
        ...(process.env.IGNORE_PROPERTY_SEED ? { seed: Number(process.env.IGNORE_PROPERTY_SEED) } : {}),
        ...(process.env.IGNORE_PROPERTY_PATH ? { path: process.env.IGNORE_PROPERTY_PATH } : {}),
      },
    );
  }, Math.max(120_000, RUNS * 1_000));
});

