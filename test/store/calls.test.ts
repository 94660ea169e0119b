import { describe, expect, it } from 'vitest';
import { CallsInFlight } from '../../src/store/calls.js';
import { newMemoryFs } from '../helpers/memfs.js';

describe('tool calls in flight', () => {
  it('what a start keeps comes back once at the end; a call never started, or unreadable, is null', async () => {
    const fs = newMemoryFs();
    const calls = new CallsInFlight(fs, '/s');
    await calls.start('a', 'tool/1', { at: 5, turn: 't1', paths: ['src/x.ts'] });
    await calls.start('a', 'tool/2', { at: 6, turn: null, paths: [] });
    // the harness's id kept to a safe file name
    expect((fs.volume.readdirSync('/s/calls/a') as string[]).sort()).toEqual(['tool_1', 'tool_2']);
    expect(await calls.end('a', 'tool/1')).toEqual({ at: 5, turn: 't1', paths: ['src/x.ts'] });
    expect(await calls.end('a', 'tool/1')).toBeNull();
    expect(await calls.end('b', 'tool/2')).toBeNull();
    fs.volume.writeFileSync('/s/calls/a/cut', '{"at":');
    expect(await calls.end('a', 'cut')).toBeNull();
  });

  it('clear forgets every call of the session and nothing of another', async () => {
    const fs = newMemoryFs();
    const calls = new CallsInFlight(fs, '/s');
    await calls.start('a', '1', { at: 1, turn: null, paths: [] });
    await calls.start('b', '1', { at: 2, turn: null, paths: [] });
    await calls.clear('a');
    await calls.clear('never');
    expect(await calls.end('a', '1')).toBeNull();
    expect(await calls.end('b', '1')).toEqual({ at: 2, turn: null, paths: [] });
  });
});
