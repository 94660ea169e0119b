import { describe, expect, it } from 'vitest';
import { unquoteCStyle } from '../../src/cli/cmd-stack.js';
import { quotePath } from '../../src/index/format.js';
import { encodePath } from '../../src/bytes/text.js';

describe('--pathspec-from-file quoting (core.quotePath style, as git reads it)', () => {
  it('leaves plain lines alone and unquotes C-style ones', () => {
    expect(unquoteCStyle('src/app.ts')).toBe('src/app.ts');
    expect(unquoteCStyle('"a\\tb"')).toBe('a\tb');
    expect(unquoteCStyle('"new\\nline"')).toBe('new\nline');
    expect(unquoteCStyle('"caf\\303\\251.txt"')).toBe('café.txt');
    expect(unquoteCStyle('"q\\"uote\\\\"')).toBe('q"uote\\');
  });

  it('round-trips every name git quotes, including bytes that are not UTF-8', () => {
    const names = ['plain', 'tab\there', 'new\nline', 'caf\u00e9', '\u65e5\u672c', 'quo"te', 'back\\slash', 'r\udce9sum\udce9'];
    for (const n of names) expect(unquoteCStyle(quotePath(encodePath(n)))).toBe(n);
  });

  it('rejects broken quoting as a usage error', () => {
    expect(() => unquoteCStyle('"bad\\q"')).toThrow(/bad quoting/);
    // a quote inside ends the name early (git drops the rest): refused rather than guessed at
    expect(() => unquoteCStyle('"a"b"')).toThrow(/bad quoting/);
  });
});
