/**
 * Shell baselines' index copies (src/store/baselines.ts): one copy per index content in a
 * session, each call's `.index` a hard link to it; a new content takes the shared name, the calls
 * linked to the old one keep their bytes; without hard links, a file per call.
 */
import { readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { nodeFs } from '../../src/fs/node.js';
import type { Fs } from '../../src/fs/types.js';
import { nodeHash } from '../../src/hash/node-crypto.js';
import { Repository } from '../../src/repo/repository.js';
import { ShellBaselines } from '../../src/store/baselines.js';
import { utf8Encode } from '../../src/bytes/text.js';
import { git, makeTempRepo } from '../helpers/git.js';

async function saveCall(repo: Repository, b: ShellBaselines, key: string): Promise<Uint8Array> {
  return repo.withIndex({ verify: false }, async (read) => {
    if (!read) throw new Error('no index');
    const batch = repo.odb.batch();
    await b.save('s', key, { json: utf8Encode(`{"key":"${key}"}`), index: read.bytes }, { blobs: [], index: read.index }, batch);
    return read.bytes.slice();
  });
}

function repoWithIndex(): string {
  const dir = makeTempRepo();
  writeFileSync(join(dir, 'a.txt'), 'a\n');
  git(dir, ['add', '-A']);
  return dir;
}

describe('shell baselines: the index copy', () => {
  it('is written once per index content: every call of that content links to it, and keeps its bytes when the index changes', async () => {
    const dir = repoWithIndex();
    const repo = await Repository.open({ fs: nodeFs(), dir, hash: nodeHash });
    const b = new ShellBaselines(repo);
    const first = await saveCall(repo, b, 'one');
    await saveCall(repo, b, 'two');
    const shellDir = join(repo.stateDir, 'shell', 's');
    const shared = () => readdirSync(shellDir).filter((n) => n.startsWith('.index-'));
    expect(shared()).toHaveLength(1);
    expect(statSync(join(shellDir, 'one.index')).ino).toBe(statSync(join(shellDir, 'two.index')).ino);
    expect(statSync(join(shellDir, 'one.index')).nlink).toBe(3);
    // the index changes: a new shared copy, the old calls keep the old bytes
    writeFileSync(join(dir, 'b.txt'), 'b\n');
    git(dir, ['add', '-A']);
    const second = await saveCall(repo, b, 'three');
    expect(second).not.toEqual(first);
    expect(shared()).toHaveLength(1);
    expect(new Uint8Array(readFileSync(join(shellDir, 'one.index')))).toEqual(first);
    expect((await b.load('s', 'two'))?.index).toEqual(first);
    expect((await b.load('s', 'three'))?.index).toEqual(second);
    await b.remove('s', 'one');
    expect(await b.load('s', 'one')).toBeNull();
    expect((await b.load('s', 'two'))?.index).toEqual(first);
    expect((await b.keys('s')).sort()).toEqual(['three', 'two']);
    await b.clear('s');
    expect(await b.keys('s')).toEqual([]);
  });

  it('is a file of its own per call where the filesystem makes no hard links', async () => {
    const dir = repoWithIndex();
    const { link: _link, ...rest } = nodeFs();
    const fs: Fs = rest as Fs;
    const repo = await Repository.open({ fs, dir, hash: nodeHash });
    const b = new ShellBaselines(repo);
    const bytes = await saveCall(repo, b, 'one');
    await saveCall(repo, b, 'two');
    const shellDir = join(repo.stateDir, 'shell', 's');
    expect(readdirSync(shellDir).filter((n) => n.startsWith('.index-'))).toEqual([]);
    expect(statSync(join(shellDir, 'one.index')).ino).not.toBe(statSync(join(shellDir, 'two.index')).ino);
    expect((await b.load('s', 'two'))?.index).toEqual(bytes);
  });
});
