import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { applyPatchPaths, shellApplyPatch } from '../../src/hooks/apply-patch.js';
import { errorData } from '../helpers/errors.js';

/** Patches as Codex's apply_patch tool receives them (the format of its tool instructions). */

const patch = (...body: string[]) => ['*** Begin Patch', ...body, '*** End Patch'].join('\n');

describe('applyPatchPaths', () => {
  it('adds a file in a new directory', () => {
    expect(applyPatchPaths(patch('*** Add File: platform/schemas/currency/map.py', '+CURRENCIES = {', '+    "EUR": "€",', '+}'))).toEqual([
      'platform/schemas/currency/map.py',
    ]);
  });

  it('an added file may be empty, and its + lines may look like headers', () => {
    expect(applyPatchPaths(patch('*** Add File: empty.txt', '*** Add File: notes.md', '+*** Delete File: not-a-header', '+'))).toEqual([
      'empty.txt',
      'notes.md',
    ]);
  });

  it('updates a file with @@ context lines and several chunks', () => {
    const p = patch(
      '*** Update File: src/app.ts',
      '@@ export function main() {',
      '   const config = load();',
      '-  run(config);',
      '+  run(config, { currency: "EUR" });',
      '@@ function load() {',
      '-  return {};',
      '+  return { verbose: true };',
      ' }',
    );
    expect(applyPatchPaths(p)).toEqual(['src/app.ts']);
  });

  it('the first chunk may start without @@; a bare @@ and an End of File marker are chunk lines', () => {
    expect(
      applyPatchPaths(patch('*** Update File: a.py', ' import os', '+import sys', '@@', '-x = 1', '+x = 2', '*** End of File')),
    ).toEqual(['a.py']);
  });

  it('deletes a file', () => {
    expect(applyPatchPaths(patch('*** Delete File: src/legacy/old_module.py'))).toEqual(['src/legacy/old_module.py']);
  });

  it('a move names both sides, source first', () => {
    expect(
      applyPatchPaths(
        patch(
          '*** Update File: crates/cli/src/main.rs',
          '*** Move to: crates/cli/src/bin/codex.rs',
          '@@ fn run()',
          '-    let args = Args::parse();',
          '+    let cli = Cli::parse();',
        ),
      ),
    ).toEqual(['crates/cli/src/main.rs', 'crates/cli/src/bin/codex.rs']);
  });

  it('several files in one patch, in order, each once', () => {
    const p = patch(
      '*** Add File: docs/release-notes.md',
      '+# Release notes',
      '*** Update File: src/config.rs',
      '@@ impl Config',
      '-    pub a: bool,',
      '+    pub b: bool,',
      '*** Delete File: src/legacy.rs',
      '*** Update File: src/config.rs',
      '@@',
      '+// again',
      '*** Update File: old/name.txt',
      '*** Move to: renamed/dir/name.txt',
      '@@',
      '-old',
      '+new',
      '*** Add File: renamed/dir/name.txt',
      '+overwritten by the add',
    );
    expect(applyPatchPaths(p)).toEqual(['docs/release-notes.md', 'src/config.rs', 'src/legacy.rs', 'old/name.txt', 'renamed/dir/name.txt']);
  });

  it('CRLF line ends, surrounding whitespace and blank lines between chunks', () => {
    const p = [
      '  *** Begin Patch  ',
      '*** Update File: src/win.cs  ',
      '@@ class A',
      '-int x;',
      '+long x;',
      '',
      '@@ class B',
      '-int y;',
      '+long y;',
      ' *** End Patch',
      '',
    ].join('\r\n');
    expect(applyPatchPaths(`\n\n${p}\n`)).toEqual(['src/win.cs']);
  });

  it('paths with spaces, non-ASCII, absolute and relative-upward paths come back as written', () => {
    const p = patch(
      '*** Add File: My Documents/notes for today.txt',
      '+hi',
      '*** Delete File: /abs/path/ünïcødé 😀.md',
      '*** Update File: ../sibling/file.c',
      '@@',
      '-a',
      '+b',
      '*** Add File: bad\udc80name.bin',
      '+x',
    );
    expect(applyPatchPaths(p)).toEqual([
      'My Documents/notes for today.txt',
      '/abs/path/ünïcødé 😀.md',
      '../sibling/file.c',
      'bad\udc80name.bin',
    ]);
  });

  it('a patch wrapped in a heredoc is unwrapped (as Codex does for gpt-4.1)', () => {
    expect(applyPatchPaths(`<<'EOF'\n${patch('*** Delete File: gone.txt')}\nEOF\n`)).toEqual(['gone.txt']);
    expect(applyPatchPaths(`<<EOF\n${patch('*** Delete File: gone.txt')}\nEOF`)).toEqual(['gone.txt']);
  });

  it('a malformed patch is a typed error naming what is wrong', () => {
    const bad = (text: string) => errorData('BAD_ARGUMENT', () => applyPatchPaths(text));
    expect(bad('')).toMatchObject({ name: 'patch', reason: 'missing-begin' });
    expect(bad('diff --git a/x b/x\n--- a/x\n+++ b/x')).toMatchObject({ name: 'patch', reason: 'missing-begin', line: 1 });
    expect(bad('*** Begin Patch\n*** Add File: x\n+y')).toMatchObject({ reason: 'missing-end' });
    expect(bad('*** Begin Patch')).toMatchObject({ reason: 'missing-end' });
    expect(bad('*** Add File: x\n+y\n*** End Patch')).toMatchObject({ reason: 'missing-begin' });
    expect(bad(patch())).toMatchObject({ reason: 'no-paths' });
    expect(bad(patch('*** Rename File: a'))).toMatchObject({ reason: 'bad-header', line: 2 });
    expect(bad(patch('*** Add File: a', 'no plus'))).toMatchObject({ reason: 'bad-header', line: 3 });
    expect(bad(patch('*** Update File: test.py'))).toMatchObject({ reason: 'empty-update', line: 2 });
    expect(bad(patch('*** Update File: test.py', '*** Move to: b.py'))).toMatchObject({ reason: 'empty-update' });
    expect(bad(patch('*** Update File: a', '@@'))).toMatchObject({ reason: 'empty-chunk' });
    expect(bad(patch('*** Update File: a', '@@', '*** End of File'))).toMatchObject({ reason: 'empty-chunk' });
    expect(bad(patch('*** Update File: a', 'garbage'))).toMatchObject({ reason: 'bad-line' });
    expect(bad(patch('*** Update File: a', '@@', '+x', 'garbage'))).toMatchObject({ reason: 'bad-chunk' });
    expect(bad(patch('*** Delete File: '))).toMatchObject({ reason: 'bad-header' }); // the trimmed line has no "File: " with a space
    expect(bad(patch('*** Update File: a', '*** Move to: ', '@@', '+x'))).toMatchObject({ reason: 'empty-path' });
    expect(bad(patch('*** Delete File: a\0b'))).toMatchObject({ reason: 'nul' });
    expect(() => applyPatchPaths(patch('*** Rename File: a'))).toThrow(/not a hunk header/);
  });

  it('never throws anything but its typed error, whatever the text', () => {
    const line = fc.oneof(
      fc.constantFrom(
        '*** Begin Patch',
        '*** End Patch',
        '*** Add File: a',
        '*** Update File: b',
        '*** Move to: c',
        '*** Delete File: d',
        '@@',
        '@@ ctx',
        '+x',
        '-y',
        ' z',
        '',
        '*** End of File',
      ),
      fc.string(),
    );
    fc.assert(
      fc.property(fc.array(line, { maxLength: 12 }), fc.constantFrom('\n', '\r\n'), (ls, eol) => {
        try {
          const paths = applyPatchPaths(ls.join(eol));
          expect(paths.length).toBeGreaterThan(0);
          expect(new Set(paths).size).toBe(paths.length);
        } catch (e) {
          errorData('BAD_ARGUMENT', () => {
            throw e;
          });
        }
      }),
      { numRuns: 2000 },
    );
  });
});

describe('shellApplyPatch', () => {
  const body = patch('*** Add File: hello.txt', '+Hello, World!');
  it('finds the patch of a command that is only an apply_patch heredoc', () => {
    expect(shellApplyPatch(`apply_patch <<'EOF'\n${body}\nEOF\n`)).toBe(body);
    expect(shellApplyPatch(`applypatch <<"PATCH"\n${body}\nPATCH`)).toBe(body);
    const crlf = body.split('\n').join('\r\n');
    expect(shellApplyPatch(`  apply_patch <<EOF\r\n${crlf}\r\nEOF\r\n`)).toBe(crlf);
    expect(shellApplyPatch(`apply_patch <<-'EOF'\n\t${body.split('\n').join('\n\t')}\n\tEOF\n`)).toBe(body);
    expect(applyPatchPaths(shellApplyPatch(`apply_patch <<'EOF'\n${body}\nEOF\n`)!)).toEqual(['hello.txt']);
  });

  it('any other command is a shell command', () => {
    expect(shellApplyPatch('npm test')).toBeNull();
    expect(shellApplyPatch(`apply_patch <<'EOF'\n${body}\nEOF\nrm -rf build`)).toBeNull();
    expect(shellApplyPatch(`cd sub && apply_patch <<'EOF'\n${body}\nEOF`)).toBeNull();
    expect(shellApplyPatch(`apply_patch <<'EOF'\n${body}\n`)).toBeNull(); // never closed
    expect(shellApplyPatch(`echo apply_patch <<'EOF'\n${body}\nEOF`)).toBeNull();
    expect(shellApplyPatch(`apply_patch < patch.txt`)).toBeNull();
  });
});
