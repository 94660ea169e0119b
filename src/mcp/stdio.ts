/**
 * The MCP stdio transport (newline-delimited JSON-RPC on stdin/stdout), as the SDK's
 * StdioServerTransport speaks it, with linear buffering. The SDK's reader concatenates the whole
 * pending buffer and searches it from the start on every chunk, so one 50 MB message costs
 * seconds of copying per message (quadratic in its size); this one looks for the newline only in
 * the new chunk and joins a message's chunks once. A message longer than `maxMessage` is skipped
 * up to its newline (reported through onerror) and the connection goes on.
 */
import type { Readable, Writable } from 'node:stream';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { deserializeMessage, serializeMessage } from '@modelcontextprotocol/sdk/shared/stdio.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';

export class LineStdioTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;

  private chunks: Buffer[] = [];
  private pending = 0;
  private skipping = false;
  private started = false;
  private closed = false;

  constructor(
    private readonly input: Readable = process.stdin,
    private readonly output: Writable = process.stdout,
    private readonly maxMessage = 64 * 1024 * 1024,
  ) {}

  private readonly onData = (chunk: Buffer) => {
    let start = 0;
    for (;;) {
      const nl = chunk.indexOf(10, start);
      if (nl === -1) break;
      this.line(chunk.subarray(start, nl));
      start = nl + 1;
    }
    if (start < chunk.length) this.hold(chunk.subarray(start));
  };

  private readonly onError = (e: Error) => this.onerror?.(e);
  private readonly onEnd = () => void this.close();

  private hold(part: Buffer): void {
    if (this.skipping) return;
    this.pending += part.length;
    if (this.pending > this.maxMessage) {
      this.skipping = true;
      this.chunks = [];
      this.pending = 0;
      this.onerror?.(new Error(`a message longer than ${this.maxMessage} bytes was skipped`));
      return;
    }
    this.chunks.push(part);
  }

  private line(tail: Buffer): void {
    if (this.skipping) {
      this.skipping = false;
      return;
    }
    if (this.pending + tail.length > this.maxMessage) {
      this.chunks = [];
      this.pending = 0;
      this.onerror?.(new Error(`a message longer than ${this.maxMessage} bytes was skipped`));
      return;
    }
    const whole = this.chunks.length ? Buffer.concat([...this.chunks, tail]) : tail;
    this.chunks = [];
    this.pending = 0;
    let text = whole.toString('utf8');
    if (text.endsWith('\r')) text = text.slice(0, -1);
    if (text.trim() === '') return;
    let message: JSONRPCMessage;
    try {
      message = deserializeMessage(text);
    } catch (e) {
      this.onerror?.(e instanceof Error ? e : new Error(String(e)));
      return;
    }
    this.onmessage?.(message);
  }

  async start(): Promise<void> {
    if (this.started) throw new Error('LineStdioTransport already started');
    this.started = true;
    this.input.on('data', this.onData);
    this.input.on('error', this.onError);
    this.input.on('end', this.onEnd);
  }

  send(message: JSONRPCMessage): Promise<void> {
    return new Promise((resolve) => {
      if (this.output.write(serializeMessage(message))) resolve();
      else this.output.once('drain', resolve);
    });
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.input.off('data', this.onData);
    this.input.off('error', this.onError);
    this.input.off('end', this.onEnd);
    if (this.input.listenerCount('data') === 0) this.input.pause();
    this.chunks = [];
    this.onclose?.();
  }
}
