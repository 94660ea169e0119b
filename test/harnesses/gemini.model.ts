/**
 * A scripted Gemini API for the real Gemini CLI (GOOGLE_GEMINI_BASE_URL points here), speaking
 * what @google/genai (the CLI's SDK) sends and reads:
 *
 *   const model = await startGeminiModel([
 *     [ { calls: [gm.write('/abs/a.ts', 'x\n'), gm.shell('rm old.txt')] }, { text: 'Done.' } ],   // turn 1
 *     [ { calls: [gm.replace('/abs/a.ts', 'x', 'y')] } ],                                         // turn 2 (final text implied)
 *   ], { logFile });
 *
 * - `POST /v1beta/models/<model>:streamGenerateContent?alt=sse` and `:generateContent`: a request
 *   of the agent's main loop (it declares `run_shell_command`, `write_file`, `replace`, … in
 *   `tools[].functionDeclarations`) is answered from the script. Its `contents` end with a user
 *   content that either holds `functionResponse` parts (then the answer is the step after the one
 *   that made those calls) or is a new prompt (the next turn's first step). Several calls in a step
 *   are several `functionCall` parts in one candidate: parallel calls, as the API sends them.
 *   The API sends no call id (`functionCall.id` is absent; the CLI makes its own,
 *   `<tool>_<ms>_<n>`), so the step is carried the way a Gemini 3 model carries its state: an
 *   opaque `thoughtSignature` on the first `functionCall` part, which the CLI sends back in the
 *   history. Streamed answers are server-sent events (`data: <GenerateContentResponse>`), text
 *   split over two chunks, the last with `finishReason: "STOP"` and `usageMetadata`.
 * - Any other generateContent (no tools: the model router's classifier, a next-speaker check, a
 *   summary) is a side request: when it asks for JSON (`generationConfig.responseJsonSchema`) it
 *   gets an object of that schema (the router's classifier: `complexity_reasoning`,
 *   `complexity_score`; an enum holding "user" gets "user": the turn is the user's), otherwise a
 *   short text; recorded in `side`.
 * - `POST …:countTokens` → `{ totalTokens }`.
 * - Anything else: 404 with a Google API error body, recorded in `unexpected`.
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

/** The CLI's tools, with the argument shapes its functionDeclarations declare (0.61.0). */
export const gm = {
  write: (file_path: string, content: string): ToolCall => ({ name: 'write_file', input: { file_path, content } }),
  replace: (
    file_path: string,
    old_string: string,
    new_string: string,
    opts: { instruction?: string; allow_multiple?: boolean } = {},
  ): ToolCall => ({
    name: 'replace',
    input: {
      file_path,
      instruction: opts.instruction ?? 'make the change',
      old_string,
      new_string,
      ...(opts.allow_multiple !== undefined ? { allow_multiple: opts.allow_multiple } : {}),
    },
  }),
  shell: (command: string, description = 'run a command'): ToolCall => ({ name: 'run_shell_command', input: { command, description } }),
  read: (file_path: string): ToolCall => ({ name: 'read_file', input: { file_path } }),
  tool: (name: string, input: Record<string, unknown>): ToolCall => ({ name, input }),
};

/** main: the requests declaring run_shell_command or write_file; side: other generateContent; unexpected: anything but generateContent/streamGenerateContent/countTokens. */
export type GeminiModel = ScriptedModel;

interface Part {
  text?: string;
  thought?: boolean;
  thoughtSignature?: string;
  functionCall?: { id?: string; name: string; args: Record<string, unknown> };
  functionResponse?: { id?: string; name: string; response: Record<string, unknown> };
}
interface Content {
  role?: string;
  parts?: Part[];
}
interface GenerateRequest {
  contents?: Content[];
  tools?: { functionDeclarations?: { name: string }[] }[];
  generationConfig?: { responseMimeType?: string; responseJsonSchema?: unknown; responseSchema?: unknown };
}

const SIGNATURE_PREFIX = 'git-scalpel-test-step:';

/** The opaque thoughtSignature carrying a script id (base64, as the API's signatures are). */
function signatureOf(id: string): string {
  return Buffer.from(SIGNATURE_PREFIX + id).toString('base64');
}

function idOfSignature(sig: string | undefined): string | undefined {
  if (!sig) return undefined;
  const text = Buffer.from(sig, 'base64').toString('utf8');
  return text.startsWith(SIGNATURE_PREFIX) ? text.slice(SIGNATURE_PREFIX.length) : undefined;
}

/**
 * What the request's last user content is: the function responses it returns (with the script ids
 * carried by the model content just before it), or a new prompt's text.
 */
export function lastUserContent(contents: Content[]): {
  responses: Part['functionResponse'][];
  resultIds: string[];
  text: string;
  index: number;
} {
  for (let i = contents.length - 1; i >= 0; i--) {
    const c = contents[i];
    if (c.role !== 'user') continue;
    const parts = c.parts ?? [];
    const responses = parts.filter((p) => p.functionResponse).map((p) => p.functionResponse);
    const text = parts
      .filter((p) => typeof p.text === 'string')
      .map((p) => p.text)
      .join('\n');
    const resultIds: string[] = [];
    if (responses.length) {
      const prev = contents
        .slice(0, i)
        .reverse()
        .find((x) => x.role === 'model' && (x.parts ?? []).some((p) => p.functionCall));
      for (const p of prev?.parts ?? []) {
        const id = p.functionCall ? idOfSignature(p.thoughtSignature) : undefined;
        if (id) resultIds.push(id);
      }
    }
    return { responses, resultIds, text, index: i };
  }
  return { responses: [], resultIds: [], text: '', index: -1 };
}

/** A value of a (Gemini or JSON) schema: the router's classifier, a next-speaker check. */
export function valueOfSchema(schema: any): unknown {
  const type = String(schema?.type ?? (schema?.properties ? 'object' : 'string')).toLowerCase();
  if (Array.isArray(schema?.enum) && schema.enum.length) return schema.enum.includes('user') ? 'user' : schema.enum[0];
  switch (type) {
    case 'object':
      return Object.fromEntries(Object.entries(schema.properties ?? {}).map(([k, v]) => [k, valueOfSchema(v)]));
    case 'array':
      return [];
    case 'integer':
    case 'number':
      return typeof schema.minimum === 'number' ? schema.minimum : 1;
    case 'boolean':
      return false;
    default:
      return 'a short answer from the test model';
  }
}

const USAGE = { promptTokenCount: 100, candidatesTokenCount: 10, totalTokenCount: 110 };

function chunk(parts: Part[], last: boolean, modelVersion: string): Record<string, unknown> {
  return {
    candidates: [{ content: { role: 'model', parts }, index: 0, ...(last ? { finishReason: 'STOP' } : {}) }],
    ...(last ? { usageMetadata: USAGE } : { usageMetadata: { promptTokenCount: 100, totalTokenCount: 100 } }),
    modelVersion,
    responseId: `resp_${Math.random().toString(36).slice(2, 14)}`,
  };
}

/** The chunks of one answer: text (if any) in two chunks, then the function calls, the last chunk finishing. */
function answerChunks(parts: Part[], modelVersion: string): Record<string, unknown>[] {
  const text = parts
    .filter((p) => p.text !== undefined)
    .map((p) => p.text!)
    .join('');
  const calls = parts.filter((p) => p.functionCall);
  const out: Part[][] = [];
  if (text) {
    const half = Math.ceil(text.length / 2);
    out.push([{ text: text.slice(0, half) }]);
    if (text.slice(half)) out.push([{ text: text.slice(half) }]);
  }
  if (calls.length) out.push(calls);
  if (!out.length) out.push([{ text: '' }]);
  return out.map((ps, i) => chunk(ps, i === out.length - 1, modelVersion));
}

function answer(res: http.ServerResponse, stream: boolean, parts: Part[], model: string): void {
  if (stream) {
    sendSse(
      res,
      answerChunks(parts, model).map((data) => ({ data })),
    );
    return;
  }
  sendJson(res, 200, chunk(parts, true, model));
}

function partsOf(step: Step, ids: string[]): Part[] {
  const parts: Part[] = [];
  if (step.text) parts.push({ text: step.text });
  if ('calls' in step)
    step.calls.forEach((c, i) =>
      parts.push({ functionCall: { name: c.name, args: c.input }, ...(i === 0 ? { thoughtSignature: signatureOf(ids[0]) } : {}) }),
    );
  return parts;
}

/** Starts the scripted API on 127.0.0.1 (see the file's comment). */
export async function startGeminiModel(turns: Step[][], opts: { logFile?: string } = {}): Promise<GeminiModel> {
  const script = new ScriptRunner(turns, (t, s, c) => `${t}.${s}.${c}.${Math.random().toString(36).slice(2, 10)}`);
  return startScriptedModel(
    script,
    async (req, res, records) => {
      const [path] = req.url.split('?');
      const m = /^\/v1(?:beta|alpha|)\/models\/([^/:]+):(streamGenerateContent|generateContent|countTokens)$/.exec(path);
      if (req.method === 'POST' && m && m[2] === 'countTokens') {
        req.kind = 'countTokens';
        sendJson(res, 200, { totalTokens: Math.max(1, Math.ceil(req.body.length / 4)) });
        return;
      }
      if (req.method === 'POST' && m) {
        const model = m[1];
        const stream = m[2] === 'streamGenerateContent';
        const body = (req.json ?? {}) as GenerateRequest;
        const declared = (body.tools ?? []).flatMap((t) => t.functionDeclarations ?? []).map((f) => f.name);
        const isMain = declared.includes('run_shell_command') || declared.includes('write_file');
        if (!isMain) {
          req.kind = 'side';
          records.side.push(req);
          const schema = body.generationConfig?.responseJsonSchema ?? body.generationConfig?.responseSchema;
          const text = schema
            ? JSON.stringify(valueOfSchema(schema))
            : body.generationConfig?.responseMimeType === 'application/json'
              ? '{}'
              : 'ok';
          answer(res, stream, [{ text }], model);
          return;
        }
        const last = lastUserContent(body.contents ?? []);
        if (last.responses.length && !last.resultIds.length) {
          records.main.push(req);
          throw new Error(
            `function responses (${last.responses.map((r) => r?.name).join(', ')}) whose calls carry no script signature: the CLI dropped the thoughtSignature`,
          );
        }
        const a = await answerStep(records, req, last.resultIds, `${last.index}:${last.text}`);
        answer(res, stream, partsOf(a.value, a.ids), model);
        return;
      }
      answerUnexpected(records, req, res, {
        error: { code: 404, message: `the test model does not serve ${req.method} ${req.url}`, status: 'NOT_FOUND' },
      });
    },
    opts,
  );
}

/** The functionResponse parts of a main-loop request's last user content, in order. */
export function functionResponses(req: RecordedRequest): { id?: string; name: string; response: Record<string, unknown> }[] {
  const body = req.json as GenerateRequest;
  return lastUserContent(body.contents ?? []).responses.filter((r): r is NonNullable<typeof r> => r !== undefined);
}
