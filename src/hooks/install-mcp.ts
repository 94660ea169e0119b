/**
 * `git-scalpel install <harness> --mcp [--user] [--uninstall]`, the planning half: given the text
 * of a harness's MCP configuration file (or null when there is none) and the server's command,
 * compute the file's new text. Pure: no I/O; src/cli/cmd-install.ts reads and writes.
 *
 * What the harnesses document (their formats, not ours):
 *
 * - Claude Code: https://code.claude.com/docs/en/mcp (formerly
 *   https://docs.anthropic.com/en/docs/claude-code/mcp#project-scope). Project scope is `.mcp.json`
 *   at the project root, `{"mcpServers": {"<name>": {"type": "stdio", "command", "args", "env"}}}`
 *   (`claude mcp add --scope project` writes `"type": "stdio"`; stdio is the default when `type`
 *   is absent); project servers need the user's approval on first use. User scope is the top-level
 *   `mcpServers` of `~/.claude.json` (not `~/.claude/settings.json`, whose `mcpServers` is ignored:
 *   https://github.com/trailofbits/claude-code-config/issues/55); `CLAUDE_CONFIG_DIR` moves it to
 *   `$CLAUDE_CONFIG_DIR/.claude.json`. Both are strict JSON. `${VAR}` / `${VAR:-default}` are
 *   expanded in command, args, env, url and headers, but `${CLAUDE_PROJECT_DIR}` has been seen
 *   reaching servers unexpanded (https://github.com/anthropics/claude-code/issues/69123), so a
 *   devDependency is found by walking up from the server's cwd instead (it starts in the
 *   session's directory, inside the project; `mcpServerCommand`). Check with `claude mcp list` /
 *   `claude mcp get git-scalpel`.
 * - Codex CLI: https://developers.openai.com/codex/mcp and
 *   https://github.com/openai/codex/blob/main/docs/config.md: `[mcp_servers.<name>]` tables in
 *   `~/.codex/config.toml` (`$CODEX_HOME/config.toml`) with `command`, `args`, `env`, `cwd`,
 *   `startup_timeout_sec`, `tool_timeout_sec` (default 60), `enabled`; a trusted project's
 *   `.codex/config.toml` is read too (https://docs.rs/tuff-adapter-codex/0.13.0/tuff_adapter_codex/constant.MCP_CONFIG_RELPATH.html,
 *   https://dev.to/vibeidedev/codex-mcp-add-configure-and-debug-mcp-servers-in-codex-cli-1j1p).
 *   `codex mcp add` writes only the user file. Check with `codex mcp list`.
 * - Gemini CLI: https://geminicli.com/docs/tools/mcp-server/ (google-gemini/gemini-cli
 *   docs/tools/mcp-server.md): `mcpServers` at the top level of `.gemini/settings.json` (project,
 *   trusted folders) or `~/.gemini/settings.json` (user); a stdio server is `{"command", "args"?,
 *   "env"?, "cwd"?, "timeout"? (ms, default 600000), "trust"?, "includeTools"?, "excludeTools"?}`.
 *   JSON with comments. Check with `gemini mcp list`, or `/mcp` in a session.
 *
 * Our entry is the member named `git-scalpel` of the harness's server table. Install leaves an
 * entry whose command and args are already ours as it is (other keys the user added — `env`,
 * `trust`, `tool_timeout_sec` — stay); any other `git-scalpel` entry is replaced. JSON files are
 * edited with install.ts's span-keeping editor; config.toml with the small editor below, which
 * appends and removes whole `[mcp_servers.git-scalpel]` tables as text and refuses a file it cannot
 * read or a `git-scalpel` server written in another form (inline table, dotted keys).
 */
import { ScalpelError } from '../errors/index.js';
import {
  parseSettingsObject,
  applyEdits,
  detectFormat,
  insertEdit,
  kindOf,
  lineCol,
  member,
  removeItems,
  toValue,
  envDir,
  harnessDir,
  projectBin,
  walkUpScript,
  within,
  type BinContext,
  type Edit,
  type Env,
  type InstallableHarness,
  type JObject,
  type JMember,
} from './install.js';

export const MCP_SERVER_NAME = 'git-scalpel';

export interface McpServerCommand {
  command: string;
  args: string[];
}

export interface McpHarnessSpec {
  harness: InstallableHarness;
  title: string;
  /** The project file, relative to the worktree root. */
  projectFile: string;
  format: 'json' | 'toml';
  /** JSON only: whether the reader accepts comments. */
  comments: boolean;
  /** The server entry as the harness's schema spells it (JSON harnesses). */
  entry(c: McpServerCommand): Record<string, unknown>;
  /** How to see that the harness found it. */
  check: string;
}

export const MCP_SPECS: Readonly<Record<InstallableHarness, McpHarnessSpec>> = {
  'claude-code': {
    harness: 'claude-code',
    title: 'Claude Code',
    projectFile: '.mcp.json',
    format: 'json',
    comments: false,
    entry: (c) => ({ type: 'stdio', command: c.command, args: c.args }),
    check: 'claude mcp get git-scalpel   (or /mcp in a session; a project server asks for approval once)',
  },
  codex: {
    harness: 'codex',
    title: 'Codex CLI',
    projectFile: '.codex/config.toml',
    format: 'toml',
    comments: true,
    entry: (c) => ({ command: c.command, args: c.args }),
    check: 'codex mcp list   (or /mcp in a session; a project .codex/config.toml is read only in a trusted project)',
  },
  gemini: {
    harness: 'gemini',
    title: 'Gemini CLI',
    projectFile: '.gemini/settings.json',
    format: 'json',
    comments: true,
    entry: (c) => ({ command: c.command, args: c.args }),
    check: 'gemini mcp list   (or /mcp in a session; .gemini/settings.json is read only in a trusted folder)',
  },
};

/**
 * The server's command and arguments, from how this CLI runs — `resolveBin`'s cases, as an argv
 * (harnesses spawn MCP servers without a shell): inside the project's node_modules, writing a
 * project file → `sh -c <walk up from the server's cwd to node_modules/...> git-scalpel mcp`
 * (no npx: its start-up is seconds; the three harnesses start a project's servers in a directory
 * of the project); on PATH → `git-scalpel mcp`; else `node <absolute path> mcp`.
 */
export function mcpServerCommand(ctx: BinContext): McpServerCommand {
  const rel = projectBin(ctx);
  if (rel !== null) return { command: 'sh', args: ['-c', walkUpScript(rel), 'git-scalpel', 'mcp'] };
  if (ctx.onPath) return { command: 'git-scalpel', args: ['mcp'] };
  return { command: 'node', args: [ctx.script, 'mcp'] };
}

/**
 * The user-level file: `~/.claude.json` (`$CLAUDE_CONFIG_DIR/.claude.json`), `~/.codex/config.toml`
 * (`$CODEX_HOME/config.toml`), `~/.gemini/settings.json` (`$GEMINI_CLI_HOME/.gemini/settings.json`).
 */
export function mcpUserConfigFile(harness: InstallableHarness, env: Env): string {
  if (harness === 'claude-code') return claudeStateFile(env);
  return within(harnessDir(harness, env).dir, harness === 'codex' ? 'config.toml' : 'settings.json');
}

/** Claude Code's own state file (MCP servers of user scope, projects' trust): `$CLAUDE_CONFIG_DIR/.claude.json`, else `~/.claude.json`. */
export function claudeStateFile(env: Env): string {
  const d = envDir(env.CLAUDE_CONFIG_DIR);
  if (d) return within(d, '.claude.json');
  const home = envDir(env.HOME);
  if (!home) throw new ScalpelError('UNSUPPORTED', 'cannot find the home directory for a user-level install: HOME is not set to an absolute path', { capability: 'home', reason: 'no-home' });
  return within(home, '.claude.json');
}

export type McpInstallAction = 'installed' | 'already-installed' | 'uninstalled' | 'not-installed';

export interface McpInstallOptions {
  harness: InstallableHarness;
  server: McpServerCommand;
  uninstall?: boolean;
  /** The file's path, for messages. */
  file?: string;
}

export interface McpInstallPlan {
  action: McpInstallAction;
  changed: boolean;
  /** The new text; null: there is to be no file. */
  text: string | null;
  /** Whether an install replaced a `git-scalpel` entry that differed. */
  replaced: boolean;
  /** The entry written, or (uninstall) the one removed when it could be read. */
  server: McpServerCommand | null;
}

function refuse(opts: McpInstallOptions, reason: string, message: string, extra: Record<string, unknown> = {}): never {
  const file = opts.file ?? 'the MCP configuration';
  throw new ScalpelError('UNSUPPORTED', `${file}: ${message}; nothing was changed`, { path: opts.file, capability: 'mcp-config', reason, ...extra });
}

const sameServer = (a: McpServerCommand | null, b: McpServerCommand) => a !== null && a.command === b.command && a.args.length === b.args.length && a.args.every((x, i) => x === b.args[i]);

function asServer(v: unknown): McpServerCommand | null {
  if (!v || typeof v !== 'object' || Array.isArray(v)) return null;
  const o = v as Record<string, unknown>;
  const args = o.args === undefined ? [] : o.args;
  if (typeof o.command !== 'string' || !Array.isArray(args) || !args.every((a) => typeof a === 'string')) return null;
  return { command: o.command, args: args as string[] };
}

/** Plan an install or uninstall of the `git-scalpel` MCP server in `current` (null: no file). */
export function planMcpInstall(current: string | null, opts: McpInstallOptions): McpInstallPlan {
  return MCP_SPECS[opts.harness].format === 'toml' ? planToml(current, opts) : planJson(current, opts);
}

// ---------------------------------------------------------------------------------------------
// JSON (.mcp.json, ~/.claude.json, settings.json)

function planJson(current: string | null, opts: McpInstallOptions): McpInstallPlan {
  const spec = MCP_SPECS[opts.harness];
  const entry = spec.entry(opts.server);
  if (current === null) {
    if (opts.uninstall) return { action: 'not-installed', changed: false, text: null, replaced: false, server: null };
    return { action: 'installed', changed: true, text: JSON.stringify({ mcpServers: { [MCP_SERVER_NAME]: entry } }, null, 2) + '\n', replaced: false, server: opts.server };
  }
  const parse = (text: string) => {
    const root = parseSettingsObject(text, opts.harness, (reason, message, extra) => refuse(opts, reason, message, extra));
    const servers = member(root, 'mcpServers');
    if (servers && servers.value.kind !== 'object') refuse(opts, 'servers-not-object', `"mcpServers" is ${kindOf(servers.value)}, not an object mapping server names to servers`);
    const table = servers ? (servers.value as JObject) : null;
    const ours = table ? table.members.map((m, i) => [m, i] as const).filter(([m]) => m.key === MCP_SERVER_NAME) : [];
    return { root, servers: servers ?? null, table, ours };
  };
  const p = parse(current);
  // what neither an install nor an uninstall may change: everything but our entry (and an emptied mcpServers)
  const invariant = (q: ReturnType<typeof parse>) => {
    const v = toValue(q.root) as Record<string, unknown>;
    if (q.table) {
      const s = v.mcpServers as Record<string, unknown>;
      delete s[MCP_SERVER_NAME];
      if (Object.keys(s).length === 0) delete v.mcpServers;
    }
    return JSON.stringify(v);
  };
  const before = invariant(p);
  const existing = p.ours.length ? asServer(toValue(p.ours[p.ours.length - 1][0].value)) : null;

  const removal = (q: ReturnType<typeof parse>, text: string): Edit[] => {
    if (!q.table || !q.servers || q.ours.length === 0) return [];
    if (q.ours.length === q.table.members.length) return removeItems(text, q.root, new Set([q.root.members.indexOf(q.servers as JMember)]));
    return removeItems(text, q.table, new Set(q.ours.map(([, i]) => i)));
  };

  if (opts.uninstall) {
    if (p.ours.length === 0) return { action: 'not-installed', changed: false, text: current, replaced: false, server: null };
    const text = applyEdits(current, removal(p, current));
    const q = parse(text);
    if (q.ours.length || invariant(q) !== before) throw new Error('MCP install: the uninstall plan changed more than our entry (a bug)');
    return { action: 'uninstalled', changed: true, text: /^\s*\{\s*\}\s*$/.test(text) ? null : text, replaced: false, server: existing };
  }

  const extraOk = (() => {
    // Claude Code: our "type" must be stdio (or absent: the default)
    if (opts.harness !== 'claude-code' || !p.ours.length) return true;
    const v = toValue(p.ours[p.ours.length - 1][0].value) as Record<string, unknown>;
    return v.type === undefined || v.type === 'stdio';
  })();
  if (p.ours.length === 1 && sameServer(existing, opts.server) && extraOk) return { action: 'already-installed', changed: false, text: current, replaced: false, server: opts.server };

  let base = current;
  let q = p;
  if (p.ours.length) {
    base = applyEdits(current, removal(p, current));
    q = parse(base);
  }
  const fmt = detectFormat(base, q.root);
  const edit = q.table ? insertEdit(base, q.table, [{ key: MCP_SERVER_NAME, value: entry }], fmt) : insertEdit(base, q.root, [{ key: 'mcpServers', value: { [MCP_SERVER_NAME]: entry } }], fmt);
  const text = applyEdits(base, [edit]);
  const r = parse(text);
  if (r.ours.length !== 1 || !sameServer(asServer(toValue(r.ours[0][0].value)), opts.server) || invariant(r) !== before) throw new Error('MCP install: the install plan changed more than our entry (a bug)');
  return { action: 'installed', changed: true, text, replaced: p.ours.length > 0, server: opts.server };
}

// ---------------------------------------------------------------------------------------------
// TOML (Codex's config.toml): a scanner that reads every statement's keys and spans

export interface TomlHeader {
  kind: 'header';
  path: string[];
  array: boolean;
  /** The line's start, and the end of its line (after the newline). */
  start: number;
  end: number;
}
export interface TomlKeyVal {
  kind: 'keyval';
  /** The full path: the table's, then the dotted key. */
  path: string[];
  start: number;
  end: number;
  /** The value's text span. */
  valueStart: number;
  valueEnd: number;
}
export type TomlStatement = TomlHeader | TomlKeyVal;

export class TomlSyntaxError extends Error {
  constructor(
    message: string,
    readonly offset: number,
  ) {
    super(message);
  }
}

const BARE_KEY = /[A-Za-z0-9_-]+/y;
const BASIC = /"(?:[^"\\\u0000-\u0008\u000a-\u001f\u007f]|\\(?:[btnfre"\\]|x[0-9a-fA-F]{2}|u[0-9a-fA-F]{4}|U[0-9a-fA-F]{8}))*"/y;
const LITERAL = /'[^'\u0000-\u0008\u000a-\u001f\u007f]*'/y;
const ML_BASIC = /"""(?:[^"\\]|\\[\s\S]|"(?!""))*"""(?:"{1,2}(?!"))?/y;
const ML_LITERAL = /'''(?:[^']|'(?!''))*'''(?:'{1,2}(?!'))?/y;
const SCALAR = /[0-9A-Za-z_+\-.:]+(?: [0-9]{2}:[0-9]{2}[0-9A-Za-z_+\-.:]*)?/y;

/** TOML basic-string escapes, decoded. */
function decodeBasic(raw: string): string {
  return raw.slice(1, -1).replace(/\\(?:([btnfre"\\])|x([0-9a-fA-F]{2})|u([0-9a-fA-F]{4})|U([0-9a-fA-F]{8}))/g, (_, c: string, x: string, u: string, U: string) => {
    if (c) return ({ b: '\b', t: '\t', n: '\n', f: '\f', r: '\r', e: '\x1b', '"': '"', '\\': '\\' } as Record<string, string>)[c];
    return String.fromCodePoint(parseInt(x ?? u ?? U, 16));
  });
}

export function scanToml(text: string): TomlStatement[] {
  let i = 0;
  const n = text.length;
  const out: TomlStatement[] = [];
  const fail = (what: string, at = i): never => {
    throw new TomlSyntaxError(what, at);
  };
  const sticky = (re: RegExp): string | null => {
    re.lastIndex = i;
    const m = re.exec(text);
    if (!m) return null;
    i += m[0].length;
    return m[0];
  };
  const spaces = () => {
    while (text[i] === ' ' || text[i] === '\t') i++;
  };
  const comment = () => {
    if (text[i] !== '#') return;
    while (i < n && text[i] !== '\n') {
      const c = text.charCodeAt(i);
      if ((c < 0x20 && c !== 0x09 && !(c === 0x0d && text[i + 1] === '\n')) || c === 0x7f) fail('a control character in a comment');
      i++;
    }
  };
  /** Spaces, newlines and comments (inside arrays). */
  const blank = () => {
    for (;;) {
      spaces();
      if (text[i] === '#') comment();
      else if (text[i] === '\n') i++;
      else if (text[i] === '\r' && text[i + 1] === '\n') i += 2;
      else return;
    }
  };
  const endOfLine = () => {
    spaces();
    comment();
    if (i >= n) return;
    if (text[i] === '\n') i++;
    else if (text[i] === '\r' && text[i + 1] === '\n') i += 2;
    else fail(`expected the end of the line, found ${JSON.stringify(text[i])}`);
  };
  const key = (): string[] => {
    const parts: string[] = [];
    for (;;) {
      spaces();
      let part: string | null;
      if (text[i] === '"') {
        const raw = sticky(BASIC);
        if (raw === null) fail('a malformed quoted key');
        part = decodeBasic(raw as string);
      } else if (text[i] === "'") {
        const raw = sticky(LITERAL);
        if (raw === null) fail('a malformed quoted key');
        part = (raw as string).slice(1, -1);
      } else {
        part = sticky(BARE_KEY);
        if (part === null) fail(`expected a key, found ${i >= n ? 'the end of the file' : JSON.stringify(text[i])}`);
      }
      parts.push(part as string);
      spaces();
      if (text[i] !== '.') return parts;
      i++;
    }
  };
  const value = (): void => {
    const c = text[i];
    if (c === '"') {
      if (text.startsWith('"""', i)) {
        if (sticky(ML_BASIC) === null) fail('an unterminated multi-line string');
      } else if (sticky(BASIC) === null) fail('a malformed string');
      return;
    }
    if (c === "'") {
      if (text.startsWith("'''", i)) {
        if (sticky(ML_LITERAL) === null) fail('an unterminated multi-line literal string');
      } else if (sticky(LITERAL) === null) fail('a malformed literal string');
      return;
    }
    if (c === '[') {
      i++;
      blank();
      while (text[i] !== ']') {
        value();
        blank();
        if (text[i] === ',') {
          i++;
          blank();
        } else if (text[i] !== ']') fail(`expected ',' or ']' in an array, found ${i >= n ? 'the end of the file' : JSON.stringify(text[i])}`);
      }
      i++;
      return;
    }
    if (c === '{') {
      i++;
      blank();
      while (text[i] !== '}') {
        key();
        spaces();
        if (text[i] !== '=') fail("expected '=' after a key");
        i++;
        blank();
        value();
        blank();
        if (text[i] === ',') {
          i++;
          blank();
        } else if (text[i] !== '}') fail(`expected ',' or '}' in an inline table, found ${i >= n ? 'the end of the file' : JSON.stringify(text[i])}`);
      }
      i++;
      return;
    }
    if (sticky(SCALAR) === null) fail(`expected a value, found ${i >= n ? 'the end of the file' : JSON.stringify(text[i])}`);
  };

  if (text.charCodeAt(0) === 0xfeff) i = 1;
  let table: string[] = [];
  for (;;) {
    blank();
    if (i >= n) return out;
    const start = text.lastIndexOf('\n', i - 1) + 1;
    if (text[i] === '[') {
      const array = text[i + 1] === '[';
      i += array ? 2 : 1;
      const path = key();
      if (text[i] !== ']' || (array && text[i + 1] !== ']')) fail(`expected '${array ? ']]' : ']'}' closing a table header`);
      i += array ? 2 : 1;
      endOfLine();
      out.push({ kind: 'header', path, array, start, end: i });
      table = path;
    } else {
      const k = key();
      if (text[i] !== '=') fail("expected '=' after a key");
      i++;
      spaces();
      const valueStart = i;
      value();
      const valueEnd = i;
      endOfLine();
      out.push({ kind: 'keyval', path: [...table, ...k], start, end: i, valueStart, valueEnd });
    }
  }
}

/** A value's text as a string or an array of strings, when it is one (else undefined). */
export function tomlStrings(raw: string): string | string[] | undefined {
  let i = 0;
  const at = (re: RegExp): string | null => {
    re.lastIndex = i;
    const m = re.exec(raw);
    if (!m) return null;
    i += m[0].length;
    return m[0];
  };
  const one = (): string | undefined => {
    if (raw.startsWith('"""', i) || raw.startsWith("'''", i)) return undefined;
    const b = at(BASIC);
    if (b !== null) return decodeBasic(b);
    const l = at(LITERAL);
    return l === null ? undefined : l.slice(1, -1);
  };
  const blank = () => at(/(?:[ \t\r\n]|#[^\n]*)*/y);
  if (raw[0] !== '[') {
    const v = one();
    return i === raw.length ? v : undefined;
  }
  i = 1;
  const items: string[] = [];
  for (;;) {
    blank();
    if (raw[i] === ']') return i + 1 === raw.length ? items : undefined;
    const v = one();
    if (v === undefined) return undefined;
    items.push(v);
    blank();
    if (raw[i] === ',') i++;
    else if (raw[i] !== ']') return undefined;
  }
}

function tomlString(s: string): string {
  return JSON.stringify(s).replace(/\u007f/g, '\\u007f');
}

const startsWith = (path: string[], prefix: string[]) => prefix.every((p, k) => path[k] === p);
const OURS = ['mcp_servers', MCP_SERVER_NAME];

function planToml(current: string | null, opts: McpInstallOptions): McpInstallPlan {
  const nlOf = (t: string) => (t.includes('\r\n') ? '\r\n' : '\n');
  const block = (nl: string) => `[mcp_servers.${MCP_SERVER_NAME}]${nl}command = ${tomlString(opts.server.command)}${nl}args = [${opts.server.args.map(tomlString).join(', ')}]${nl}`;
  if (current === null) {
    if (opts.uninstall) return { action: 'not-installed', changed: false, text: null, replaced: false, server: null };
    return { action: 'installed', changed: true, text: block('\n'), replaced: false, server: opts.server };
  }
  const scan = (text: string): TomlStatement[] => {
    try {
      return scanToml(text);
    } catch (e) {
      if (!(e instanceof TomlSyntaxError)) throw e;
      return refuse(opts, 'invalid-toml', `not TOML this installer can edit safely: ${e.message} at ${lineCol(text, e.offset)}`, { offset: e.offset });
    }
  };
  const st = scan(current);
  const line = (s: TomlStatement) => lineCol(current, s.start).replace(/, column.*/, '');

  // the forms we do not edit
  for (const s of st) {
    if (s.kind === 'header' && s.array && startsWith(s.path, ['mcp_servers']) && s.path.length <= 2)
      refuse(opts, 'mcp-servers-form', `[[${s.path.join('.')}]] (${line(s)}) makes mcp_servers an array of tables, which Codex does not read`);
  }
  const ours: TomlHeader[] = [];
  let inOurs = false;
  for (const s of st) {
    if (s.kind === 'header') {
      inOurs = !s.array && startsWith(s.path, OURS);
      if (inOurs) ours.push(s);
      continue;
    }
    if (inOurs) continue;
    if (s.path.length <= 1 && s.path[0] === 'mcp_servers')
      refuse(opts, 'mcp-servers-form', `mcp_servers is set as a value (${line(s)}); a [mcp_servers.${MCP_SERVER_NAME}] table cannot be added to it: edit it by hand`);
    if (startsWith(s.path, OURS))
      refuse(opts, 'mcp-server-form', `mcp_servers.${MCP_SERVER_NAME} is written with dotted keys or as an inline table (${line(s)}); edit or remove it by hand, or write it as a [mcp_servers.${MCP_SERVER_NAME}] table`);
  }
  const main = ours.filter((h) => h.path.length === 2);
  if (main.length > 1) refuse(opts, 'duplicate-table', `[mcp_servers.${MCP_SERVER_NAME}] is defined ${main.length} times, which is not valid TOML`);

  /** The statements of the table `h` heads: its keyvals up to the next header. */
  const body = (h: TomlHeader): TomlKeyVal[] => {
    const k = st.indexOf(h);
    const kv: TomlKeyVal[] = [];
    for (let j = k + 1; j < st.length && st[j].kind === 'keyval'; j++) kv.push(st[j] as TomlKeyVal);
    return kv;
  };
  const existing = (() => {
    if (!main.length) return null;
    const get = (name: string) => body(main[0]).find((s) => s.path.length === 3 && s.path[2] === name);
    const cmd = get('command');
    const args = get('args');
    const c = cmd ? tomlStrings(current.slice(cmd.valueStart, cmd.valueEnd)) : undefined;
    const a = args ? tomlStrings(current.slice(args.valueStart, args.valueEnd)) : [];
    return typeof c === 'string' && Array.isArray(a) ? { command: c, args: a } : null;
  })();

  /** Removing our tables: each from its header line to the end of its last statement, with the blank lines after it. */
  const remove = (text: string, tables: TomlHeader[]): string => {
    const edits: Edit[] = [];
    const nl = nlOf(text);
    for (const h of tables) {
      const kv = body(h);
      let end = kv.length ? kv[kv.length - 1].end : h.end;
      const rest = /^(?:[ \t]*\r?\n)*/.exec(text.slice(end))![0];
      end += rest.length;
      let start = h.start;
      if (/^\s*$/.test(text.slice(end))) {
        // at the end of the file: the separator an install put before it
        end = text.length;
        const before = text.slice(0, start);
        if (before.endsWith(nl)) start -= nl.length;
      }
      edits.push({ start, end, text: '' });
    }
    // a sub-table right after ours: one edit
    edits.sort((a, b) => a.start - b.start);
    const merged: Edit[] = [];
    for (const e of edits) {
      const last = merged[merged.length - 1];
      if (last && e.start <= last.end) last.end = Math.max(last.end, e.end);
      else merged.push({ ...e });
    }
    return applyEdits(text, merged);
  };
  const invariant = (statements: TomlStatement[], text: string) =>
    JSON.stringify(statements.filter((s) => !startsWith(s.path, OURS)).map((s) => [s.kind, s.path, s.kind === 'keyval' ? text.slice(s.valueStart, s.valueEnd) : (s as TomlHeader).array]));
  const before = invariant(st, current);

  if (opts.uninstall) {
    if (!ours.length) return { action: 'not-installed', changed: false, text: current, replaced: false, server: null };
    const text = remove(current, ours);
    const after = scan(text);
    if (after.some((s) => startsWith(s.path, OURS)) || invariant(after, text) !== before) throw new Error('MCP install: the uninstall plan changed more than our table (a bug)');
    return { action: 'uninstalled', changed: true, text: text === '' ? null : text, replaced: false, server: existing };
  }

  if (main.length === 1 && sameServer(existing, opts.server)) return { action: 'already-installed', changed: false, text: current, replaced: false, server: opts.server };
  const base = ours.length ? remove(current, ours) : current;
  const nl = nlOf(base === '' ? current : base);
  // after a last line with its newline: a blank line; after one without: just the newline it lacks
  // (the uninstall takes one newline back, so either way the bytes return)
  const sep = base === '' ? '' : nl;
  const text = base + sep + block(nl);
  const after = scan(text);
  const mine = after.filter((s): s is TomlHeader => s.kind === 'header' && startsWith(s.path, OURS));
  if (mine.length !== 1 || invariant(after, text) !== before) throw new Error('MCP install: the install plan changed more than our table (a bug)');
  return { action: 'installed', changed: true, text, replaced: ours.length > 0, server: opts.server };
}
