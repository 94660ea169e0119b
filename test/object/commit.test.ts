import { describe, expect, it } from 'vitest';
import { equalBytes, utf8Decode, utf8Encode } from '../../src/bytes/index.js';
import type { ObjectFormat } from '../../src/hash/index.js';
import { decodeCommit, encodeCommit, formatIdentity, formatTimezone, parseIdentity } from '../../src/object/commit.js';
import { objectId } from '../../src/object/loose.js';
import { errorData } from '../helpers/errors.js';
import { GIT_AUTHOR, GIT_COMMITTER, git, makeTempRepo } from '../helpers/git.js';

const FORMATS: ObjectFormat[] = ['sha1', 'sha256'];

const SIGNATURE = [
  '-----BEGIN PGP SIGNATURE-----',
  '',
  'iQEzBAABCAAdFiEEexampleexampleexampleexampleAAoJEHexample',
  'AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA==',
  '=abcd',
  '-----END PGP SIGNATURE-----',
].join('\n');

/** A header block entry as git writes it: continuation lines start with a space. */
function headerText(key: string, value: string): string {
  return `${key} ${value.split('\n').join('\n ')}\n`;
}

function catCommit(repo: string, oid: string): Uint8Array {
  return new Uint8Array(git(repo, ['cat-file', 'commit', oid], { encoding: 'buffer' }));
}

describe.each(FORMATS)('commits git writes (%s)', (format) => {
  it('round-trip byte-identically', () => {
    const repo = makeTempRepo({ objectFormat: format });
    const tree = git(repo, ['mktree'], { input: '' }).trim();
    const root = git(repo, ['commit-tree', tree, '-m', 'root']).trim();
    const child = git(repo, ['commit-tree', tree, '-p', root, '-m', 'child\n\nwith a body\n']).trim();
    const merge = git(repo, ['commit-tree', tree, '-p', root, '-p', child, '-m', 'merge']).trim();
    const noNewline = git(repo, ['commit-tree', tree, '-F', '-'], { input: 'no trailing newline' }).trim();
    const empty = git(repo, ['commit-tree', tree, '-F', '-'], { input: '' }).trim();
    const latin1 = git(repo, ['-c', 'i18n.commitEncoding=ISO-8859-1', 'commit-tree', tree, '-F', '-'], {
      input: Buffer.from('caf\xe9\n', 'latin1'),
    }).trim();

    for (const oid of [root, child, merge, noNewline, empty, latin1]) {
      const content = catCommit(repo, oid);
      const c = decodeCommit(content, format);
      expect(c.tree).toBe(tree);
      expect(c.parents).toEqual(
        git(repo, ['rev-parse', `${oid}^@`])
          .trim()
          .split('\n')
          .filter(Boolean),
      );
      expect(equalBytes(encodeCommit(c), content)).toBe(true);
      expect(objectId('commit', encodeCommit(c), format)).toBe(oid);
      expect(parseIdentity(c.author)).toEqual({ name: GIT_AUTHOR.name, email: GIT_AUTHOR.email, timestamp: 1700000000, timezone: '+0000' });
      expect(parseIdentity(c.committer).name).toBe(GIT_COMMITTER.name);
    }
    expect(decodeCommit(catCommit(repo, merge)).parents).toEqual([root, child]);
    expect(utf8Decode(decodeCommit(catCommit(repo, noNewline)).message)).toBe('no trailing newline');
    expect(decodeCommit(catCommit(repo, empty)).message.length).toBe(0);
    const l1 = decodeCommit(catCommit(repo, latin1));
    expect(l1.extraHeaders.map(([k, v]) => [k, utf8Decode(v)])).toEqual([['encoding', 'ISO-8859-1']]);
    expect([...l1.message]).toEqual([0x63, 0x61, 0x66, 0xe9, 0x0a]);
  });

  it('keeps multi-line headers (gpgsig, mergetag) that git accepts', () => {
    const repo = makeTempRepo({ objectFormat: format });
    const tree = git(repo, ['mktree'], { input: '' }).trim();
    const parent = git(repo, ['commit-tree', tree, '-m', 'parent']).trim();
    const tagText = `object ${parent}\ntype commit\ntag v1\ntagger T <t@example.com> 1700000000 +0000\n\nthe tag\n`;
    const ident = `${GIT_AUTHOR.name} <${GIT_AUTHOR.email}> 1700000000 +0000`;
    const text =
      `tree ${tree}\nparent ${parent}\nauthor ${ident}\ncommitter ${ident}\n` +
      headerText('mergetag', tagText.replace(/\n$/, '')) +
      headerText('gpgsig', SIGNATURE) +
      '\nsigned commit\n';
    const oid = git(repo, ['hash-object', '-t', 'commit', '-w', '--stdin'], { input: text }).trim();
    git(repo, ['update-ref', 'refs/heads/main', oid]);
    git(repo, ['fsck', '--strict', '--no-dangling']);
    const content = catCommit(repo, oid);
    expect(utf8Decode(content)).toBe(text);
    const c = decodeCommit(content);
    expect(c.extraHeaders.map(([k, v]) => [k, utf8Decode(v)])).toEqual([
      ['mergetag', tagText.replace(/\n$/, '')],
      ['gpgsig', SIGNATURE],
    ]);
    expect(equalBytes(encodeCommit(c), content)).toBe(true);
    // git builds on top of it as on any commit
    const next = git(repo, ['commit-tree', tree, '-p', oid, '-m', 'next']).trim();
    expect(decodeCommit(catCommit(repo, next)).parents).toEqual([oid]);
  });

  it('encodes from strings what git commit-tree writes', () => {
    const repo = makeTempRepo({ objectFormat: format });
    const tree = git(repo, ['mktree'], { input: '' }).trim();
    const parent = git(repo, ['commit-tree', tree, '-m', 'p']).trim();
    const oid = git(repo, ['commit-tree', tree, '-p', parent, '-m', 'hello'], {
      env: { GIT_AUTHOR_DATE: '1234567890 +0530', GIT_COMMITTER_DATE: '1234567891 -0800' },
    }).trim();
    const bytes = encodeCommit({
      tree,
      parents: [parent],
      author: formatIdentity({ name: GIT_AUTHOR.name, email: GIT_AUTHOR.email, timestamp: 1234567890, timezone: 330 }),
      committer: formatIdentity({ name: GIT_COMMITTER.name, email: GIT_COMMITTER.email, timestamp: 1234567891, timezone: '-0800' }),
      message: 'hello\n',
    });
    expect(objectId('commit', bytes, format)).toBe(oid);
  });
});

describe('decodeCommit', () => {
  const tree = '4b825dc642cb6eb9a060e54bf8d69288fbee4904';
  const ident = 'A <a@example.com> 1700000000 +0000';

  it('accepts headers that end the object without a blank line, and round-trips them', () => {
    const text = utf8Encode(`tree ${tree}\nauthor ${ident}\ncommitter ${ident}\n`);
    const c = decodeCommit(text);
    expect(c.headerOnly).toBe(true);
    expect(c.message.length).toBe(0);
    expect(equalBytes(encodeCommit(c), text)).toBe(true);
    expect(() => encodeCommit({ ...c, message: 'x' })).toThrow(expect.objectContaining({ code: 'BAD_ARGUMENT' }));
  });

  it.each([
    ['', 'missing-tree'],
    ['\nmessage', 'missing-tree'],
    [`parent ${tree}\ntree ${tree}\n\n`, 'missing-tree'],
    [`tree ${tree.toUpperCase()}\nauthor ${ident}\ncommitter ${ident}\n\n`, 'bad-oid'],
    [`tree ${tree.slice(1)}\nauthor ${ident}\ncommitter ${ident}\n\n`, 'bad-oid'],
    [`tree ${tree}\nparent ${'a'.repeat(64)}\nauthor ${ident}\ncommitter ${ident}\n\n`, 'bad-oid'],
    [`tree ${tree}\ncommitter ${ident}\n\n`, 'missing-author'],
    [`tree ${tree}\nauthor ${ident}\n\n`, 'missing-committer'],
    [`tree ${tree}\nauthor ${ident}\nauthor ${ident}\ncommitter ${ident}\n\n`, 'missing-committer'],
    [`tree ${tree}\nauthor ${ident}\n more\ncommitter ${ident}\n\n`, 'multi-line-header'],
    [`tree ${tree}\nauthor ${ident}\ncommitter ${ident}`, 'unterminated-header'],
    [`tree ${tree}\nauthor A\0 <a@b> 1 +0000\ncommitter ${ident}\n\n`, 'nul-in-header'],
    [` tree ${tree}\n\n`, 'bad-header'],
    [`tree ${tree}\nauthor ${ident}\ncommitter ${ident}\nnospace\n\n`, 'bad-header'],
  ])('%j → %s', (text, reason) => {
    const data = errorData('BAD_OBJECT', () => decodeCommit(utf8Encode(text)));
    expect(data.reason).toBe(reason);
    expect(typeof data.offset).toBe('number');
  });

  it('checks the id length against the given format', () => {
    const text = utf8Encode(`tree ${tree}\nauthor ${ident}\ncommitter ${ident}\n\n`);
    expect(decodeCommit(text, 'sha1').tree).toBe(tree);
    expect(errorData('BAD_OBJECT', () => decodeCommit(text, 'sha256')).reason).toBe('bad-oid');
  });

  it('keeps NUL bytes and anything else in the message', () => {
    const text = utf8Encode(`tree ${tree}\nauthor ${ident}\ncommitter ${ident}\n\n\0\n\nx`);
    expect(equalBytes(encodeCommit(decodeCommit(text)), text)).toBe(true);
  });
});

describe('encodeCommit arguments', () => {
  const tree = '4b825dc642cb6eb9a060e54bf8d69288fbee4904';
  const ident = 'A <a@example.com> 1700000000 +0000';
  it.each([
    [{ tree: 'nope', author: ident, committer: ident, message: '' }, 'bad-oid'],
    [{ tree, parents: ['a'.repeat(64)], author: ident, committer: ident, message: '' }, 'bad-oid'],
    [{ tree, author: `${ident}\nx`, committer: ident, message: '' }, 'newline'],
    [{ tree, author: ident, committer: 'a\0b', message: '' }, 'nul'],
    [{ tree, author: ident, committer: ident, extraHeaders: [['has space', 'v']], message: '' }, 'bad-key'],
    [{ tree, author: ident, committer: ident, extraHeaders: [['', 'v']], message: '' }, 'bad-key'],
    [{ tree, author: ident, committer: ident, extraHeaders: [['k', 'a\0']], message: '' }, 'nul'],
  ] as const)('%j → %s', (commit, reason) => {
    expect(errorData('BAD_ARGUMENT', () => encodeCommit(commit)).reason).toBe(reason);
  });
});

describe('identities', () => {
  it('formats and parses', () => {
    expect(formatIdentity({ name: 'A U Thor', email: 'a@example.com', timestamp: 1700000000, timezone: -90 })).toBe(
      'A U Thor <a@example.com> 1700000000 -0130',
    );
    expect(formatIdentity({ name: '', email: '', timestamp: 0 })).toBe(' <> 0 +0000');
    expect(formatTimezone(0)).toBe('+0000');
    expect(formatTimezone(-0)).toBe('+0000');
    expect(formatTimezone(840)).toBe('+1400');
    expect(parseIdentity('Ünï Cödé <u@example.com> 12 -0700')).toEqual({
      name: 'Ünï Cödé',
      email: 'u@example.com',
      timestamp: 12,
      timezone: '-0700',
    });
    const latin1 = parseIdentity(Uint8Array.of(0x41, 0xe9, 0x20, 0x3c, 0x3e, 0x20, 0x31, 0x20, 0x2b, 0x30, 0x30, 0x30, 0x30));
    expect(latin1.name).toBe('A\udce9');
  });

  it('rejects what git would not write', () => {
    for (const bad of [
      { name: 'a<b', email: 'e' },
      { name: 'a', email: 'e>' },
      { name: 'a\n', email: 'e' },
    ]) {
      expect(() => formatIdentity({ ...bad, timestamp: 1 })).toThrow(expect.objectContaining({ code: 'BAD_ARGUMENT' }));
    }
    expect(() => formatIdentity({ name: 'a', email: 'e', timestamp: -1 })).toThrow(expect.objectContaining({ code: 'BAD_ARGUMENT' }));
    expect(() => formatTimezone('0100')).toThrow(expect.objectContaining({ code: 'BAD_ARGUMENT' }));
    expect(() => formatTimezone(6000)).toThrow(expect.objectContaining({ code: 'BAD_ARGUMENT' }));
    for (const bad of ['A <a> x +0000', 'A <a> 1 0000', 'A a> 1 +0000', 'A <a> 1 +0000 ', 'A <a> 99999999999999999999 +0000']) {
      expect(errorData('BAD_OBJECT', () => parseIdentity(bad)).reason).toBe('bad-ident');
    }
  });
});
