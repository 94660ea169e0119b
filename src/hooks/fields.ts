import { ScalpelError } from '../errors/index.js';
import { decodePath } from '../bytes/text.js';
import { checkSession } from '../store/stack.js';
import type { HookEvent } from './events.js';

/**
 * Reading a hook payload: the JSON object on stdin and the fields an adapter uses, each one
 * checked (present, of its type, not empty, no NUL where a path or an id is expected). Every
 * failure is a `ScalpelError` BAD_ARGUMENT whose `data.name` is the field's path in the payload
 * (`tool_input.file_path`) and `data.reason` one of: `missing`, `wrong-type`, `empty`, `nul`,
 * `too-long`, `not-json`, `not-object`, `unknown-value`, `invalid`, or the reason a Codex patch
 * could not be read (`applyPatchPaths`). Nothing is resolved or normalized here: strings come back as they were.
 */

export type Obj = Record<string, unknown>;

export function badField(name: string, reason: string, message: string, extra: Record<string, unknown> = {}): ScalpelError {
  return new ScalpelError('BAD_ARGUMENT', message, { name, reason, ...extra });
}

/** The stdin bytes as one JSON object. */
export function parseJsonObject(bytes: Uint8Array): Obj {
  if (!(bytes instanceof Uint8Array)) throw badField('payload', 'wrong-type', 'the hook event must be given as bytes (the JSON on stdin)');
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    // not UTF-8: keep every byte (as a lone surrogate, the way paths carry them) rather than guess
    text = decodePath(bytes);
  }
  if (text.trim() === '') throw badField('payload', 'empty', 'the hook event on stdin is empty: expected one JSON object');
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (e) {
    const why = e instanceof Error ? e.message : String(e);
    throw badField('payload', 'not-json', `the hook event on stdin is not JSON (${why.length > 200 ? `${why.slice(0, 200)}...` : why})`);
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw badField('payload', 'not-object', `the hook event is JSON but not an object (it is ${describe(value)})`);
  }
  return value as Obj;
}

/** What a JSON value is, for a message. */
export function describe(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'an array';
  if (typeof v === 'object') return 'an object';
  if (typeof v === 'string') return 'a string';
  if (typeof v === 'number') return 'a number';
  if (typeof v === 'boolean') return 'a boolean';
  return typeof v;
}

/** `o[key]` only when `o` has it as its own property (a payload never reaches Object.prototype). */
export function own(o: Obj, key: string): unknown {
  return Object.prototype.hasOwnProperty.call(o, key) ? o[key] : undefined;
}

function join(prefix: string, key: string): string {
  return prefix ? `${prefix}.${key}` : key;
}

export interface StringRule {
  /** the empty string is a value (a prompt may be empty) */
  allowEmpty?: boolean;
  /** a NUL character is allowed (free text: prompts, commands) */
  allowNul?: boolean;
  /** at most this many UTF-16 code units */
  maxLength?: number;
}

/** A required string field. `prefix` is the path of `o` in the payload ('' for the top level). */
export function reqString(o: Obj, key: string, prefix = '', rule: StringRule = {}): string {
  const name = join(prefix, key);
  const v = own(o, key);
  if (v === undefined || v === null) throw badField(name, 'missing', `${name} is missing`);
  return checkString(v, name, rule);
}

/** An optional string field: undefined when absent or null, checked when present. */
export function optString(o: Obj, key: string, prefix = '', rule: StringRule = {}): string | undefined {
  const v = own(o, key);
  if (v === undefined || v === null) return undefined;
  return checkString(v, join(prefix, key), rule);
}

export function checkString(v: unknown, name: string, rule: StringRule = {}): string {
  if (typeof v !== 'string') throw badField(name, 'wrong-type', `${name} must be a string, not ${describe(v)}`);
  if (!rule.allowEmpty && v === '') throw badField(name, 'empty', `${name} is empty`);
  if (!rule.allowNul && v.includes('\0')) throw badField(name, 'nul', `${name} contains a NUL character`);
  if (rule.maxLength !== undefined && v.length > rule.maxLength)
    throw badField(name, 'too-long', `${name} is ${v.length} characters, more than ${rule.maxLength}`);
  return v;
}

/** A required object field. */
export function reqObject(o: Obj, key: string, prefix = ''): Obj {
  const name = join(prefix, key);
  const v = own(o, key);
  if (v === undefined || v === null) throw badField(name, 'missing', `${name} is missing`);
  if (typeof v !== 'object' || Array.isArray(v)) throw badField(name, 'wrong-type', `${name} must be an object, not ${describe(v)}`);
  return v as Obj;
}

/** An optional boolean field. */
export function optBoolean(o: Obj, key: string, prefix = ''): boolean | undefined {
  const v = own(o, key);
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'boolean')
    throw badField(join(prefix, key), 'wrong-type', `${join(prefix, key)} must be true or false, not ${describe(v)}`);
  return v;
}

/** A path as the harness gave it: a non-empty string without NUL, not resolved, not normalized. */
export function reqPath(o: Obj, key: string, prefix = ''): string {
  return reqString(o, key, prefix);
}

/** The longest harness session id accepted (ids are UUIDs in practice; longer ones are hashed into the name). */
export const MAX_HARNESS_ID = 1024;

/** The harness's session id (`session_id` for Claude Code, Codex and Gemini CLI). */
export function harnessId(o: Obj, key = 'session_id'): string {
  return reqString(o, key, '', { maxLength: MAX_HARNESS_ID });
}

/** The payload's working directory: where the harness runs, what relative paths are relative to. */
export function cwdField(o: Obj, key = 'cwd'): string {
  return reqString(o, key);
}

/** An optional tool-call id. */
export function optToolUseId(o: Obj, key = 'tool_use_id'): string | undefined {
  return optString(o, key, '', { maxLength: MAX_HARNESS_ID });
}

const SESSION_CHAR = /[A-Za-z0-9._-]/;
const MAX_SESSION = 100;
const HASH_LEN = 16;

/**
 * The git-scalpel session name for a harness's session id: `<prefix>-<id>` when that is a valid
 * session name (1 to 100 of [A-Za-z0-9._-], not starting with `.` or `-`, without `..`, not
 * ending in `.lock`), as for the UUIDs harnesses hand out.
 * Otherwise every character outside [A-Za-z0-9._-] becomes `_`, `..` becomes `._`, the rest is
 * cut to fit, and a hash of the whole id is appended (`<prefix>-<mapped>-<16 hex>`), so two
 * different ids never share a name in practice and the same id always gets the same one.
 */
export function harnessSession(prefix: string, id: string): string {
  let body = '';
  for (const ch of id) body += SESSION_CHAR.test(ch) ? ch : '_';
  body = body.replace(/(?<=\.)\./g, '_');
  const plain = `${prefix}-${body}`;
  const changed = body !== id;
  let name: string;
  if (!changed && plain.length <= MAX_SESSION && !plain.endsWith('.lock')) name = plain;
  else {
    const room = MAX_SESSION - prefix.length - 2 - HASH_LEN;
    name = `${prefix}-${body.slice(0, Math.max(0, room))}-${fnv1a64(id)}`;
  }
  checkSession(name);
  return name;
}

const FNV_OFFSET = 0xcbf29ce484222325n;
const FNV_PRIME = 0x100000001b3n;
const MASK64 = 0xffffffffffffffffn;

/** FNV-1a, 64 bits, over the string's UTF-16 code units (two bytes each: lone surrogates count too), as 16 hex digits. */
export function fnv1a64(s: string): string {
  let h = FNV_OFFSET;
  for (let i = 0; i < s.length; i++) {
    const u = s.charCodeAt(i);
    h = ((h ^ BigInt(u & 0xff)) * FNV_PRIME) & MASK64;
    h = ((h ^ BigInt(u >> 8)) * FNV_PRIME) & MASK64;
  }
  return h.toString(16).padStart(HASH_LEN, '0');
}

/** A git-scalpel session name given as is (the generic form): it must already be valid. */
export function givenSession(o: Obj, key = 'session'): string {
  const s = reqString(o, key, '', { maxLength: MAX_HARNESS_ID });
  try {
    checkSession(s);
  } catch {
    throw badField(
      key,
      'invalid',
      `${key} '${s.length > 60 ? `${s.slice(0, 60)}...` : s}' is not a session name (letters, digits, '.', '_', '-'; at most 100; no '..', not ending in '.lock')`,
    );
  }
  return s;
}

export const LABEL_MAX = 120;

/**
 * A turn's label: the text's first non-empty line, trimmed, at most 120 characters (code
 * points; cut on a code point boundary, ending in `…` when cut). Tabs become spaces, control
 * characters and lone surrogates U+FFFD, so the label prints safely. `empty` when there is no text.
 */
export function turnLabel(text: string, empty = '(empty prompt)'): string {
  const line = firstLine(text);
  if (line === null) return empty;
  // the first LABEL_MAX + 1 code points say whether to cut, whatever the line's length
  let count = 0;
  let keep = 0; // code units of the first LABEL_MAX - 1 code points
  let end = 0;
  for (const ch of line) {
    count++;
    if (count === LABEL_MAX) keep = end;
    end += ch.length;
    if (count > LABEL_MAX) break;
  }
  const cut = count > LABEL_MAX;
  const head = cut ? line.slice(0, keep) : line;
  // control characters (C0, DEL, C1), bidi overrides and isolates would rewrite a terminal line
  const label = head
    .replace(/\t/g, ' ')
    .replace(
      /[\u0000-\u0008\u000a-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g,
      '\ufffd',
    )
    .trim();
  if (!cut) return label || empty;
  return `${label}…`;
}

function firstLine(text: string): string | null {
  const lineBreak = /\r\n|\r|\n|\u2028|\u2029/g;
  let start = 0;
  for (;;) {
    const m = lineBreak.exec(text);
    const stop = m ? m.index : text.length;
    const line = text.slice(start, stop).trim();
    if (line) return line;
    if (!m) return null;
    start = m.index + m[0].length;
  }
}

/** An event git-scalpel does not act on: the session and cwd when the payload has valid ones, else null (never an error). */
export function ignoredEvent(
  o: Obj,
  prefix: string | null,
  reason: string,
): { kind: 'ignored'; session: string | null; cwd: string | null; reason: string } {
  let session: string | null = null;
  let cwd: string | null = null;
  try {
    session = prefix === null ? givenSession(o) : harnessSession(prefix, harnessId(o));
  } catch {
    session = null;
  }
  try {
    cwd = cwdField(o);
  } catch {
    cwd = null;
  }
  return { kind: 'ignored', session, cwd, reason };
}

/** Why a tool's events are ignored: it neither writes files nor runs a shell (or it is an MCP tool). */
export function notOurs(tool: string): string {
  return tool.startsWith('mcp__') ? `MCP tool ${tool}` : `tool ${tool} neither writes files nor runs a shell`;
}

/** The session (the harness's id under its prefix) and the cwd every event of a harness payload carries. */
export function eventContext(p: Obj, prefix: string): { session: string; cwd: string } {
  return { session: harnessSession(prefix, harnessId(p)), cwd: cwdField(p) };
}

/** A prompt's event: the turn it opens, labelled with the prompt's first line. */
export function turnStart(p: Obj, prefix: string): HookEvent {
  const c = eventContext(p, prefix);
  return { kind: 'turn-start', ...c, label: promptLabel(p) };
}

/** The prompt (`prompt` field, as all three harnesses name it) as a turn's label: its first line. */
export function promptLabel(p: Obj): string {
  return turnLabel(reqString(p, 'prompt', '', { allowEmpty: true, allowNul: true }));
}

/** SessionStart (its `source`) or SessionEnd (its `reason`), as Claude Code and Gemini CLI send them. */
export function sessionEvent(p: Obj, event: 'SessionStart' | 'SessionEnd', c: { session: string; cwd: string }): HookEvent {
  const detail = optString(p, event === 'SessionStart' ? 'source' : 'reason', '', { allowNul: true });
  return { kind: event === 'SessionStart' ? 'session-start' : 'session-end', ...c, ...(detail !== undefined ? { detail } : {}) };
}
