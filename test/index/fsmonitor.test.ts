import { chmodSync, readFileSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ByteWriter } from '../../src/bytes/writer.js';
import { toHex } from '../../src/bytes/hex.js';
import { ScalpelError } from '../../src/errors/index.js';
import { ewahFromBits, ewahToBytes } from '../../src/index/ewah.js';
import { decodeFsmonitor, encodeFsmonitor, type FsmonitorExtension } from '../../src/index/ext-fsmonitor.js';
import { git, makeTempDir, makeTempRepo } from '../helpers/git.js';
import { walkIndex } from '../helpers/index-walk.js';

function enc(ext: FsmonitorExtension): Uint8Array {
  const w = new ByteWriter();
  encodeFsmonitor(w, ext);
  return w.finish().slice();
}

const TOKEN = 'scalpel-token-1f2e';

/** A repo with `n` committed files, stat data in the past, and a query-fsmonitor hook (protocol v2). */
function fsmonitorRepo(n: number) {
  const dir = makeTempRepo();
  const aux = makeTempDir('scalpel-fsmn-');
  const name = (i: number) => `f${String(i).padStart(4, '0')}`;
  const past = new Date('2020-01-01T00:00:00Z');
  for (let i = 0; i < n; i++) {
    writeFileSync(join(dir, name(i)), `file ${i}\n`);
    utimesSync(join(dir, name(i)), past, past);
  }
  git(dir, ['add', '.']);
  git(dir, ['commit', '-qm', 'base']);
  const changed = join(aux, 'changed');
  const calls = join(aux, 'calls');
  writeFileSync(changed, '');
  const hook = join(aux, 'query-fsmonitor');
  // protocol v2: argv = version, last token; stdout = new token, NUL, NUL-separated changed paths
  writeFileSync(hook, `#!/bin/sh\necho "$1 $2" >> '${calls}'\nprintf '${TOKEN}\\0'\ncat '${changed}'\n`);
  chmodSync(hook, 0o755);
  git(dir, ['config', 'core.fsmonitor', hook]);
  git(dir, ['config', 'core.fsmonitorHookVersion', '2']);
  const modify = (ids: number[]) => {
    const later = new Date('2020-01-02T00:00:00Z');
    for (const i of ids) {
      writeFileSync(join(dir, name(i)), `changed ${i}\n`);
      utimesSync(join(dir, name(i)), later, later);
    }
    writeFileSync(changed, ids.map((i) => name(i) + '\0').join(''));
  };
  const index = () => new Uint8Array(readFileSync(join(dir, '.git', 'index')));
  return { dir, name, modify, index, calls };
}

describe('FSMN against git', () => {
  const patterns: number[][] = [
    [],
    [0],
    [5, 63, 64, 65, 127, 128, 129, 130, 131, 199],
    [...Array.from({ length: 140 }, (_, i) => i + 20), 255, 256, 299],
  ];
  for (const ids of patterns) {
    it(`${ids.length} modified of 300: decode is right, re-encode and rebuild are byte-identical`, () => {
      const r = fsmonitorRepo(300);
      r.modify(ids);
      git(r.dir, ['status', '--porcelain']);
      git(r.dir, ['status', '--porcelain']);
      const idx = r.index();
      const { paths, exts } = walkIndex(idx);
      const at = exts.get('FSMN');
      expect(at).toBeDefined();
      const payload = idx.subarray(at!.start, at!.end);
      const ext = decodeFsmonitor(idx, at!.start, at!.end);
      expect(ext.version).toBe(2);
      if (ext.version !== 2) return;
      expect(Buffer.from(ext.token).toString()).toBe(TOKEN);
      expect(readFileSync(r.calls, 'utf8')).toMatch(/^2 /m); // git spoke protocol v2 to the hook
      const expected = ids.map(r.name).map((p) => paths.indexOf(p));
      expect(expected.every((i) => i >= 0)).toBe(true);
      expect(ext.bitmap.bits).toEqual(expected);
      expect(ext.bitmap.bitSize).toBe(expected.length ? expected[expected.length - 1] + 1 : 0);
      expect(ext.trailing).toBeUndefined();
      expect(toHex(enc(ext))).toBe(toHex(payload));
      // rebuilt from the bits alone (no raw): still git's bytes
      const rebuilt: FsmonitorExtension = { ...ext, bitmap: ewahFromBits(ext.bitmap.bitSize, ext.bitmap.bits) };
      expect(toHex(enc(rebuilt))).toBe(toHex(payload));
    });
  }
});

describe('FSMN codec', () => {
  it('version 1 (u64 nanoseconds) round-trips', () => {
    const ext: FsmonitorExtension = {
      signature: 'FSMN',
      version: 1,
      sinceNanoseconds: 1700000000123456789n,
      bitmap: ewahFromBits(10, [2, 9]),
    };
    const bytes = enc(ext);
    expect(toHex(bytes.subarray(0, 12))).toBe('00000001' + '17979cfe3d85cd15');
    const back = decodeFsmonitor(bytes, 0, bytes.length);
    expect(back.version).toBe(1);
    if (back.version === 1) expect(back.sinceNanoseconds).toBe(1700000000123456789n);
    expect(back.bitmap.bits).toEqual([2, 9]);
    expect(toHex(enc(back))).toBe(toHex(bytes));
  });

  it('bytes after the bitmap (ignored by git) are kept', () => {
    const ext: FsmonitorExtension = {
      signature: 'FSMN',
      version: 2,
      token: Buffer.from('t'),
      bitmap: ewahFromBits(0, []),
      trailing: Uint8Array.from([1, 2, 3]),
    };
    const bytes = enc(ext);
    const back = decodeFsmonitor(bytes, 0, bytes.length);
    expect(Array.from(back.trailing!)).toEqual([1, 2, 3]);
    expect(toHex(enc(back))).toBe(toHex(bytes));
  });

  function reason(bytes: Uint8Array): string {
    try {
      decodeFsmonitor(bytes, 0, bytes.length);
    } catch (e) {
      expect(e).toBeInstanceOf(ScalpelError);
      return `${(e as ScalpelError).code}:${String((e as ScalpelError).data.reason)}`;
    }
    return 'ok';
  }

  it('mirrors git: too short, bad version, ewah size must match what the bitmap consumed', () => {
    expect(reason(Uint8Array.from([0, 0, 0, 2, 0, 0, 0, 0]))).toBe('BAD_EXTENSION:too-short');
    expect(reason(Uint8Array.from([0, 0, 0, 3, 0, 0, 0, 0, 0, 0]))).toBe('BAD_EXTENSION:bad-version');
    const bm = ewahToBytes(ewahFromBits(3, [2]));
    const build = (size: number, extra = 0) => {
      const w = new ByteWriter();
      w.u32(2);
      w.cstring(Buffer.from('tok'));
      w.u32(size);
      w.bytes(bm);
      w.zeros(extra);
      return w.finish().slice();
    };
    expect(reason(build(bm.length))).toBe('ok');
    expect(reason(build(bm.length + 4, 4))).toBe('BAD_EXTENSION:bitmap-size-mismatch');
    expect(reason(build(bm.length + 4))).toBe('BAD_EXTENSION:bitmap-size-overrun');
    expect(reason(build(bm.length - 1))).toBe('BAD_EWAH:eof-before-rlw');
    const noNul = Uint8Array.from([0, 0, 0, 2, 65, 65, 65, 65, 65, 65]);
    expect(reason(noNul)).toBe('BAD_EXTENSION:unterminated-token');
  });

  it('rejects unencodable values', () => {
    expect(() => enc({ signature: 'FSMN', version: 2, token: Uint8Array.from([97, 0]), bitmap: ewahFromBits(0, []) })).toThrow(
      ScalpelError,
    );
    expect(() => enc({ signature: 'FSMN', version: 1, sinceNanoseconds: -1n, bitmap: ewahFromBits(0, []) })).toThrow(ScalpelError);
  });

  it('random bytes, truncations and bit flips of a real payload: ScalpelError or an exact round trip', () => {
    const r = fsmonitorRepo(100);
    r.modify([1, 2, 3, 64, 99]);
    git(r.dir, ['status', '--porcelain']);
    const idx = r.index();
    const at = walkIndex(idx).exts.get('FSMN')!;
    const real = idx.slice(at.start, at.end);
    const check = (m: Uint8Array) => {
      try {
        const ext = decodeFsmonitor(m, 0, m.length);
        expect(toHex(enc(ext))).toBe(toHex(m));
      } catch (e) {
        if (!(e instanceof ScalpelError)) throw e;
      }
    };
    const t0 = Date.now();
    fc.assert(
      fc.property(fc.nat(), fc.nat(7), fc.nat(), (pos, bit, cut) => {
        const m = real.slice();
        m[pos % m.length] ^= 1 << bit;
        check(m);
        check(real.slice(0, cut % (real.length + 1)));
      }),
      { numRuns: 400 },
    );
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 64 }), fc.boolean(), (bytes, v2) => {
        if (bytes.length >= 4 && v2) bytes.set([0, 0, 0, 2], 0);
        check(bytes);
      }),
      { numRuns: 400 },
    );
    expect(Date.now() - t0).toBeLessThan(2000);
  });
});
