/**
 * Fixed examples: each states the text git prints, and is also run through git here so the
 * expectation cannot drift from the oracle. The indent-heuristic pairs come from git's t4061.
 */
import { describe, expect, it } from 'vitest';
import { diffLines, findRenames, formatStat, formatUnified, hunks, isBinary } from '../../src/diff/index.js';
import { encode } from './gen.js';
import { gitHunkTexts } from './oracle.js';

interface Example {
  name: string;
  a: string;
  b: string;
  /** git's text after the `+++` line (or its `Binary files` line). */
  want: string;
  context?: number;
  indentHeuristic?: boolean;
}

const t4061 = {
  spacesOld: '1\n2\na\n\nb\n3\n4\n',
  spacesNew: '1\n2\na\n\nb\na\n\nb\n3\n4\n',
  functionsOld: '1\n2\n/* function */\nfoo() {\n    foo\n}\n\n3\n4\n',
  functionsNew: '1\n2\n/* function */\nbar() {\n    foo\n}\n\n/* function */\nfoo() {\n    foo\n}\n\n3\n4\n',
};

const EXAMPLES: Example[] = [
  {
    name: 't4061 spaces, indent heuristic',
    a: t4061.spacesOld,
    b: t4061.spacesNew,
    want: '@@ -2,6 +2,9 @@\n 2\n a\n \n+b\n+a\n+\n b\n 3\n 4\n',
  },
  {
    name: 't4061 spaces, no indent heuristic',
    a: t4061.spacesOld,
    b: t4061.spacesNew,
    indentHeuristic: false,
    want: '@@ -3,5 +3,8 @@\n a\n \n b\n+a\n+\n+b\n 3\n 4\n',
  },
  {
    name: 't4061 functions, indent heuristic',
    a: t4061.functionsOld,
    b: t4061.functionsNew,
    want: '@@ -1,5 +1,10 @@\n 1\n 2\n+/* function */\n+bar() {\n+    foo\n+}\n+\n /* function */\n foo() {\n     foo\n',
  },
  {
    name: 't4061 functions, no indent heuristic',
    a: t4061.functionsOld,
    b: t4061.functionsNew,
    indentHeuristic: false,
    want: '@@ -1,6 +1,11 @@\n 1\n 2\n /* function */\n+bar() {\n+    foo\n+}\n+\n+/* function */\n foo() {\n     foo\n }\n',
  },
  { name: 'one-line change', a: 'x\n', b: 'y\n', want: '@@ -1 +1 @@\n-x\n+y\n' },
  {
    name: 'no final newline on either side',
    a: 'a\nb',
    b: 'a\nc',
    want: '@@ -1,2 +1,2 @@\n a\n-b\n\\ No newline at end of file\n+c\n\\ No newline at end of file\n',
  },
  { name: 'final newline added', a: 'a\nb', b: 'a\nb\n', want: '@@ -1,2 +1,2 @@\n a\n-b\n\\ No newline at end of file\n+b\n' },
  {
    name: 'unchanged last line without newline as context',
    a: 'a\nb',
    b: 'A\nb',
    want: '@@ -1,2 +1,2 @@\n-a\n+A\n b\n\\ No newline at end of file\n',
  },
  { name: 'empty old side', a: '', b: 'a\nb\n', want: '@@ -0,0 +1,2 @@\n+a\n+b\n' },
  { name: 'empty new side', a: 'a\n', b: '', want: '@@ -1 +0,0 @@\n-a\n' },
  { name: 'everything removed but one line', a: 'a\nb\nc\n', b: 'b\n', want: '@@ -1,3 +1 @@\n-a\n b\n-c\n' },
  { name: 'CRLF lines', a: 'a\r\nb\r\n', b: 'a\r\nc\r\n', want: '@@ -1,2 +1,2 @@\n a\r\n-b\r\n+c\r\n' },
  {
    name: 'function line: nearest identifier-like line above the hunk, trailing whitespace cut',
    a: 'int f() \t\r\n\n1\n2\n3\n4\n5\n',
    b: 'int f() \t\r\n\n1\n2\n3\n4\nX\n',
    want: '@@ -4,4 +4,4 @@ int f()\n 2\n 3\n 4\n-5\n+X\n',
  },
  {
    name: 'function line: cut at 80 bytes, then trailing whitespace',
    a: 'name' + ' '.repeat(76) + 'tail\n1\n2\n3\n4\n',
    b: 'name' + ' '.repeat(76) + 'tail\n1\n2\n3\nX\n',
    want: '@@ -2,4 +2,4 @@ name\n 1\n 2\n 3\n-4\n+X\n',
  },
  {
    name: 'function line: a character cut by the 80-byte limit is dropped',
    a: 'b'.repeat(79) + '\u20ac\n1\n2\n3\n4\n',
    b: 'b'.repeat(79) + '\u20ac\n1\n2\n3\nX\n',
    want: `@@ -2,4 +2,4 @@ ${'b'.repeat(79)}\n 1\n 2\n 3\n-4\n+X\n`,
  },
  {
    name: 'function line: bytes that are not UTF-8 end it',
    a: 'Fn \uf7e9 latin\n1\n2\n3\n4\n',
    b: 'Fn \uf7e9 latin\n1\n2\n3\nX\n',
    want: '@@ -2,4 +2,4 @@ Fn \n 1\n 2\n 3\n-4\n+X\n',
  },
  {
    name: 'function line: `$`, `_` and letters only (not digits, `#` or space)',
    a: '_x\n#y\n 9\n1\n2\n3\n4\n',
    b: '_x\n#y\n 9\n1\n2\n3\nX\n',
    want: '@@ -4,4 +4,4 @@ _x\n 1\n 2\n 3\n-4\n+X\n',
  },
  {
    name: 'function line is searched in the old file only, above the first context line',
    a: '1\n2\n3\nold()\n4\n',
    b: 'new()\n1\n2\n3\nold()\n4\n',
    want: '@@ -0,0 +1 @@\n+new()\n',
    context: 0,
  },
  {
    name: 'two hunks, the second inherits the nearest function line',
    a: 'f()\n' + '1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n',
    b: 'f()\n' + 'A\n2\n3\n4\n5\n6\n7\n8\n9\nB\n',
    want: '@@ -1,5 +1,5 @@\n f()\n-1\n+A\n 2\n 3\n 4\n@@ -8,4 +8,4 @@ f()\n 7\n 8\n 9\n-10\n+B\n',
  },
  {
    name: 'changes 2*context apart share a hunk',
    a: '1\n2\n3\n4\n5\n6\n7\n8\n',
    b: 'A\n2\n3\n4\n5\n6\n7\nB\n',
    want: '@@ -1,8 +1,8 @@\n-1\n+A\n 2\n 3\n 4\n 5\n 6\n 7\n-8\n+B\n',
  },
  {
    name: '-U0 drops a long common tail first, so a slid line stops short of the end',
    a: 'x\n' + 'a\n'.repeat(1000),
    b: 'x\n' + 'a\n'.repeat(1001),
    context: 0,
    want: '@@ -490,0 +491 @@ a\n+a\n',
  },
  {
    name: 'with context the same line slides to the end',
    a: 'x\n' + 'a\n'.repeat(1000),
    b: 'x\n' + 'a\n'.repeat(1001),
    want: '@@ -999,3 +999,4 @@ a\n a\n a\n a\n+a\n',
  },
  { name: 'binary (NUL byte)', a: 'a\n', b: 'a\u0000\n', want: 'Binary files a/A/00000 and b/B/00000 differ\n' },
];

function ours(e: Example): string {
  const a = encode(e.a);
  const b = encode(e.b);
  if (isBinary(a) || isBinary(b)) return 'Binary files a/A/00000 and b/B/00000 differ\n';
  const out = formatUnified(hunks(a, b, { context: e.context ?? 3, indentHeuristic: e.indentHeuristic }));
  return Buffer.from(out).toString('latin1');
}

function gits(e: Example): string {
  const extra = [`-U${e.context ?? 3}`];
  if (e.indentHeuristic === false) extra.push('--no-indent-heuristic');
  return gitHunkTexts([{ a: encode(e.a), b: encode(e.b) }], extra)[0].toString('latin1');
}

const latin1 = (s: string) => Buffer.from(encode(s)).toString('latin1');

describe('diff: fixed examples', () => {
  for (const e of EXAMPLES) {
    it(e.name, () => {
      expect(gits(e)).toBe(latin1(e.want));
      expect(ours(e)).toBe(latin1(e.want));
    });
  }

  it('the edit script of t4061 spaces', () => {
    expect(diffLines(encode(t4061.spacesOld), encode(t4061.spacesNew))).toEqual([{ oldIndex: 4, oldCount: 0, newIndex: 4, newCount: 3 }]);
    expect(diffLines(encode(t4061.spacesOld), encode(t4061.spacesNew), { indentHeuristic: false })).toEqual([
      { oldIndex: 5, oldCount: 0, newIndex: 5, newCount: 3 },
    ]);
  });

  it('hunk lines are views without the newline, flagged when the file ends without one', () => {
    const [h] = hunks(encode('a\nb'), encode('a\nc'));
    expect(h).toMatchObject({ oldStart: 1, oldLines: 2, newStart: 1, newLines: 2, header: '' });
    expect(h.lines.map((l) => [l.kind, Buffer.from(l.text).toString(), l.noNewline ?? false])).toEqual([
      [' ', 'a', false],
      ['-', 'b', true],
      ['+', 'c', true],
    ]);
  });

  it('equal files have no hunks', () => {
    expect(hunks(encode('a\n'), encode('a\n'))).toEqual([]);
    expect(diffLines(new Uint8Array(0), new Uint8Array(0))).toEqual([]);
  });

  it('binary: a NUL in the first 8000 bytes only', () => {
    const late = new Uint8Array(9000).fill(0x61);
    late[8500] = 0;
    expect(isBinary(late)).toBe(false);
    late[7999] = 0;
    expect(isBinary(late)).toBe(true);
  });
});

describe('diff: arguments', () => {
  it('counts must be whole numbers, 0 or more', () => {
    const a = encode('a\n');
    expect(() => hunks(a, a, { context: -1 })).toThrow(expect.objectContaining({ code: 'BAD_ARGUMENT' }));
    expect(() => hunks(a, a, { interHunkContext: 1.5 })).toThrow(expect.objectContaining({ code: 'BAD_ARGUMENT' }));
    expect(() => formatStat([{ path: 'f', counts: { binary: false, added: 1, deleted: 0 } }], { width: NaN })).toThrow(
      expect.objectContaining({ code: 'BAD_ARGUMENT' }),
    );
    expect(() => findRenames([], [], { minScore: 70000 })).toThrow(expect.objectContaining({ code: 'BAD_ARGUMENT' }));
  });

  it('exact renames by blob id when every file has one, by bytes otherwise', () => {
    const f = (path: string, s: string, id?: string) => ({ path, data: encode(s), id });
    expect(findRenames([f('a', 'x\n', '1')], [f('b', 'y\n', '1')])).toEqual([{ from: 0, to: 0, score: 60000 }]);
    expect(findRenames([f('a', 'x\n', '1')], [f('b', 'x\n')])).toEqual([{ from: 0, to: 0, score: 60000 }]);
  });
});
