import { describe, expect, it } from 'vitest';
import * as nodefs from 'node:fs';
import { Buffer } from 'node:buffer';
import { join } from 'node:path';
import { Volume, createFsFromVolume } from 'memfs';
import { ScalpelError } from '../../src/errors/index.js';
import { encodePath, utf8Decode, utf8Encode } from '../../src/bytes/text.js';
import { convertStat, FsError, normalizeErrorCode, probeCapabilities, toFs, type AdaptedFs } from '../../src/fs/adapt.js';
import { faultyFs } from '../../src/fs/faulty.js';
import { MEMFS_CAPABILITIES } from '../../src/fs/memory.js';
import { nodeFs } from '../../src/fs/node.js';
import type { Fs, FsCapabilities } from '../../src/fs/types.js';
import { makeTempDir } from '../helpers/git.js';
import { buildTree, dumpTree, lightningLikeFs, newMemoryFs, rawMemfs } from '../helpers/memfs.js';

const enc = utf8Encode;

async function rejection(p: Promise<unknown>): Promise<Error & { code?: string; data?: Record<string, unknown>; cause?: unknown }> {
  try {
    await p;
  } catch (e) {
    return e as Error & { code?: string };
  }
  throw new Error('expected a rejection');
}

/** Each filesystem under test: how to make it raw, where its scratch root is, and what the probe must say. */
interface Subject {
  name: string;
  make(): { input: unknown; root: string };
  expected: FsCapabilities;
  pathMode: 'bytes' | 'strings' | 'utf8';
}

const SUBJECTS: Subject[] = [
  {
    name: 'node:fs module',
    make: () => ({ input: nodefs, root: makeTempDir('scalpel-adapt-') }),
    expected: { symlinks: true, modes: true, exclusiveCreate: true, renameFollowsSymlinks: false, renameReplaces: true },
    pathMode: 'bytes',
  },
  {
    name: 'memfs',
    make: () => ({ input: rawMemfs(), root: '/work' }),
    expected: { symlinks: true, modes: true, exclusiveCreate: true, renameFollowsSymlinks: true, renameReplaces: false },
    pathMode: 'strings',
  },
  {
    name: 'lightning-like (no symlink, no chmod, ignores wx)',
    make: () => ({ input: lightningLikeFs(), root: '/work' }),
    expected: { symlinks: false, modes: false, exclusiveCreate: false, renameFollowsSymlinks: true, renameReplaces: true },
    pathMode: 'strings',
  },
  {
    name: 'lightning-like with symlinks',
    make: () => ({ input: lightningLikeFs({ symlinks: true }), root: '/work' }),
    expected: { symlinks: true, modes: false, exclusiveCreate: false, renameFollowsSymlinks: true, renameReplaces: true },
    pathMode: 'strings',
  },
];

describe.each(SUBJECTS)('toFs + probe: $name', (subject) => {
  async function setup(): Promise<{ fs: AdaptedFs; root: string; input: unknown }> {
    const { input, root } = subject.make();
    const bare = await toFs(input);
    await bare.mkdir(root).catch(() => undefined);
    await bare.mkdir(join(root, '.git'));
    const fs = (await toFs(input, { probeDir: `${root}/.git/scalpel/probe` })) as AdaptedFs;
    return { fs, root, input };
  }

  it('probes report the truth and leave nothing behind', async () => {
    const { fs, root } = await setup();
    expect(fs.capabilities).toEqual(subject.expected);
    expect(fs.probed).toBe(true);
    expect(fs.pathMode).toBe(subject.pathMode);
    // the probe created .git/scalpel and .git/scalpel/probe and removed both again (where rename
    // does not really replace, the directory it tried that in can never be removed: see below)
    expect(await probeLeftovers(fs, `${root}/.git`, subject.expected)).toEqual([]);
  });

  it('maps errors to .code with the original as cause; lstat/stat give null when missing', async () => {
    const { fs, root } = await setup();
    await fs.writeFile(`${root}/f`, enc('x'));
    expect(await fs.lstat(`${root}/nope`)).toBeNull();
    expect(await fs.stat(`${root}/nope`)).toBeNull();
    expect(await fs.lstat(`${root}/f/below`)).toBeNull(); // ENOTDIR (ENOENT on lightning-fs)
    const missing = await rejection(fs.readFile(`${root}/nope`));
    expect(missing).toBeInstanceOf(FsError);
    expect(missing.code).toBe('ENOENT');
    expect(missing.cause).toBeDefined();
    expect((await rejection(fs.mkdir(`${root}/.git`))).code).toBe('EEXIST');
    await fs.writeFile(`${root}/.git/x`, enc('x'));
    expect((await rejection(fs.rmdir(`${root}/.git`))).code).toBe('ENOTEMPTY');
    expect((await rejection(fs.readdir(`${root}/f`))).code).toBe('ENOTDIR');
    expect((await rejection(fs.readFile(`${root}/.git`))).code).toBe('EISDIR');
    expect((await rejection(fs.unlink(`${root}/nope`))).code).toBe('ENOENT');
    expect((await rejection(fs.writeFile(`${root}/no/such/dir`, enc('x')))).code).toBe('ENOENT');
  });

  it('converts stats: type bits, 32-bit fields, no NaN', async () => {
    const { fs, root } = await setup();
    await fs.writeFile(`${root}/f`, enc('hello'));
    const st = (await fs.lstat(`${root}/f`))!;
    expect(st.type).toBe('file');
    expect(st.mode & 0o170000).toBe(0o100000);
    expect(st.size).toBe(5);
    for (const v of Object.values(st))
      if (typeof v === 'number') expect(Number.isInteger(v) && v >= 0 && v <= 0xffffffff, String(v)).toBe(true);
    expect(st.mtimeNanoseconds).toBeLessThan(1e9);
    expect(Math.abs(st.mtimeSeconds - Date.now() / 1000)).toBeLessThan(60);
    const d = (await fs.lstat(`${root}/.git`))!;
    expect(d.type).toBe('directory');
    expect(d.mode & 0o170000).toBe(0o040000);
  });

  it('exclusive create fails with EEXIST and keeps the content (emulated where wx is ignored)', async () => {
    const { fs, root } = await setup();
    await fs.writeFile(`${root}/lock`, enc('mine'));
    expect((await rejection(fs.writeFile(`${root}/lock`, enc('theirs'), { exclusive: true }))).code).toBe('EEXIST');
    expect(utf8Decode(await fs.readFile(`${root}/lock`))).toBe('mine');
    await fs.writeFile(`${root}/new`, enc('n'), { exclusive: true });
    expect(utf8Decode(await fs.readFile(`${root}/new`))).toBe('n');
  });

  it('missing methods throw UNSUPPORTED naming the capability, never pretend', async () => {
    const { fs, root } = await setup();
    await fs.writeFile(`${root}/f`, enc('x'));
    if (!subject.expected.modes && !(subject.make().input as Record<string, unknown>).chmod) {
      const e = await rejection(fs.chmod(`${root}/f`, 0o755));
      expect(e).toBeInstanceOf(ScalpelError);
      expect((e as ScalpelError).code).toBe('UNSUPPORTED');
      expect((e as ScalpelError).data.capability).toBe('modes');
    }
    if (!subject.expected.symlinks) {
      for (const p of [fs.symlink('f', `${root}/l`), fs.readlink(`${root}/f`)]) {
        const e = await rejection(p);
        expect((e as ScalpelError).code).toBe('UNSUPPORTED');
        expect((e as ScalpelError).data.capability).toBe('symlinks');
      }
    }
  });

  it('clean up the scratch files even when the probe fails (every mkdir / writeFile failure point)', async () => {
    const { input, root } = subject.make();
    const bare = await toFs(input);
    await bare.mkdir(root).catch(() => undefined);
    await bare.mkdir(`${root}/.git`);
    for (const ops of [['mkdir'], ['writeFile'], ['symlink', 'rename', 'chmod']] as const) {
      for (let n = 1; n <= 6; n++) {
        const f = faultyFs(bare, { failAt: n, ops: [...ops] });
        await probeCapabilities(f, `${root}/.git/scalpel/probe`).catch((e) => expect(fsCode(e)).toBe('EIO'));
        expect(await probeLeftovers(bare, `${root}/.git`, subject.expected), `${ops} ${n}`).toEqual([]);
      }
    }
  });
});

/**
 * What a probe left under `dir`, apart from what it cannot remove: where rename onto a file does
 * not truly replace it (memfs 4), the directory the renameReplaces probe used stays, empty to
 * readdir, together with the directories above it (rmdir says ENOTEMPTY all the way up).
 */
async function probeLeftovers(fs: Fs, dir: string, caps: FsCapabilities): Promise<string[]> {
  const out: string[] = [];
  const walk = async (d: string, rel: string) => {
    for (const n of await fs.readdir(d)) {
      const r = rel ? `${rel}/${n}` : n;
      const st = await fs.lstat(`${d}/${n}`);
      if (st?.type === 'directory') {
        const allowed = caps.renameReplaces === false && /^scalpel(\/probe(\/probe-[0-9a-f]+(\/replace)?)?)?$/.test(r);
        if (!allowed) out.push(r + '/');
        await walk(`${d}/${n}`, r);
      } else out.push(r);
    }
  };
  await walk(dir, '');
  return out;
}

function fsCode(e: unknown): string | undefined {
  return (e as { code?: string }).code;
}

describe('memfs facts (memfs 4.80)', () => {
  it('rename of a symlink moves its target, not the link: the probe is needed', async () => {
    const p = createFsFromVolume(new Volume()).promises;
    await p.mkdir('/d');
    await p.writeFile('/d/target', 'T');
    await p.symlink('target', '/d/link');
    await p.rename('/d/link', '/d/moved');
    // POSIX: /d/moved is a symlink to 'target', /d/link is gone, /d/target untouched.
    // memfs: /d/moved is a regular file holding the target's data, /d/target is gone, the link stays.
    expect((await p.lstat('/d/moved')).isSymbolicLink()).toBe(false);
    expect(String(await p.readFile('/d/moved'))).toBe('T');
    expect((await p.lstat('/d/link')).isSymbolicLink()).toBe(true);
    await expect(p.lstat('/d/target')).rejects.toMatchObject({ code: 'ENOENT' });
  });

  it('times are whole milliseconds, dev is 0, bigint stats are supported', async () => {
    const p = createFsFromVolume(new Volume()).promises;
    await p.writeFile('/f', 'x');
    const b = (await p.lstat('/f', { bigint: true })) as unknown as { mtimeNs: bigint; dev: bigint };
    expect(typeof b.mtimeNs).toBe('bigint');
    expect(b.mtimeNs % 1_000_000n).toBe(0n);
    expect(b.dev).toBe(0n);
    const fs = newMemoryFs();
    await fs.writeFile('/f', enc('x'));
    const st = (await fs.lstat('/f'))!;
    expect(st.dev).toBe(0);
    expect(st.mtimeNanoseconds % 1_000_000).toBe(0);
  });

  it('Buffer / Uint8Array paths are decoded as UTF-8 (0xff becomes U+FFFD), strings are kept verbatim', async () => {
    const p = createFsFromVolume(new Volume()).promises;
    await p.writeFile(Buffer.from([0x2f, 0x61, 0xff]), 'x');
    expect(await p.readdir('/')).toEqual(['a\ufffd']);
    await p.writeFile('/b\udcff', 'y');
    expect(((await p.readdir('/')) as string[]).includes('b\udcff')).toBe(true);
  });

  it('rename of a file over an empty directory succeeds (POSIX says EISDIR)', async () => {
    const p = createFsFromVolume(new Volume()).promises;
    await p.mkdir('/dir');
    await p.writeFile('/f', 'x');
    await p.rename('/f', '/dir');
    expect((await p.lstat('/dir')).isFile()).toBe(true);
  });

  it('rename onto a file keeps counting the replaced entry: the directory can never be removed', async () => {
    const p = createFsFromVolume(new Volume()).promises;
    await p.mkdir('/d');
    await p.writeFile('/d/f', 'old');
    await p.writeFile('/d/t', 'new');
    await p.rename('/d/t', '/d/f');
    await p.unlink('/d/f');
    expect(await p.readdir('/d')).toEqual([]);
    await expect(p.rmdir('/d')).rejects.toMatchObject({ code: 'ENOTEMPTY' });
    // unlink first, then rename: the directory stays removable (what renameOver does on memfs)
    await p.mkdir('/e');
    await p.writeFile('/e/f', 'old');
    await p.writeFile('/e/t', 'new');
    await p.unlink('/e/f');
    await p.rename('/e/t', '/e/f');
    await p.unlink('/e/f');
    await p.rmdir('/e');
  });

  it('memoryFs() declares exactly what the probe finds', async () => {
    const fs = newMemoryFs();
    await fs.mkdir('/repo');
    expect(fs.capabilities).toEqual(MEMFS_CAPABILITIES);
    const probed = await probeCapabilities(fs, '/repo/.git/scalpel/probe');
    const { reasons, ...caps } = probed;
    expect(caps).toEqual(MEMFS_CAPABILITIES);
    expect(reasons.renameFollowsSymlinks).toMatch(/destination file/);
    expect(reasons.renameReplaces).toMatch(/rmdir failed with ENOTEMPTY/);
    expect(await probeLeftovers(fs, '/repo/.git', MEMFS_CAPABILITIES)).toEqual([]);
  });
});

describe('non-UTF-8 names', () => {
  const NAME = Buffer.from([0x78, 0xff]); // "x" + 0xff

  it.each([
    ['nodeFs()', () => nodeFs()],
    ['toFs(node:fs) probed', null],
  ] as const)('%s lists, reads and writes a name with byte 0xff', async (_label, make) => {
    const dir = makeTempDir('scalpel-bytes-');
    nodefs.writeFileSync(Buffer.concat([Buffer.from(dir + '/'), NAME]), 'raw');
    const fs: Fs = make ? make() : await toFs(nodefs, { probeDir: `${dir}/probe` });
    const names = await fs.readdir(dir);
    expect(names).toEqual(['x\udcff']);
    expect(encodePath(names[0])).toEqual(new Uint8Array(NAME));
    expect(utf8Decode(await fs.readFile(`${dir}/${names[0]}`))).toBe('raw');
    expect((await fs.lstat(`${dir}/${names[0]}`))?.type).toBe('file');
    await fs.writeFile(`${dir}/y\udcfe`, enc('new'));
    await fs.symlink('x\udcff', `${dir}/l\udcfd`);
    expect(await fs.readlink(`${dir}/l\udcfd`)).toBe('x\udcff');
    const onDisk = nodefs.readdirSync(dir, { encoding: 'buffer' }).map((b) => [...b]);
    expect(onDisk).toContainEqual([0x79, 0xfe]);
    expect(onDisk).toContainEqual([0x6c, 0xfd]);
    await fs.rename(`${dir}/y\udcfe`, `${dir}/z\udcfc`);
    expect(nodefs.readFileSync(Buffer.concat([Buffer.from(dir + '/'), Buffer.from([0x7a, 0xfc])]), 'utf8')).toBe('new');
  });

  it('an unprobed adapter refuses them instead of writing a different name', async () => {
    const dir = makeTempDir('scalpel-bytes-');
    const fs = await toFs(nodefs);
    const e = await rejection(fs.writeFile(`${dir}/x\udcff`, enc('x')));
    expect((e as ScalpelError).code).toBe('UNSUPPORTED');
    expect((e as ScalpelError).data.capability).toBe('nonUtf8Names');
    expect(nodefs.readdirSync(dir)).toEqual([]);
  });

  it('memfs and lightning-like fs keep the escaped string', async () => {
    for (const input of [rawMemfs(), lightningLikeFs()]) {
      const fs = await toFs(input, { probeDir: '/probe' });
      await fs.writeFile('/n\udcff', enc('x'));
      expect((await fs.readdir('/')).filter((n) => n !== 'probe' || fs.capabilities.renameReplaces !== false)).toEqual(['n\udcff']);
      expect(utf8Decode(await fs.readFile('/n\udcff'))).toBe('x');
    }
  });
});

describe('toFs inputs', () => {
  it('returns an Fs as is, and with probeDir wraps it with probed capabilities', async () => {
    const fs = nodeFs();
    expect(await toFs(fs)).toBe(fs);
    const dir = makeTempDir();
    const probed = await toFs(fs, { probeDir: `${dir}/p` });
    expect(probed).not.toBe(fs);
    expect(probed.capabilities).toEqual({
      symlinks: true,
      modes: true,
      exclusiveCreate: true,
      renameFollowsSymlinks: false,
      renameReplaces: true,
    });
    await probed.writeFile(`${dir}/a`, enc('a'));
    expect(nodefs.readdirSync(dir)).toEqual(['a']);
  });

  it('re-probes the raw fs under one of its own adapters (whose exclusive create may be emulated)', async () => {
    const raw = lightningLikeFs();
    const unprobed = (await toFs(raw)) as AdaptedFs;
    expect(unprobed.probed).toBe(false);
    expect(unprobed.capabilities.exclusiveCreate).toBe(false);
    const probed = (await toFs(unprobed, { probeDir: '/p' })) as AdaptedFs;
    expect(probed.probed).toBe(true);
    expect(probed.capabilities.exclusiveCreate).toBe(false);
  });

  it('accepts { promises } and bare promise objects', async () => {
    const l = lightningLikeFs();
    for (const input of [l, { promises: l }]) {
      const fs = await toFs(input);
      await fs.writeFile('/x', enc('1'));
      expect(utf8Decode(await fs.readFile('/x'))).toBe('1');
    }
  });

  it('guesses safely without a probe', async () => {
    const fs = await toFs(rawMemfs());
    expect(fs.capabilities).toEqual({
      symlinks: true,
      modes: true,
      exclusiveCreate: false,
      renameFollowsSymlinks: true,
      renameReplaces: false,
    });
    expect((await toFs(lightningLikeFs())).capabilities).toEqual({
      symlinks: false,
      modes: false,
      exclusiveCreate: false,
      renameFollowsSymlinks: true,
      renameReplaces: false,
    });
  });

  it('forced capabilities win over probes', async () => {
    const fs = await toFs(rawMemfs(), { probeDir: '/p', capabilities: { symlinks: false } });
    expect(fs.capabilities.symlinks).toBe(false);
  });

  it('refuses what is not a filesystem', async () => {
    for (const bad of [null, 42, {}, { readFile: async () => new Uint8Array() }]) {
      const e = await rejection(toFs(bad));
      expect((e as ScalpelError).code).toBe('BAD_ARGUMENT');
    }
  });

  it('the raw lightning-like fs really ignores wx (what the emulation is for)', async () => {
    const raw = lightningLikeFs();
    await raw.writeFile('/f', 'a');
    await raw.writeFile('/f', 'b', { flag: 'wx' });
    expect(utf8Decode(await raw.readFile('/f'))).toBe('b');
  });
});

describe('convertStat', () => {
  it('truncates to 32 bits like git and never produces NaN', () => {
    const s = convertStat({
      mode: 0o644,
      size: 3,
      dev: 2 ** 40 + 5,
      ino: 2n ** 64n - 1n,
      uid: -1,
      gid: 2 ** 32 + 7,
      mtimeMs: NaN,
      ctimeMs: undefined,
      isFile: () => true,
      isDirectory: () => false,
      isSymbolicLink: () => false,
    });
    expect(s).toMatchObject({
      type: 'file',
      mode: 0o100644,
      dev: 5,
      ino: 0xffffffff,
      uid: 0xffffffff,
      gid: 7,
      mtimeSeconds: 0,
      mtimeNanoseconds: 0,
      ctimeSeconds: 0,
      ctimeNanoseconds: 0,
    });
  });

  it('prefers nanosecond bigint times, then ms, then Date', () => {
    expect(convertStat({ type: 'file', mtimeNs: 1_700_000_000_123_456_789n, ctimeNs: 5n, mtimeMs: 1 })).toMatchObject({
      mtimeSeconds: 1_700_000_000,
      mtimeNanoseconds: 123_456_789,
      ctimeSeconds: 0,
      ctimeNanoseconds: 5,
    });
    expect(convertStat({ type: 'file', mtimeMs: 1_700_000_000_123.5 })).toMatchObject({
      mtimeSeconds: 1_700_000_000,
      mtimeNanoseconds: 123_500_000,
      ctimeSeconds: 1_700_000_000,
    });
    expect(convertStat({ type: 'dir', mtime: new Date(2_000_500), ctime: new Date(NaN) })).toMatchObject({
      type: 'directory',
      mode: 0o040000,
      mtimeSeconds: 2000,
      mtimeNanoseconds: 500_000_000,
      ctimeSeconds: 2000,
    });
    expect(convertStat({ type: 'symlink', mode: 0o666 })).toMatchObject({ type: 'symlink', mode: 0o120666 });
    expect(convertStat({ mode: 0o100755 }).type).toBe('file');
  });

  it('normalizes error codes from other fs families', () => {
    expect(normalizeErrorCode({ code: 'ENOENT' })).toBe('ENOENT');
    expect(normalizeErrorCode({ name: 'NotFoundError', message: 'x' })).toBe('ENOENT');
    expect(normalizeErrorCode(new TypeError('ENOTDIR is not a constructor'))).toBe('ENOTDIR');
    expect(normalizeErrorCode(new Error('boom'))).toBe('UNKNOWN');
  });
});

describe('buildTree / dumpTree', () => {
  it('round-trips types, modes, symlink targets and bytes on memfs and node', async () => {
    const spec = {
      'a.txt': 'hello\n',
      'bin/run': { type: 'file' as const, data: '#!/bin/sh\n', mode: 0o755 },
      link: { type: 'symlink' as const, target: 'a.txt' },
      dangling: { type: 'symlink' as const, target: 'nowhere' },
      empty: { type: 'directory' as const },
      'deep/er/x': new Uint8Array([0, 255]),
      '.git': { HEAD: 'ref: refs/heads/main\n' },
    };
    const dumps = [];
    for (const [fs, root] of [
      [newMemoryFs(), '/r'],
      [nodeFs(), makeTempDir()],
    ] as const) {
      await buildTree(fs, root, spec);
      dumps.push(await dumpTree(fs, root, { skip: (p) => p === '.git', mode: 'exec', bytes: true }));
    }
    expect(dumps[0]).toEqual(dumps[1]);
    expect(dumps[0].map((e) => e.path)).toEqual(['a.txt', 'bin', 'bin/run', 'dangling', 'deep', 'deep/er', 'deep/er/x', 'empty', 'link']);
    expect(dumps[0].find((e) => e.path === 'bin/run')).toMatchObject({ type: 'file', mode: 0o755 });
    expect(dumps[0].find((e) => e.path === 'a.txt')).toMatchObject({
      mode: 0o644,
      size: 6,
      sha1: 'f572d396fae9206628714fb2ce00f72e94f2258f',
    });
    expect(dumps[0].find((e) => e.path === 'dangling')).toEqual({ path: 'dangling', type: 'symlink', target: 'nowhere' });
    expect(dumps[0].find((e) => e.path === 'deep/er/x')?.bytes).toEqual(new Uint8Array([0, 255]));
  });
});
