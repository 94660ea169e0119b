import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { unquoteC } from '../../src/bytes/c-quote.js';
import { quotePath } from '../../src/index/format.js';
import { latin1Text } from '../../src/bytes/text.js';

const bytes = (s: string) => Uint8Array.from(s, (c) => c.charCodeAt(0));
const unq = (s: string, from = 0) => {
  const r = unquoteC(bytes(s), from);
  return r && { text: latin1Text(r.bytes), end: r.end };
};

describe('unquoteC (git unquote_c_style)', () => {
  it('reads every escape git writes', () => {
    expect(unq('"a\\tb"')).toEqual({ text: 'a\tb', end: 6 });
    expect(unq('"\\a\\b\\t\\n\\v\\f\\r\\"\\\\"')?.text).toBe('\x07\b\t\n\v\f\r"\\');
    expect(unq('"caf\\303\\251"')?.text).toBe('caf\xc3\xa9');
    expect(unq('"\\000\\377"')?.text).toBe('\x00\xff');
    expect(unq('""')).toEqual({ text: '', end: 2 });
  });

  it("stops at the closing quote and says where: what follows is the caller's", () => {
    expect(unq('"a b" "c"')).toEqual({ text: 'a b', end: 5 });
    expect(unq('x "a\\"b"\tz', 2)).toEqual({ text: 'a"b', end: 8 });
  });

  it('refuses what git refuses: no opening or closing quote, unknown escapes, octal over \\377', () => {
    for (const s of ['abc', '"abc', '"a\\', '"\\q"', '"\\400"', '"\\18"', '"\\7"', '"\\12"']) expect(unq(s), s).toBeNull();
  });

  it('undoes core.quotePath quoting of any bytes', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 40 }), (name) => {
        const quoted = quotePath(name);
        if (!quoted.startsWith('"')) return;
        const r = unquoteC(bytes(quoted));
        expect(r).not.toBeNull();
        expect(r!.end).toBe(quoted.length);
        expect(r!.bytes).toEqual(name);
      }),
      { numRuns: 500 },
    );
  });
});
