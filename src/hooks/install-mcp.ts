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
 * `trust`, `tool_timeout_sec` — stay); any other `git-scalpel` entry is replaced. The files are
 * read with kept parsers and edited as text (config-files.ts): JSON with jsonc-parser, our member
 * inserted and removed in the file's own layout; config.toml with smol-toml, whole
 * `[mcp_servers.git-scalpel]` tables appended and removed, refusing a file that is not TOML or a
 * `git-scalpel` server written in another form (inline table, dotted keys). Every result is
 * parsed again and must say exactly what was meant, everything else unchanged, before it is written.
 */
import { ScalpelError } from '../errors/index.js';
import {
  applyEdits,
  canonicalToml,
  detectLayout,
  insertEdit,
  isTomlTable,
  keyOf,
  kindOf,
  member,
  parseToml,
  placeOf,
  removeEdits,
  tomlString,
  tomlTables,
  valueNode,
  valueOf,
  where,
  type Edit,
  type TomlDocument,
  type TomlTableText,
} from './config-files.js';
import {
  envDir,
  harnessDir,
  parseSettingsObject,
  projectBin,
  walkUpScript,
  within,
  type BinContext,
  type Env,
  type InstallableHarness,
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
  /** JSON is read as the harness reads its settings (HARNESS_SPECS[harness].comments). */
  format: 'json' | 'toml';
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
    entry: (c) => ({ type: 'stdio', command: c.command, args: c.args }),
    check: 'claude mcp get git-scalpel   (or /mcp in a session; a project server asks for approval once)',
  },
  codex: {
    harness: 'codex',
    title: 'Codex CLI',
    projectFile: '.codex/config.toml',
    format: 'toml',
    entry: (c) => ({ command: c.command, args: c.args }),
    check: 'codex mcp list   (or /mcp in a session; a project .codex/config.toml is read only in a trusted project)',
  },
  gemini: {
    harness: 'gemini',
    title: 'Gemini CLI',
    projectFile: '.gemini/settings.json',
    format: 'json',
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
  if (!home)
    throw new ScalpelError('UNSUPPORTED', 'cannot find the home directory for a user-level install: HOME is not set to an absolute path', {
      capability: 'home',
      reason: 'no-home',
    });
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
  throw new ScalpelError('UNSUPPORTED', `${file}: ${message}; nothing was changed`, {
    path: opts.file,
    capability: 'mcp-config',
    reason,
    ...extra,
  });
}

const sameServer = (a: McpServerCommand | null, b: McpServerCommand) =>
  a !== null && a.command === b.command && a.args.length === b.args.length && a.args.every((x, i) => x === b.args[i]);

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
    return {
      action: 'installed',
      changed: true,
      text: JSON.stringify({ mcpServers: { [MCP_SERVER_NAME]: entry } }, null, 2) + '\n',
      replaced: false,
      server: opts.server,
    };
  }
  const parse = (text: string) => {
    const root = parseSettingsObject(text, opts.harness, (reason, message, extra) => refuse(opts, reason, message, extra));
    const serversMember = member(root, 'mcpServers') ?? null;
    const table = serversMember && valueNode(serversMember);
    if (table && table.type !== 'object') {
      const at = placeOf(text, table);
      refuse(opts, 'servers-not-object', `"mcpServers" is ${kindOf(table)}, not an object mapping server names to servers (${where(at)})`, {
        ...at,
      });
    }
    // our members (a repeated key: JSON.parse keeps the last)
    const ours = (table?.children ?? []).flatMap((m, i) => (keyOf(m) === MCP_SERVER_NAME ? [i] : []));
    const value = ours.length ? valueOf(valueNode(table!.children![ours[ours.length - 1]])) : undefined;
    return { root, serversMember, table, ours, value };
  };
  type Parsed = ReturnType<typeof parse>;
  const p = parse(current);
  // what neither an install nor an uninstall may change: everything but our entry (and an emptied mcpServers)
  const invariant = (q: Parsed) => {
    const v = valueOf(q.root) as Record<string, unknown>;
    if (q.table) {
      const s = v.mcpServers as Record<string, unknown>;
      delete s[MCP_SERVER_NAME];
      if (Object.keys(s).length === 0) delete v.mcpServers;
    }
    return JSON.stringify(v);
  };
  const before = invariant(p);
  const existing = asServer(p.value);
  const removal = (q: Parsed, text: string): Edit[] => {
    if (!q.table || q.ours.length === 0) return [];
    if (q.ours.length === q.table.children!.length) return removeEdits(text, q.root, new Set([q.root.children!.indexOf(q.serversMember!)]));
    return removeEdits(text, q.table, new Set(q.ours));
  };

  if (opts.uninstall) {
    if (p.ours.length === 0) return { action: 'not-installed', changed: false, text: current, replaced: false, server: null };
    const text = applyEdits(current, removal(p, current));
    const q = parse(text);
    if (q.ours.length || invariant(q) !== before) throw new Error('MCP install: the uninstall plan changed more than our entry (a bug)');
    return { action: 'uninstalled', changed: true, text: /^\s*\{\s*\}\s*$/.test(text) ? null : text, replaced: false, server: existing };
  }

  // Claude Code: our "type" must be stdio (or absent: the default)
  const type = (p.value as { type?: unknown } | undefined)?.type;
  const typeOk = opts.harness !== 'claude-code' || type === undefined || type === 'stdio';
  if (p.ours.length === 1 && sameServer(existing, opts.server) && typeOk)
    return { action: 'already-installed', changed: false, text: current, replaced: false, server: opts.server };

  const base = p.ours.length ? applyEdits(current, removal(p, current)) : current;
  const q = p.ours.length ? parse(base) : p;
  const layout = detectLayout(base, q.root);
  const edit = q.table
    ? insertEdit(base, q.table, [{ key: MCP_SERVER_NAME, value: entry }], layout)
    : insertEdit(base, q.root, [{ key: 'mcpServers', value: { [MCP_SERVER_NAME]: entry } }], layout);
  const text = applyEdits(base, [edit]);
  const r = parse(text);
  if (r.ours.length !== 1 || !sameServer(asServer(r.value), opts.server) || invariant(r) !== before)
    throw new Error('MCP install: the install plan changed more than our entry (a bug)');
  return { action: 'installed', changed: true, text, replaced: p.ours.length > 0, server: opts.server };
}

// ---------------------------------------------------------------------------------------------
// TOML (Codex's config.toml): whole [mcp_servers.git-scalpel] tables appended and removed as text

const OURS = ['mcp_servers', MCP_SERVER_NAME];
const under = (path: string[], prefix: string[]) => prefix.every((p, k) => path[k] === p);

/** The document without our server (and without `mcp_servers` when nothing else is in it), key order aside. */
function withoutOurServer(doc: TomlDocument): string {
  const { mcp_servers: servers, ...rest } = doc;
  if (servers === undefined) return canonicalToml(rest);
  if (!isTomlTable(servers)) return canonicalToml(doc);
  const others = Object.fromEntries(Object.entries(servers).filter(([k]) => k !== MCP_SERVER_NAME));
  return canonicalToml(Object.keys(others).length ? { ...rest, mcp_servers: others } : rest);
}

const ourServer = (doc: TomlDocument): unknown => {
  const servers = doc.mcp_servers;
  return isTomlTable(servers) && Object.prototype.hasOwnProperty.call(servers, MCP_SERVER_NAME) ? servers[MCP_SERVER_NAME] : undefined;
};

/**
 * Removing tables: each from its header line to the end of its last statement, with the blank
 * lines after it; one ending the file takes the line break before it too (what an install put
 * there), so an install followed by an uninstall gives the original bytes back.
 */
function removeTables(text: string, tables: readonly TomlTableText[]): string {
  const nl = text.includes('\r\n') ? '\r\n' : '\n';
  const cuts: Array<{ start: number; end: number }> = [];
  for (const t of tables) {
    let end = t.end + /^(?:[ \t]*\r?\n)*/.exec(text.slice(t.end))![0].length;
    let start = t.start;
    if (/^\s*$/.test(text.slice(end))) {
      end = text.length;
      if (text.slice(0, start).endsWith(nl)) start -= nl.length;
    }
    // a sub-table right after ours: one cut
    const last = cuts[cuts.length - 1];
    if (last && start <= last.end) last.end = Math.max(last.end, end);
    else cuts.push({ start, end });
  }
  return applyEdits(
    text,
    cuts.map((c) => ({ offset: c.start, length: c.end - c.start, content: '' })),
  );
}

function planToml(current: string | null, opts: McpInstallOptions): McpInstallPlan {
  const block = (nl: string) =>
    `[mcp_servers.${MCP_SERVER_NAME}]${nl}command = ${tomlString(opts.server.command)}${nl}args = [${opts.server.args.map(tomlString).join(', ')}]${nl}`;
  if (current === null) {
    if (opts.uninstall) return { action: 'not-installed', changed: false, text: null, replaced: false, server: null };
    return { action: 'installed', changed: true, text: block('\n'), replaced: false, server: opts.server };
  }
  const read = parseToml(current);
  if (read.problem) {
    const { message, ...place } = read.problem;
    refuse(opts, 'invalid-toml', `not valid TOML: ${message} at ${where(place)}`, { ...place });
  }
  const doc = read.doc!;
  const servers = doc.mcp_servers;
  if (servers !== undefined && !isTomlTable(servers))
    refuse(
      opts,
      'mcp-servers-form',
      `mcp_servers is ${Array.isArray(servers) ? 'an array of tables' : 'a value'}, not the table of servers Codex reads`,
    );
  const entry = ourServer(doc);
  const ours = entry === undefined ? [] : tomlTables(current).filter((t) => under(t.path, OURS));
  if (entry !== undefined && (!isTomlTable(entry) || !ours.some((t) => t.path.length === 2 && !t.array)))
    refuse(
      opts,
      'mcp-server-form',
      `mcp_servers.${MCP_SERVER_NAME} is not written as a [mcp_servers.${MCP_SERVER_NAME}] table (but with dotted keys, as an inline table, as an array of tables or only through sub-tables); edit or remove it by hand, or write it as that table`,
    );
  const existing = asServer(entry);
  const before = withoutOurServer(doc);
  /** A text this planner made, read back: it must parse. */
  const reread = (text: string, what: string): TomlDocument => {
    const r = parseToml(text);
    if (r.problem) throw new Error(`MCP install: the ${what} plan made config.toml unreadable (a bug): ${r.problem.message}`);
    return r.doc;
  };

  if (opts.uninstall) {
    if (entry === undefined) return { action: 'not-installed', changed: false, text: current, replaced: false, server: null };
    const text = removeTables(current, ours);
    const after = reread(text, 'uninstall');
    if (ourServer(after) !== undefined || withoutOurServer(after) !== before)
      throw new Error('MCP install: the uninstall plan changed more than our table (a bug)');
    return { action: 'uninstalled', changed: true, text: text === '' ? null : text, replaced: false, server: existing };
  }

  if (sameServer(existing, opts.server))
    return { action: 'already-installed', changed: false, text: current, replaced: false, server: opts.server };
  const base = ours.length ? removeTables(current, ours) : current;
  if (ours.length) reread(base, 'install');
  const nl = (base === '' ? current : base).includes('\r\n') ? '\r\n' : '\n';
  // after a last line with its newline: a blank line; after one without: just the newline it lacks
  // (the uninstall takes one newline back, so either way the bytes return)
  const text = base + (base === '' ? '' : nl) + block(nl);
  const after = parseToml(text);
  // the file parsed and a table was appended to it: only an mcp_servers that cannot take one is in the way
  if (after.problem)
    refuse(
      opts,
      'mcp-servers-form',
      `mcp_servers is written as an inline table, which a [mcp_servers.${MCP_SERVER_NAME}] table cannot be added to; edit it by hand`,
    );
  const written = canonicalToml(ourServer(after.doc!));
  if (written !== canonicalToml({ command: opts.server.command, args: opts.server.args }) || withoutOurServer(after.doc!) !== before)
    throw new Error('MCP install: the install plan changed more than our table (a bug)');
  return { action: 'installed', changed: true, text, replaced: ours.length > 0, server: opts.server };
}
