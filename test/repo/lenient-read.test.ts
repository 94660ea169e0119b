/**
 * Reading `.git/index` as git reads it: readIndexFile's `lenient` option (both files of a split
 * index), Repository.readIndex / withIndex reading leniently by default, `dropped` and its
 * one-line warning, and writing the index back after such a read.
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';
import { nodeFs } from '../../src/fs/node.js';
import { nodeHash } from '../../src/hash/node-crypto.js';
import { Repository } from '../../src/repo/repository.js';
import { describeDropped, readIndexFile, type DroppedIndexExtension } from '../../src/repo/index-file.js';
import { decodeIndex } from '../../src/index/decode.js';
import { git, makeTempRepo } from '../helpers/git.js';
import { extensionOffset, extensionSpans, parseTree, serializeTree, withExtraExtension, withPayload } from '../helpers/index-damage.js';

function write(dir: string, rel: string, text: string): void {
  mkdirSync(dirname(join(dir, rel)), { recursive: true });
  writeFileSync(join(dir, rel), text);
}

const crlf = (p: Uint8Array) => serializeTree(parseTree(p, 'sha1'), '\r\n');
const tracked = ['a.txt', 'dir/b.txt', 'dir/sub/c.txt', 'other/d.txt'];

function treeRepo(): { dir: string; gitDir: string; indexPath: string; original: Uint8Array; stage: string } {
  const dir = makeTempRepo();
  for (const f of tracked) write(dir, f, `${f}\n`);
  git(dir, ['add', '.']);
  git(dir, ['commit', '-qm', 'base']);
  const gitDir = join(dir, '.git');
  const indexPath = join(gitDir, 'index');
  return { dir, gitDir, indexPath, original: new Uint8Array(readFileSync(indexPath)), stage: git(dir, ['ls-files', '-s']) };
}

describe('readIndexFile and Repository: lenient reads', () => {
  let r: ReturnType<typeof treeRepo>;
  let damaged: Uint8Array;
  beforeEach(() => {
    r = treeRepo();
    damaged = withPayload(r.original, 'sha1', 'TREE', crlf);
    writeFileSync(r.indexPath, damaged);
  });

  it('readIndexFile is strict unless asked: the typed error names the file', async () => {
    await expect(readIndexFile(nodeFs(), r.gitDir, 'sha1')).rejects.toMatchObject({
      code: 'BAD_EXTENSION',
      data: { signature: 'TREE', path: r.indexPath },
    });
    await expect(readIndexFile(nodeFs(), r.gitDir, 'sha1', nodeHash, { lenient: false })).rejects.toMatchObject({ code: 'BAD_EXTENSION' });
  });

  it('readIndexFile lenient: the extension is left out and named, with the file that held it', async () => {
    const read = (await readIndexFile(nodeFs(), r.gitDir, 'sha1', nodeHash, { lenient: true }))!;
    const offset = extensionOffset(damaged, 'sha1', 'TREE');
    expect(read.dropped).toEqual([
      { path: r.indexPath, signature: 'TREE', offset, code: 'BAD_EXTENSION', reason: expect.stringContaining('TREE extension') },
    ]);
    expect(read.file.dropped).toEqual([{ signature: 'TREE', offset, code: 'BAD_EXTENSION', reason: read.dropped[0].reason }]);
    expect(read.index.extensions).toEqual([]);
    expect(read.index.entries.map((e) => e.path)).toEqual(tracked);
  });

  it('a clean index: dropped is empty, strict and lenient alike', async () => {
    writeFileSync(r.indexPath, r.original);
    expect((await readIndexFile(nodeFs(), r.gitDir, 'sha1'))!.dropped).toEqual([]);
    const read = (await readIndexFile(nodeFs(), r.gitDir, 'sha1', nodeHash, { lenient: true }))!;
    expect(read.dropped).toEqual([]);
    expect(read.file.dropped).toBeUndefined();
    expect(read.index.extensions.map((x) => x.signature)).toEqual(['TREE']);
  });

  it('Repository.readIndex and withIndex read leniently by default; lenient: false is strict', async () => {
    const repo = await Repository.open({ fs: nodeFs(), dir: r.dir, hash: nodeHash });
    expect((await repo.readIndex())!.dropped.map((d) => d.signature)).toEqual(['TREE']);
    expect((await repo.readIndex({ verify: true }))!.dropped).toHaveLength(1);
    await expect(repo.readIndex({ lenient: false })).rejects.toMatchObject({ code: 'BAD_EXTENSION', data: { path: r.indexPath } });
    expect(await repo.withIndex({}, async (read) => read!.dropped.map((d) => d.path))).toEqual([r.indexPath]);
    expect(await repo.withIndex({ verify: false }, async (read) => read!.index.entries.length)).toBe(tracked.length);
    await expect(repo.withIndex({ lenient: false }, async () => 0)).rejects.toMatchObject({ code: 'BAD_EXTENSION' });
    // the nested read (buffer lent out) is lenient too
    await repo.withIndex({}, async () => {
      expect(await repo.withIndex({}, async (inner) => inner!.dropped.length)).toBe(1);
    });
  });

  it('the index written after a lenient read has no TREE, and git accepts it', async () => {
    const repo = await Repository.open({ fs: nodeFs(), dir: r.dir, hash: nodeHash });
    const read = (await repo.readIndex())!;
    const lock = await repo.lockIndex();
    const bytes = await repo.writeIndex(lock, read.index);
    expect(decodeIndex(bytes, { hash: nodeHash }).extensions).toEqual([]);
    expect(git(r.dir, ['ls-files', '-s'])).toBe(r.stage);
    git(r.dir, ['ls-files', '-s', '--debug']);
    git(r.dir, ['status', '--porcelain=v2']);
    git(r.dir, ['fsck', '--no-progress']);
  });
});

describe('describeDropped', () => {
  const d: DroppedIndexExtension = {
    path: '.git/index',
    signature: 'TREE',
    offset: 1234,
    code: 'BAD_EXTENSION',
    reason: 'TREE extension: expected newline after number at byte 4',
  };

  it('is one line naming the extension, the byte, the file and the reason', () => {
    expect(describeDropped(d)).toBe(
      'index: dropped the TREE extension at byte 1234 of .git/index, which does not parse (TREE extension: expected newline after number at byte 4); git discards it too, and an index written now leaves it out',
    );
    expect(describeDropped({ ...d, reason: 'two\nlines\r\n' })).not.toMatch(/[\r\n]/);
  });

  it('says git stops on an FSMN bitmap covering more entries than the index', () => {
    const fsmn = {
      ...d,
      signature: 'FSMN',
      reason: 'index: FSMN extension: fsmonitor bitmap covers 8 entries, the index has 5 (byte 441)',
    };
    expect(describeDropped(fsmn)).toBe(
      `index: dropped the FSMN extension at byte 1234 of .git/index, which does not fit the index (${fsmn.reason}); git itself stops on it, and an index written now leaves it out`,
    );
  });
});

describe('split index', () => {
  /** As fixtures/make-fixtures.sh fx_split: a split file with replaced, deleted and added entries over one shared index. */
  function splitRepo() {
    const dir = makeTempRepo();
    git(dir, ['config', 'splitIndex.maxPercentChange', '100']);
    for (let i = 1; i <= 6; i++) write(dir, `f${i}.txt`, `f${i}\n`);
    write(dir, 'dir/g.txt', 'g\n');
    git(dir, ['add', '.']);
    git(dir, ['commit', '-qm', 'base']);
    git(dir, ['update-index', '--split-index']);
    write(dir, 'f3.txt', 'replaced after the split\n');
    git(dir, ['add', 'f3.txt']);
    git(dir, ['rm', '-q', 'f5.txt']);
    write(dir, 'new.txt', 'new\n');
    git(dir, ['add', 'new.txt']);
    const gitDir = join(dir, '.git');
    const shared = readdirSync(gitDir).filter((f) => f.startsWith('sharedindex.'));
    expect(shared).toHaveLength(1);
    const stage = git(dir, ['ls-files', '-s']);
    return {
      dir,
      gitDir,
      indexPath: join(gitDir, 'index'),
      sharedPath: join(gitDir, shared[0]),
      stage,
      staged: git(dir, ['diff', '--cached']),
    };
  }

  async function checkWriteBack({ dir, stage, staged }: { dir: string; stage: string; staged: string }): Promise<void> {
    const repo = await Repository.open({ fs: nodeFs(), dir, hash: nodeHash });
    const read = (await repo.readIndex())!;
    await repo.writeIndex(await repo.lockIndex(), read.index);
    expect(git(dir, ['ls-files', '-s'])).toBe(stage);
    git(dir, ['ls-files', '-s', '--debug']);
    expect(git(dir, ['diff', '--cached'])).toBe(staged);
    git(dir, ['status', '--porcelain=v2']);
    git(dir, ['fsck', '--no-progress']);
  }

  it('a bad TREE in the split file is dropped with that file named', async () => {
    const s = splitRepo();
    const bytes = new Uint8Array(readFileSync(s.indexPath));
    expect(extensionSpans(bytes, 'sha1').spans.map((x) => x.signature)).toEqual(['link', 'TREE']);
    const bad = withPayload(bytes, 'sha1', 'TREE', crlf);
    writeFileSync(s.indexPath, bad);
    expect(git(s.dir, ['ls-files', '-s'])).toBe(s.stage);
    expect(git(s.dir, ['diff', '--cached'])).toBe(s.staged);
    writeFileSync(s.indexPath, bad);
    await expect(readIndexFile(nodeFs(), s.gitDir, 'sha1')).rejects.toMatchObject({ code: 'BAD_EXTENSION', data: { path: s.indexPath } });
    const read = (await readIndexFile(nodeFs(), s.gitDir, 'sha1', nodeHash, { lenient: true }))!;
    expect(read.dropped.map((d) => [d.path, d.signature, d.offset])).toEqual([[s.indexPath, 'TREE', extensionOffset(bad, 'sha1', 'TREE')]]);
    expect(read.shared).toBeDefined();
    expect(read.index.extensions).toEqual([]);
    await checkWriteBack(s);
  });

  it('a bad TREE in the shared index is dropped with the shared index named', async () => {
    const s = splitRepo();
    const split = new Uint8Array(readFileSync(s.indexPath));
    const shared = new Uint8Array(readFileSync(s.sharedPath));
    expect(extensionSpans(shared, 'sha1').spans).toEqual([]); // git writes the shared index without extensions
    // a TREE git can read (CRLF) added to the shared index; then it has a new trailer, so a new
    // name, and the split file's link must name it
    const tree = extensionSpans(split, 'sha1').spans.find((x) => x.signature === 'TREE')!;
    const badShared = withExtraExtension(shared, 'sha1', 'TREE', crlf(tree.payload));
    const id = Buffer.from(badShared.subarray(badShared.length - 20)).toString('hex');
    const newShared = join(s.gitDir, `sharedindex.${id}`);
    rmSync(s.sharedPath);
    writeFileSync(newShared, badShared);
    const relinked = withPayload(split, 'sha1', 'link', (p) => {
      const out = p.slice();
      out.set(Buffer.from(id, 'hex'), 0);
      return out;
    });
    writeFileSync(s.indexPath, relinked);
    expect(git(s.dir, ['ls-files', '-s'])).toBe(s.stage);
    expect(git(s.dir, ['diff', '--cached'])).toBe(s.staged);
    writeFileSync(s.indexPath, relinked);
    expect(existsSync(newShared)).toBe(true);

    await expect(readIndexFile(nodeFs(), s.gitDir, 'sha1')).rejects.toMatchObject({ code: 'BAD_EXTENSION', data: { path: newShared } });
    const read = (await readIndexFile(nodeFs(), s.gitDir, 'sha1', nodeHash, { lenient: true }))!;
    expect(read.dropped.map((d) => [d.path, d.signature, d.offset])).toEqual([
      [newShared, 'TREE', extensionOffset(badShared, 'sha1', 'TREE')],
    ]);
    expect(read.shared!.index.dropped).toHaveLength(1);
    expect(read.index.extensions.map((x) => x.signature)).toEqual(['TREE']); // the split file's own, intact
    expect(read.index.entries.map((e) => `${e.mode.toString(8)} ${e.oid} ${e.stage}\t${e.path}\n`).join('')).toBe(s.stage);
    await checkWriteBack(s);
  });
});
