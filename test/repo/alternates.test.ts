import { describe, expect, it } from 'vitest';
import { findAlternates, parseAlternates } from '../../src/repo/alternates.js';
import { mkdirp } from '../../src/fs/atomic.js';
import { utf8Encode } from '../../src/bytes/text.js';
import { newMemoryFs } from '../helpers/memfs.js';

describe('objects/info/alternates', () => {
  it('lines as git reads them: comments and blank lines skipped, CRLF, C-quoted paths unquoted, broken quoting skipped', () => {
    const text = [
      '# a comment',
      '',
      '/abs/objects',
      '../rel/objects\r',
      '"/quoted\\tname/objects"',
      '"/caf\\303\\251"',
      '"/broken\\q"',
      '"/trailing" x',
      '""',
    ].join('\n');
    expect(parseAlternates(text)).toEqual(['/abs/objects', '../rel/objects', '/quoted\tname/objects', '/café']);
  });

  it('followed breadth first, relative to the directory holding the file, each once, only directories that exist', async () => {
    const fs = newMemoryFs();
    for (const d of ['/r/objects/info', '/a/objects/info', '/b/objects']) await mkdirp(fs, d);
    await fs.writeFile('/r/objects/info/alternates', utf8Encode('/a/objects\n/missing/objects\n'));
    await fs.writeFile('/a/objects/info/alternates', utf8Encode('../../b/objects\n/r/objects\n'));
    expect(await findAlternates(fs, ['/r/objects'])).toEqual(['/a/objects', '/b/objects']);
    expect(await findAlternates(fs, ['/r/objects', '/a/objects'])).toEqual(['/b/objects']);
  });
});
