/**
 * `git-scalpel install <harness> [--user] [--uninstall]`, the planning half: given the text of a
 * harness's hook configuration file (or null when there is none) and the command to run, compute
 * the file's new text. Pure: no I/O; src/cli/cmd-install.ts reads and writes.
 *
 * What the harnesses document (read for this module; the file formats are theirs, not ours):
 *
 * - Claude Code: https://docs.claude.com/en/docs/claude-code/hooks (read as its de/es/pt/zh-CN
 *   translations, https://docs.claude.com/de/docs/claude-code/hooks and siblings, and
 *   https://docs.anthropic.com/es/docs/claude-code/hooks), https://docs.anthropic.com/ja/docs/claude-code/settings.
 *   `~/.claude/settings.json` (user), `.claude/settings.json` (project) hold
 *   `{"hooks": {"<Event>": [{"matcher": "...", "hooks": [{"type": "command", "command": "...",
 *   "timeout": <seconds>}]}]}}`. `matcher` is matched against the tool name: a plain name matches
 *   exactly, `Edit|Write` is a regex; events without tools (UserPromptSubmit, Stop, ...) omit it.
 *   `timeout` is in seconds. `$CLAUDE_PROJECT_DIR` is set for hook commands (the project root).
 *   The file is strict JSON: comments make Claude Code discard it as "Invalid or malformed JSON"
 *   (https://github.com/anthropics/claude-code/issues/83190, #12688). `CLAUDE_CONFIG_DIR`
 *   relocating `~/.claude` is what third-party installers honour
 *   (https://github.com/DataDog/pup/pull/622); the official page does not say so.
 * - OpenAI Codex CLI: https://developers.openai.com/codex/hooks; the reader itself,
 *   https://github.com/openai/codex codex-rs/config/src/hook_config.rs (HooksFile: `{"hooks":
 *   {"PreToolUse"|"PermissionRequest"|"PostToolUse"|"PreCompact"|"PostCompact"|"SessionStart"|
 *   "UserPromptSubmit"|"Stop": [{"matcher"?, "hooks": [{"type": "command", "command",
 *   "timeout"? (seconds, `timeout_sec`), "async"?, "statusMessage"?}]}]}}`),
 *   codex-rs/hooks/src/engine/discovery.rs (hooks.json beside each config layer:
 *   `~/.codex/hooks.json` — `$CODEX_HOME`, https://developers.openai.com/codex/environment-variables
 *   — and `<repo>/.codex/hooks.json`; parsed with serde_json, so strict JSON),
 *   codex-rs/hooks/src/events/common.rs (a matcher of only letters, digits, `_` and `|` is a list
 *   of exact names; anything else is a regex; UserPromptSubmit and Stop ignore matchers), and the
 *   tool names hooks see: `apply_patch` (aliases `Write`, `Edit`; the patch in
 *   `tool_input.command`) and `Bash` for the shell tools (openai/codex#18391). Commands run with
 *   `$SHELL -lc` in the session's cwd (codex-rs/hooks/src/engine/command_runner.rs: `current_dir`
 *   is the session's cwd, the environment is Codex's own plus a plugin's PLUGIN_ROOT; no
 *   project-directory variable), and a session may start in any directory below the project root
 *   (codex-rs/config/src/loader/mod.rs `load_project_layers`: every `.codex/` from the nearest
 *   `.git` ancestor down to the cwd is read). Unmanaged hooks run only once trusted: see
 *   src/hooks/status.ts.
 * - Gemini CLI: https://geminicli.com/docs/hooks/reference (google-gemini/gemini-cli
 *   docs/hooks/reference.md, docs/hooks/index.md): `hooks` in `.gemini/settings.json` (project,
 *   read in trusted folders) or `~/.gemini/settings.json` (user), events SessionStart, SessionEnd,
 *   BeforeAgent, AfterAgent, BeforeModel, AfterModel, BeforeToolSelection, BeforeTool, AfterTool,
 *   PreCompress, Notification; a definition is `{"matcher"?, "sequential"?, "hooks": [{"type":
 *   "command", "command", "name"?, "timeout"? (milliseconds, default 60000), "description"?}]}`;
 *   the matcher is a regex for tool events (`write_file|replace`). `hooks` may also hold
 *   `disabled` (an array of names), which is left alone. Settings are read with
 *   strip-json-comments (packages/cli/src/config/settings.ts): comments are allowed, and kept
 *   here. The hook runner (packages/core/src/hooks/hookRunner.ts) replaces `$GEMINI_PROJECT_DIR`
 *   in the command with the shell-quoted cwd, so it is written unquoted. The project file is read
 *   from the session's cwd only (`loadSettings(process.cwd())`, `Storage.getWorkspaceSettingsPath`),
 *   so whenever it applies that cwd is the worktree root. The user file lives in
 *   `$GEMINI_CLI_HOME/.gemini/` when GEMINI_CLI_HOME is set (packages/core/src/utils/paths.ts
 *   `homedir()`, packages/core/src/config/storage.ts `getGlobalGeminiDir`), else `~/.gemini/`.
 *
 * The file is edited, not rewritten: entries are inserted as text (in the file's own indentation
 * and line endings) and removed as exactly the text that was inserted, so everything else keeps
 * its bytes, an install followed by an uninstall gives the original bytes back, and a JSONC file's
 * comments survive. Our entries are recognised by their command alone (`hookCommand`), so nothing
 * outside the file records what was installed; the rule that follows: an uninstall that leaves
 * the top-level object empty (`{}`) removes the file.
 */
import { ScalpelError } from '../errors/index.js';

export type InstallableHarness = 'claude-code' | 'codex' | 'gemini';
export const INSTALLABLE: readonly InstallableHarness[] = ['claude-code', 'codex', 'gemini'];

export interface HookEventSpec {
  event: string;
  /** The tool-name matcher of our group; absent for events that match no tool. */
  matcher?: string;
}

export interface HarnessSpec {
  harness: InstallableHarness;
  /** The harness's name, for messages. */
  title: string;
  /** The project file, relative to the worktree root. */
  projectFile: string;
  /** The events we install, in the order they are written. */
  events: readonly HookEventSpec[];
  /** Whether the harness's reader accepts `//` and `/* *\/` comments in the file. */
  comments: boolean;
  /** One hook entry running `command`, as the harness's schema spells it. */
  handler(command: string): Record<string, unknown>;
}

const CLAUDE_TOOLS = 'Write|Edit|MultiEdit|NotebookEdit|Bash';
const CODEX_TOOLS = 'apply_patch|Bash';
const GEMINI_TOOLS = 'write_file|replace|run_shell_command';

/** Long enough for a capture in a large repository (a second or so), short of a hung hook. */
const TIMEOUT_SECONDS = 30;

export const HARNESS_SPECS: Readonly<Record<InstallableHarness, HarnessSpec>> = {
  'claude-code': {
    harness: 'claude-code',
    title: 'Claude Code',
    projectFile: '.claude/settings.json',
    events: [
      { event: 'UserPromptSubmit' },
      { event: 'PreToolUse', matcher: CLAUDE_TOOLS },
      { event: 'PostToolUse', matcher: CLAUDE_TOOLS },
      { event: 'PostToolUseFailure', matcher: CLAUDE_TOOLS },
      // a call refused before it ran gets no PostToolUse: these say so (DESIGN I10)
      { event: 'PermissionDenied', matcher: CLAUDE_TOOLS },
      { event: 'PostToolBatch' },
      { event: 'Stop' },
      { event: 'SubagentStop' },
      { event: 'SessionStart' },
      { event: 'SessionEnd' },
    ],
    comments: false,
    handler: (command) => ({ type: 'command', command, timeout: TIMEOUT_SECONDS }),
  },
  codex: {
    harness: 'codex',
    title: 'Codex CLI',
    projectFile: '.codex/hooks.json',
    events: [
      { event: 'UserPromptSubmit' },
      { event: 'PreToolUse', matcher: CODEX_TOOLS },
      { event: 'PostToolUse', matcher: CODEX_TOOLS },
      { event: 'Stop' },
    ],
    comments: false,
    handler: (command) => ({ type: 'command', command, timeout: TIMEOUT_SECONDS }),
  },
  gemini: {
    harness: 'gemini',
    title: 'Gemini CLI',
    projectFile: '.gemini/settings.json',
    events: [
      { event: 'BeforeAgent' },
      { event: 'BeforeTool', matcher: GEMINI_TOOLS },
      { event: 'AfterTool', matcher: GEMINI_TOOLS },
      { event: 'AfterAgent' },
      { event: 'SessionStart' },
      { event: 'SessionEnd' },
    ],
    comments: true,
    // `name` is what `/hooks disable <name>` takes; one name turns all of ours off at once.
    handler: (command) => ({ name: 'git-scalpel', type: 'command', command, timeout: TIMEOUT_SECONDS * 1000 }),
  },
};

export function isInstallable(s: string): s is InstallableHarness {
  return (INSTALLABLE as readonly string[]).includes(s);
}

/** The process environment as the command line passes it (main.ts): only what is read is looked at. */
export type Env = Readonly<Record<string, string | undefined>>;

/**
 * The variables that move a harness's user-level files, as each harness reads them (an absolute
 * path; an unset, empty or relative value is ignored here, so the default applies):
 *
 * - CLAUDE_CONFIG_DIR replaces `~/.claude` (settings.json) and holds `.claude.json` instead of
 *   HOME (see the module comment and install-mcp.ts).
 * - CODEX_HOME replaces `~/.codex` (hooks.json, config.toml): codex-rs/utils/home-dir `find_codex_home`
 *   (it must exist, and Codex canonicalizes it: trust keys name the resolved path, see status.ts),
 *   https://developers.openai.com/codex/environment-variables.
 * - GEMINI_CLI_HOME replaces HOME as the directory holding `.gemini/` (paths.ts `homedir()`);
 *   GEMINI_CLI_TRUSTED_FOLDERS_PATH names the trusted-folders file itself
 *   (storage.ts `getTrustedFoldersPath`, docs/cli/trusted-folders.md).
 */
export const HARNESS_ENV = ['HOME', 'CLAUDE_CONFIG_DIR', 'CODEX_HOME', 'GEMINI_CLI_HOME', 'GEMINI_CLI_TRUSTED_FOLDERS_PATH', 'GEMINI_CLI_SYSTEM_SETTINGS_PATH', 'GEMINI_CLI_TRUST_WORKSPACE'] as const;

/** An absolute directory from the environment, without trailing slashes; undefined otherwise. */
export function envDir(v: string | undefined): string | undefined {
  return v && v.startsWith('/') ? v.replace(/\/+$/, '') || '/' : undefined;
}

/** `name` inside directory `d`. */
export function within(d: string, name: string): string {
  return d === '/' ? `/${name}` : `${d}/${name}`;
}

function homeDir(env: Env): string {
  const home = envDir(env.HOME);
  if (!home) throw new ScalpelError('UNSUPPORTED', 'cannot find the home directory for a user-level install: HOME is not set to an absolute path', { capability: 'home', reason: 'no-home' });
  return home;
}

/**
 * Where a harness keeps its user-level state: its configuration directory (`~/.claude` or
 * `$CLAUDE_CONFIG_DIR`, `~/.codex` or `$CODEX_HOME`, `~/.gemini` or `$GEMINI_CLI_HOME/.gemini`),
 * and whether that directory is one git-scalpel may remove when an uninstall empties it (only the
 * default `.claude`/`.codex`/`.gemini` under a home, never a directory a variable names).
 */
export function harnessDir(harness: InstallableHarness, env: Env): { dir: string; own: boolean } {
  if (harness === 'claude-code') {
    const d = envDir(env.CLAUDE_CONFIG_DIR);
    return d ? { dir: d, own: false } : { dir: within(homeDir(env), '.claude'), own: true };
  }
  if (harness === 'codex') {
    const d = envDir(env.CODEX_HOME);
    return d ? { dir: d, own: false } : { dir: within(homeDir(env), '.codex'), own: true };
  }
  return { dir: within(envDir(env.GEMINI_CLI_HOME) ?? homeDir(env), '.gemini'), own: true };
}

/**
 * The user-level file: `~/.claude/settings.json` (`$CLAUDE_CONFIG_DIR/settings.json` when set),
 * `~/.codex/hooks.json` (`$CODEX_HOME/hooks.json` when set), `~/.gemini/settings.json`
 * (`$GEMINI_CLI_HOME/.gemini/settings.json` when set).
 */
export function userConfigFile(harness: InstallableHarness, env: Env): string {
  return within(harnessDir(harness, env).dir, harness === 'codex' ? 'hooks.json' : 'settings.json');
}

// ---------------------------------------------------------------------------------------------
// The command

/** POSIX shell quoting: the word as is when it needs none, else in single quotes. */
export function shellQuote(word: string): string {
  if (/^[A-Za-z0-9_@%+=:,./-]+$/.test(word)) return word;
  return `'${word.replace(/'/g, `'\\''`)}'`;
}

/** Every hook entry we write runs this; `isOurCommand` recognises exactly these. */
export function hookCommand(harness: InstallableHarness, bin: string): string {
  return `${bin} hook ${harness}`;
}

/**
 * Whether a hook entry's command is one `hookCommand` wrote for `harness`: it ends with
 * ` hook <harness>` right after a word naming git-scalpel (`git-scalpel`, `.../git-scalpel`,
 * `.../git-scalpel.cjs`, or `.mjs` as builds before 0.2 named it, quoted or not). Another tool's
 * `borg hook codex` is not ours.
 */
export function isOurCommand(command: string, harness: InstallableHarness): boolean {
  const tail = ` hook ${harness}`;
  if (!command.endsWith(tail)) return false;
  return /(^|[\s/'"])git-scalpel(\.[cm]js)?['"]?$/.test(command.slice(0, -tail.length));
}

export interface BinContext {
  /** The running CLI's path as it was invoked (process.argv[1]: a bin link keeps its own path). */
  script: string;
  /** The worktree root when writing a project file; null for a user file. */
  projectRoot: string | null;
  /** Whether the first `git-scalpel` on PATH is this same file. */
  onPath: boolean;
}

const PROJECT_BIN = /(^|\/)node_modules\/(\.bin\/git-scalpel$|git-scalpel\/.)/;

/** The running CLI's path relative to the project, when it is the project's own devDependency. */
export function projectBin(ctx: BinContext): string | null {
  const root = ctx.projectRoot?.replace(/\/+$/, '');
  if (root === undefined || !ctx.script.startsWith(root + '/')) return null;
  const rel = ctx.script.slice(root.length + 1);
  return PROJECT_BIN.test(rel) ? rel : null;
}

/** A project-relative path as shell words: as is when no segment needs quoting, else single-quoted. */
function quoteRel(rel: string): string {
  return rel.split('/').every((s) => shellQuote(s) === s) ? rel : shellQuote(rel);
}

/**
 * A POSIX `sh -c` script that runs the devDependency found at `rel` in the session's directory or
 * the nearest directory above it, with the arguments that follow (`"$@"`); `$0` is `git-scalpel`,
 * so the command still ends `git-scalpel hook <harness>` (isOurCommand) and sh's messages name it.
 * Only shell builtins run before the binary: no npx (whose start-up cost 1.5-2.8 s per event,
 * issue 19), no git. Written through `sh` because the harness's own shell may be fish.
 */
export function walkUpCommand(rel: string): string {
  return `sh -c ${shellQuote(walkUpScript(rel))} git-scalpel`;
}

/** walkUpCommand's script (for an argv: `sh`, `-c`, script, `git-scalpel`, arguments...). */
export function walkUpScript(rel: string): string {
  const viaNode = !rel.endsWith('/.bin/git-scalpel');
  const at = `"$r"/${quoteRel(rel)}`;
  return `r=$PWD; until [ ${viaNode ? '-f' : '-x'} ${at} ] || [ -z "$r" ]; do r=\${r%/*}; done; exec ${viaNode ? 'node ' : ''}${at} "$@"`;
}

/**
 * How the hook command starts (what `hook <harness>` follows), from how this CLI is running:
 *
 * 1. From inside the project's `node_modules` (a devDependency: `node_modules/.bin/git-scalpel`,
 *    or `node_modules/git-scalpel/...` run with node), writing a project file: the same path
 *    relative to the project, so the file works in every clone — `"$CLAUDE_PROJECT_DIR"/...` for
 *    Claude Code (which reads `.claude/settings.json` only when started at the project root,
 *    anthropics/claude-code#86187, so that variable is the root whenever these hooks run),
 *    `$GEMINI_PROJECT_DIR/...` for Gemini CLI (which substitutes its cwd, quoted, itself; the
 *    project file is read only from that cwd), and for Codex, whose hooks get no
 *    project-directory variable and run in the session's cwd (any directory of the project), a
 *    `sh -c` walk up from there to the nearest `<dir>/<same relative path>` (walkUpCommand).
 * 2. Else, when the first `git-scalpel` on PATH is this very file (a global install): `git-scalpel`.
 * 3. Else (a checkout, or a copy the harness's PATH may not find): `node '<absolute path>'`.
 *
 * Paths are quoted for a POSIX shell (what the three harnesses run commands with on Unix).
 */
export function resolveBin(harness: InstallableHarness, ctx: BinContext): string {
  const rel = projectBin(ctx);
  if (rel !== null) {
    const viaNode = !rel.endsWith('/.bin/git-scalpel');
    const run = (prefixed: string) => (viaNode ? `node ${prefixed}` : prefixed);
    if (harness === 'claude-code') return run(`"$CLAUDE_PROJECT_DIR"/${quoteRel(rel)}`);
    if (harness === 'gemini') return run(`$GEMINI_PROJECT_DIR/${quoteRel(rel)}`);
    return walkUpCommand(rel);
  }
  if (ctx.onPath) return 'git-scalpel';
  return `node ${shellQuote(ctx.script)}`;
}

// ---------------------------------------------------------------------------------------------
// JSON with the spans of every value

export interface Span {
  start: number;
  end: number;
}
export type JNode = JObject | JArray | JScalar;
export interface JObject extends Span {
  kind: 'object';
  members: JMember[];
}
export interface JMember extends Span {
  key: string;
  value: JNode;
}
export interface JArray extends Span {
  kind: 'array';
  items: JNode[];
}
export interface JScalar extends Span {
  kind: 'scalar';
  value: string | number | boolean | null;
}

export class JsonSyntaxError extends Error {
  constructor(
    message: string,
    readonly offset: number,
  ) {
    super(message);
  }
}

const STRING = /"(?:[^"\\\u0000-\u001f]|\\(?:["\\/bfnrt]|u[0-9a-fA-F]{4}))*"/y;
const NUMBER = /-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?/y;

/** RFC 8259 JSON, plus `//` and `/* *\/` comments where whitespace may be when `comments`. */
export function parseJson(text: string, comments: boolean): JNode {
  let i = 0;
  const n = text.length;
  const fail = (what: string, at = i): never => {
    throw new JsonSyntaxError(what, at);
  };
  const ws = () => {
    for (;;) {
      const c = text.charCodeAt(i);
      if (c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d) i++;
      else if (comments && c === 0x2f && text[i + 1] === '/') {
        const e = text.indexOf('\n', i);
        i = e < 0 ? n : e;
      } else if (comments && c === 0x2f && text[i + 1] === '*') {
        const e = text.indexOf('*/', i + 2);
        if (e < 0) fail('unterminated /* comment');
        i = e + 2;
      } else return;
    }
  };
  const token = (re: RegExp): string | null => {
    re.lastIndex = i;
    const m = re.exec(text);
    if (!m) return null;
    i += m[0].length;
    return m[0];
  };
  const describe = (at: number) =>
    at >= n ? 'the end of the file' : text[at] === '/' && !comments ? "'/' (comments are not JSON)" : text.charCodeAt(at) === 0xfeff ? 'a byte order mark' : JSON.stringify(text[at]);
  const value = (): JNode => {
    ws();
    const start = i;
    const c = text[i];
    if (c === '{') {
      i++;
      const members: JMember[] = [];
      ws();
      if (text[i] === '}') return { kind: 'object', start, end: ++i, members };
      for (;;) {
        ws();
        const keyStart = i;
        const raw = token(STRING);
        if (raw === null) fail(`expected a member name in double quotes, found ${describe(i)}`);
        ws();
        if (text[i] !== ':') fail(`expected ':' after a member name, found ${describe(i)}`);
        i++;
        const v = value();
        members.push({ key: JSON.parse(raw as string) as string, start: keyStart, end: v.end, value: v });
        ws();
        if (text[i] === ',') {
          i++;
          continue;
        }
        if (text[i] === '}') return { kind: 'object', start, end: ++i, members };
        fail(`expected ',' or '}' in an object, found ${describe(i)}`);
      }
    }
    if (c === '[') {
      i++;
      const items: JNode[] = [];
      ws();
      if (text[i] === ']') return { kind: 'array', start, end: ++i, items };
      for (;;) {
        items.push(value());
        ws();
        if (text[i] === ',') {
          i++;
          continue;
        }
        if (text[i] === ']') return { kind: 'array', start, end: ++i, items };
        fail(`expected ',' or ']' in an array, found ${describe(i)}`);
      }
    }
    if (c === '"') {
      const raw = token(STRING);
      if (raw === null) fail('a malformed string (an unescaped control character, a bad escape, or no closing quote)');
      return { kind: 'scalar', start, end: i, value: JSON.parse(raw as string) as string };
    }
    for (const [word, v] of [
      ['true', true],
      ['false', false],
      ['null', null],
    ] as const) {
      if (text.startsWith(word, i)) {
        i += word.length;
        return { kind: 'scalar', start, end: i, value: v };
      }
    }
    const num = token(NUMBER);
    if (num !== null) return { kind: 'scalar', start, end: i, value: Number(num) };
    return fail(`expected a value, found ${describe(i)}`);
  };
  const root = value();
  ws();
  if (i < n) fail(`unexpected ${describe(i)} after the top-level value`);
  return root;
}

/** A node's value as plain data (own properties even for a key like `__proto__`). */
export function toValue(node: JNode): unknown {
  if (node.kind === 'scalar') return node.value;
  if (node.kind === 'array') return node.items.map(toValue);
  const o: Record<string, unknown> = {};
  for (const m of node.members) Object.defineProperty(o, m.key, { value: toValue(m.value), enumerable: true, writable: true, configurable: true });
  return o;
}

/** The member JSON.parse would keep for `key`: the last one. */
export function member(obj: JObject, key: string): JMember | undefined {
  for (let k = obj.members.length - 1; k >= 0; k--) if (obj.members[k].key === key) return obj.members[k];
  return undefined;
}

export function lineCol(text: string, offset: number): string {
  const before = text.slice(0, offset);
  const line = before.split('\n').length;
  return `line ${line}, column ${offset - before.lastIndexOf('\n')}`;
}

// ---------------------------------------------------------------------------------------------
// Planning

export type InstallAction = 'installed' | 'already-installed' | 'uninstalled' | 'not-installed';

export interface InstallOptions {
  harness: InstallableHarness;
  /** The command our entries run (`hookCommand`). */
  command: string;
  uninstall?: boolean;
  /** The file's path, for messages. */
  file?: string;
}

export interface InstallPlan {
  action: InstallAction;
  /** Whether the file is to be written (or removed). */
  changed: boolean;
  /** The file's new text; null: there is to be no file (it was absent, or the uninstall emptied it). */
  text: string | null;
  /** The events whose entries were written (install) or removed (uninstall); none when unchanged. */
  events: string[];
  /** The command written; for an uninstall, the command removed (the first, if several). */
  command: string;
}

interface Ours {
  event: JMember;
  group: JObject;
  groupIndex: number;
  handler: JObject;
  handlerIndex: number;
}

interface Parsed {
  root: JObject;
  hooks: JObject | null;
  hooksMember: JMember | null;
}

function refuse(opts: InstallOptions, reason: string, message: string, extra: Record<string, unknown> = {}): never {
  const file = opts.file ?? 'the hook configuration';
  throw new ScalpelError('UNSUPPORTED', `${file}: ${message}; nothing was changed`, { path: opts.file, capability: 'hook-config', reason, ...extra });
}

/**
 * A harness's settings file as a JSON object (JSONC where the harness reads comments), or a clear
 * refusal through `fail`: the hook and the MCP installs both start here.
 */
export function parseSettingsObject(text: string, harness: InstallableHarness, fail: (reason: string, message: string, extra?: Record<string, unknown>) => never): JObject {
  const spec = HARNESS_SPECS[harness];
  let root: JNode;
  try {
    root = parseJson(text, spec.comments);
  } catch (e) {
    if (!(e instanceof JsonSyntaxError)) throw e;
    const strict = spec.comments ? '' : ` (${spec.title} reads it as strict JSON: no comments, no trailing commas)`;
    fail('invalid-json', `not valid JSON${strict}: ${e.message} at ${lineCol(text, e.offset)}`, { offset: e.offset });
  }
  if (root.kind !== 'object') fail('not-an-object', 'the top-level value is not a JSON object');
  return root as JObject;
}

function parseConfig(text: string, opts: InstallOptions): Parsed {
  const root = parseSettingsObject(text, opts.harness, (reason, message, extra) => refuse(opts, reason, message, extra));
  const hooksMember = member(root, 'hooks') ?? null;
  if (hooksMember && hooksMember.value.kind !== 'object') {
    refuse(opts, 'hooks-not-object', `"hooks" is ${kindOf(hooksMember.value)}, not an object mapping event names to arrays`);
  }
  return { root, hooksMember, hooks: hooksMember ? (hooksMember.value as JObject) : null };
}

export function kindOf(node: JNode): string {
  if (node.kind !== 'scalar') return `an ${node.kind}`;
  return node.value === null ? 'null' : `a ${typeof node.value}`;
}

/** Our hook entries, in file order: command hooks whose command `isOurCommand`. */
function findOurs(p: Parsed, harness: InstallableHarness): Ours[] {
  const out: Ours[] = [];
  if (!p.hooks) return out;
  for (const event of p.hooks.members) {
    // only the member JSON.parse keeps for a key repeated in the file is read by the harness
    if (event.value.kind !== 'array' || member(p.hooks, event.key) !== event) continue;
    event.value.items.forEach((group, groupIndex) => {
      if (group.kind !== 'object') return;
      const list = member(group, 'hooks')?.value;
      if (!list || list.kind !== 'array') return;
      list.items.forEach((handler, handlerIndex) => {
        if (handler.kind !== 'object') return;
        const cmd = member(handler, 'command')?.value;
        if (cmd?.kind === 'scalar' && typeof cmd.value === 'string' && isOurCommand(cmd.value, harness)) out.push({ event, group, groupIndex, handler, handlerIndex });
      });
    });
  }
  return out;
}

/** One hook entry of ours in a configuration file, as the harness will read it. */
export interface OurHookEntry {
  event: string;
  /** The group's matcher (absent: the group has none). */
  matcher?: string;
  command: string;
  /** Positions in the file: the group in the event's array, the handler in the group's `hooks` (Codex keys its trust on them). */
  groupIndex: number;
  handlerIndex: number;
  /** The whole handler object as written. */
  handler: Record<string, unknown>;
}

/**
 * The entries of ours in a harness's hook file (`text`), in file order. Throws a ScalpelError
 * (UNSUPPORTED) for a file the harness cannot read, as planInstall does.
 */
export function ourHookEntries(text: string, harness: InstallableHarness, file?: string): OurHookEntry[] {
  const p = parseConfig(text, { harness, command: '', file });
  return findOurs(p, harness).map((o) => {
    const m = member(o.group, 'matcher');
    const matcher = m && m.value.kind === 'scalar' && typeof m.value.value === 'string' ? m.value.value : undefined;
    const handler = toValue(o.handler) as Record<string, unknown>;
    return { event: o.event.key, ...(matcher !== undefined ? { matcher } : {}), command: handler.command as string, groupIndex: o.groupIndex, handlerIndex: o.handlerIndex, handler };
  });
}

export interface Edit {
  start: number;
  end: number;
  text: string;
}

export function applyEdits(text: string, edits: Edit[]): string {
  const sorted = [...edits].sort((a, b) => b.start - a.start);
  for (let k = 1; k < sorted.length; k++) {
    if (sorted[k].end > sorted[k - 1].start) throw new Error('git-scalpel install: overlapping edits (a bug)');
  }
  let out = text;
  for (const e of sorted) out = out.slice(0, e.start) + e.text + out.slice(e.end);
  return out;
}

/**
 * Edits removing the items at `drop` from a container (object members or array items): each run
 * goes with the separator after it, or, ending the container, with the one before it — the inverse
 * of `insertEdit`'s append. All of them: the inside is emptied when only whitespace would remain.
 */
export function removeItems(text: string, container: JObject | JArray, drop: ReadonlySet<number>): Edit[] {
  const items: Span[] = container.kind === 'object' ? container.members : container.items;
  if (drop.size === items.length) {
    const first = items[0].start;
    const last = items[items.length - 1].end;
    const rest = text.slice(container.start + 1, first) + text.slice(last, container.end - 1);
    if (/^\s*$/.test(rest)) return [{ start: container.start + 1, end: container.end - 1, text: '' }];
    return [{ start: first, end: last, text: '' }];
  }
  const edits: Edit[] = [];
  for (let a = 0; a < items.length; a++) {
    if (!drop.has(a)) continue;
    let b = a;
    while (b + 1 < items.length && drop.has(b + 1)) b++;
    if (b + 1 < items.length) edits.push({ start: items[a].start, end: items[b + 1].start, text: '' });
    else edits.push({ start: items[a - 1].end, end: items[b].end, text: '' });
    a = b;
  }
  return edits;
}

interface Removal {
  edits: Edit[];
  events: string[];
}

/**
 * What removing our entries removes: a handler; its group when nothing else is left in it; the
 * event's key when no group is left; `hooks` when no event is left (the top level may end `{}`).
 */
function planRemoval(text: string, p: Parsed, ours: Ours[]): Removal {
  const edits: Edit[] = [];
  const events: string[] = [];
  if (!p.hooks || !p.hooksMember || ours.length === 0) return { edits, events };
  const byEvent = new Map<JMember, Map<number, Ours[]>>();
  for (const o of ours) {
    if (!events.includes(o.event.key)) events.push(o.event.key);
    let groups = byEvent.get(o.event);
    if (!groups) byEvent.set(o.event, (groups = new Map()));
    const list = groups.get(o.groupIndex);
    if (list) list.push(o);
    else groups.set(o.groupIndex, [o]);
  }
  const droppedEvents = new Set<number>();
  p.hooks.members.forEach((event, eventIndex) => {
    const groups = byEvent.get(event);
    if (!groups) return;
    const arr = event.value as JArray;
    const droppedGroups = new Set<number>();
    const inner: Edit[] = [];
    for (const [groupIndex, list] of groups) {
      const handlers = (member(list[0].group, 'hooks')!.value as JArray).items;
      if (list.length === handlers.length) droppedGroups.add(groupIndex);
      else inner.push(...removeItems(text, member(list[0].group, 'hooks')!.value as JArray, new Set(list.map((o) => o.handlerIndex))));
    }
    if (droppedGroups.size === arr.items.length) droppedEvents.add(eventIndex);
    else {
      edits.push(...inner);
      if (droppedGroups.size) edits.push(...removeItems(text, arr, droppedGroups));
    }
  });
  if (droppedEvents.size === 0) return { edits, events };
  if (droppedEvents.size === p.hooks.members.length) {
    const hooksIndex = p.root.members.indexOf(p.hooksMember);
    edits.push(...removeItems(text, p.root, new Set([hooksIndex])));
  } else edits.push(...removeItems(text, p.hooks, droppedEvents));
  return { edits, events };
}

export interface Format {
  unit: string;
  nl: string;
}

/** The whitespace that starts the line `offset` is on, and whether only it precedes `offset` there. */
export function lineIndent(text: string, offset: number): { indent: string; alone: boolean } {
  const lineStart = text.lastIndexOf('\n', offset - 1) + 1;
  const before = text.slice(lineStart, offset);
  const indent = /^[ \t]*/.exec(before)![0];
  return { indent, alone: indent.length === before.length };
}

/** The file's indentation unit (that of the top level's first member) and line ending. */
export function detectFormat(text: string, root: JObject): Format {
  const nl = text.includes('\r\n') ? '\r\n' : '\n';
  let unit = '';
  const first = root.members[0];
  if (first && text.slice(root.start, first.start).includes('\n')) {
    const li = lineIndent(text, first.start);
    if (li.alone) unit = li.indent;
  }
  if (!unit) unit = /\n([ \t]+)["{[]/.exec(text)?.[1] ?? '';
  if (!unit || unit.length > 10) unit = '  ';
  return { unit, nl };
}

export interface NewItem {
  key?: string;
  value: unknown;
}

function render(item: NewItem, fmt: Format, indent: string): string {
  const body = JSON.stringify(item.value, null, fmt.unit).split('\n').join(fmt.nl + indent);
  return item.key === undefined ? body : `${JSON.stringify(item.key)}: ${body}`;
}

/** An edit appending `items` to a container, laid out as the container already is. */
export function insertEdit(text: string, container: JObject | JArray, items: NewItem[], fmt: Format): Edit {
  const existing: Span[] = container.kind === 'object' ? container.members : container.items;
  const own = lineIndent(text, container.start).indent;
  if (existing.length === 0) {
    const child = own + fmt.unit;
    const body = fmt.nl + items.map((it) => child + render(it, fmt, child)).join(',' + fmt.nl) + fmt.nl + own;
    const inner = text.slice(container.start + 1, container.end - 1);
    if (/^\s*$/.test(inner)) return { start: container.start + 1, end: container.end - 1, text: body };
    return { start: container.start + 1, end: container.start + 1, text: body };
  }
  const last = existing[existing.length - 1];
  if (text.slice(container.start, existing[0].start).includes('\n')) {
    const li = lineIndent(text, last.start);
    const child = li.alone ? li.indent : own + fmt.unit;
    return { start: last.end, end: last.end, text: items.map((it) => ',' + fmt.nl + child + render(it, fmt, child)).join('') };
  }
  const compact = (it: NewItem) => (it.key === undefined ? '' : `${JSON.stringify(it.key)}: `) + JSON.stringify(it.value);
  return { start: last.end, end: last.end, text: items.map((it) => ', ' + compact(it)).join('') };
}

function desiredGroup(spec: HarnessSpec, e: HookEventSpec, command: string): Record<string, unknown> {
  return e.matcher === undefined ? { hooks: [spec.handler(command)] } : { matcher: e.matcher, hooks: [spec.handler(command)] };
}

/** Edits adding our group to every event of the harness (no entry of ours may be present). */
function planInsertion(text: string, p: Parsed, opts: InstallOptions): Edit[] {
  const spec = HARNESS_SPECS[opts.harness];
  const fmt = detectFormat(text, p.root);
  if (!p.hooks) {
    const hooks: Record<string, unknown> = {};
    for (const e of spec.events) hooks[e.event] = [desiredGroup(spec, e, opts.command)];
    return [insertEdit(text, p.root, [{ key: 'hooks', value: hooks }], fmt)];
  }
  const edits: Edit[] = [];
  const added: NewItem[] = [];
  for (const e of spec.events) {
    const m = member(p.hooks, e.event);
    if (m) edits.push(insertEdit(text, m.value as JArray, [{ value: desiredGroup(spec, e, opts.command) }], fmt));
    else added.push({ key: e.event, value: [desiredGroup(spec, e, opts.command)] });
  }
  if (added.length) edits.push(insertEdit(text, p.hooks, added, fmt));
  return edits;
}

/** Before anything is planned: every event we write into must hold an array. */
function checkEventTypes(p: Parsed, opts: InstallOptions): void {
  if (!p.hooks) return;
  for (const e of HARNESS_SPECS[opts.harness].events) {
    const m = member(p.hooks, e.event);
    if (m && m.value.kind !== 'array') refuse(opts, 'event-not-array', `"hooks"."${e.event}" is ${kindOf(m.value)}, not an array of matcher groups`, { event: e.event });
  }
}

const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);

/** Whether `ours` is exactly one entry per event, as `opts` would write it. */
function isCurrent(ours: Ours[], opts: InstallOptions): boolean {
  const spec = HARNESS_SPECS[opts.harness];
  if (ours.length !== spec.events.length) return false;
  return spec.events.every((e) =>
    ours.some((o) => {
      if (o.event.key !== e.event) return false;
      const matcher = member(o.group, 'matcher');
      if (e.matcher === undefined ? matcher !== undefined : !matcher || toValue(matcher.value) !== e.matcher) return false;
      return same(toValue(o.handler), spec.handler(opts.command));
    }),
  );
}

/**
 * The file's value without our entries, as `planRemoval` leaves it, with empty event arrays and an
 * empty `hooks` dropped on either side: what an install or uninstall must never change.
 */
function withoutOurs(p: Parsed, ours: Ours[]): string {
  const value = toValue(p.root) as Record<string, unknown>;
  if (!p.hooks) return JSON.stringify(value);
  const hooks = value.hooks as Record<string, unknown>;
  for (const key of Object.keys(hooks)) {
    const groups = hooks[key];
    if (!Array.isArray(groups)) continue;
    const mine = ours.filter((o) => o.event.key === key);
    const kept = groups.filter((g: Record<string, unknown>, gi) => {
      const drop = new Set(mine.filter((o) => o.groupIndex === gi).map((o) => o.handlerIndex));
      if (drop.size === 0) return true;
      const handlers = g.hooks as unknown[];
      if (drop.size === handlers.length) return false;
      g.hooks = handlers.filter((_, hi) => !drop.has(hi));
      return true;
    });
    if (kept.length === 0) delete hooks[key];
    else hooks[key] = kept;
  }
  if (Object.keys(hooks).length === 0) delete value.hooks;
  return JSON.stringify(value);
}

const isEmptyObject = (text: string) => /^\s*\{\s*\}\s*$/.test(text);

/**
 * Plan an install or uninstall of `opts.harness`'s hooks in a file whose text is `current` (null:
 * no file). Throws a ScalpelError (UNSUPPORTED, exit 1) for a file that is not what the harness
 * reads — invalid JSON, a top level that is no object, a `hooks` that is no object, an event of
 * ours holding no array — and then nothing is to change.
 *
 * Install: a file with exactly our entries, as they would be written, is left as it is
 * (`already-installed`); otherwise our entries (also ones with another command: a moved binary)
 * are removed and one group per event appended at the end of the event's array, new event keys at
 * the end of `hooks`, a new `hooks` at the end of the top level. Uninstall removes our entries
 * and the groups, event keys and `hooks` they leave empty; a top level left `{}` means no file.
 */
export function planInstall(current: string | null, opts: InstallOptions): InstallPlan {
  const spec = HARNESS_SPECS[opts.harness];
  const allEvents = spec.events.map((e) => e.event);
  if (current === null) {
    if (opts.uninstall) return { action: 'not-installed', changed: false, text: null, events: [], command: opts.command };
    const hooks: Record<string, unknown> = {};
    for (const e of spec.events) hooks[e.event] = [desiredGroup(spec, e, opts.command)];
    return { action: 'installed', changed: true, text: JSON.stringify({ hooks }, null, 2) + '\n', events: allEvents, command: opts.command };
  }
  const parsed = parseConfig(current, opts);
  if (!opts.uninstall) checkEventTypes(parsed, opts);
  const ours = findOurs(parsed, opts.harness);
  const invariant = withoutOurs(parsed, ours);

  if (opts.uninstall) {
    if (ours.length === 0) return { action: 'not-installed', changed: false, text: current, events: [], command: opts.command };
    const removal = planRemoval(current, parsed, ours);
    const text = applyEdits(current, removal.edits);
    const check = parseConfig(text, opts);
    if (findOurs(check, opts.harness).length || withoutOurs(check, []) !== invariant) throw new Error('git-scalpel install: the uninstall plan changed more than our entries (a bug)');
    const cmd = member(ours[0].handler, 'command')!.value as JScalar;
    const rank = (e: string) => (allEvents.includes(e) ? allEvents.indexOf(e) : allEvents.length);
    const events = [...removal.events].sort((a, b) => rank(a) - rank(b));
    return { action: 'uninstalled', changed: true, text: isEmptyObject(text) ? null : text, events, command: cmd.value as string };
  }

  if (isCurrent(ours, opts)) return { action: 'already-installed', changed: false, text: current, events: [], command: opts.command };
  let base = current;
  let p = parsed;
  if (ours.length) {
    base = applyEdits(current, planRemoval(current, parsed, ours).edits);
    p = parseConfig(base, opts);
  }
  const text = applyEdits(base, planInsertion(base, p, opts));
  const check = parseConfig(text, opts);
  const mine = findOurs(check, opts.harness);
  if (!isCurrent(mine, opts) || withoutOurs(check, mine) !== invariant) throw new Error('git-scalpel install: the install plan changed more than our entries (a bug)');
  return { action: 'installed', changed: true, text, events: allEvents, command: opts.command };
}
