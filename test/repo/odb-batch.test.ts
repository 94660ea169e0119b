/**
 * ObjectBatch / ObjectDatabase.writeNew: a batch of new objects is stored as loose objects below
 * `packThreshold` and as one pack + idx at or above it; git (cat-file, verify-pack, index-pack,
 * fsck, gc, repack) is the oracle. Also: dedup, objects that already exist, `batchBytes` flushes,
 * memfs, and fault injection at every mutating call of a pack flush.
 */
import { copyFileSync, existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { equalBytes } from '../../src/bytes/index.js';
import { faultyFs, type FaultPlan } from '../../src/fs/faulty.js';
import { mkdirp } from '../../src/fs/atomic.js';
import { nodeFs } from '../../src/fs/node.js';
import type { Fs } from '../../src/fs/types.js';
import type { ObjectFormat } from '../../src/hash/index.js';
import { encodeCommit } from '../../src/object/commit.js';
import { objectId, type ObjectType } from '../../src/object/loose.js';
import { encodeTree, MODE_FILE, MODE_TREE, type TreeEntry } from '../../src/object/tree.js';
import { ObjectDatabase } from '../../src/repo/odb.js';
import { catAllObjects, catObjects, git, makeTempDir, makeTempRepo, objectsDir } from '../helpers/git.js';
import { newMemoryFs } from '../helpers/memfs.js';
import { prng } from '../helpers/prng.js';

// ───────────────────────────────────────────────────────────────────────────── helpers

interface Obj {
  type: ObjectType;
  content: Uint8Array;
}

const enc = (s: string) => new TextEncoder().encode(s);
const IDENT = 'A U Thor <author@example.com> 1700000000 +0000';

function randomData(seed: number, n: number): Uint8Array {
  const rnd = prng(seed);
  const out = new Uint8Array(n);
  for (let i = 0; i < n; i++) out[i] = Math.floor(rnd() * 256);
  return out;
}

/**
 * `blobs` distinct blobs (the first one empty, the second `bigBytes` of incompressible data when
 * given), a subtree with two of them, a root tree naming every blob and the subtree, a commit of
 * the root tree and an annotated tag of the commit — all reachable from the commit (and the tag).
 * The commit is `objects[objects.length - 2]`, the tag the last one.
 */
function objectSet(format: ObjectFormat, blobs: number, seed: number, bigBytes = 0): { objects: Obj[]; commit: string; tag: string } {
  const objects: Obj[] = [];
  const blobIds: string[] = [];
  for (let i = 0; i < blobs; i++) {
    const content =
      i === 0 ? new Uint8Array(0) : i === 1 && bigBytes > 0 ? randomData(seed, bigBytes) : enc(`blob ${seed}/${i}\n`.repeat(1 + (i % 5)));
    objects.push({ type: 'blob', content });
    blobIds.push(objectId('blob', content, format));
  }
  const file = (name: string, oid: string): TreeEntry => ({ mode: MODE_FILE, name: enc(name), oid });
  const sub = encodeTree([file('x', blobIds[0]), file('y', blobIds[blobIds.length - 1])], format);
  objects.push({ type: 'tree', content: sub });
  const subId = objectId('tree', sub, format);
  const entries = blobIds.map((oid, i) => file(`f${String(i).padStart(3, '0')}`, oid));
  entries.push({ mode: MODE_TREE, name: enc('sub'), oid: subId });
  const root = encodeTree(entries, format);
  objects.push({ type: 'tree', content: root });
  const rootId = objectId('tree', root, format);
  const commitBytes = encodeCommit({ tree: rootId, author: IDENT, committer: IDENT, message: `batch ${seed}\n` });
  objects.push({ type: 'commit', content: commitBytes });
  const commit = objectId('commit', commitBytes, format);
  const tagBytes = enc(`object ${commit}\ntype commit\ntag v${seed}\ntagger ${IDENT}\n\ntag ${seed}\n`);
  objects.push({ type: 'tag', content: tagBytes });
  return { objects, commit, tag: objectId('tag', tagBytes, format) };
}

function looseFiles(objects: string): string[] {
  return readdirSync(objects)
    .filter((d) => /^[0-9a-f]{2}$/.test(d))
    .flatMap((d) => readdirSync(join(objects, d)).map((f) => `${d}/${f}`))
    .sort();
}

function packDirFiles(objects: string): string[] {
  const dir = join(objects, 'pack');
  return existsSync(dir) ? readdirSync(dir).sort() : [];
}

/** Every file under the objects directory (info/ aside), for before/after comparisons. */
function allObjectFiles(objects: string): string[] {
  return [...looseFiles(objects), ...packDirFiles(objects).map((f) => `pack/${f}`)];
}

function tempFilesUnder(objects: string): string[] {
  return allObjectFiles(objects).filter((p) => p.split('/').pop()!.startsWith('tmp_'));
}

/** `.idx` files whose `.pack` is missing. */
function orphanIdx(objects: string): string[] {
  const files = packDirFiles(objects);
  return files.filter((f) => f.endsWith('.idx') && !files.includes(f.replace(/\.idx$/, '.pack')));
}

/** Ids `git verify-pack -v` lists for a pack (throws when the pack does not verify). */
function verifyPack(repo: string, idxPath: string): string[] {
  const out = git(repo, ['verify-pack', '-v', idxPath]);
  return out
    .split('\n')
    .map((l) => /^([0-9a-f]{40}|[0-9a-f]{64}) (blob|tree|commit|tag) /.exec(l)?.[1])
    .filter((x): x is string => x !== undefined)
    .sort();
}

function ids(objects: readonly Obj[], format: ObjectFormat): string[] {
  return [...new Set(objects.map((o) => objectId(o.type, o.content, format)))].sort();
}

/** git agrees on type and bytes of every object (`git cat-file --batch` fed the ids). */
function expectGitHas(repo: string, objects: readonly Obj[], format: ObjectFormat): void {
  const list = objects.map((o) => objectId(o.type, o.content, format));
  const got = catObjects(repo, list);
  expect(got.map((o) => o.oid)).toEqual(list);
  for (let i = 0; i < objects.length; i++) {
    expect(got[i].type, list[i]).toBe(objects[i].type);
    expect(equalBytes(got[i].content, objects[i].content), list[i]).toBe(true);
  }
}

async function expectOdbHas(odb: ObjectDatabase, objects: readonly Obj[]): Promise<void> {
  for (const o of objects) {
    const oid = odb.idOf(o.type, o.content);
    const got = await odb.read(oid);
    expect(got.type, oid).toBe(o.type);
    expect(equalBytes(got.content, o.content), oid).toBe(true);
    expect(await odb.readHeader(oid)).toEqual({ type: o.type, size: o.content.length });
  }
}

async function writeAll(odb: ObjectDatabase, objects: readonly Obj[], flush = true): Promise<string[]> {
  const batch = odb.batch();
  const out: string[] = [];
  for (const o of objects) out.push(await batch.write(o.type, o.content));
  if (flush) await batch.flush();
  return out;
}

function writeBits(path: string): number {
  return statSync(path).mode & 0o222;
}

// ───────────────────────────────────────────────────────────────────────────── git oracle

describe.each(['sha1', 'sha256'] as ObjectFormat[])('ObjectBatch (%s)', (format) => {
  it('below the threshold: loose objects only, nothing on disk before the flush, git agrees', async () => {
    const repo = makeTempRepo({ objectFormat: format });
    const objects = objectsDir(repo);
    const packsBefore = packDirFiles(objects);
    const blobs = [enc('one\n'), enc('two\n'), new Uint8Array([0, 1, 2, 255])];
    const blobIds = blobs.map((b) => objectId('blob', b, format));
    const tree = encodeTree(
      blobIds.map((oid, i) => ({ mode: MODE_FILE, name: enc(`f${i}`), oid })),
      format,
    );
    const treeId = objectId('tree', tree, format);
    const commit = encodeCommit({ tree: treeId, author: IDENT, committer: IDENT, message: 'five objects\n' });
    const set: Obj[] = [
      ...blobs.map((content) => ({ type: 'blob' as const, content })),
      { type: 'tree', content: tree },
      { type: 'commit', content: commit },
    ];

    const odb = new ObjectDatabase({ fs: nodeFs(), objectsDir: objects, format }); // default threshold 16
    expect(odb.packThreshold).toBe(16);
    const batch = odb.batch();
    const got: string[] = [];
    for (const o of set) got.push(await batch.write(o.type, o.content));
    expect(got).toEqual(set.map((o) => objectId(o.type, o.content, format)));
    expect(batch.size).toBe(5);
    expect(looseFiles(objects)).toEqual([]); // nothing written yet
    for (const oid of got) expect(await odb.exists(oid)).toBe(false);
    await batch.flush();
    expect(batch.size).toBe(0);

    expect(looseFiles(objects)).toEqual(got.map((oid) => `${oid.slice(0, 2)}/${oid.slice(2)}`).sort());
    expect(packDirFiles(objects)).toEqual(packsBefore);
    expect(tempFilesUnder(objects)).toEqual([]);
    for (const f of looseFiles(objects)) expect(writeBits(join(objects, f)), f).toBe(0);
    for (let i = 0; i < set.length; i++) {
      expect(git(repo, ['cat-file', '-t', got[i]]).trim()).toBe(set[i].type);
      expect(equalBytes(git(repo, ['cat-file', set[i].type, got[i]], { encoding: 'buffer' }), set[i].content)).toBe(true);
    }
    expect(git(repo, ['cat-file', '-p', got[3]])).toContain(`blob ${blobIds[2]}\tf2`);
    git(repo, ['update-ref', 'refs/heads/main', got[4]]);
    git(repo, ['fsck', '--full', '--strict', '--no-progress']);
    expect(git(repo, ['fsck', '--full', '--strict', '--no-progress', '--dangling'])).toBe('');
  });

  it('at the threshold: one pack + idx, read-only, git verifies it and index-pack makes the same idx', async () => {
    const repo = makeTempRepo({ objectFormat: format });
    const objects = objectsDir(repo);
    const { objects: set, commit, tag } = objectSet(format, 16, 7, 300_000);
    expect(set.length).toBe(20);
    expect(set.map((o) => o.type)).toEqual([...Array(16).fill('blob'), 'tree', 'tree', 'commit', 'tag']);
    expect(set[0].content.length).toBe(0);

    // counts readdir of objects/pack: reads after the flush must find the new pack without a re-scan
    const base = nodeFs();
    let packDirScans = 0;
    const fs: Fs = {
      ...base,
      async readdir(p) {
        if (p === join(objects, 'pack')) packDirScans++;
        return base.readdir(p);
      },
    };
    const odb = new ObjectDatabase({ fs, objectsDir: objects, format, packThreshold: 4 });
    const got = await writeAll(odb, set);
    expect(got).toEqual(set.map((o) => objectId(o.type, o.content, format)));

    expect(looseFiles(objects)).toEqual([]);
    const files = packDirFiles(objects);
    expect(files).toHaveLength(2);
    const [idxName, packName] = files;
    expect(idxName).toMatch(format === 'sha1' ? /^pack-[0-9a-f]{40}\.idx$/ : /^pack-[0-9a-f]{64}\.idx$/);
    expect(packName).toBe(idxName.replace(/\.idx$/, '.pack'));
    const idxPath = join(objects, 'pack', idxName);
    const packPath = join(objects, 'pack', packName);
    expect(writeBits(idxPath)).toBe(0);
    expect(writeBits(packPath)).toBe(0);
    // the name is the pack's trailing checksum
    const packBytes = readFileSync(packPath);
    const h = format === 'sha1' ? 20 : 32;
    expect(packName).toBe(`pack-${packBytes.subarray(packBytes.length - h).toString('hex')}.pack`);

    expect(verifyPack(repo, idxPath)).toEqual([...got].sort());

    // index-pack on a copy of our pack writes the very same idx
    const tmp = makeTempDir();
    copyFileSync(packPath, join(tmp, 'copy.pack'));
    git(repo, ['index-pack', '-o', join(tmp, 'other.idx'), join(tmp, 'copy.pack')]);
    expect(equalBytes(readFileSync(join(tmp, 'other.idx')), readFileSync(idxPath))).toBe(true);

    // read back: the same database (no re-scan of objects/pack), a fresh one, git
    const scansBefore = packDirScans;
    await expectOdbHas(odb, set);
    expect(packDirScans).toBe(scansBefore);
    expect(await odb.listPacks()).toEqual([{ objectsDir: objects, name: packName.replace(/\.pack$/, ''), count: 20 }]);
    await expectOdbHas(new ObjectDatabase({ fs: nodeFs(), objectsDir: objects, format }), set);
    expectGitHas(repo, set, format);
    const all = catAllObjects(repo);
    expect([...all.keys()].sort()).toEqual([...got].sort());

    const counts = git(repo, ['count-objects', '-v']);
    expect(counts).toMatch(/^count: 0$/m);
    expect(counts).toMatch(/^packs: 1$/m);
    expect(counts).toMatch(/^garbage: 0$/m);
    git(repo, ['update-ref', 'refs/heads/main', commit]);
    git(repo, ['update-ref', 'refs/tags/t', tag]);
    expect(git(repo, ['fsck', '--full', '--strict', '--no-progress', '--dangling'])).toBe('');
    expect(tempFilesUnder(objects)).toEqual([]);
  });

  it('existing() answers for many ids at once what has() answers for each: loose, packed, pending in a batch, missing; with and without synchronous calls', async () => {
    const repo = makeTempRepo({ objectFormat: format });
    const objects = objectsDir(repo);
    const { objects: set } = objectSet(format, 6, 21);
    const odb = new ObjectDatabase({ fs: nodeFs(), objectsDir: objects, format });
    const written = await writeAll(odb, set.slice(0, 4));
    // two of them packed by git, the others loose
    const packedOnes = written.slice(0, 2);
    git(repo, ['pack-objects', '-q', join(objects, 'pack', 'pack')], { input: packedOnes.join('\n') + '\n' });
    git(repo, ['prune-packed']);
    expect(looseFiles(objects)).toHaveLength(2);
    const missing = set.slice(4).map((o) => objectId(o.type, o.content, format));
    const asked = [...written.map((id, i) => (i % 2 ? id.toUpperCase() : id)), ...missing];
    const noSync: Fs = { ...nodeFs(), lstatSync: undefined };
    for (const fs of [nodeFs(), noSync]) {
      const fresh = new ObjectDatabase({ fs, objectsDir: objects, format });
      const got = await fresh.existing(asked);
      const one = await Promise.all(asked.map((id) => fresh.has(id)));
      expect([...got].sort()).toEqual(
        asked
          .filter((_, i) => one[i])
          .map((id) => id.toLowerCase())
          .sort(),
      );
      expect([...got].sort()).toEqual([...written].sort());
      // a batch also counts what it will write
      const batch = fresh.batch();
      const pending = await batch.write(set[5].type, set[5].content);
      expect([...(await batch.existing(asked))].sort()).toEqual([...written, pending].sort());
    }
  });

  it('the threshold counts only new objects; existing ones (loose, git-packed, alternate) are not written again', async () => {
    const repo = makeTempRepo({ objectFormat: format });
    const objects = objectsDir(repo);
    const { objects: set, commit, tag } = objectSet(format, 10, 11);
    const first = set.slice(0, 12);
    const rest = set.slice(12);
    expect(rest).toHaveLength(2);

    // loose: 12 written one by one, then a batch of all 14 with threshold 4 stores only 2 (loose)
    const odb1 = new ObjectDatabase({ fs: nodeFs(), objectsDir: objects, format, packThreshold: 4 });
    for (const o of first) await odb1.write(o.type, o.content);
    expect(looseFiles(objects)).toHaveLength(12);
    const odb2 = new ObjectDatabase({ fs: nodeFs(), objectsDir: objects, format, packThreshold: 4 });
    const b2 = odb2.batch();
    for (const o of set) await b2.write(o.type, o.content);
    expect(b2.size).toBe(2);
    await b2.flush();
    expect(looseFiles(objects)).toHaveLength(14);
    expect(packDirFiles(objects)).toEqual([]);

    // again, with a fresh database: nothing at all is written
    const before = allObjectFiles(objects);
    await writeAll(new ObjectDatabase({ fs: nodeFs(), objectsDir: objects, format, packThreshold: 1 }), set);
    expect(allObjectFiles(objects)).toEqual(before);

    // in a pack git made: still nothing written (writeNew given them directly, too)
    git(repo, ['update-ref', 'refs/heads/main', commit]);
    git(repo, ['update-ref', 'refs/tags/t', tag]);
    git(repo, ['repack', '-a', '-d', '-q']);
    git(repo, ['prune-packed']);
    expect(looseFiles(objects)).toEqual([]);
    const packed = allObjectFiles(objects);
    expect(packed.filter((f) => f.endsWith('.pack'))).toHaveLength(1);
    const odb3 = new ObjectDatabase({ fs: nodeFs(), objectsDir: objects, format, packThreshold: 1 });
    await writeAll(odb3, set);
    await odb3.writeNew(set.map((o) => ({ ...o, oid: odb3.idOf(o.type, o.content) })));
    expect(allObjectFiles(objects)).toEqual(packed);

    // in an alternate: not copied into the borrowing repository
    const other = makeTempRepo({ objectFormat: format });
    const otherObjects = objectsDir(other);
    writeFileSync(join(otherObjects, 'info', 'alternates'), `${objects}\n`);
    const otherBefore = allObjectFiles(otherObjects);
    await writeAll(new ObjectDatabase({ fs: nodeFs(), objectsDir: otherObjects, format, packThreshold: 1 }), set);
    expect(allObjectFiles(otherObjects)).toEqual(otherBefore);
    expectGitHas(other, set, format);
  });

  it('duplicates are stored once; ids match objectId; has() covers pending ids', async () => {
    const repo = makeTempRepo({ objectFormat: format });
    const objects = objectsDir(repo);
    const odb = new ObjectDatabase({ fs: nodeFs(), objectsDir: objects, format, packThreshold: 2 });
    const batch = odb.batch();
    const a = enc('same\n');
    const b = enc('other\n');
    const idA = await batch.write('blob', a);
    expect(idA).toBe(objectId('blob', a, format));
    expect(await batch.write('blob', a.slice())).toBe(idA);
    expect(await batch.write('blob', a)).toBe(idA);
    // same bytes, another type: another object
    const idT = await batch.write('tag', enc(`object ${idA}\ntype blob\ntag t\ntagger ${IDENT}\n\nt\n`));
    const idB = await batch.write('blob', b);
    expect(batch.size).toBe(3);
    expect(await batch.has(idA)).toBe(true);
    expect(await batch.has(idA.toUpperCase())).toBe(true);
    expect(await batch.has(idB)).toBe(true);
    expect(await batch.has(objectId('blob', enc('never\n'), format))).toBe(false);
    expect(await odb.has(idA)).toBe(false); // pending, not on disk
    await batch.flush();
    const packs = packDirFiles(objects).filter((f) => f.endsWith('.idx'));
    expect(packs).toHaveLength(1);
    expect(verifyPack(repo, join(objects, 'pack', packs[0]))).toEqual([idA, idB, idT].sort());
    expect(await odb.has(idA)).toBe(true);

    // written again after the flush: nothing pending, nothing new
    const files = allObjectFiles(objects);
    expect(await batch.write('blob', a)).toBe(idA);
    expect(batch.size).toBe(0);
    await batch.flush();
    expect(allObjectFiles(objects)).toEqual(files);

    // writeNew given duplicates directly: one copy each (a pack cannot list an id twice)
    const c = enc('c\n');
    const d = enc('d\n');
    const list = [c, d, c, d, c].map((content) => ({ oid: odb.idOf('blob', content), type: 'blob' as const, content }));
    await odb.writeNew(list);
    const newIdx = packDirFiles(objects).filter((f) => f.endsWith('.idx') && !packs.includes(f));
    expect(newIdx).toHaveLength(1);
    expect(verifyPack(repo, join(objects, 'pack', newIdx[0]))).toEqual([list[0].oid, list[1].oid].sort());
  });

  it('batchBytes: the batch flushes by itself while writing; every object readable', async () => {
    const repo = makeTempRepo({ objectFormat: format });
    const objects = objectsDir(repo);
    const odb = new ObjectDatabase({ fs: nodeFs(), objectsDir: objects, format, packThreshold: 2, batchBytes: 100_000 });
    const set: Obj[] = Array.from({ length: 7 }, (_, i) => ({ type: 'blob' as const, content: randomData(100 + i, 60_000) }));
    const batch = odb.batch();
    await batch.write(set[0].type, set[0].content);
    expect(batch.size).toBe(1);
    expect(packDirFiles(objects)).toEqual([]);
    await batch.write(set[1].type, set[1].content); // 120 000 bytes pending: flushed as a pack of 2
    expect(batch.size).toBe(0);
    expect(packDirFiles(objects).filter((f) => f.endsWith('.pack'))).toHaveLength(1);
    for (const o of set.slice(2)) await batch.write(o.type, o.content);
    expect(batch.size).toBe(1);
    await batch.flush(); // the last one alone: below the threshold, loose
    const idx = packDirFiles(objects).filter((f) => f.endsWith('.idx'));
    expect(idx).toHaveLength(3);
    expect(idx.flatMap((f) => verifyPack(repo, join(objects, 'pack', f))).sort()).toEqual(ids(set.slice(0, 6), format));
    expect(looseFiles(objects)).toEqual([ids([set[6]], format)[0]].map((oid) => `${oid.slice(0, 2)}/${oid.slice(2)}`));
    await expectOdbHas(odb, set);
    await expectOdbHas(new ObjectDatabase({ fs: nodeFs(), objectsDir: objects, format }), set);
    expectGitHas(repo, set, format);
  });

  it('git gc --prune=now and git repack -a -d keep the objects readable', async () => {
    const repo = makeTempRepo({ objectFormat: format });
    const objects = objectsDir(repo);
    const { objects: set, commit, tag } = objectSet(format, 20, 23, 50_000);
    const odb = new ObjectDatabase({ fs: nodeFs(), objectsDir: objects, format, packThreshold: 4 });
    await writeAll(odb, set);
    const ours = packDirFiles(objects);
    expect(ours.filter((f) => f.endsWith('.pack'))).toHaveLength(1);
    git(repo, ['update-ref', 'refs/heads/main', commit]);
    git(repo, ['update-ref', 'refs/tags/t', tag]);
    // something unreachable, to see the prune happen
    const junk = git(repo, ['hash-object', '-w', '--stdin'], { input: 'unreachable\n' }).trim();
    git(repo, ['gc', '--prune=now', '--quiet']);
    expect(() => git(repo, ['cat-file', '-e', junk])).toThrow();
    const afterGc = packDirFiles(objects);
    expect(afterGc.filter((f) => f.endsWith('.pack'))).toHaveLength(1);
    expect(afterGc).not.toEqual(ours); // git wrote its own pack (with deltas) and removed ours
    await expectOdbHas(new ObjectDatabase({ fs: nodeFs(), objectsDir: objects, format }), set);
    await expectOdbHas(odb, set); // the old database finds git's pack by re-scanning
    git(repo, ['repack', '-a', '-d', '-f', '-q']);
    await expectOdbHas(new ObjectDatabase({ fs: nodeFs(), objectsDir: objects, format }), set);
    expect(git(repo, ['fsck', '--full', '--strict', '--no-progress', '--dangling'])).toBe('');
  });

  it('memfs: a pack written to the volume is read back by a fresh database and is a pack git reads', async () => {
    const fs = newMemoryFs();
    const objects = '/repo/.git/objects';
    await mkdirp(fs, `${objects}/pack`);
    const { objects: set } = objectSet(format, 16, 31, 20_000);
    const odb = new ObjectDatabase({ fs, objectsDir: objects, format, packThreshold: 4 });
    await writeAll(odb, set);
    const names = (await fs.readdir(`${objects}/pack`)).sort();
    expect(names).toHaveLength(2);
    expect(names[0]).toMatch(/^pack-[0-9a-f]+\.idx$/);
    expect(names[1]).toBe(names[0].replace(/\.idx$/, '.pack'));
    for (const n of names) {
      const st = await fs.lstat(`${objects}/pack/${n}`);
      expect(st && st.mode & 0o222, n).toBe(0);
    }
    const fanout = (await fs.readdir(objects)).filter((d) => /^[0-9a-f]{2}$/.test(d));
    expect(fanout).toEqual([]);
    await expectOdbHas(odb, set);
    await expectOdbHas(new ObjectDatabase({ fs, objectsDir: objects, format }), set);
    // the same bytes in a real repository: git reads them
    const repo = makeTempRepo({ objectFormat: format });
    for (const n of names) writeFileSync(join(objectsDir(repo), 'pack', n), await fs.readFile(`${objects}/pack/${n}`));
    expect(verifyPack(repo, join(objectsDir(repo), 'pack', names[0]))).toEqual(ids(set, format));
    expectGitHas(repo, set, format);
  });
});

// ───────────────────────────────────────────────────────────────────────────── faults

describe.each(['sha1', 'sha256'] as ObjectFormat[])('ObjectBatch flush under faults (%s)', (format) => {
  const { objects: set } = objectSet(format, 16, 41, 30_000);
  const plans: Array<Omit<FaultPlan, 'failAt'>> = [{}, { mode: 'torn' }, { after: 'crash' }, { mode: 'torn', after: 'crash' }];

  it.each(plans.map((p) => [JSON.stringify(p), p] as const))(
    'every mutating call of a pack flush fails in turn %s',
    async (_name, plan) => {
      const probe = makeTempRepo({ objectFormat: format });
      const counter = faultyFs(nodeFs(), { failAt: 0 });
      await writeAll(new ObjectDatabase({ fs: counter, objectsDir: objectsDir(probe), format, packThreshold: 4 }), set);
      const total = counter.count;
      // temp pack, temp idx, two renames
      expect(counter.calls.map((c) => c.op)).toEqual(['writeFile', 'writeFile', 'rename', 'rename']);
      expect(total).toBe(4);

      for (let n = 1; n <= total; n++) {
        const repo = makeTempRepo({ objectFormat: format });
        const objects = objectsDir(repo);
        const fs = faultyFs(nodeFs(), { ...plan, failAt: n });
        const odb = new ObjectDatabase({ fs, objectsDir: objects, format, packThreshold: 4 });
        const batch = odb.batch();
        for (const o of set) await batch.write(o.type, o.content);
        const outcome = await batch.flush().then(
          () => 'completed',
          (e: unknown) => e,
        );
        expect(fs.failed, `call ${n}`).toBe(true);
        if (outcome === 'completed') {
          expectGitHas(repo, set, format);
        } else {
          expect(outcome, `call ${n}`).toMatchObject({ code: 'EIO' });
          // the failure sticks: a later flush of the same batch throws it again and writes nothing
          const files = allObjectFiles(objects);
          await batch.write('blob', enc(`after the failure ${n}\n`));
          await expect(batch.flush()).rejects.toBe(outcome);
          expect(allObjectFiles(objects)).toEqual(files);
        }
        // never an idx without its pack, and every pack there is verifies
        expect(orphanIdx(objects), `call ${n}`).toEqual([]);
        for (const f of packDirFiles(objects).filter((x) => x.endsWith('.idx'))) verifyPack(repo, join(objects, 'pack', f));
        if (plan.after !== 'crash') {
          // an I/O error the writer recovers from: its temp files and a pack without idx are removed
          expect(tempFilesUnder(objects), `call ${n}`).toEqual([]);
          expect(
            packDirFiles(objects).filter((f) => f.endsWith('.pack')),
            `call ${n}`,
          ).toHaveLength(outcome === 'completed' ? 1 : 0);
          // the same database (its fs works again) stores them with a new batch
          await writeAll(odb, set);
          expectGitHas(repo, set, format);
        }
        // a clean run stores them all
        await writeAll(new ObjectDatabase({ fs: nodeFs(), objectsDir: objects, format, packThreshold: 4 }), set);
        expectGitHas(repo, set, format);
        expect(orphanIdx(objects)).toEqual([]);
        for (const f of packDirFiles(objects).filter((x) => x.endsWith('.idx')))
          expect(verifyPack(repo, join(objects, 'pack', f))).toEqual(ids(set, format));
        expect(git(repo, ['count-objects', '-v'])).toMatch(/^packs: 1$/m);
      }
    },
  );

  it('a loose flush that fails ends every write before it throws', async () => {
    const small = set.slice(0, 12);
    const counter = faultyFs(nodeFs(), { failAt: 0 });
    await writeAll(new ObjectDatabase({ fs: counter, objectsDir: objectsDir(makeTempRepo({ objectFormat: format })), format }), small);
    const total = counter.count;
    expect(total).toBeGreaterThanOrEqual(24); // a temp file and a rename per object (and fan-out dirs)
    for (const n of [1, 2, Math.floor(total / 2), total]) {
      const repo = makeTempRepo({ objectFormat: format });
      const objects = objectsDir(repo);
      const fs = faultyFs(nodeFs(), { failAt: n });
      const odb = new ObjectDatabase({ fs, objectsDir: objects, format });
      await expect(writeAll(odb, small)).rejects.toMatchObject({ code: 'EIO' });
      const calls = fs.calls.length;
      await new Promise((r) => setTimeout(r, 50));
      expect(fs.calls.length, `call ${n}: writes went on after the flush threw`).toBe(calls);
      expect(tempFilesUnder(objects)).toEqual([]);
      expect(looseFiles(objects).length).toBe(small.length - 1);
      await writeAll(odb, small);
      expectGitHas(repo, small, format);
    }
  });
});

describe('ObjectBatch bookkeeping', () => {
  it('a write whose existence check failed is not taken for queued (nor is a concurrent write of the same object): its retry stores the object', async () => {
    const repo = makeTempRepo();
    const objects = objectsDir(repo);
    const inner = nodeFs();
    let failNext = true;
    const fs: Fs = Object.create(inner);
    fs.lstat = async (path: string) => {
      if (failNext && /\/[0-9a-f]{2}\/[0-9a-f]{38}$/.test(path)) {
        failNext = false;
        throw Object.assign(new Error(`EIO: ${path}`), { code: 'EIO' });
      }
      return inner.lstat(path);
    };
    const odb = new ObjectDatabase({ fs, objectsDir: objects, format: 'sha1' });
    const batch = odb.batch();
    const content = enc('retried\n');
    const both = await Promise.allSettled([batch.write('blob', content), batch.write('blob', content)]);
    expect(both.map((r) => r.status)).toEqual(['rejected', 'rejected']);
    const oid = await batch.write('blob', content);
    await batch.flush();
    expect(await odb.exists(oid)).toBe(true);
    expect(git(repo, ['cat-file', '-p', oid])).toBe('retried\n');
  });

  it('a flush does not look up again what the batch found absent when it queued it', async () => {
    const repo = makeTempRepo();
    const objects = objectsDir(repo);
    const inner = nodeFs();
    let looseLookups = 0;
    const fs: Fs = Object.create(inner);
    fs.lstat = async (path: string) => {
      if (/\/[0-9a-f]{2}\/[0-9a-f]{38}$/.test(path)) looseLookups++;
      return inner.lstat(path);
    };
    const odb = new ObjectDatabase({ fs, objectsDir: objects, format: 'sha1', packThreshold: 4 });
    const batch = odb.batch();
    const set = objectSet('sha1', 6, 42).objects;
    for (const o of set) await batch.write(o.type, o.content);
    expect(looseLookups).toBe(set.length); // one existence check each, while queuing
    await batch.flush();
    expect(looseLookups).toBe(set.length);
    expectGitHas(repo, set, 'sha1');
  });

  it('no pack is written once the directory holds more than packLimit packs (one past it makes git gc --auto fold them): the objects go loose', async () => {
    const repo = makeTempRepo();
    const objects = objectsDir(repo);
    const packs = () => packDirFiles(objects).filter((f) => f.endsWith('.pack')).length;
    const odb = new ObjectDatabase({ fs: nodeFs(), objectsDir: objects, format: 'sha1', packThreshold: 2, packLimit: 2 });
    for (let i = 0; i < 4; i++) await writeAll(odb, objectSet('sha1', 4, 100 + i).objects);
    expect(packs()).toBe(3);
    const fourth = objectSet('sha1', 4, 103).objects;
    expect(looseFiles(objects).length).toBe(fourth.length - 1); // all but the empty blob, which the first pack holds
    expectGitHas(repo, fourth, 'sha1');
    // a fresh database counts the packs on disk the same way
    const fresh = new ObjectDatabase({ fs: nodeFs(), objectsDir: objects, format: 'sha1', packThreshold: 2, packLimit: 2 });
    await writeAll(fresh, objectSet('sha1', 4, 104).objects);
    expect(packs()).toBe(3);
    // and git's gc --auto, with the same limit, folds them into one
    git(repo, ['update-ref', 'refs/heads/main', objectSet('sha1', 4, 100).commit]);
    git(repo, ['-c', 'gc.auto=6700', '-c', 'gc.autoPackLimit=2', '-c', 'gc.autoDetach=false', 'gc', '--auto', '--quiet']); // the test home turns gc --auto off
    expect(packs()).toBe(1);
  });
});
