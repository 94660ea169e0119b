/**
 * A scripted Anthropic Messages API for the real Claude Code CLI (ANTHROPIC_BASE_URL points here).
 *
 *   const model = await startClaudeModel([
 *     [ { calls: [cc.write('/abs/a.ts', 'x\n'), cc.bash('rm old.txt')] }, { text: 'Done.' } ],   // turn 1
 *     [ { calls: [cc.edit('/abs/a.ts', 'x', 'y')] } ],                                           // turn 2 (final text implied)
 *   ], { logFile });
 *
 * - `POST /v1/messages` (any query, e.g. `?beta=true`): a request of the agent's main loop (it
 *   offers the built-in tools) is answered from the script: the request's last user message either
 *   carries tool_result blocks (the step after the one whose tool_use ids they answer) or is a new
 *   prompt (the next turn's first step). Several calls in a step are several tool_use blocks in one
 *   assistant message: parallel tool calls. `stream: true` gets server-sent events as the API sends
 *   them (message_start, content_block_start/delta/stop with text_delta or input_json_delta,
 *   message_delta with stop_reason tool_use or end_turn, message_stop); otherwise one JSON message.
 * - Any other `/v1/messages` (no tools: a title, a summary, a quota probe) is a side request:
 *   answered with a short text, recorded in `side`.
 * - `POST /v1/messages/count_tokens` → `{ input_tokens }`; `HEAD|GET /api/hello` → 200.
 * - Anything else: 404 with an API error body, recorded in `unexpected`.
 */
import type http from 'node:http';
import {
  ScriptRunner,
  answerStep,
  answerUnexpected,
  sendJson,
  sendSse,
  startScriptedModel,
  type RecordedRequest,
  type ScriptedModel,
  type Step,
  type ToolCall,
} from './common.js';

/**
 * What the CLI needs to talk to the test model only. Without CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC
 * (or DISABLE_TELEMETRY + DISABLE_ERROR_REPORTING) it resolves api.anthropic.com at start-up,
 * whatever ANTHROPIC_BASE_URL says; with these it connects to nothing but the base URL.
 */
export const CLAUDE_ENV = {
  ANTHROPIC_API_KEY: 'test',
  DISABLE_AUTOUPDATER: '1',
  CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
  DISABLE_TELEMETRY: '1',
  DISABLE_ERROR_REPORTING: '1',
};

export const cc = {
  write: (file_path: string, content: string): ToolCall => ({ name: 'Write', input: { file_path, content } }),
  edit: (file_path: string, old_string: string, new_string: string, replace_all = false): ToolCall => ({
    name: 'Edit',
    input: { file_path, old_string, new_string, ...(replace_all ? { replace_all } : {}) },
  }),
  bash: (command: string, description = 'run a command'): ToolCall => ({ name: 'Bash', input: { command, description } }),
  read: (file_path: string): ToolCall => ({ name: 'Read', input: { file_path } }),
  tool: (name: string, input: Record<string, unknown>): ToolCall => ({ name, input }),
};

/** main: the requests offering Bash, Write or Edit; side: other messages; unexpected: anything but messages/count_tokens/hello. */
export type ClaudeModel = ScriptedModel;

const B62 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
function toolUseId(): string {
  let s = 'toolu_01';
  for (let i = 0; i < 22; i++) s += B62[Math.floor(Math.random() * B62.length)];
  return s;
}

type Block = { type: string; [k: string]: unknown };
interface Msg {
  role: string;
  content: string | Block[];
}

/** The tool_use ids the last user message answers, and that message's text (the prompt key). */
export function lastUserMessage(messages: Msg[]): { resultIds: string[]; text: string; index: number } {
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i];
    if (m.role !== 'user') continue;
    if (typeof m.content === 'string') return { resultIds: [], text: m.content, index: i };
    const resultIds = m.content.filter((b) => b.type === 'tool_result').map((b) => String(b.tool_use_id));
    const text = m.content
      .filter((b) => b.type === 'text')
      .map((b) => String(b.text))
      .join('\n');
    return { resultIds, text, index: i };
  }
  return { resultIds: [], text: '', index: -1 };
}

function messageEvents(model: string, blocks: Block[], stopReason: string): { event: string; data: unknown }[] {
  const id = `msg_${Math.random().toString(36).slice(2, 14)}`;
  const ev: { event: string; data: unknown }[] = [];
  const e = (type: string, data: Record<string, unknown>) => ev.push({ event: type, data: { type, ...data } });
  e('message_start', {
    message: {
      id,
      type: 'message',
      role: 'assistant',
      model,
      content: [],
      stop_reason: null,
      stop_sequence: null,
      usage: { input_tokens: 100, output_tokens: 1, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 },
    },
  });
  blocks.forEach((b, index) => {
    if (b.type === 'text') {
      e('content_block_start', { index, content_block: { type: 'text', text: '' } });
      const t = String(b.text);
      const half = Math.ceil(t.length / 2);
      for (const part of [t.slice(0, half), t.slice(half)])
        if (part) e('content_block_delta', { index, delta: { type: 'text_delta', text: part } });
    } else {
      e('content_block_start', { index, content_block: { type: 'tool_use', id: b.id, name: b.name, input: {} } });
      const json = JSON.stringify(b.input);
      const cut = Math.floor(json.length / 2);
      for (const part of [json.slice(0, cut), json.slice(cut)])
        e('content_block_delta', { index, delta: { type: 'input_json_delta', partial_json: part } });
    }
    e('content_block_stop', { index });
  });
  e('message_delta', { delta: { stop_reason: stopReason, stop_sequence: null }, usage: { output_tokens: 20 } });
  e('message_stop', {});
  return ev;
}

function answer(res: http.ServerResponse, body: { model?: string; stream?: boolean }, blocks: Block[], stopReason: string): void {
  const model = body.model ?? 'claude-test';
  if (body.stream) {
    sendSse(res, messageEvents(model, blocks, stopReason), { 'request-id': `req_${Date.now()}` });
    return;
  }
  sendJson(res, 200, {
    id: `msg_${Math.random().toString(36).slice(2, 14)}`,
    type: 'message',
    role: 'assistant',
    model,
    content: blocks,
    stop_reason: stopReason,
    stop_sequence: null,
    usage: { input_tokens: 100, output_tokens: 20, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 },
  });
}

function blocksOf(step: Step, ids: string[]): { blocks: Block[]; stop: string } {
  const blocks: Block[] = [];
  if (step.text) blocks.push({ type: 'text', text: step.text });
  if ('calls' in step) {
    step.calls.forEach((c, i) => blocks.push({ type: 'tool_use', id: ids[i], name: c.name, input: c.input }));
    return { blocks, stop: 'tool_use' };
  }
  return { blocks, stop: 'end_turn' };
}

/** Starts the scripted API on 127.0.0.1 (see the file's comment). */
export async function startClaudeModel(turns: Step[][], opts: { logFile?: string } = {}): Promise<ClaudeModel> {
  const script = new ScriptRunner(turns, () => toolUseId());
  return startScriptedModel(
    script,
    async (req, res, model) => {
      const path = req.url.split('?')[0];
      if ((req.method === 'HEAD' || req.method === 'GET') && path === '/api/hello') {
        req.kind = 'hello';
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(req.method === 'GET' ? '{}' : undefined);
        return;
      }
      if (req.method === 'POST' && path === '/v1/messages/count_tokens') {
        req.kind = 'count_tokens';
        sendJson(res, 200, { input_tokens: Math.max(1, Math.ceil(req.body.length / 4)) });
        return;
      }
      if (req.method === 'POST' && path === '/v1/messages') {
        const body = req.json as { model?: string; stream?: boolean; tools?: { name: string }[]; messages: Msg[] };
        const isMain = (body.tools ?? []).some((t) => t.name === 'Bash' || t.name === 'Write' || t.name === 'Edit');
        if (!isMain) {
          req.kind = 'side';
          model.side.push(req);
          answer(res, body, [{ type: 'text', text: 'ok' }], 'end_turn');
          return;
        }
        const last = lastUserMessage(body.messages);
        const a = await answerStep(model, req, last.resultIds, `${last.index}:${last.text}`);
        const { blocks, stop } = blocksOf(a.value, a.ids);
        answer(res, body, blocks, stop);
        return;
      }
      answerUnexpected(model, req, res, {
        type: 'error',
        error: { type: 'not_found_error', message: `the test model does not serve ${req.method} ${req.url}` },
      });
    },
    opts,
  );
}

/** The tool_result blocks of a main-loop request's last user message, by tool_use id. */
export function toolResults(req: RecordedRequest): Map<string, { is_error?: boolean; content: unknown }> {
  const body = req.json as { messages: Msg[] };
  const out = new Map<string, { is_error?: boolean; content: unknown }>();
  const last = body.messages[lastUserMessage(body.messages).index];
  if (last && typeof last.content !== 'string')
    for (const b of last.content)
      if (b.type === 'tool_result') out.set(String(b.tool_use_id), { is_error: b.is_error as boolean | undefined, content: b.content });
  return out;
}
