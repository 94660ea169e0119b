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
 * The file is edited, not rewritten (config-files.ts: jsonc-parser reads it, entries are inserted
 * as text in the file's own indentation and line endings and removed as exactly the text that was
 * inserted), so everything else keeps its bytes, an install followed by an uninstall gives the
 * original bytes back, and a JSONC file's comments survive. Our entries are recognised by their
 * command alone (`hookCommand`), so nothing outside the file records what was installed; the rule
 * that follows: an uninstall that leaves the top-level object empty (`{}`) removes the file.
 */
import { ScalpelError } from '../errors/index.js';
import {
  applyEdits,
  detectLayout,
  insertEdit,
  keyOf,
  kindOf,
  member,
  memberValue,
  parseJsonTree,
  placeOf,
  removeEdits,
  valueNode,
  valueOf,
  where,
  type Edit,
  type JsonNode,
  type NewItem,
} from './config-files.js';
import { HARNESS_ENV, shellQuote } from './install-words.js';

export { HARNESS_ENV, shellQuote };

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
  if (!home)
    throw new ScalpelError('UNSUPPORTED', 'cannot find the home directory for a user-level install: HOME is not set to an absolute path', {
      capability: 'home',
      reason: 'no-home',
    });
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
  return /(^|[\s/'"])git-scalpel(\.[cm]js|-hook\.sh)?['"]?$/.test(command.slice(0, -tail.length));
}

/** The hook client's file name, beside the CLI in the package's dist/ (src/server/hook-client.sh). */
export const CLIENT_FILE = 'git-scalpel-hook.sh';

/**
 * The hook client's command (`clientCommand`'s cases), which `isOurCommand` recognises as it does
 * the process commands: `sh <client> hook <harness>`.
 */
export function clientHookCommand(harness: InstallableHarness, client: string): string {
  return `sh ${client} hook ${harness}`;
}

/**
 * The hook command through the warm server's client (src/server/hook-client.sh), which falls
 * back to the process command itself; `client` is the client file's absolute path beside the
 * running CLI (null: there is none, and the process command is written). Like resolveBin:
 *
 * 1. A devDependency writing a project file: the client in the project's
 *    `node_modules/git-scalpel/dist/` (the package's own path, which a package manager's links
 *    keep across upgrades), from `"$CLAUDE_PROJECT_DIR"`, `$GEMINI_PROJECT_DIR` or Codex's walk up.
 * 2. Else its absolute path: `sh '/…/dist/git-scalpel-hook.sh' hook <harness>` (a global
 *    install's too: the client must be run with sh from its own directory, not through PATH).
 */
export function clientCommand(harness: InstallableHarness, ctx: BinContext & { client: string | null }): string | null {
  if (ctx.client === null) return null;
  const rel = projectBin(ctx);
  if (rel !== null) {
    const clientRel = `${rel.slice(0, rel.lastIndexOf('node_modules/'))}node_modules/git-scalpel/dist/${CLIENT_FILE}`;
    if (harness === 'claude-code') return clientHookCommand(harness, `"$CLAUDE_PROJECT_DIR"/${quoteRel(clientRel)}`);
    if (harness === 'gemini') return clientHookCommand(harness, `$GEMINI_PROJECT_DIR/${quoteRel(clientRel)}`);
    return `${walkUpCommand(clientRel)} hook ${harness}`;
  }
  return clientHookCommand(harness, shellQuote(ctx.client));
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
  const runner = rel.endsWith('.sh') ? 'sh ' : rel.endsWith('/.bin/git-scalpel') ? '' : 'node ';
  const at = `"$r"/${quoteRel(rel)}`;
  return `r=$PWD; until [ ${runner ? '-f' : '-x'} ${at} ] || [ -z "$r" ]; do r=\${r%/*}; done; exec ${runner}${at} "$@"`;
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

/** A handler of ours: the event's member, the group in its array, the handler in the group's `hooks`. */
interface Ours {
  event: JsonNode;
  group: JsonNode;
  groupIndex: number;
  handler: JsonNode;
  handlerIndex: number;
}

interface Parsed {
  root: JsonNode;
  /** The `hooks` member and its object, when there is one. */
  hooksMember: JsonNode | null;
  hooks: JsonNode | null;
}

function refuse(opts: InstallOptions, reason: string, message: string, extra: Record<string, unknown> = {}): never {
  const file = opts.file ?? 'the hook configuration';
  throw new ScalpelError('UNSUPPORTED', `${file}: ${message}; nothing was changed`, {
    path: opts.file,
    capability: 'hook-config',
    reason,
    ...extra,
  });
}

/**
 * A harness's settings file as a JSON object (JSONC where the harness reads comments), or a clear
 * refusal through `fail`, with the place (data: offset, line, column): the hook and the MCP
 * installs both start here.
 */
export function parseSettingsObject(
  text: string,
  harness: InstallableHarness,
  fail: (reason: string, message: string, extra?: Record<string, unknown>) => never,
): JsonNode {
  const spec = HARNESS_SPECS[harness];
  const r = parseJsonTree(text, { comments: spec.comments });
  if (r.problem) {
    const { message, ...place } = r.problem;
    const strict = spec.comments ? '' : ` (${spec.title} reads it as strict JSON: no comments, no trailing commas)`;
    return fail('invalid-json', `not valid JSON${strict}: ${message} at ${where(place)}`, { ...place });
  }
  if (r.root.type !== 'object')
    fail('not-an-object', `the top-level value is ${kindOf(r.root)}, not a JSON object`, { ...placeOf(text, r.root) });
  return r.root;
}

function parseConfig(text: string, opts: InstallOptions): Parsed {
  const root = parseSettingsObject(text, opts.harness, (reason, message, extra) => refuse(opts, reason, message, extra));
  const hooksMember = member(root, 'hooks') ?? null;
  const hooks = hooksMember && valueNode(hooksMember);
  if (hooks && hooks.type !== 'object') {
    const at = placeOf(text, hooks);
    refuse(opts, 'hooks-not-object', `"hooks" is ${kindOf(hooks)}, not an object mapping event names to arrays (${where(at)})`, { ...at });
  }
  return { root, hooksMember, hooks };
}

/** Our hook entries, in file order: command hooks whose command `isOurCommand`. */
function findOurs(p: Parsed, harness: InstallableHarness): Ours[] {
  const out: Ours[] = [];
  for (const event of p.hooks?.children ?? []) {
    const groups = valueNode(event);
    // only the member JSON.parse keeps for a key repeated in the file is read by the harness
    if (groups.type !== 'array' || member(p.hooks!, keyOf(event)) !== event) continue;
    groups.children!.forEach((group, groupIndex) => {
      const handlers = group.type === 'object' ? memberValue(group, 'hooks') : undefined;
      if (handlers?.type !== 'array') return;
      handlers.children!.forEach((handler, handlerIndex) => {
        const cmd = handler.type === 'object' ? memberValue(handler, 'command') : undefined;
        if (cmd?.type === 'string' && isOurCommand(cmd.value as string, harness))
          out.push({ event, group, groupIndex, handler, handlerIndex });
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
    const m = memberValue(o.group, 'matcher');
    const handler = valueOf(o.handler) as Record<string, unknown>;
    return {
      event: keyOf(o.event),
      ...(m?.type === 'string' ? { matcher: m.value as string } : {}),
      command: handler.command as string,
      groupIndex: o.groupIndex,
      handlerIndex: o.handlerIndex,
      handler,
    };
  });
}

/**
 * The edits removing our entries: a handler; its group when nothing else is left in it; the
 * event's member when no group is left; `hooks` when no event is left (the top level may end `{}`).
 */
function planRemoval(text: string, p: Parsed, ours: Ours[]): Edit[] {
  if (!p.hooks || !p.hooksMember || ours.length === 0) return [];
  const edits: Edit[] = [];
  const events = p.hooks.children!;
  const droppedEvents = new Set<number>();
  events.forEach((event, eventIndex) => {
    const mine = ours.filter((o) => o.event === event);
    if (mine.length === 0) return;
    const groups = valueNode(event);
    const droppedGroups = new Set<number>();
    const inner: Edit[] = [];
    for (const groupIndex of new Set(mine.map((o) => o.groupIndex))) {
      const handlers = mine.filter((o) => o.groupIndex === groupIndex);
      const list = memberValue(handlers[0].group, 'hooks')!;
      if (handlers.length === list.children!.length) droppedGroups.add(groupIndex);
      else inner.push(...removeEdits(text, list, new Set(handlers.map((o) => o.handlerIndex))));
    }
    if (droppedGroups.size === groups.children!.length) droppedEvents.add(eventIndex);
    else edits.push(...inner, ...(droppedGroups.size ? removeEdits(text, groups, droppedGroups) : []));
  });
  if (droppedEvents.size === events.length) edits.push(...removeEdits(text, p.root, new Set([p.root.children!.indexOf(p.hooksMember)])));
  else if (droppedEvents.size) edits.push(...removeEdits(text, p.hooks, droppedEvents));
  return edits;
}

function desiredGroup(spec: HarnessSpec, e: HookEventSpec, command: string): Record<string, unknown> {
  return e.matcher === undefined ? { hooks: [spec.handler(command)] } : { matcher: e.matcher, hooks: [spec.handler(command)] };
}

/** Edits adding our group to every event of the harness (no entry of ours may be present). */
function planInsertion(text: string, p: Parsed, opts: InstallOptions): Edit[] {
  const spec = HARNESS_SPECS[opts.harness];
  const layout = detectLayout(text, p.root);
  const group = (e: HookEventSpec) => desiredGroup(spec, e, opts.command);
  if (!p.hooks)
    return [insertEdit(text, p.root, [{ key: 'hooks', value: Object.fromEntries(spec.events.map((e) => [e.event, [group(e)]])) }], layout)];
  const edits: Edit[] = [];
  const added: NewItem[] = [];
  for (const e of spec.events) {
    const groups = memberValue(p.hooks, e.event);
    if (groups) edits.push(insertEdit(text, groups, [{ value: group(e) }], layout));
    else added.push({ key: e.event, value: [group(e)] });
  }
  if (added.length) edits.push(insertEdit(text, p.hooks, added, layout));
  return edits;
}

/** Before anything is planned: every event we write into must hold an array. */
function checkEventTypes(text: string, p: Parsed, opts: InstallOptions): void {
  for (const e of p.hooks ? HARNESS_SPECS[opts.harness].events : []) {
    const groups = memberValue(p.hooks!, e.event);
    if (!groups || groups.type === 'array') continue;
    const at = placeOf(text, groups);
    refuse(opts, 'event-not-array', `"hooks"."${e.event}" is ${kindOf(groups)}, not an array of matcher groups (${where(at)})`, {
      event: e.event,
      ...at,
    });
  }
}

const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);

/** Whether `ours` is exactly one entry per event, as `opts` would write it. */
function isCurrent(ours: Ours[], opts: InstallOptions): boolean {
  const spec = HARNESS_SPECS[opts.harness];
  if (ours.length !== spec.events.length) return false;
  return spec.events.every((e) =>
    ours.some((o) => {
      if (keyOf(o.event) !== e.event) return false;
      const matcher = memberValue(o.group, 'matcher');
      if (e.matcher === undefined ? matcher !== undefined : matcher?.value !== e.matcher) return false;
      return same(valueOf(o.handler), spec.handler(opts.command));
    }),
  );
}

/**
 * The file's value without our entries, as `planRemoval` leaves it, with empty event arrays and an
 * empty `hooks` dropped on either side: what an install or uninstall must never change.
 */
function withoutOurs(p: Parsed, ours: Ours[]): string {
  const value = valueOf(p.root) as Record<string, unknown>;
  if (!p.hooks) return JSON.stringify(value);
  const hooks = value.hooks as Record<string, unknown>;
  for (const key of Object.keys(hooks)) {
    const groups = hooks[key];
    if (!Array.isArray(groups)) continue;
    const mine = ours.filter((o) => keyOf(o.event) === key);
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
 * no file). Throws a ScalpelError (UNSUPPORTED, exit 1; data: the file, the reason, the offset,
 * line and column) for a file that is not what the harness reads — invalid JSON, a top level that
 * is no object, a `hooks` that is no object, an event of ours holding no array — and then nothing
 * is to change.
 *
 * Install: a file with exactly our entries, as they would be written, is left as it is
 * (`already-installed`); otherwise our entries (also ones with another command: a moved binary)
 * are removed and one group per event appended at the end of the event's array, new event keys at
 * the end of `hooks`, a new `hooks` at the end of the top level. Uninstall removes our entries
 * and the groups, event keys and `hooks` they leave empty; a top level left `{}` means no file.
 * Either way the result is parsed again and must hold exactly our entries (or none) and
 * everything else unchanged, or nothing is written.
 */
export function planInstall(current: string | null, opts: InstallOptions): InstallPlan {
  const spec = HARNESS_SPECS[opts.harness];
  const allEvents = spec.events.map((e) => e.event);
  if (current === null) {
    if (opts.uninstall) return { action: 'not-installed', changed: false, text: null, events: [], command: opts.command };
    const hooks = Object.fromEntries(spec.events.map((e) => [e.event, [desiredGroup(spec, e, opts.command)]]));
    return {
      action: 'installed',
      changed: true,
      text: JSON.stringify({ hooks }, null, 2) + '\n',
      events: allEvents,
      command: opts.command,
    };
  }
  const parsed = parseConfig(current, opts);
  if (!opts.uninstall) checkEventTypes(current, parsed, opts);
  const ours = findOurs(parsed, opts.harness);
  const invariant = withoutOurs(parsed, ours);

  if (opts.uninstall) {
    if (ours.length === 0) return { action: 'not-installed', changed: false, text: current, events: [], command: opts.command };
    const text = applyEdits(current, planRemoval(current, parsed, ours));
    const check = parseConfig(text, opts);
    if (findOurs(check, opts.harness).length || withoutOurs(check, []) !== invariant)
      throw new Error('git-scalpel install: the uninstall plan changed more than our entries (a bug)');
    const rank = (e: string) => (allEvents.includes(e) ? allEvents.indexOf(e) : allEvents.length);
    const events = [...new Set(ours.map((o) => keyOf(o.event)))].sort((a, b) => rank(a) - rank(b));
    return {
      action: 'uninstalled',
      changed: true,
      text: isEmptyObject(text) ? null : text,
      events,
      command: valueOf(memberValue(ours[0].handler, 'command')!) as string,
    };
  }

  if (isCurrent(ours, opts)) return { action: 'already-installed', changed: false, text: current, events: [], command: opts.command };
  const base = ours.length ? applyEdits(current, planRemoval(current, parsed, ours)) : current;
  const p = ours.length ? parseConfig(base, opts) : parsed;
  const text = applyEdits(base, planInsertion(base, p, opts));
  const check = parseConfig(text, opts);
  const mine = findOurs(check, opts.harness);
  if (!isCurrent(mine, opts) || withoutOurs(check, mine) !== invariant)
    throw new Error('git-scalpel install: the install plan changed more than our entries (a bug)');
  return { action: 'installed', changed: true, text, events: allEvents, command: opts.command };
}
