/**
 * The harnesses' configuration files as text: read with kept parsers, edited so that every byte
 * outside the edit stays. install.ts and install-mcp.ts decide what to write (git-scalpel's
 * policy); status.ts reads. Pure: no I/O.
 *
 * JSON and JSON with comments (Claude Code's and Gemini CLI's settings, `.mcp.json`,
 * `~/.claude.json`, Codex's hooks.json) are parsed by jsonc-parser, VS Code's settings parser,
 * into a tree with the position of every value. An edit inserts members or array items as text
 * laid out as their container already is (its indentation, its line ending) and removes them as
 * exactly that text, so comments, key order and whitespace keep their bytes and removing what was
 * inserted gives the original bytes back. jsonc-parser's own `modify` is not used for the edit:
 * with formatting options it re-formats every line the edit touches (`{"a":1}` becomes four lines,
 * and the removal does not give `{"a":1}` back), and it finds a repeated key's first occurrence
 * where JSON.parse and the harnesses keep the last.
 *
 * TOML (Codex's config.toml) is parsed by smol-toml, a strict TOML 1.0 parser, which gives values
 * but no positions: where a table is written is found by asking the parser again (a line starting
 * with `[` heads a table when the text before it parses, that is, when it is not inside a
 * multi-line string or array), and an edit is whole tables appended or removed as text.
 */
import { applyEdits, parseTree, printParseErrorCode, type Edit, type Node, type ParseError } from 'jsonc-parser';
import { parse as parseTomlText, TomlError } from 'smol-toml';

export { applyEdits, type Edit };

/** A place in a file: its offset, and its 1-based line and column. */
export interface Place {
  offset: number;
  line: number;
  column: number;
}

/** Where a file cannot be read, and why. */
export interface SyntaxProblem extends Place {
  message: string;
}

/** `line L, column C`, for messages. */
export const where = (p: Place): string => `line ${p.line}, column ${p.column}`;

export function lineColumn(text: string, offset: number): { line: number; column: number } {
  let line = 1;
  let start = 0;
  for (let i = text.indexOf('\n'); i !== -1 && i < offset; i = text.indexOf('\n', i + 1)) {
    line++;
    start = i + 1;
  }
  return { line, column: offset - start + 1 };
}

// ---------------------------------------------------------------------------------------------
// JSON(C)

export type JsonNode = Node;

/** What a file's reader accepts beyond RFC 8259 JSON. */
export interface JsonDialect {
  comments: boolean;
  trailingCommas?: boolean;
}

function jsonProblem(text: string, e: ParseError, d: JsonDialect): SyntaxProblem {
  const at = e.offset;
  const found =
    at >= text.length
      ? 'the end of the file'
      : text[at] === '/' && !d.comments
        ? "'/' (comments are not JSON)"
        : text.charCodeAt(at) === 0xfeff
          ? 'a byte order mark'
          : JSON.stringify(text.slice(at, at + Math.min(Math.max(e.length, 1), 20)));
  const what = printParseErrorCode(e.error)
    .replace(/([a-z])([A-Z])/g, '$1 $2')
    .toLowerCase();
  return { offset: at, ...lineColumn(text, at), message: `${what}, found ${found}` };
}

/** The document's tree, every node with its offset and length, or its first syntax error. */
export function parseJsonTree(
  text: string,
  d: JsonDialect,
): { root: JsonNode; problem?: undefined } | { root?: undefined; problem: SyntaxProblem } {
  const errors: ParseError[] = [];
  const root = parseTree(text, errors, { disallowComments: !d.comments, allowTrailingComma: !!d.trailingCommas, allowEmptyContent: false });
  // an empty text is an error too (allowEmptyContent: false), so there is one whenever there is no root
  if (errors.length > 0 || !root) return { problem: jsonProblem(text, errors[0], d) };
  return { root };
}

/** An object's member `key` as JSON.parse keeps it (the last of a repeated key): the property node. */
export function member(obj: JsonNode, key: string): JsonNode | undefined {
  const props = obj.children ?? [];
  for (let k = props.length - 1; k >= 0; k--) if (props[k].children![0].value === key) return props[k];
  return undefined;
}

export const keyOf = (prop: JsonNode): string => prop.children![0].value as string;
export const valueNode = (prop: JsonNode): JsonNode => prop.children![1];

/** The value of `key` in `obj` (JSON.parse's member), as a node. */
export function memberValue(obj: JsonNode, key: string): JsonNode | undefined {
  const m = member(obj, key);
  return m && valueNode(m);
}

/** A node's value as plain data (own properties even for a key like `__proto__`). */
export function valueOf(node: JsonNode): unknown {
  if (node.type === 'array') return node.children!.map(valueOf);
  if (node.type !== 'object') return node.value;
  const o: Record<string, unknown> = {};
  for (const p of node.children!)
    Object.defineProperty(o, keyOf(p), { value: valueOf(valueNode(p)), enumerable: true, writable: true, configurable: true });
  return o;
}

/** Where a node starts. */
export function placeOf(text: string, node: JsonNode): Place {
  return { offset: node.offset, ...lineColumn(text, node.offset) };
}

export function kindOf(node: JsonNode): string {
  if (node.type === 'null') return 'null';
  return node.type === 'object' || node.type === 'array' ? `an ${node.type}` : `a ${node.type}`;
}

/** A member (from its key) or an array item: where its text starts and ends. */
function span(item: JsonNode): { start: number; end: number } {
  const v = item.type === 'property' ? valueNode(item) : item;
  return { start: item.offset, end: v.offset + v.length };
}
const items = (container: JsonNode): JsonNode[] => container.children ?? [];

export interface Layout {
  /** One level of indentation. */
  unit: string;
  nl: string;
}

/** The whitespace that starts the line `offset` is on, and whether only it precedes `offset` there. */
function lineIndent(text: string, offset: number): { indent: string; alone: boolean } {
  const before = text.slice(text.lastIndexOf('\n', offset - 1) + 1, offset);
  const indent = /^[ \t]*/.exec(before)![0];
  return { indent, alone: indent.length === before.length };
}

/** The file's indentation unit (that of the top level's first member, else the first indented line) and line ending. */
export function detectLayout(text: string, root: JsonNode): Layout {
  const nl = text.includes('\r\n') ? '\r\n' : '\n';
  let unit = '';
  const first = items(root)[0];
  if (first && text.slice(root.offset, first.offset).includes('\n')) {
    const li = lineIndent(text, first.offset);
    if (li.alone) unit = li.indent;
  }
  if (!unit) unit = /\n([ \t]+)["{[]/.exec(text)?.[1] ?? '';
  if (!unit || unit.length > 10) unit = '  ';
  return { unit, nl };
}

export interface NewItem {
  /** The member's key (objects); absent for an array item. */
  key?: string;
  value: unknown;
}

/**
 * The edit appending `add` to a container, laid out as the container is: one per line in the
 * last item's indentation when its items are on lines of their own, on the same line otherwise,
 * and in an empty container one level deeper than the container's own line, the container's
 * close on a line of its own. What an empty container held stays: comments on one line (and
 * nothing, `{}`) before the new items, comments on lines of their own after them; only blank
 * lines are replaced (`{\n}` comes back from `removeEdits` as `{}`).
 */
export function insertEdit(text: string, container: JsonNode, add: readonly NewItem[], layout: Layout): Edit {
  const render = (it: NewItem, indent: string) => {
    const body = JSON.stringify(it.value, null, layout.unit)
      .split('\n')
      .join(layout.nl + indent);
    return it.key === undefined ? body : `${JSON.stringify(it.key)}: ${body}`;
  };
  const existing = items(container);
  const start = container.offset;
  const end = container.offset + container.length;
  const own = lineIndent(text, start).indent;
  if (existing.length === 0) {
    const child = own + layout.unit;
    const body = layout.nl + add.map((it) => child + render(it, child)).join(',' + layout.nl);
    const inside = text.slice(start + 1, end - 1);
    if (!inside.includes('\n')) return { offset: end - 1, length: 0, content: body + layout.nl + own };
    if (/^\s*$/.test(inside)) return { offset: start + 1, length: inside.length, content: body + layout.nl + own };
    return { offset: start + 1, length: 0, content: body };
  }
  const last = span(existing[existing.length - 1]);
  if (text.slice(start, existing[0].offset).includes('\n')) {
    const li = lineIndent(text, existing[existing.length - 1].offset);
    const child = li.alone ? li.indent : own + layout.unit;
    return { offset: last.end, length: 0, content: add.map((it) => ',' + layout.nl + child + render(it, child)).join('') };
  }
  const compact = (it: NewItem) => (it.key === undefined ? '' : `${JSON.stringify(it.key)}: `) + JSON.stringify(it.value);
  return { offset: last.end, length: 0, content: add.map((it) => ', ' + compact(it)).join('') };
}

/** Spaces, tabs and block comments on one line: what may precede an empty container's close. */
const ONE_LINE_GAP = /^(?:[ \t]|\/\*(?:[^*\r\n]|\*(?!\/))*\*\/)*$/;

/**
 * Edits removing the items at `drop` (indexes into the container's members or items): each run
 * with the separator after it, or, ending the container, with the one before it — the inverse of
 * `insertEdit`. All of them: the inverse of an insertion into the empty container — the line
 * breaks and indentation around the items go too, what else was inside stays.
 */
export function removeEdits(text: string, container: JsonNode, drop: ReadonlySet<number>): Edit[] {
  const all = items(container).map(span);
  const cut = (from: number, to: number): Edit => ({ offset: from, length: to - from, content: '' });
  if (drop.size === all.length) {
    const first = all[0].start;
    const last = all[all.length - 1].end;
    const open = container.offset + 1;
    const close = container.offset + container.length - 1;
    const own = lineIndent(text, container.offset).indent;
    const after = text.slice(last, close);
    const lineBreak = text.lastIndexOf('\n', first - 1);
    const from = text[lineBreak - 1] === '\r' ? lineBreak - 1 : lineBreak;
    // the items on lines of their own after what was inside, the close on the next line
    if (
      (after === '\n' + own || after === '\r\n' + own) &&
      from >= open &&
      lineIndent(text, first).alone &&
      ONE_LINE_GAP.test(text.slice(open, from))
    )
      return [cut(from, close)];
    // the items before what was inside
    return [/^\s*$/.test(text.slice(open, first)) ? cut(open, last) : cut(first, last)];
  }
  const edits: Edit[] = [];
  for (let a = 0; a < all.length; a++) {
    if (!drop.has(a)) continue;
    let b = a;
    while (b + 1 < all.length && drop.has(b + 1)) b++;
    edits.push(b + 1 < all.length ? cut(all[a].start, all[b + 1].start) : cut(all[a - 1].end, all[b].end));
    a = b;
  }
  return edits;
}

// ---------------------------------------------------------------------------------------------
// TOML

export type TomlDocument = Record<string, unknown>;

/** The document's values (smol-toml), or its syntax error. */
export function parseToml(text: string): { doc: TomlDocument; problem?: undefined } | { doc?: undefined; problem: SyntaxProblem } {
  try {
    return { doc: parseTomlText(text) };
  } catch (e) {
    if (!(e instanceof TomlError)) throw e;
    let offset = 0;
    for (let l = 1; l < e.line; l++) offset = text.indexOf('\n', offset) + 1;
    const message = e.message.split('\n')[0].replace(/^Invalid TOML document: /, '');
    return { problem: { offset: offset + e.column - 1, line: e.line, column: e.column, message } };
  }
}

const parses = (text: string): boolean => parseToml(text).problem === undefined;

export const isTomlTable = (v: unknown): v is TomlDocument =>
  typeof v === 'object' && v !== null && !Array.isArray(v) && !(v instanceof Date);

/** One `[table]` or `[[array.table]]` of a document as written. */
export interface TomlTableText {
  path: string[];
  array: boolean;
  /** Where its header line starts. */
  start: number;
  /** After the line ending of its last statement (the header's, when it has none); comments and blank lines after it belong to what follows. */
  end: number;
}

/** Every table header of `text` (a document that parses), with its key path as the parser reads it. */
export function tomlTables(text: string): TomlTableText[] {
  const lineStarts = [0];
  for (let i = text.indexOf('\n'); i !== -1; i = text.indexOf('\n', i + 1)) lineStarts.push(i + 1);
  const lineEnd = (k: number) => (k + 1 < lineStarts.length ? lineStarts[k + 1] : text.length);
  const headers: Array<{ line: number; path: string[]; array: boolean }> = [];
  for (let k = 0; k < lineStarts.length; k++) {
    const line = text.slice(lineStarts[k], lineEnd(k));
    if (!/^[ \t]*\[/.test(line) || !parses(text.slice(0, lineStarts[k]))) continue;
    // the header alone is a document holding one empty table (or array of one): its path
    let v: unknown = parseTomlText(line);
    const path: string[] = [];
    while (isTomlTable(v) && Object.keys(v).length === 1) {
      const key = Object.keys(v)[0];
      path.push(key);
      v = v[key];
    }
    headers.push({ line: k, path, array: Array.isArray(v) });
  }
  return headers.map((h, n) => {
    const next = n + 1 < headers.length ? headers[n + 1].line : lineStarts.length;
    // back over trailing blank and comment lines, while what stays before them is whole statements
    let last = next - 1;
    while (
      last > h.line &&
      /^[ \t]*(#.*)?\r?\n?$/.test(text.slice(lineStarts[last], lineEnd(last))) &&
      parses(text.slice(0, lineEnd(last - 1)))
    )
      last--;
    return { path: h.path, array: h.array, start: lineStarts[h.line], end: lineEnd(last) };
  });
}

/** A TOML basic string. */
export function tomlString(s: string): string {
  return JSON.stringify(s).replace(/\u007f/g, '\\u007f');
}

/** A value in a form that compares equal exactly when the values are (key order aside). */
export function canonicalToml(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canonicalToml).join(',')}]`;
  if (v instanceof Date) return `date:${v.toISOString()}`;
  if (isTomlTable(v))
    return `{${Object.keys(v)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonicalToml(v[k])}`)
      .join(',')}}`;
  return typeof v === 'string' ? JSON.stringify(v) : `${typeof v}:${String(v)}`;
}
