import { describe, expect, it } from 'vitest';
import { EventLog } from '../../src/store/log.js';
import { faultyFs } from '../../src/fs/faulty.js';
import { newMemoryFs } from '../helpers/memfs.js';

const at = (s: number) => () => new Date(Date.UTC(2026, 11, 1, 12, 0, s));

describe('event log', () => {
  it('records come back oldest first, per session; a record cut short by a crash is skipped', async () => {
    const fs = newMemoryFs();
    let t = 0;
    const log = new EventLog(fs, '/s', () => at(t++)());
    expect(await log.append({ event: 'snapshot', session: 'a', ids: ['1'], paths: ['x'] })).toBeNull();
    expect(await log.append({ event: 'restore', session: 'a', ids: ['1'], paths: ['x'], detail: { n: 1 } })).toBeNull();
    expect(await log.append({ event: 'snapshot', session: 'b', ids: ['2'], paths: [] })).toBeNull();
    const names = fs.volume.readdirSync('/s/log/a') as string[];
    fs.volume.writeFileSync(`/s/log/a/${names[1].replace(/\.json$/, '-cut.json')}`, '{"at":"2026');
    const a = await log.read('a');
    expect(a.map((r) => [r.event, r.at])).toEqual([
      ['snapshot', '2026-12-01T12:00:00.000Z'],
      ['restore', '2026-12-01T12:00:01.000Z'],
    ]);
    expect(a[1].detail).toEqual({ n: 1 });
    expect((await log.read('b')).map((r) => r.ids)).toEqual([['2']]);
    expect(await log.read('none')).toEqual([]);
    await log.remove('a');
    expect(await log.read('a')).toEqual([]);
    // removed meanwhile: the next append makes the directory again
    expect(await log.append({ event: 'drop', session: 'a', ids: [], paths: [] })).toBeNull();
    expect((await log.read('a')).length).toBe(1);
  });

  it('records appended within one millisecond come back in the order they were appended (a blocked call: its start, then its end)', async () => {
    const fs = newMemoryFs();
    const log = new EventLog(fs, '/s', at(7));
    for (let i = 0; i < 300; i++) await log.append({ event: 'tool', session: 'a', ids: ['t'], paths: [], detail: { i } });
    expect((await log.read('a')).map((r) => r.detail?.i)).toEqual([...Array(300).keys()]);
  });

  it('a failed append is returned as a warning, never thrown; a hostile session name is refused', async () => {
    const mem = newMemoryFs();
    const fs = faultyFs(mem, { failAt: 1, ops: ['writeFile'], after: 'crash' });
    const log = new EventLog(fs, '/s', at(0));
    expect(await log.append({ event: 'snapshot', session: 'a', ids: [], paths: [] })).toMatch(/could not append to the log/);
    await expect(log.read('../x')).rejects.toMatchObject({ code: 'BAD_ARGUMENT' });
  });
});
