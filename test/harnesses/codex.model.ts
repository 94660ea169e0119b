/**
 * A scripted OpenAI Responses API for the real Codex CLI (a `[model_providers.<name>]` entry in
 * `$CODEX_HOME/config.toml` with `base_url = "<url>/v1"` and `wire_api = "responses"` points here).
 *
 *   const model = await startCodexModel([
 *     [ { calls: [cx.patch(addFile('gen/a.ts', 'x\n')), cx.exec('rm old.txt')] }, { text: 'Done.' } ],   // turn 1
 *     [ { calls: [cx.exec("sed -i 's/x/y/' gen/a.ts")] } ],                                              // turn 2 (final text implied)
 *   ], { logFile });
 *
 * - `POST /v1/responses` whose `tools` offer the agent's shell or apply_patch is a request of the
 *   agent loop, answered from the script. The request carries the whole conversation (`store:
 *   false`): when its `input` ends with tool outputs (`function_call_output`,
 *   `custom_tool_call_output`) after the last user message, it answers the step after the one that
 *   made those calls; otherwise it is a new prompt (the next turn's first step). Several calls in a
 *   step are several `function_call` / `custom_tool_call` items in one response: parallel tool
 *   calls. Answered as the API streams it (`stream: true`, server-sent events):
 *   `response.created`, then per output item `response.output_item.added`, its deltas
 *   (`response.output_text.delta`, `response.function_call_arguments.delta/done`,
 *   `response.custom_tool_call_input.delta/done`) and `response.output_item.done`, then
 *   `response.completed` with usage.
 * - A tool is called with the shape the request's `tools` list declares for it: a `function` tool
 *   gets `arguments` (the call's input as JSON text), a `custom` (freeform) tool gets `input` (the
 *   call's `input.input`, a string). A call of a tool the request does not offer is a handler
 *   error (the test sees it in `errors`), so a script cannot drift from what this version offers.
 * - Any other `/v1/responses` (no agent tools: a title, a summary, a compaction) is a side
 *   request: answered with a short text, recorded in `side`.
 * - `GET /v1/models` → a list naming the configured model.
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

/** The tools Codex 0.171.0 offers the model (gpt-5.5's catalog entry: unified exec, freeform apply_patch). */
export const cx = {
  /** `exec_command` (a function tool): `{ cmd, workdir?, ... }`; hooks see it as `Bash` with `tool_input.command`. */
  exec: (cmd: string, extra: Record<string, unknown> = {}): ToolCall => ({ name: 'exec_command', input: { cmd, ...extra } }),
  /** `apply_patch` (a custom, freeform tool): the patch text itself. */
  patch: (patch: string): ToolCall => ({ name: 'apply_patch', input: { input: patch } }),
  tool: (name: string, input: Record<string, unknown>): ToolCall => ({ name, input }),
};

/** Patch text in Codex's format (`*** Begin Patch` … `*** End Patch`). */
export const patch = {
  add: (path: string, content: string): string =>
    [
      `*** Add File: ${path}`,
      ...content
        .replace(/\n$/, '')
        .split('\n')
        .map((l) => `+${l}`),
    ].join('\n'),
  update: (path: string, hunks: { context?: string; remove: string[]; add: string[]; keep?: string[] }[], moveTo?: string): string =>
    [
      `*** Update File: ${path}`,
      ...(moveTo ? [`*** Move to: ${moveTo}`] : []),
      ...hunks.flatMap((h) => [
        h.context !== undefined ? `@@ ${h.context}` : '@@',
        ...h.remove.map((l) => `-${l}`),
        ...h.add.map((l) => `+${l}`),
        ...(h.keep ?? []).map((l) => ` ${l}`),
      ]),
    ].join('\n'),
  delete: (path: string): string => `*** Delete File: ${path}`,
  wrap: (...ops: string[]): string => ['*** Begin Patch', ...ops, '*** End Patch', ''].join('\n'),
};

/** main: the agent loop's requests; side: responses without the agent's tools; unexpected: anything but responses/models. */
export type CodexModel = ScriptedModel;

interface Item {
  type: string;
  role?: string;
  call_id?: string;
  content?: unknown;
  output?: unknown;
  [k: string]: unknown;
}

interface ToolDecl {
  type: string;
  name?: string;
  tools?: ToolDecl[];
}

const OUTPUT_TYPES = new Set(['function_call_output', 'custom_tool_call_output']);

function messageText(item: Item): string {
  if (typeof item.content === 'string') return item.content;
  if (!Array.isArray(item.content)) return '';
  return (item.content as { type: string; text?: string }[])
    .filter((c) => c.type === 'input_text' || c.type === 'output_text')
    .map((c) => c.text ?? '')
    .join('\n');
}

/**
 * What a request answers: the ids of the tool outputs after the conversation's last user message,
 * newest first (so the script continues after the newest call), or, when there is none, the last
 * user message (a new prompt: its index and text are the prompt key).
 */
export function lastExchange(input: Item[]): { resultIds: string[]; text: string; index: number } {
  let lastUser = -1;
  for (let i = input.length - 1; i >= 0; i--) {
    if (input[i].type === 'message' && input[i].role === 'user') {
      lastUser = i;
      break;
    }
  }
  const resultIds = input
    .slice(lastUser + 1)
    .filter((x) => OUTPUT_TYPES.has(x.type))
    .map((x) => String(x.call_id))
    .reverse();
  return { resultIds, text: lastUser >= 0 ? messageText(input[lastUser]) : '', index: lastUser };
}

/** The request's tools by name (namespaces flattened): 'function', 'custom', … */
export function declaredTools(tools: ToolDecl[] | undefined): Map<string, string> {
  const out = new Map<string, string>();
  const walk = (list: ToolDecl[]) => {
    for (const t of list) {
      if (t.type === 'namespace' && t.tools) walk(t.tools);
      else if (t.name) out.set(t.name, t.type);
    }
  };
  walk(tools ?? []);
  return out;
}

const rand = () => Math.random().toString(36).slice(2, 14);

const USAGE = {
  input_tokens: 100,
  input_tokens_details: { cached_tokens: 0 },
  output_tokens: 20,
  output_tokens_details: { reasoning_tokens: 0 },
  total_tokens: 120,
};

function halves(s: string): string[] {
  const cut = Math.floor(s.length / 2);
  return [s.slice(0, cut), s.slice(cut)].filter((x) => x !== '');
}

/** The server-sent events of one response: `text` (optional) then `calls`. */
function responseEvents(
  model: string,
  text: string | undefined,
  calls: { call: ToolCall; id: string; kind: string }[],
): { event: string; data: unknown }[] {
  const id = `resp_${rand()}`;
  const ev: { event: string; data: unknown }[] = [];
  let seq = 0;
  const e = (type: string, data: Record<string, unknown>) => ev.push({ event: type, data: { type, sequence_number: seq++, ...data } });
  const base = { id, object: 'response', created_at: Math.floor(Date.now() / 1000), model, parallel_tool_calls: true, tool_choice: 'auto' };
  e('response.created', { response: { ...base, status: 'in_progress', output: [] } });
  e('response.in_progress', { response: { ...base, status: 'in_progress', output: [] } });
  const output: Record<string, unknown>[] = [];
  let index = 0;
  if (text) {
    const itemId = `msg_${rand()}`;
    const output_index = index++;
    e('response.output_item.added', {
      output_index,
      item: { id: itemId, type: 'message', status: 'in_progress', role: 'assistant', content: [] },
    });
    e('response.content_part.added', {
      item_id: itemId,
      output_index,
      content_index: 0,
      part: { type: 'output_text', text: '', annotations: [] },
    });
    for (const d of halves(text))
      e('response.output_text.delta', { item_id: itemId, output_index, content_index: 0, delta: d, logprobs: [] });
    e('response.output_text.done', { item_id: itemId, output_index, content_index: 0, text, logprobs: [] });
    e('response.content_part.done', {
      item_id: itemId,
      output_index,
      content_index: 0,
      part: { type: 'output_text', text, annotations: [] },
    });
    const item = {
      id: itemId,
      type: 'message',
      status: 'completed',
      role: 'assistant',
      content: [{ type: 'output_text', text, annotations: [] }],
    };
    e('response.output_item.done', { output_index, item });
    output.push(item);
  }
  for (const { call, id: callId, kind } of calls) {
    const output_index = index++;
    if (kind === 'custom') {
      const itemId = `ctc_${rand()}`;
      const input = String(call.input.input);
      e('response.output_item.added', {
        output_index,
        item: { id: itemId, type: 'custom_tool_call', status: 'in_progress', call_id: callId, name: call.name, input: '' },
      });
      for (const d of halves(input)) e('response.custom_tool_call_input.delta', { item_id: itemId, output_index, delta: d });
      e('response.custom_tool_call_input.done', { item_id: itemId, output_index, input });
      const item = { id: itemId, type: 'custom_tool_call', status: 'completed', call_id: callId, name: call.name, input };
      e('response.output_item.done', { output_index, item });
      output.push(item);
    } else {
      const itemId = `fc_${rand()}`;
      const args = JSON.stringify(call.input);
      e('response.output_item.added', {
        output_index,
        item: { id: itemId, type: 'function_call', status: 'in_progress', call_id: callId, name: call.name, arguments: '' },
      });
      for (const d of halves(args)) e('response.function_call_arguments.delta', { item_id: itemId, output_index, delta: d });
      e('response.function_call_arguments.done', { item_id: itemId, output_index, arguments: args });
      const item = { id: itemId, type: 'function_call', status: 'completed', call_id: callId, name: call.name, arguments: args };
      e('response.output_item.done', { output_index, item });
      output.push(item);
    }
  }
  e('response.completed', { response: { ...base, status: 'completed', output, usage: USAGE } });
  return ev;
}

/** Whether a request is the agent loop's: it offers the shell or apply_patch. */
function isAgentLoop(tools: Map<string, string>): boolean {
  return tools.has('exec_command') || tools.has('shell') || tools.has('shell_command') || tools.has('apply_patch');
}

/** Starts the scripted API on 127.0.0.1 (see the file's comment). */
export async function startCodexModel(turns: Step[][], opts: { logFile?: string; model?: string } = {}): Promise<CodexModel> {
  const script = new ScriptRunner(turns, () => `call_${rand()}${rand()}`);
  return startScriptedModel(
    script,
    async (req, res: http.ServerResponse, records) => {
      const path = req.url.split('?')[0].replace(/\/+$/, '');
      if (req.method === 'GET' && path === '/v1/models') {
        req.kind = 'models';
        const id = opts.model ?? 'gpt-5.5';
        sendJson(res, 200, { object: 'list', data: [{ id, object: 'model', created: 0, owned_by: 'test' }] });
        return;
      }
      if (req.method === 'POST' && path === '/v1/responses') {
        const body = req.json as { model?: string; stream?: boolean; tools?: ToolDecl[]; input: Item[] };
        const tools = declaredTools(body.tools);
        const model = body.model ?? opts.model ?? 'gpt-5.5';
        if (!isAgentLoop(tools)) {
          req.kind = 'side';
          records.side.push(req);
          sendSse(res, responseEvents(model, 'ok', []));
          return;
        }
        const last = lastExchange(body.input ?? []);
        const a = await answerStep(records, req, last.resultIds, `${last.index}:${last.text}`);
        const calls = 'calls' in a.value ? a.value.calls : [];
        const typed = calls.map((call, i) => {
          const kind = tools.get(call.name);
          if (kind === undefined)
            throw new Error(`the script calls ${call.name}, which this request does not offer (it offers ${[...tools.keys()].join(', ')})`);
          if (kind === 'custom' && typeof call.input.input !== 'string')
            throw new Error(`${call.name} is a custom (freeform) tool: its call needs input.input, a string`);
          return { call, id: a.ids[i], kind };
        });
        if (body.stream === false) throw new Error('Codex asked for a non-streaming response');
        sendSse(res, responseEvents(model, a.value.text, typed));
        return;
      }
      answerUnexpected(records, req, res, {
        error: { type: 'invalid_request_error', message: `the test model does not serve ${req.method} ${req.url}` },
      });
    },
    opts,
  );
}

/** The tool outputs a request carries after its last user message, by call id (output as sent: a string, or content items). */
export function toolOutputs(req: RecordedRequest): Map<string, { type: string; output: unknown }> {
  const input = ((req.json as { input?: Item[] }).input ?? []) as Item[];
  const last = lastExchange(input);
  const out = new Map<string, { type: string; output: unknown }>();
  for (const x of input.slice(last.index + 1)) if (OUTPUT_TYPES.has(x.type)) out.set(String(x.call_id), { type: x.type, output: x.output });
  return out;
}

/** A tool output as text (a string, or the text of its content items). */
export function outputText(output: unknown): string {
  if (typeof output === 'string') return output;
  if (Array.isArray(output)) return output.map((c: { text?: string }) => c.text ?? '').join('');
  if (output && typeof output === 'object' && 'content' in output) return outputText((output as { content: unknown }).content);
  return JSON.stringify(output);
}
