import { describe, expect, it } from 'vitest';
import { build } from 'esbuild';
import { fileURLToPath } from 'node:url';
import { utf8Decode, utf8Encode } from '../../src/bytes/text.js';
import { faultyFs, MUTATING_OPS } from '../../src/fs/faulty.js';
import { newMemoryFs } from '../helpers/memfs.js';

const enc = utf8Encode;

async function rejection(p: Promise<unknown>): Promise<Error & { code?: string; injected?: boolean; syscall?: string; path?: string }> {
  try {
    await p;
  } catch (e) {
    return e as Error & { code?: string };
  }
  throw new Error('expected a rejection');
}

async function base() {
  const fs = newMemoryFs();
  await fs.mkdir('/d');
  await fs.writeFile('/d/f', enc('0123456789'));
  return fs;
}

async function everyOp(f: ReturnType<typeof faultyFs>) {
  const results: Array<string> = [];
  const step = async (p: Promise<unknown>) => {
    try {
      await p;
      results.push('ok');
    } catch (e) {
      results.push((e as { code?: string }).code ?? 'error');
    }
  };
  await step(f.writeFile('/d/a', enc('a')));
  await step(f.rename('/d/a', '/d/b'));
  await step(f.unlink('/d/f'));
  await step(f.symlink('b', '/d/l'));
  await step(f.mkdir('/d/sub'));
  await step(f.rmdir('/d/sub'));
  await step(f.chmod('/d/b', 0o755));
  return results;
}

describe('faultyFs', () => {
  it('logs every mutating call in order and passes reads through', async () => {
    const inner = await base();
    const f = faultyFs(inner, { failAt: 0 });
    expect(await everyOp(f)).toEqual(['ok', 'ok', 'ok', 'ok', 'ok', 'ok', 'ok']);
    expect(f.failed).toBe(false);
    expect(f.count).toBe(7);
    expect(f.calls.map((c) => c.op)).toEqual(MUTATING_OPS.filter((op) => op !== 'link'));
    // a hard link (how a lock is made with its content in it) is a mutating call too
    await (f.link as NonNullable<typeof f.link>)('/d/b', '/d/h');
    expect(f.calls.at(-1)).toEqual({ op: 'link', path: '/d/h', to: '/d/b', n: 8, outcome: 'ok' });
    await f.unlink('/d/h');
    expect(f.calls[1]).toEqual({ op: 'rename', path: '/d/a', to: '/d/b', n: 2, outcome: 'ok' });
    expect(f.calls[3]).toEqual({ op: 'symlink', path: '/d/l', to: 'b', n: 4, outcome: 'ok' });
    expect(utf8Decode(await f.readFile('/d/b'))).toBe('a');
    expect(await f.readlink('/d/l')).toBe('b');
    expect((await f.readdir('/d')).sort()).toEqual(['b', 'l']);
    expect((await f.lstat('/d/l'))?.type).toBe('symlink');
    expect((await f.stat('/d/l'))?.type).toBe('file');
    expect(f.calls.length).toBe(9); // reads are not logged
    expect(f.capabilities).toBe(inner.capabilities);
    expect(f.name).toBe('faulty(memfs)');
  });

  it.each([1, 2, 3, 4, 5, 6, 7])('failAt %i fails exactly that call with EIO and without effect', async (n) => {
    const f = faultyFs(await base(), { failAt: n });
    const results = await everyOp(f);
    expect(results[n - 1]).toBe('EIO');
    expect(results.filter((r) => r === 'EIO').length).toBe(1);
    expect(f.failed).toBe(true);
    expect(f.calls[n - 1].outcome).toBe('fault');
  });

  it('the injected error has code, syscall and path', async () => {
    const f = faultyFs(await base(), { failAt: 1 });
    const e = await rejection(f.unlink('/d/f'));
    expect(e).toMatchObject({ code: 'EIO', syscall: 'unlink', path: '/d/f', injected: true });
    expect(await f.lstat('/d/f')).not.toBeNull();
  });

  it('counts only the listed ops; the others pass and are logged without a number', async () => {
    const f = faultyFs(await base(), { failAt: 2, ops: ['rename', 'chmod'] });
    const results = await everyOp(f);
    expect(results).toEqual(['ok', 'ok', 'ok', 'ok', 'ok', 'ok', 'EIO']);
    expect(f.count).toBe(2);
    expect(f.calls[0].n).toBeUndefined();
    expect(f.calls[6]).toMatchObject({ op: 'chmod', n: 2, outcome: 'fault' });
  });

  it("mode 'torn' leaves a truncated prefix of a failing writeFile, as a crash mid-write would", async () => {
    const inner = await base();
    const f = faultyFs(inner, { failAt: 1, mode: 'torn' });
    expect((await rejection(f.writeFile('/d/f', enc('abcdefghij')))).code).toBe('EIO');
    expect(utf8Decode(await inner.readFile('/d/f'))).toBe('abcde');
    expect(f.calls[0].outcome).toBe('torn');
    const g = faultyFs(inner, { failAt: 1, mode: 'torn', tornBytes: 3 });
    await rejection(g.writeFile('/d/new', enc('abcdefghij'), { exclusive: true }));
    expect(utf8Decode(await inner.readFile('/d/new'))).toBe('abc');
    // other ops are atomic: torn mode makes them fail without effect
    const h = faultyFs(inner, { failAt: 1, mode: 'torn' });
    await rejection(h.rename('/d/new', '/d/moved'));
    expect(await inner.lstat('/d/moved')).toBeNull();
  });

  it("after 'crash' every later mutating call fails too; after 'pass' they go through", async () => {
    const crash = faultyFs(await base(), { failAt: 2, after: 'crash' });
    expect(await everyOp(crash)).toEqual(['ok', 'EIO', 'EIO', 'EIO', 'EIO', 'EIO', 'EIO']);
    expect(crash.calls.slice(2).every((c) => c.outcome === 'crashed')).toBe(true);
    expect(await crash.lstat('/d/f')).not.toBeNull(); // the unlink after the crash did nothing
    const pass = faultyFs(await base(), { failAt: 2 });
    // the rename failed, so the chmod of its destination fails in the inner fs
    expect(await everyOp(pass)).toEqual(['ok', 'EIO', 'ok', 'ok', 'ok', 'ok', 'ENOENT']);
    expect(pass.calls[3].outcome).toBe('ok');
    expect(pass.calls[6].outcome).toBe('error');
  });

  it('failAt 0 / Infinity never fires', async () => {
    for (const failAt of [0, Infinity, -1]) {
      const f = faultyFs(await base(), { failAt });
      expect(await everyOp(f)).not.toContain('EIO');
      expect(f.failed).toBe(false);
    }
  });

  it('imports no Node built-in', async () => {
    const entry = fileURLToPath(new URL('../../src/fs/faulty.ts', import.meta.url));
    for (const e of [
      entry,
      entry.replace('faulty.ts', 'atomic.ts'),
      entry.replace('faulty.ts', 'adapt.ts'),
      entry.replace('faulty.ts', 'memory.ts'),
    ]) {
      const r = await build({
        entryPoints: [e],
        bundle: true,
        platform: 'browser',
        format: 'esm',
        write: false,
        metafile: true,
        logLevel: 'silent',
      });
      for (const meta of Object.values(r.metafile.inputs))
        for (const imp of meta.imports) expect(imp.path.startsWith('node:'), `${e}: ${imp.path}`).toBe(false);
      expect(Object.keys(r.metafile.inputs).some((p) => p.includes('memfs'))).toBe(false);
    }
  });
});
