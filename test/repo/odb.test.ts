import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { promises as fsp } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { equalBytes, fromHex, toHex } from '../../src/bytes/index.js';
import { ScalpelError } from '../../src/errors/index.js';
import { nodeFs } from '../../src/fs/node.js';
import type { Fs } from '../../src/fs/types.js';
import { hashBytes, oidLength, type ObjectFormat } from '../../src/hash/index.js';
import { encodeCommit } from '../../src/object/commit.js';
import { encodeLooseObject, objectId, type ObjectType } from '../../src/object/loose.js';
import { ExactInflate } from '../../src/object/pack-inflate.js';
import { bufferPackSource, parsePackEntryHeader, parsePackIndex, readPackedObjectSync } from '../../src/object/pack.js';
import { encodeTree, MODE_FILE } from '../../src/object/tree.js';
import { ObjectDatabase, parseSharedRepository, sharedPermissions, type RandomAccessFs } from '../../src/repo/odb.js';
import { git, makeTempRepo, objectsDir, catAllObjects } from '../helpers/git.js';
import { prng } from '../helpers/prng.js';

// ───────────────────────────────────────────────────────────────────────────── helpers

/** `commits` commits on main through git fast-import, each editing `hot.txt` and a few of `files` files. */
function addHistory(dir: string, commits: number, files: number, seed: number, first = 0): void {
  const rnd = prng(seed);
  const word = () => Math.floor(rnd() * 1e9).toString(36);
  const line = () => `${word()} ${word()} ${word()}\n`;
  const state = Array.from({ length: files }, () => Array.from({ length: 50 }, line));
  const hot = Array.from({ length: 100 }, line);
  const parts: Buffer[] = [];
  const data = (s: string | Buffer) => {
    const b = typeof s === 'string' ? Buffer.from(s) : s;
    parts.push(Buffer.from(`data ${b.length}\n`), b, Buffer.from('\n'));
  };
  for (let c = 0; c < commits; c++) {
    parts.push(Buffer.from(`commit refs/heads/main\ncommitter C <c@example.com> ${1700000000 + first + c} +0000\n`));
    data(`commit ${first + c}\n`);
    if (c === 0 && first > 0) parts.push(Buffer.from('from refs/heads/main^0\n'));
    for (const f of [0, 1].map(() => Math.floor(rnd() * files))) {
      state[f].splice(Math.floor(rnd() * 50), 0, line());
      parts.push(Buffer.from(`M 100644 inline s${seed}/d${f % 3}/f${f}.txt\n`));
      data(state[f].join(''));
    }
    hot.splice(Math.floor(rnd() * hot.length), 0, line());
    parts.push(Buffer.from(`M 100644 inline hot.txt\n`));
    data(hot.join(''));
  }
  git(dir, ['fast-import', '--quiet'], { input: Buffer.concat(parts) });
}

type GitObject = ReturnType<typeof catAllObjects> extends Map<string, infer T> ? T : never;
const catAll = catAllObjects;

function looseCount(objects: string): number {
  return readdirSync(objects)
    .filter((d) => /^[0-9a-f]{2}$/.test(d))
    .reduce((n, d) => n + readdirSync(join(objects, d)).length, 0);
}

function tempFilesUnder(objects: string): string[] {
  const out: string[] = [];
  const walk = (d: string) => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      if (e.isDirectory()) walk(join(d, e.name));
      else if (e.name.startsWith('tmp_')) out.push(join(d, e.name));
    }
  };
  walk(objects);
  return out;
}

/** node:fs plus readRange (open, read, close per call); counts whole-file reads of packs. */
function rangeFs(): Fs & RandomAccessFs & { stats: { packReads: number; ranges: number } } {
  const base = nodeFs();
  const stats = { packReads: 0, ranges: 0 };
  return {
    ...base,
    stats,
    async readFile(path: string) {
      if (path.endsWith('.pack')) stats.packReads++;
      return base.readFile(path);
    },
    async readRange(path: string, position: number, length: number) {
      stats.ranges++;
      const fh = await fsp.open(path, 'r');
      try {
        const buf = Buffer.alloc(length);
        const { bytesRead } = await fh.read(buf, 0, length, position);
        return new Uint8Array(buf.buffer, buf.byteOffset, bytesRead);
      } finally {
        await fh.close();
      }
    },
  };
}

async function compareEverything(odb: ObjectDatabase, expected: Map<string, GitObject>, headers = false): Promise<number> {
  let n = 0;
  for (const [oid, want] of expected) {
    const got = await odb.read(oid);
    expect(got.type, oid).toBe(want.type);
    expect(equalBytes(got.content, want.content), oid).toBe(true);
    if (headers) expect(await odb.readHeader(oid)).toEqual({ type: want.type, size: want.content.length });
    n++;
  }
  return n;
}

async function scalpelError(p: Promise<unknown>): Promise<ScalpelError> {
  try {
    await p;
  } catch (e) {
    if (e instanceof ScalpelError) return e;
    throw e;
  }
  throw new Error('expected a ScalpelError');
}

// ───────────────────────────────────────────────────────────────────────────── read

describe.each(['sha1', 'sha256'] as ObjectFormat[])('ObjectDatabase read (%s)', (format) => {
  // pack 1: OFS deltas, deep chains; pack 2: REF deltas; then loose objects on top.
  const repo = makeTempRepo({ objectFormat: format });
  const objects = objectsDir(repo);
  addHistory(repo, 80, 12, 1);
  git(repo, ['repack', '-adf', '--depth=50', '--window=50']);
  addHistory(repo, 40, 12, 2, 100);
  const refPack = git(repo, ['pack-objects', '--revs', '--no-reuse-delta', '--window=20', join(objects, 'pack', 'pack')], {
    input: 'main\n^main~40\n',
  }).trim();
  git(repo, ['prune-packed']);
  addHistory(repo, 8, 12, 3, 200);
  git(repo, ['hash-object', '-w', '--stdin'], { input: '' });
  const expected = catAll(repo);

  it('every object (two packs, OFS and REF deltas, loose) equals git cat-file; readHeader equals --batch-check', async () => {
    expect(readdirSync(join(objects, 'pack')).filter((n) => n.endsWith('.pack')).length).toBeGreaterThanOrEqual(2);
    expect(refPack).toMatch(/^[0-9a-f]+$/);
    const loose = looseCount(objects);
    expect(loose).toBeGreaterThan(20);
    // the packs really hold both delta kinds (raw type bits of every entry)
    const kinds = new Set<number>();
    for (const n of readdirSync(join(objects, 'pack')).filter((f) => f.endsWith('.idx'))) {
      const idx = parsePackIndex(new Uint8Array(readFileSync(join(objects, 'pack', n))), format);
      const pack = readFileSync(join(objects, 'pack', n.replace(/\.idx$/, '.pack')));
      for (let i = 0; i < idx.count; i++) kinds.add((pack[idx.offsetAt(i)] >> 4) & 7);
    }
    expect(kinds.has(6) && kinds.has(7)).toBe(true);
    const odb = new ObjectDatabase({ fs: nodeFs(), objectsDir: objects, format });
    const packs = await odb.listPacks();
    expect(packs.length).toBeGreaterThanOrEqual(2);
    const n = await compareEverything(odb, expected, true);
    expect(n).toBe(expected.size);
    console.log(`[odb ${format}] ${n} objects equal git cat-file (${packs.map((p) => p.count).join(' + ')} packed, ${loose} loose)`);
  });

  it('the same through a range-reading Fs: no pack is read whole', async () => {
    const fs = rangeFs();
    const odb = new ObjectDatabase({ fs, objectsDir: objects, format });
    expect(await compareEverything(odb, expected)).toBe(expected.size);
    expect(fs.stats.packReads).toBe(0);
    expect(fs.stats.ranges).toBeGreaterThan(0);
    expect(fs.stats.ranges).toBeLessThan(expected.size * 2);
  });

  it('has / missing objects / malformed ids', async () => {
    const odb = new ObjectDatabase({ fs: nodeFs(), objectsDir: objects, format });
    const some = [...expected.keys()].slice(0, 20);
    for (const oid of some) expect(await odb.has(oid)).toBe(true);
    expect(await odb.has(some[0].toUpperCase())).toBe(true);
    const missing = '0'.repeat(oidLength(format) * 2);
    expect(await odb.has(missing)).toBe(false);
    const e = await scalpelError(odb.read(missing));
    expect(e.code).toBe('OBJECT_NOT_FOUND');
    expect(e.data.oid).toBe(missing);
    expect((await scalpelError(odb.readHeader(missing))).code).toBe('OBJECT_NOT_FOUND');
    expect((await scalpelError(odb.read('abc'))).code).toBe('BAD_ARGUMENT');
    expect((await scalpelError(odb.has('x'.repeat(oidLength(format) * 2)))).code).toBe('BAD_ARGUMENT');
  });

  it('a corrupt loose object is a typed error naming the oid; a good packed copy wins over it', async () => {
    const r = makeTempRepo({ objectFormat: format });
    const o = objectsDir(r);
    const oid = git(r, ['hash-object', '-w', '--stdin'], { input: 'precious\n' }).trim();
    const path = join(o, oid.slice(0, 2), oid.slice(2));
    const good = readFileSync(path);
    await fsp.chmod(path, 0o644);
    writeFileSync(path, encodeLooseObject('blob', new TextEncoder().encode('other\n')));
    const odb = new ObjectDatabase({ fs: nodeFs(), objectsDir: o, format });
    const e = await scalpelError(odb.read(oid));
    expect(e.code).toBe('BAD_OBJECT');
    expect(e.data).toMatchObject({ reason: 'oid-mismatch', oid });
    writeFileSync(path, good);
    git(r, ['pack-objects', '-q', join(o, 'pack', 'pack')], { input: `${oid}\n` }); // pack it; the loose copy stays
    writeFileSync(path, Buffer.from('garbage'));
    expect(new TextDecoder().decode((await odb.read(oid)).content)).toBe('precious\n');
  });
});

// ───────────────────────────────────────────────────────────────────────────── thin pack: cross-pack REF_DELTA

describe('REF_DELTA bases in another pack', () => {
  it('a thin pack in objects/pack whose bases live in another pack is read through resolveRef', async () => {
    const format: ObjectFormat = 'sha1';
    const src = makeTempRepo({ objectFormat: format });
    addHistory(src, 50, 8, 7);
    const dst = makeTempRepo({ objectFormat: format, bare: true });
    git(src, ['push', '-q', dst, 'main~10:refs/heads/main']);
    const thin = new Uint8Array(
      git(src, ['pack-objects', '--thin', '--stdout', '--revs'], { input: 'main\n^main~10\n', encoding: 'buffer' }),
    );
    const all = catAll(src);
    // Walk the thin pack entry by entry (ExactInflate tells where each zlib stream ends) and
    // build its idx by hand: git's index-pack refuses a thin pack unless it may complete it.
    const count = (thin[8] << 24) | (thin[9] << 16) | (thin[10] << 8) | thin[11];
    const entries: Array<{ oid: Uint8Array; offset: number }> = [];
    const pack = bufferPackSource(thin);
    let pos = 12;
    let external = 0;
    const offsets: number[] = [];
    for (let i = 0; i < count; i++) {
      const h = parsePackEntryHeader(thin.subarray(pos, pos + 64), pos, format);
      const inf = new ExactInflate(h.size);
      expect(inf.push(thin.subarray(h.dataOffset, thin.length - 20))).toBe(true);
      offsets.push(pos);
      pos = h.dataOffset + inf.consumed;
    }
    expect(pos).toBe(thin.length - 20);
    const refBases: string[] = [];
    for (const offset of offsets) {
      const h = parsePackEntryHeader(thin.subarray(offset, offset + 64), offset, format);
      if (h.kind === 'ref-delta') refBases.push(toHex(h.baseId!));
      const obj = readPackedObjectSync(pack, offset, {
        format,
        resolveRef: (oid) => {
          const g = all.get(oid);
          return g && { type: g.type, content: new Uint8Array(g.content) };
        },
      });
      entries.push({ oid: fromHex(objectId(obj.type, obj.content, format)), offset });
    }
    const inThin = new Set(entries.map((e) => toHex(e.oid)));
    external = refBases.filter((b) => !inThin.has(b)).length;
    expect(external).toBeGreaterThan(0);
    const checksum = thin.subarray(thin.length - 20);
    const name = `pack-${toHex(checksum)}`;
    writeFileSync(join(dst, 'objects', 'pack', `${name}.pack`), thin);
    writeFileSync(join(dst, 'objects', 'pack', `${name}.idx`), buildIdx(entries, format, checksum));
    const odb = new ObjectDatabase({ fs: nodeFs(), objectsDir: join(dst, 'objects'), format });
    const reachable = git(src, ['rev-list', '--objects', 'main'])
      .split('\n')
      .filter(Boolean)
      .map((l) => l.slice(0, 40));
    for (const oid of reachable) {
      const got = await odb.read(oid);
      expect(equalBytes(got.content, all.get(oid)!.content)).toBe(true);
    }
    for (const e of entries) expect((await odb.readHeader(toHex(e.oid))).size).toBe(all.get(toHex(e.oid))!.content.length);
    console.log(
      `[odb thin] ${reachable.length} objects via 2 packs; thin pack has ${external} REF_DELTA entries with bases in the other pack`,
    );
  });
});

function buildIdx(entries: Array<{ oid: Uint8Array; offset: number }>, format: ObjectFormat, packChecksum: Uint8Array): Uint8Array {
  const h = oidLength(format);
  const sorted = [...entries].sort((a, b) => Buffer.compare(Buffer.from(a.oid), Buffer.from(b.oid)));
  const n = sorted.length;
  const out = new Uint8Array(8 + 1024 + n * (h + 8) + 2 * h);
  const dv = new DataView(out.buffer);
  dv.setUint32(0, 0xff744f63);
  dv.setUint32(4, 2);
  for (let b = 0; b < 256; b++) dv.setUint32(8 + 4 * b, sorted.filter((e) => e.oid[0] <= b).length);
  sorted.forEach((e, i) => {
    out.set(e.oid, 1032 + i * h);
    dv.setUint32(1032 + n * (h + 4) + i * 4, e.offset);
  });
  out.set(packChecksum, 1032 + n * (h + 8));
  out.set(hashBytes(format, out.subarray(0, out.length - h)), out.length - h);
  return out;
}

// ───────────────────────────────────────────────────────────────────────────── alternates, re-scan

describe('alternates and pack re-scan', () => {
  it('objects/info/alternates: relative, absolute, quoted, comments; recursive', async () => {
    const a = makeTempRepo();
    addHistory(a, 20, 4, 11);
    git(a, ['repack', '-adq']);
    const b = makeTempRepo();
    const c = makeTempRepo();
    addHistory(c, 5, 2, 12);
    const bObjects = objectsDir(b);
    mkdirSync(join(bObjects, 'info'), { recursive: true });
    writeFileSync(
      join(bObjects, 'info', 'alternates'),
      `# shared\n\n${relative(bObjects, objectsDir(a))}\n"${objectsDir(c)}"\n/nonexistent/objects\n`,
    );
    const cObjects = objectsDir(c);
    // c → d, two levels deep
    const d = makeTempRepo();
    const dBlob = git(d, ['hash-object', '-w', '--stdin'], { input: 'from d\n' }).trim();
    mkdirSync(join(cObjects, 'info'), { recursive: true });
    writeFileSync(join(cObjects, 'info', 'alternates'), `${objectsDir(d)}\n`);
    const own = git(b, ['hash-object', '-w', '--stdin'], { input: 'own\n' }).trim();

    const odb = new ObjectDatabase({ fs: nodeFs(), objectsDir: bObjects, format: 'sha1' });
    const expected = new Map([...catAll(a), ...catAll(c)]);
    expect(await compareEverything(odb, expected)).toBe(expected.size);
    expect(new TextDecoder().decode((await odb.read(own)).content)).toBe('own\n');
    expect(new TextDecoder().decode((await odb.read(dBlob)).content)).toBe('from d\n');
    expect(await odb.objectDirectories()).toEqual([bObjects, objectsDir(a), objectsDir(c), objectsDir(d)]);
    // git agrees that b sees them
    git(b, ['cat-file', '-e', dBlob]);
    // writing an object an alternate has writes nothing
    const before = looseCount(bObjects);
    expect(await odb.write('blob', new TextEncoder().encode('from d\n'))).toBe(dBlob);
    expect(looseCount(bObjects)).toBe(before);
    const noAlt = new ObjectDatabase({ fs: nodeFs(), objectsDir: bObjects, format: 'sha1', alternates: false });
    expect(await noAlt.has(dBlob)).toBe(false);
  });

  it('objects moved into a new pack by git (repack + prune-packed, gc --prune=now) after the first scan are found', async () => {
    for (const fs of [nodeFs(), rangeFs()]) {
      const repo = makeTempRepo();
      const objects = objectsDir(repo);
      addHistory(repo, 10, 3, 21);
      git(repo, ['repack', '-adq']);
      const odb = new ObjectDatabase({ fs, objectsDir: objects, format: 'sha1' });
      const head = git(repo, ['rev-parse', 'main']).trim();
      await odb.read(head); // packs are listed and the pack opened
      const blob = git(repo, ['hash-object', '-w', '--stdin'], { input: 'late arrival\n' }).trim();
      const late = [...Array(5)].map((_, i) => git(repo, ['hash-object', '-w', '--stdin'], { input: `late ${i}\n` }).trim());
      git(repo, ['pack-objects', '-q', join(objects, 'pack', 'pack')], { input: [blob, ...late].join('\n') + '\n' });
      git(repo, ['prune-packed']);
      expect(existsSync(join(objects, blob.slice(0, 2), blob.slice(2)))).toBe(false);
      expect(new TextDecoder().decode((await odb.read(blob)).content)).toBe('late arrival\n');
      expect(await odb.has(late[0])).toBe(true);
      expect((await odb.readHeader(late[1])).type).toBe('blob');
      // gc rewrites every pack and deletes the old ones
      git(repo, [
        'update-ref',
        'refs/keep',
        git(repo, ['mktree'], { input: late.map((o, i) => `100644 blob ${o}\tl${i}\n`).join('') }).trim(),
      ]);
      git(repo, ['gc', '-q', '--prune=now']);
      const all = catAll(repo);
      expect(await compareEverything(odb, all)).toBe(all.size);
      expect((await odb.listPacks()).length).toBe(1);
    }
  });
});

// ───────────────────────────────────────────────────────────────────────────── write

describe.each(['sha1', 'sha256'] as ObjectFormat[])('ObjectDatabase write (%s)', (format) => {
  it('blobs, a tree and a commit: git fsck --strict accepts them, cat-file agrees, mode 0444, no temp files', async () => {
    const repo = makeTempRepo({ objectFormat: format });
    const objects = objectsDir(repo);
    const odb = new ObjectDatabase({ fs: nodeFs(), objectsDir: objects, format });
    const enc = (s: string) => new TextEncoder().encode(s);
    const big = new Uint8Array(200_000).map((_, i) => (i * 7919) & 255);
    const blobs = [enc(''), enc('hello\n'), big];
    const ids: string[] = [];
    for (const b of blobs) {
      const oid = await odb.write('blob', b);
      expect(oid).toBe(git(repo, ['hash-object', '--stdin'], { input: b }).trim());
      ids.push(oid);
    }
    const tree = await odb.write(
      'tree',
      encodeTree(
        ids.map((oid, i) => ({ mode: MODE_FILE, name: enc(`f${i}`), oid })),
        format,
      ),
    );
    const ident = 'A U Thor <author@example.com> 1700000000 +0000';
    const commit = await odb.write(
      'commit',
      encodeCommit({ tree, parents: [], author: ident, committer: ident, message: 'written by scalpel\n' }),
    );
    git(repo, ['update-ref', 'refs/heads/main', commit]);
    git(repo, ['fsck', '--strict', '--no-dangling']);
    expect(git(repo, ['cat-file', '-p', `${commit}^{tree}`])).toContain('f2');
    expect(git(repo, ['cat-file', 'blob', ids[1]])).toBe('hello\n');
    expect(equalBytes(new Uint8Array(git(repo, ['cat-file', 'blob', ids[2]], { encoding: 'buffer' })), big)).toBe(true);
    for (const oid of [...ids, tree, commit]) {
      const st = statSync(join(objects, oid.slice(0, 2), oid.slice(2)));
      expect(st.mode & 0o777).toBe(0o444);
    }
    // level 1 (git's core.loosecompression default): the file is what encodeLooseObject writes
    expect(equalBytes(readFileSync(join(objects, ids[2].slice(0, 2), ids[2].slice(2))), encodeLooseObject('blob', big, { level: 1 }))).toBe(
      true,
    );
    expect(tempFilesUnder(objects)).toEqual([]);
    // reading back through the odb
    expect(equalBytes((await odb.read(ids[2])).content, big)).toBe(true);
  });

  it('an existing object is not rewritten (loose or packed); concurrent writes of one object', async () => {
    const repo = makeTempRepo({ objectFormat: format });
    const objects = objectsDir(repo);
    const odb = new ObjectDatabase({ fs: nodeFs(), objectsDir: objects, format, compressionLevel: 9 });
    const content = new TextEncoder().encode('same\n'.repeat(100));
    const oid = await odb.write('blob', content);
    const path = join(objects, oid.slice(0, 2), oid.slice(2));
    const st1 = statSync(path);
    expect(await odb.write('blob', content)).toBe(oid);
    const st2 = statSync(path);
    expect([st2.ino, st2.mtimeMs]).toEqual([st1.ino, st1.mtimeMs]);
    const packedOid = git(repo, ['hash-object', '-w', '--stdin'], { input: 'packed\n' }).trim();
    git(repo, ['pack-objects', '-q', join(objects, 'pack', 'pack')], { input: `${packedOid}\n` });
    git(repo, ['prune-packed']);
    const fresh = new ObjectDatabase({ fs: nodeFs(), objectsDir: objects, format });
    expect(await fresh.write('blob', new TextEncoder().encode('packed\n'))).toBe(packedOid);
    expect(existsSync(join(objects, packedOid.slice(0, 2), packedOid.slice(2)))).toBe(false);
    const many = new TextEncoder().encode('raced\n');
    const results = await Promise.all(Array.from({ length: 16 }, () => fresh.write('blob', many)));
    expect(new Set(results).size).toBe(1);
    expect(tempFilesUnder(objects)).toEqual([]);
    git(repo, ['cat-file', '-e', results[0]]);
  });

  it('a failed write leaves no temp file behind and reports the cause', async () => {
    const repo = makeTempRepo({ objectFormat: format });
    const objects = objectsDir(repo);
    const base = nodeFs();
    const failingRename: Fs = {
      ...base,
      async rename() {
        throw Object.assign(new Error('EIO: rename failed'), { code: 'EIO' });
      },
    };
    const e1 = await new ObjectDatabase({ fs: failingRename, objectsDir: objects, format })
      .write('blob', new Uint8Array([1, 2, 3]))
      .catch((e: unknown) => e);
    expect((e1 as { code?: string }).code).toBe('EIO');
    const failingWrite: Fs = {
      ...base,
      async writeFile(path, data, opts) {
        await base.writeFile(path, data.subarray(0, 3), opts); // a torn write, then ENOSPC
        throw Object.assign(new Error('ENOSPC: no space'), { code: 'ENOSPC' });
      },
    };
    const e2 = await new ObjectDatabase({ fs: failingWrite, objectsDir: objects, format })
      .write('blob', new Uint8Array([4, 5, 6]))
      .catch((e: unknown) => e);
    expect((e2 as { code?: string }).code).toBe('ENOSPC');
    expect(tempFilesUnder(objects)).toEqual([]);
    expect(looseCount(objects)).toBe(0);
    // a filesystem that will not write a file it created read-only (memfs): 0644, then chmod a-w
    const memfsLike: Fs = {
      ...base,
      async writeFile(path, data, opts) {
        if (opts?.mode !== undefined && !(opts.mode & 0o200)) {
          await base.writeFile(path, new Uint8Array(0), opts);
          throw Object.assign(new Error('EACCES: permission denied'), { code: 'EACCES' });
        }
        await base.writeFile(path, data, opts);
      },
    };
    const odbM = new ObjectDatabase({ fs: memfsLike, objectsDir: objects, format });
    for (const text of ['first\n', 'second\n']) {
      const oid = await odbM.write('blob', new TextEncoder().encode(text));
      expect(git(repo, ['cat-file', 'blob', oid])).toBe(text);
      expect(statSync(join(objects, oid.slice(0, 2), oid.slice(2))).mode & 0o777).toBe(0o444);
    }
    expect(tempFilesUnder(objects)).toEqual([]);
    // a bad type or level is refused up front
    await expect(
      new ObjectDatabase({ fs: base, objectsDir: objects, format }).write('blub' as ObjectType, new Uint8Array(0)),
    ).rejects.toMatchObject({ code: 'BAD_ARGUMENT' });
    expect(() => new ObjectDatabase({ fs: base, objectsDir: objects, format, compressionLevel: 12 })).toThrow(ScalpelError);
  });
});

describe('core.sharedRepository', () => {
  it('file and fan-out directory modes match what git writes', async () => {
    for (const [value, shared] of [
      ['group', 'group'],
      ['all', 'all'],
      ['0640', 0o640],
      ['0600', 0o600],
    ] as const) {
      expect(parseSharedRepository(value)).toBe(shared);
      const viaGit = makeTempRepo();
      const oid = git(viaGit, ['-c', `core.sharedRepository=${value}`, 'hash-object', '-w', '--stdin'], { input: 'shared\n' }).trim();
      const ours = makeTempRepo();
      const odb = new ObjectDatabase({ fs: nodeFs(), objectsDir: objectsDir(ours), format: 'sha1', sharedRepository: shared });
      expect(await odb.write('blob', new TextEncoder().encode('shared\n'))).toBe(oid);
      const mode = (r: string, p: string) => statSync(join(objectsDir(r), p)).mode & 0o7777;
      expect(mode(ours, oid.slice(0, 2)).toString(8), `dir ${value}`).toBe(mode(viaGit, oid.slice(0, 2)).toString(8));
      expect(mode(ours, `${oid.slice(0, 2)}/${oid.slice(2)}`).toString(8), `file ${value}`).toBe(
        mode(viaGit, `${oid.slice(0, 2)}/${oid.slice(2)}`).toString(8),
      );
    }
    expect(parseSharedRepository('umask')).toBe('umask');
    expect(parseSharedRepository('true')).toBe('group');
    expect(parseSharedRepository('1')).toBe('group');
    expect(parseSharedRepository('2')).toBe('all');
    expect(parseSharedRepository('false')).toBe('umask');
    expect(() => parseSharedRepository('0400')).toThrow(ScalpelError);
    expect(sharedPermissions('umask', 0o100444, false)).toBe(0o100444);
  });
});
