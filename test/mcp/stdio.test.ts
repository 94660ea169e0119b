import { describe, expect, it } from 'vitest';
import { PassThrough } from 'node:stream';
import { LineStdioTransport } from '../../src/mcp/stdio.js';

const msg = (id: number) => JSON.stringify({ jsonrpc: '2.0', id, method: 'ping' });

function setup(max = 1024) {
  const input = new PassThrough();
  const output = new PassThrough();
  const t = new LineStdioTransport(input, output, max);
  const got: unknown[] = [];
  const errors: string[] = [];
  t.onmessage = (m) => got.push(m);
  t.onerror = (e) => errors.push(e.message);
  return { input, output, t, got, errors };
}

const tick = () => new Promise((r) => setImmediate(r));

describe('LineStdioTransport', () => {
  it('reads messages split across chunks, several per chunk, CRLF and blank lines', async () => {
    const { input, t, got, errors } = setup();
    await t.start();
    const all = `${msg(1)}\n${msg(2)}\r\n\n${msg(3)}\n`;
    for (let i = 0; i < all.length; i += 7) input.write(all.slice(i, i + 7));
    await tick();
    expect(got.map((m) => (m as { id: number }).id)).toEqual([1, 2, 3]);
    expect(errors).toEqual([]);
  });

  it('skips a message over the limit (and a line that is not JSON-RPC) and goes on', async () => {
    const { input, t, got, errors } = setup(200);
    await t.start();
    input.write(`{"jsonrpc":"2.0","id":9,"method":"x","params":{"a":"${'x'.repeat(150)}`);
    input.write(`${'y'.repeat(150)}"}}\n${msg(1)}\n`);
    input.write(`${'z'.repeat(300)}\nnot json\n${msg(2)}\n`);
    await tick();
    expect(got.map((m) => (m as { id: number }).id)).toEqual([1, 2]);
    expect(errors.length).toBe(3);
    expect(errors[0]).toContain('longer than 200 bytes');
  });

  it('writes one line per message, and closes once at the end of input', async () => {
    const { input, output, t } = setup();
    let closes = 0;
    t.onclose = () => closes++;
    await t.start();
    await t.send({ jsonrpc: '2.0', id: 1, result: {} });
    expect(output.read().toString()).toBe('{"jsonrpc":"2.0","id":1,"result":{}}\n');
    input.end();
    await tick();
    await t.close();
    expect(closes).toBe(1);
  });
});
