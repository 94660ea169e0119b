import { describe, expect, it } from 'vitest';
import { CallsInFlight, type CallRecord } from '../../src/store/calls.js';
import { newMemoryFs } from '../helpers/memfs.js';

const rec = (over: Partial<CallRecord> & { key: string }): CallRecord => ({
  byId: true,
  at: 1,
  turn: null,
  kind: 'write',
  tool: 'write',
  paths: [],
  ...over,
});

describe('tool calls in flight', () => {
  it('what a start keeps comes back once at the end; a call never started, or unreadable, is null', async () => {
    const fs = newMemoryFs();
    const calls = new CallsInFlight(fs, '/s');
    await calls.start('a', rec({ key: 'tool/1', at: 5, turn: 't1', paths: ['src/x.ts'] }));
    await calls.start('a', rec({ key: 'tool/2', at: 6 }));
    // the harness's id kept to a safe file name
    expect((fs.volume.readdirSync('/s/calls/a') as string[]).sort()).toEqual(['tool_1', 'tool_2']);
    expect(await calls.end('a', 'tool/1')).toEqual(rec({ key: 'tool/1', at: 5, turn: 't1', paths: ['src/x.ts'] }));
    expect(await calls.end('a', 'tool/1')).toBeNull();
    expect(await calls.end('b', 'tool/2')).toBeNull();
    fs.volume.writeFileSync('/s/calls/a/cut', '{"at":');
    expect(await calls.end('a', 'cut')).toBeNull();
  });

  it('clear forgets every call of the session and nothing of another', async () => {
    const fs = newMemoryFs();
    const calls = new CallsInFlight(fs, '/s');
    await calls.start('a', rec({ key: '1' }));
    await calls.start('b', rec({ key: '1', at: 2 }));
    await calls.clear('a');
    await calls.clear('never');
    expect(await calls.end('a', '1')).toBeNull();
    expect(await calls.end('b', '1')).toMatchObject({ at: 2 });
  });

  it('without ids, an end is paired by input and order: the newest call with the same command or the same paths, each call once', async () => {
    const fs = newMemoryFs();
    const calls = new CallsInFlight(fs, '/s');
    const shell = (key: string, at: number, command: string) => rec({ key, at, byId: false, kind: 'shell', command });
    await calls.start('g', shell(CallsInFlight.newKey(10), 10, 'sed -i s/a/b/ x'));
    // the first `rm y` was denied (its end never comes); the second ran: its end is the next one
    await calls.start('g', shell(CallsInFlight.newKey(11), 11, 'rm y'));
    await calls.start('g', shell(CallsInFlight.newKey(12), 12, 'rm y'));
    await calls.start('g', rec({ key: CallsInFlight.newKey(13), at: 13, byId: false, paths: ['b.txt', 'a.txt'] }));
    // one with an id is never taken by input
    await calls.start('g', rec({ key: 'with-id', at: 14, kind: 'shell', command: 'rm y' }));
    expect(await calls.endMatching('g', { command: 'rm y' })).toMatchObject({ at: 12 });
    expect(await calls.endMatching('g', { paths: ['a.txt', 'b.txt'] })).toMatchObject({ at: 13 });
    expect(await calls.endMatching('g', { paths: ['a.txt'] })).toBeNull();
    expect(await calls.endMatching('g', { command: 'rm y' })).toMatchObject({ at: 11 });
    expect(await calls.endMatching('g', { command: 'rm y' })).toBeNull();
    // nothing said of the input: the oldest without an id (ends come in the order of the starts)
    await calls.start('g', shell(CallsInFlight.newKey(15), 15, 'later'));
    expect(await calls.endMatching('g', {})).toMatchObject({ command: 'sed -i s/a/b/ x' });
    expect(await calls.endMatching('g', {})).toMatchObject({ command: 'later' });
    expect((await calls.pending('g')).map((r) => r.key)).toEqual(['with-id']);
  });

  it('two ends racing for one call: only one takes it', async () => {
    const fs = newMemoryFs();
    const calls = new CallsInFlight(fs, '/s');
    await calls.start('g', rec({ key: CallsInFlight.newKey(1), byId: false, kind: 'shell', command: 'x' }));
    const [a, b] = await Promise.all([calls.endMatching('g', { command: 'x' }), calls.endMatching('g', { command: 'x' })]);
    expect([a, b].filter(Boolean)).toHaveLength(1);
  });
});
