import { existsSync, mkdirSync, readdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { nodeFs } from '../../src/fs/node.js';
import { TempLedger } from '../../src/snapshot/temps.js';
import { makeTempDir } from '../helpers/git.js';

const TEMP = '.a.ts.scalpel-tmp-0123456789abcdef';

function setup() {
  const root = makeTempDir('scalpel-ledger-');
  const wt = join(root, 'wt');
  const outside = join(root, 'outside');
  mkdirSync(join(wt, 'src/lib'), { recursive: true });
  mkdirSync(outside);
  for (const d of [join(wt, 'src'), join(wt, 'src/lib'), outside]) {
    writeFileSync(join(d, TEMP), 'left by a killed run');
    writeFileSync(join(d, 'keep.txt'), "a person's file");
  }
  const file = join(root, 'state', 'restore-temps');
  return { wt, outside, file, ledger: new TempLedger(nodeFs(), file, wt) };
}

describe('restore temp ledger', () => {
  it('no record: nothing is listed or removed', async () => {
    const { wt, ledger } = setup();
    expect(await ledger.sweep(['src'])).toEqual([]);
    expect(existsSync(join(wt, 'src', TEMP))).toBe(true);
  });

  it('a record left behind: the temps in its directories go, nothing else, and the record with them', async () => {
    const { wt, outside, file, ledger } = setup();
    await ledger.record(['src/lib']);
    expect(existsSync(file)).toBe(true);
    const removed = await ledger.sweep(['src']);
    expect(removed).toEqual([join(wt, 'src/lib', TEMP)]);
    expect(existsSync(join(wt, 'src', TEMP))).toBe(true); // not recorded
    expect(readdirSync(join(wt, 'src/lib'))).toEqual(['keep.txt']);
    expect(existsSync(join(outside, TEMP))).toBe(true);
    expect(existsSync(file)).toBe(false);
  });

  it('cleared after a completed write: the next run lists nothing', async () => {
    const { wt, ledger } = setup();
    await ledger.record(['src']);
    await ledger.clear();
    expect(await ledger.sweep(['src'])).toEqual([]);
    expect(existsSync(join(wt, 'src', TEMP))).toBe(true);
  });

  it('a torn record: the directories this restore writes to are swept instead', async () => {
    const { wt, file, ledger } = setup();
    await ledger.record(['src/lib']);
    writeFileSync(file, '{"dirs": ["sr');
    expect(await ledger.sweep(['src'])).toEqual([join(wt, 'src', TEMP)]);
    expect(existsSync(file)).toBe(false);
  });

  it('never lists outside the worktree: hostile entries and directories replaced by links are skipped', async () => {
    const { wt, outside, file, ledger } = setup();
    symlinkSync(outside, join(wt, 'linked'));
    mkdirSync(join(file, '..'), { recursive: true });
    writeFileSync(file, JSON.stringify({ dirs: ['../outside', outside, 'linked', 'src/../..', './src', 'src'] }));
    expect(await ledger.sweep([])).toEqual([join(wt, 'src', TEMP)]);
    expect(existsSync(join(outside, TEMP))).toBe(true);
  });
});
