/**
 * fast-check arbitraries for gitignore-syntax patterns and the names they are meant to hit
 * (test/ignore/property.test.ts; test/attributes/property.test.ts reuses them: gitattributes
 * patterns are .gitignore's).
 */
import fc from 'fast-check';
import { encodePath } from '../../src/bytes/text.js';

export const raw = (b: number) => String.fromCharCode(0xdc00 + b);

/** Names in the trees; pattern literals are drawn from the same pieces so that patterns hit. */
export const NAMES = [
  'a',
  'b',
  'A',
  'ab',
  'aB',
  'x.log',
  'X.LOG',
  'build',
  'Build',
  'node_modules',
  '.env',
  'foo bar',
  'keep',
  'd',
  'sub',
  '\u00e9',
  'x\u00e9y',
  `caf${raw(0xe9)}`,
  `${raw(0xff)}`,
  'tr ',
  '#h',
  '!b',
  '[ab]',
  'a*',
  'x?',
  'back\\slash',
  'cr\r',
  'z1',
  '-',
  ']',
  // ASCII-only folding: É (C3 89) and é (C3 A9) are different names under core.ignoreCase too
  '\u00c9',
  'x\u00c9y',
  // git's ctype: \v and \f are not [:space:] (sane_ctype), DEL is [:cntrl:]
  'v\u000b',
  'f\u000c',
  'del\u007f',
  'tab\t',
  // `.Git` is git's own directory under core.ignoreCase only
  '.Git',
  ' ',
  'a\\ ',
  '*',
];

export const LITERALS = [
  'a',
  'b',
  'A',
  'B',
  'x',
  'log',
  '.log',
  '.LOG',
  'build',
  'node_modules',
  '.env',
  'foo bar',
  'keep',
  'd',
  'sub',
  'z',
  '1',
  '\u00e9',
  `${raw(0xe9)}`,
  `${raw(0xff)}`,
  ' ',
  '-',
  'caf',
  'cr\r',
  '\u00c9',
  `${raw(0xc3)}`,
  'Build',
  'tr',
  '.Git',
  'v\u000b',
  '\u000c',
  '\t',
  'del\u007f',
];
export const WILD = [
  '*',
  '?',
  '??',
  '**',
  '***',
  '[ab]',
  '[!a]',
  '[a-c]',
  '[A-Z]',
  '[Z-a]',
  '[c-a]',
  '[[:upper:]]',
  '[[:alpha:]]',
  '[[:digit:]]',
  '[[:space:]]',
  '[]a]',
  '[\u00e9]',
  `[${raw(0xe9)}-${raw(0xff)}]`,
  '[/]',
  '[!/]',
  '[a/]',
  '[\\a-\\c]',
  '[[:lower:]]',
  '[[:punct:]]',
  '[--0]',
  '[!--0]',
  '*[ab]*',
  '//',
  '[\\]]',
  '[a-]',
  '[!]]',
  '[A]',
  '[!A]',
  '\\*',
  '\\?',
  '\\[',
  '\\a',
  '\\A',
  '\\ ',
  '\\#',
  '\\!',
  '\\\\',
  '\\/',
  '[',
  '[[:nope:]]',
  '\\',
  // classes: every POSIX name, `^`, `]` and `-` as members, `[:` without `:]`, ranges over `/`, non-ASCII upper case
  '[[:cntrl:]]',
  '[[:blank:]]',
  '[[:graph:]]',
  '[[:print:]]',
  '[[:xdigit:]]',
  '[[:alnum:]]',
  '[^a]',
  '[]-a]',
  '[!]-a]',
  '[[]',
  '[[:]',
  '[[:a]',
  '[[::]]',
  '[a-[:alpha:]]',
  '[.-0]',
  '[!.-0]',
  '[\\/]',
  '[!\\/]',
  '[ ]',
  '[\u00c9]',
  '[!\u00c9]',
  '[\u00c9-\u00e9]',
  `[${raw(0x80)}-${raw(0xbf)}]`,
  '[B]',
  '[!B]',
  '[\\B]',
  '[a-B]',
  '[A-b]',
  // stars next to escapes
  '\\**',
  '**\\*',
  '*\\',
  '\\*\\*',
  '*\\/',
  '\\\\**',
];

export const segment = fc
  .array(fc.oneof({ weight: 3, arbitrary: fc.constantFrom(...LITERALS) }, { weight: 2, arbitrary: fc.constantFrom(...WILD) }), {
    minLength: 1,
    maxLength: 3,
  })
  .map((a) => a.join(''));
/** What joins two segments: mostly one slash, sometimes doubled, escaped or with a globstar. */
export const joiner = fc.constantFrom('/', '/', '/', '/', '//', '\\/', '/**/', '**/', '/**', '\\//', '/\\/');
export const generic = fc
  .tuple(
    fc.constantFrom(
      '',
      '',
      '',
      '!',
      '!',
      '/',
      '!/',
      '\\#',
      '\\!',
      '#',
      '//',
      '!//',
      '**/',
      '!**/',
      '/**/',
      '*/',
      ' ',
      '\\ ',
      '!\\!',
      '\\\\',
      '!#',
    ),
    fc.array(fc.tuple(segment, joiner), { minLength: 1, maxLength: 3 }),
    fc.constantFrom(
      '',
      '',
      '',
      '/',
      ' ',
      '  ',
      '\\ ',
      '/ ',
      '\t',
      // trailing spaces after backslashes (an escaped space stays, an escaped backslash does not protect the space after it)
      '\\\\ ',
      '\\ \\ ',
      ' \\ ',
      '\\  ',
      '/  ',
      '\\ /',
      '\\\\',
      // odd slashes at the end, a pattern ending in `/` after `**`
      '\\/',
      '//',
      '/**',
      '/**/',
      '**/',
      '/**//',
      '\\',
      // a CR that stays (escaped, or before another CR in a CRLF file), a NUL that ends the line
      '\r',
      '\\\r',
      '\u0000x',
      '\u0000',
    ),
  )
  .map(([pre, segs, post]) => pre + segs.map(([seg, j], i) => (i === 0 ? '' : j) + seg).join('') + post);
/** Where git and the package read runs of stars differently: after the literal prefix (`a**`), around an escaped slash. */
export const starry = fc
  .tuple(
    fc.constantFrom('', '!', '/', 'a/', 'sub/', '!a/', '**/', 'a/**/', '\\*'),
    fc.constantFrom('a', 'b', 'ab', 'd', '', 'a?', '\\a', 'a\\', '[a]'),
    fc.constantFrom('**', '***', '**/**', '*', '\\**', '**\\*'),
    fc.constantFrom('/', '\\/', '', '/**/', '\\/**/', '//', '/**\\/'),
    fc.constantFrom('b', 'a', 'ab', '', '*', 'b/', 'x.log', '**', '**/', '/', 'b\\ ', '*/'),
  )
  .map(([pre, lit, stars, sep, rest]) => pre + lit + stars + sep + rest);
/** Directories excluded and re-included: directory-only negations under excluded parents, `*` next to `!*` + `/`. */
export const DIR_FORMS = [
  '%A/',
  '%A',
  '/%A/',
  '%A/*',
  '%A/**',
  '%A/**/',
  '%A/*/',
  '%A/%B/',
  '*',
  '/*',
  '**',
  '*/',
  '**/%B/**',
  '!%A/%B/',
  '!%A/%B',
  '!%B/',
  '!%B',
  '!**/%B/',
  '!*/',
  '!/%A/',
  '!%A/*/',
  '!%A/**/%B/',
  '!%A/**/',
  '!%A/**',
  '!*',
  '!/%A/%B/',
];
export const dirName = fc.constantFrom(
  'a',
  'b',
  'A',
  'ab',
  'build',
  'Build',
  'd',
  'sub',
  'keep',
  '\u00e9',
  '\u00c9',
  '*',
  '?',
  'x.log',
  '[ab]',
);
export const dirRule = fc.tuple(fc.constantFrom(...DIR_FORMS), dirName, dirName).map(([f, a, b]) => f.replace('%A', a).replace('%B', b));
/**
 * Near misses: a path of the tree's names, byte by byte kept (escaped where git would read it
 * as a wildcard), or written as a wildcard, a class, an escape or the other case, so that most
 * patterns match, or just fail to match, real entries (a byte of a multi-byte name, a name
 * with a trailing space, `**` glued to a name, an escaped upper-case letter under core.ignoreCase).
 */
export const byteChar = (b: number) => (b < 0x80 ? String.fromCharCode(b) : raw(b));
export const isAlpha = (b: number) => (b >= 0x41 && b <= 0x5a) || (b >= 0x61 && b <= 0x7a);
export const classOf = (b: number) =>
  b >= 0x80
    ? `[${raw(0x80)}-${raw(0xff)}]`
    : isAlpha(b)
      ? '[[:alpha:]]'
      : b >= 0x30 && b <= 0x39
        ? '[[:digit:]]'
        : b < 0x20 || b === 0x7f
          ? '[[:cntrl:]]'
          : b === 0x20
            ? '[[:blank:]]'
            : '[[:punct:]]';
export const nearMiss = fc
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
        else if (o < 30)
          out += '[!' + (']\\!^-['.includes(c) ? '\\' + c : c) + ']'; // a miss
        else out += lit;
      }
    });
    return pre + out + post;
  });
export const pattern = fc.oneof(
  { weight: 4, arbitrary: generic },
  { weight: 1, arbitrary: starry },
  { weight: 2, arbitrary: dirRule },
  { weight: 4, arbitrary: nearMiss },
);

// ---- random trees --------------------------------------------------------------------------

/** An entry of a random directory `D`: a file, a symlink, or a directory. */
export type SpecNode<D> = { kind: 'file' } | { kind: 'symlink'; target: string } | { kind: 'dir'; dir: D };

/** A random directory: its entries, and maybe its own rules file (a .gitignore, a .gitattributes) of spec `F`, maybe behind a symlink. */
export interface SpecDir<F> {
  entries: Array<[string, SpecNode<SpecDir<F>>]>;
  rules: { file: F; symlink: boolean } | null;
}

/**
 * A random directory at most `depth` levels deep: `minLength` to `opts.maxLength` entries named
 * from `opts.names` (a file `opts.fileWeight` to a symlink's 1 and, above the last level, a
 * directory's 3; a symlink's target one of the names too), its rules file `opts.file` two times
 * in three, behind a symlink when a draw of 0..`opts.symlinkOdds` is 0.
 */
export function specDir<F>(
  depth: number,
  opts: { names: readonly string[]; fileWeight: number; maxLength: number; file: fc.Arbitrary<F>; symlinkOdds: number },
  minLength = 0,
): fc.Arbitrary<SpecDir<F>> {
  type Node = SpecNode<SpecDir<F>>;
  const file = { weight: opts.fileWeight, arbitrary: fc.constant<Node>({ kind: 'file' }) };
  const symlink = { weight: 1, arbitrary: fc.constantFrom(...opts.names).map<Node>((t) => ({ kind: 'symlink', target: t })) };
  return fc.record({
    entries: fc.uniqueArray(
      fc.tuple(
        fc.constantFrom(...opts.names),
        depth > 0
          ? fc.oneof(file, symlink, {
              weight: 3,
              arbitrary: fc.constant(null).chain(() => specDir(depth - 1, opts).map<Node>((dir) => ({ kind: 'dir', dir }))),
            })
          : fc.oneof(file, symlink),
      ),
      { selector: (t) => t[0], minLength, maxLength: opts.maxLength },
    ),
    rules: fc.option(fc.record({ file: opts.file, symlink: fc.nat(opts.symlinkOdds).map((n) => n === 0) }), { freq: 2 }),
  });
}
