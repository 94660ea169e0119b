/**
 * The real Codex CLI (the pinned @openai/codex from the npm registry, its native binary, in the
 * harness cache), driven by a scripted OpenAI Responses API on 127.0.0.1, in a scratch project
 * where a person has work in progress and git-scalpel is a devDependency installed with
 * `git-scalpel install codex`. Every test asserts what DESIGN.md promises; git and the bytes on
 * disk are the oracle. What the harness really sent to its hooks is kept in
 * test/harnesses/.payloads/codex/<test>/.
 *
 * Set-up as a person has it: `$CODEX_HOME/config.toml` (inside the isolated home) selects a model
 * provider whose base_url is the scripted server; the project and each of its hooks are trusted
 * the way Codex's own `/hooks` view trusts them (see `trustProject`); `codex exec` runs with full
 * access and no approvals, a second turn is `codex exec resume --last`. Every proxy variable
 * points at a trap, so a connection anywhere but the model server is seen.
 *
 * What Codex 0.171.0 sends (the tests assert it): every event carries session_id (the exec
 * thread id, kept by `resume`), turn_id (one per prompt), transcript_path, cwd, hook_event_name,
 * model, permission_mode; PreToolUse/PostToolUse tool_name "apply_patch" (tool_input.command:
 * the raw patch) or "Bash" (tool_input.command: exec_command's cmd, a heredoc apply_patch too),
 * tool_use_id (the model's call_id); PostToolUse tool_response is a string: apply_patch's
 * "Exit code: 0\nWall time: …\nOutput:\nSuccess. …", a command's output only (no exit code).
 * A patch that cannot apply, a patch a PreToolUse hook blocks and a heredoc patch get no
 * PostToolUse; a command that fails does. The hooks of parallel commands run at once.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { spawn } from 'node:child_process';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Duplex } from 'node:stream';
import { cpSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  BASE_FILES,
  HARNESS_TEST_DIR,
  expectSameOracle,
  harnessBinary,
  harnessPin,
  makeProject,
  runProcess,
  scalpelStatus,
  type LoggedPayload,
  type Oracle,
  type ProcResult,
  type ProjectOptions,
  type ScratchProject,
  type Step,
} from './common.js';
import { cx, outputText, patch, startCodexModel, toolOutputs, type CodexModel } from './codex.model.js';
import {
  PayloadShapes,
  events,
  expectMainTurnListed,
  expectMainTurnOnDisk,
  expectMainTurnRewound,
  expectParallelCallsOnDisk,
  expectPersonWork,
  expectRefusedThenForced,
  expectRewoundTo,
  expectTwoTurnsRewoundByRewind1,
  expectTwoTurnsRewoundOneByOne,
  once,
  scalpelSaved,
  turnsJson,
  withScriptedModel,
  type ToolEntry,
} from './shared-checks.js';

const VERSION = harnessPin('codex').version;

/** A model of Codex's own catalog (gpt-5.5: unified exec, freeform apply_patch), so Codex offers the tools it offers a person. */
const MODEL = 'gpt-5.5';
const PROVIDER = 'scripted';
const API_KEY_ENV = 'SCRIPTED_API_KEY';

// ---------------------------------------------------------------------------------------------
// Codex's configuration and trust

function codexHome(p: ScratchProject): string {
  return join(p.home, '.codex');
}

/**
 * The environment `codex` runs with: the project's isolated one, CODEX_HOME in it, the provider's
 * key, and every proxy variable pointing at `trap` (127.0.0.1 itself excepted), so that a
 * connection Codex makes anywhere but the model server is seen (and refused) instead of leaving
 * the machine.
 */
function codexEnv(p: ScratchProject, trap?: NetworkTrap): NodeJS.ProcessEnv {
  const proxy = trap
    ? {
        HTTPS_PROXY: trap.url,
        HTTP_PROXY: trap.url,
        ALL_PROXY: trap.url,
        https_proxy: trap.url,
        http_proxy: trap.url,
        all_proxy: trap.url,
        NO_PROXY: '127.0.0.1,localhost',
        no_proxy: '127.0.0.1,localhost',
      }
    : {};
  return p.env({ CODEX_HOME: codexHome(p), [API_KEY_ENV]: 'test-key', ...proxy });
}

interface NetworkTrap {
  url: string;
  /** Every request or CONNECT that reached the trap: `CONNECT github.com:443`, `GET http://…`. */
  seen: string[];
  close(): Promise<void>;
}

/** An HTTP proxy on 127.0.0.1 that records and refuses everything (502). */
async function startNetworkTrap(): Promise<NetworkTrap> {
  const seen: string[] = [];
  const server = http.createServer((req, res) => {
    seen.push(`${req.method} ${req.url}`);
    res.writeHead(502);
    res.end();
  });
  server.on('connect', (req: http.IncomingMessage, socket: Duplex) => {
    seen.push(`CONNECT ${req.url}`);
    socket.end('HTTP/1.1 502 Bad Gateway\r\n\r\n');
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}`,
    seen,
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

/**
 * `$CODEX_HOME/config.toml`: the scripted server as the model provider (Responses API), the
 * model, and full access for the agent's commands (`sandbox_mode`: the workspace-write sandbox
 * keeps .git read-only, so `git add -A` fails there with "Unable to create '.git/index.lock':
 * Read-only file system"; a person who lets the agent stage sets this once, and `codex exec
 * resume` takes no `-s`). Without the last three settings Codex 0.171.0 connects, whatever the provider, to
 * github.com, api.github.com and chatgpt.com (its plugin marketplace: `[features] plugins`) and
 * ab.chatgpt.com (`[analytics]`) at start; with them, to nothing but the model server (the
 * network trap checks it on every run).
 */
function writeCodexConfig(p: ScratchProject, modelUrl: string): void {
  mkdirSync(codexHome(p), { recursive: true });
  writeFileSync(
    join(codexHome(p), 'config.toml'),
    [
      `model = "${MODEL}"`,
      `model_provider = "${PROVIDER}"`,
      'sandbox_mode = "danger-full-access"',
      'check_for_update_on_startup = false',
      '',
      `[model_providers.${PROVIDER}]`,
      'name = "scripted test model"',
      `base_url = "${modelUrl}/v1"`,
      'wire_api = "responses"',
      `env_key = "${API_KEY_ENV}"`,
      '',
      '[features]',
      'plugins = false',
      '',
      '[analytics]',
      'enabled = false',
      '',
      '[feedback]',
      'enabled = false',
      '',
    ].join('\n'),
  );
}

/** One JSON-RPC exchange with `codex app-server` on stdio (the protocol Codex's own TUI speaks). */
class AppServer {
  private buf = '';
  private nextId = 0;
  private readonly waiting = new Map<number, (m: any) => void>();
  readonly notifications: any[] = [];
  stderr = '';
  private readonly child;

  constructor(p: ScratchProject, env: NodeJS.ProcessEnv) {
    this.child = spawn(harnessBinary('codex'), ['app-server'], { cwd: p.dir, env, stdio: ['pipe', 'pipe', 'pipe'] });
    this.child.stderr.on('data', (c: Buffer) => (this.stderr += c.toString()));
    this.child.stdout.on('data', (c: Buffer) => {
      this.buf += c.toString();
      for (let i = this.buf.indexOf('\n'); i >= 0; i = this.buf.indexOf('\n')) {
        const line = this.buf.slice(0, i);
        this.buf = this.buf.slice(i + 1);
        if (!line.trim()) continue;
        const m = JSON.parse(line);
        const w = m.id !== undefined && m.method === undefined ? this.waiting.get(m.id) : undefined;
        if (w) {
          this.waiting.delete(m.id);
          w(m);
        } else this.notifications.push(m);
      }
    });
  }

  async call(method: string, params: unknown): Promise<any> {
    const id = ++this.nextId;
    const reply = new Promise<any>((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`codex app-server: no answer to ${method} in 60 s; stderr: ${this.stderr.slice(-2000)}`)),
        60_000,
      );
      this.waiting.set(id, (m) => {
        clearTimeout(timer);
        if (m.error) reject(new Error(`codex app-server ${method}: ${JSON.stringify(m.error)}`));
        else resolve(m.result);
      });
    });
    this.child.stdin.write(JSON.stringify({ id, method, params }) + '\n');
    return reply;
  }

  notify(method: string): void {
    this.child.stdin.write(JSON.stringify({ method }) + '\n');
  }

  close(): void {
    this.child.stdin.end();
    this.child.kill();
  }
}

interface HookEntry {
  key: string;
  eventName: string;
  command: string;
  matcher: string | null;
  source: string;
  currentHash: string;
  trustStatus: string;
  enabled: boolean;
}

interface Trust {
  /** `hooks/list` before the project was trusted (Codex lists no project hook then). */
  untrustedProject: HookEntry[];
  /** After the project was trusted: every entry of .codex/hooks.json, each "untrusted" (the /hooks view's "new"). */
  before: HookEntry[];
  /** After trusting each: "trusted". */
  after: HookEntry[];
  ms: number;
}

/** `hooks/list` for the project: what Codex's /hooks view shows. */
async function listHooks(server: AppServer, dir: string): Promise<{ hooks: HookEntry[]; warnings: string[] }> {
  const r = await server.call('hooks/list', { cwds: [dir] });
  const entry = r.data.find((x: { cwd: string }) => x.cwd === dir) ?? { hooks: [], warnings: [] };
  return { hooks: entry.hooks, warnings: entry.warnings };
}

/**
 * Trusts the project and every hook of its .codex/hooks.json the way a person does it in Codex
 * (0.171.0): the folder-trust prompt writes `[projects."<dir>"] trust_level = "trusted"` in the
 * user's config.toml (without it Codex ignores the whole project layer, .codex/hooks.json
 * included, with one warning line); then `/hooks` lists each hook entry as "new" and trusting it
 * writes `[hooks.state."<hooks.json path>:<event>:<group>:<handler>"] trusted_hash = "sha256:…"`
 * (a hash of the event, matcher and handler: a changed command is untrusted again). Both go
 * through the app server's `config/batchWrite`, exactly as codex-rs/tui/src/hooks_rpc.rs
 * (`write_hook_trusts`) sends it. Returns the hook list before and after, and how long it took.
 */
async function trustProject(p: ScratchProject, env: NodeJS.ProcessEnv): Promise<Trust> {
  const t0 = Date.now();
  const server = new AppServer(p, env);
  try {
    await server.call('initialize', { clientInfo: { name: 'git-scalpel-harness-test', version: '0' } });
    server.notify('initialized');
    const untrustedProject = (await listHooks(server, p.dir)).hooks;
    await server.call('config/batchWrite', {
      edits: [{ keyPath: 'projects', value: { [p.dir]: { trust_level: 'trusted' } }, mergeStrategy: 'upsert' }],
      reloadUserConfig: true,
    });
    const before = (await listHooks(server, p.dir)).hooks;
    const updates = Object.fromEntries(
      before
        .filter((h) => h.trustStatus === 'untrusted' || h.trustStatus === 'modified')
        .map((h) => [h.key, { trusted_hash: h.currentHash }]),
    );
    await server.call('config/batchWrite', {
      edits: [{ keyPath: 'hooks.state', value: updates, mergeStrategy: 'upsert' }],
      reloadUserConfig: true,
    });
    const after = (await listHooks(server, p.dir)).hooks;
    const ms = Date.now() - t0;
    p.artifact('trust.json', JSON.stringify({ ms, untrustedProject, before, after, notifications: server.notifications }, null, 2));
    p.artifact('config-after-trust.toml', readFileSync(join(codexHome(p), 'config.toml'), 'utf8'));
    return { before, untrustedProject, after, ms };
  } finally {
    server.close();
  }
}

// ---------------------------------------------------------------------------------------------
// Running codex

interface CodexRun extends ProcResult {
  /** stdout's JSONL events (`codex exec --json`). */
  events: any[];
  threadId: string | undefined;
  /** When the process ended (ms since the epoch). */
  end: number;
}

/** What a test's runs share: the scripted model, the network trap, Codex's environment, the trust set-up. */
interface Ctx {
  model: CodexModel;
  trap: NetworkTrap;
  env: NodeJS.ProcessEnv;
  trust: Trust | undefined;
}

let runCount = 0;

/**
 * `codex exec --json <prompt>` in the project (`codex exec resume --last --json <prompt>` with
 * `resume`): exec mode never asks for approval (the hooks see permission_mode
 * "bypassPermissions"); the sandbox is config.toml's.
 */
async function codex(p: ScratchProject, c: Ctx, prompt: string, opts: { resume?: boolean; args?: string[] } = {}): Promise<CodexRun> {
  const n = ++runCount;
  const common = ['--json', ...(opts.args ?? [])];
  const args = opts.resume ? ['exec', 'resume', '--last', ...common, prompt] : ['exec', ...common, prompt];
  const r = await runProcess(harnessBinary('codex'), args, {
    cwd: p.dir,
    env: c.env,
    timeoutMs: 180_000,
    artifactPrefix: join(p.artifacts, `codex-${n}`),
  });
  const end = Date.now();
  const events = r.stdout
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l));
  const threadId = events.find((e) => e.type === 'thread.started')?.thread_id;
  // Codex's own record of the session (the rollout JSONL the hooks' transcript_path names)
  const sessions = join(codexHome(p), 'sessions');
  if (existsSync(sessions)) cpSync(sessions, join(p.artifacts, 'codex-sessions'), { recursive: true });
  return Object.assign(r, { events, threadId, end });
}

/**
 * The hook command `install codex` writes for a devDependency: sh, with builtins only, looks for
 * the package's hook client (node_modules/git-scalpel/dist/git-scalpel-hook.sh) in the session's
 * directory and each one above it (Codex gives hooks no project variable and runs them in the
 * session's directory), and runs it with sh. Never npx: its start-up cost 1.5–2.8 s per event,
 * and npm's update notifier connected to registry.npmjs.org once a day.
 */
const HOOK_COMMAND = `sh -c 'r=$PWD; until [ -f "$r"/node_modules/git-scalpel/dist/git-scalpel-hook.sh ] || [ -z "$r" ]; do r=\${r%/*}; done; exec sh "$r"/node_modules/git-scalpel/dist/git-scalpel-hook.sh "$@"' git-scalpel hook codex`;

/** The run ended normally, the model saw only what it serves, nothing else was contacted, and the turn completed. */
function expectCleanRun(r: CodexRun, c: Ctx): void {
  expect(r.timedOut, 'codex timed out').toBe(false);
  expect(r.code, `codex exited ${r.code}: ${r.stderr}`).toBe(0);
  expect(c.model.errors).toEqual([]);
  expect(c.model.unexpected.map((q) => `${q.method} ${q.url}`)).toEqual([]);
  // no connection anywhere but the model server (the hooks' command runs no npx, so no npm update check either)
  expect(c.trap.seen, 'connections besides the model server').toEqual([]);
  expect(r.events.filter((e) => e.type === 'error' || e.type === 'turn.failed')).toEqual([]);
  expect(r.events.at(-1)?.type).toBe('turn.completed');
}

// Every payload's field types, by event (and tool), over the whole file: the report's source.
const shapes = new PayloadShapes();
afterAll(() => shapes.write(join(HARNESS_TEST_DIR, '.payloads/codex/shapes.json')));

/** The common fields every Codex hook payload carries, with the right types. */
function expectCommonFields(p: ScratchProject, list: LoggedPayload[]): void {
  for (const x of list) {
    expect(x.raw, `${x.event} payload is not JSON`).toBeUndefined();
    const pl = x.payload;
    expect(pl.hook_event_name).toBe(x.event);
    expect(typeof pl.session_id).toBe('string');
    expect(pl.cwd).toBe(p.dir);
  }
  shapes.record(list);
}

/**
 * Failures of the harness side (the project, the model server, the CLI run and the checks made
 * inside `withModel`): an `it.fails` test must not count one of them as the engine's expected
 * failure, so each is also recorded here, and the file's last test requires none.
 */
const harnessFailures: string[] = [];

/** A scratch project for Codex (payload logger recording every variable name too). */
function codexProject(name: string, opts: Partial<ProjectOptions> = {}): ScratchProject {
  return makeProject({
    harness: 'codex',
    name,
    ...opts,
    logger: opts.logger === false ? false : { envNames: true, ...(opts.logger ?? {}) },
  });
}

/** Starts the scripted model and the trap, writes the config, trusts the project and its hooks (unless `trust: false`), runs `fn`, closes both. */
function withModel<T>(p: ScratchProject, turns: Step[][], fn: (c: Ctx) => Promise<T>, opts: { trust?: boolean } = {}): Promise<T> {
  const start = async () => {
    const model = await startCodexModel(turns, { logFile: join(p.artifacts, 'requests.jsonl'), model: MODEL });
    const trap = await startNetworkTrap();
    return { model, trap, close: async () => void (await Promise.all([model.close(), trap.close()])) };
  };
  return withScriptedModel(p, harnessFailures, start, async ({ model, trap }) => {
    writeCodexConfig(p, model.url);
    const env = codexEnv(p, trap);
    let trust: Trust | undefined;
    if (opts.trust !== false) {
      trust = await trustProject(p, env);
      expect(trust.after.length, 'hook entries Codex sees').toBe(trust.before.length);
      expect(trust.after.every((h) => h.trustStatus === 'trusted' && h.enabled)).toBe(true);
    }
    return fn({ model, trap, env, trust });
  });
}

/**
 * How long Codex waited on each event's hooks, seen from outside (its hooks of one event run at
 * once, the logger beside git-scalpel's command): from the logger's start to Codex's next step
 * (the next model request; for PreToolUse the call's PostToolUse, which includes the tool's own
 * run; for Stop the end of the process). The logger's own start-up (a node process) is inside.
 */
function hookTiming(list: LoggedPayload[], model: CodexModel, run: CodexRun): string {
  const reqs = model.requests.map((q) => q.t);
  const lines: string[] = [];
  for (const x of list) {
    const nextReq = reqs.find((t) => t > x.start);
    let until: number | undefined;
    if (x.event === 'PreToolUse')
      until = list.find((y) => y.event === 'PostToolUse' && y.payload.tool_use_id === x.payload.tool_use_id)?.start ?? nextReq;
    else if (x.event === 'Stop') until = run.end;
    else until = nextReq;
    lines.push(
      `${x.event}${x.payload?.tool_name ? `:${x.payload.tool_name}` : ''}\tstarted +${x.start - list[0].start} ms\tnext step ${until !== undefined ? `${until - x.start} ms later` : 'unknown'}`,
    );
  }
  lines.push(`codex exec: ${run.ms} ms`);
  return lines.join('\n') + '\n';
}

/** Two turns in `p`: the second a `codex exec resume --last`. The oracle before, after one, after two; each run's thread id. */
async function twoTurns(p: ScratchProject): Promise<{ states: Oracle[]; threads: (string | undefined)[] }> {
  const states: Oracle[] = [p.oracle()];
  const threads: (string | undefined)[] = [];
  await withModel(
    p,
    [
      [
        {
          calls: [
            cx.patch(
              patch.wrap(
                patch.add('gen/one.ts', 'export const one = 1;\n'),
                patch.update('src/config.ts', [
                  { remove: ['export const mode = "development";'], add: ['export const mode = "production";'] },
                ]),
              ),
            ),
          ],
        },
        { text: 'Turn one done.' },
      ],
      [
        {
          calls: [
            cx.patch(patch.wrap(patch.update('gen/one.ts', [{ remove: ['export const one = 1;'], add: ['export const one = 11;'] }]))),
          ],
        },
        { calls: [cx.exec('rm docs/guide.md && git add -A gen docs')] },
        { text: 'Turn two done.' },
      ],
    ],
    async (c) => {
      const r1 = await codex(p, c, 'first: add gen/one.ts');
      expectCleanRun(r1, c);
      states.push(p.oracle());
      const r2 = await codex(p, c, 'second: change it again', { resume: true });
      expectCleanRun(r2, c);
      expect(c.model.script.finished()).toBe(true);
      states.push(p.oracle());
      threads.push(r1.threadId, r2.threadId);
    },
  );
  return { states, threads };
}

/** A turn adds gen/x.ts and changes src/config.ts; then the person edits gen/x.ts. */
async function refusalScenario(name: string): Promise<{ p: ScratchProject; before: Oracle; personal: Oracle }> {
  const p = codexProject(name);
  const before = p.oracle();
  await withModel(
    p,
    [
      [
        { calls: [cx.patch(patch.wrap(patch.add('gen/x.ts', 'export const x = 1;\n')))] },
        { calls: [cx.exec("sed -i 's/8080/9090/' src/config.ts")] },
        { text: 'Done.' },
      ],
    ],
    async (c) => {
      expectCleanRun(await codex(p, c, 'write gen/x.ts'), c);
    },
  );
  p.write('gen/x.ts', 'export const x = 1; // the person kept this and fixed it\n');
  return { p, before, personal: p.oracle() };
}

/**
 * One turn of failures: a command that changes a file and exits 3; a patch Codex cannot apply
 * (its context is not in the file); a patch into .git, which git-scalpel's PreToolUse blocks; a
 * patch delivered as a shell heredoc (`apply_patch <<'EOF'`, which Codex applies itself); a patch
 * that works. Read by two tests: the turn as `turns` showed it before any rewind is kept.
 */
const failedCalls = once(async () => {
  const p = codexProject('failed calls');
  const before = p.oracle();
  const heredoc = `apply_patch <<'EOF'\n${patch.wrap(patch.add('gen/heredoc.ts', 'export const h = 1;\n'))}EOF\n`;
  const outputs = await withModel(
    p,
    [
      [
        { calls: [cx.exec("sed -i 's/8080/1234/' src/config.ts && exit 3")] },
        { calls: [cx.patch(patch.wrap(patch.update('src/lib/util.ts', [{ remove: ['no such line'], add: ['x'] }])))] },
        { calls: [cx.patch(patch.wrap(patch.add('.git/evil.txt', 'evil\n')))] },
        { calls: [cx.exec(heredoc)] },
        { calls: [cx.patch(patch.wrap(patch.add('gen/ok.ts', 'export const ok = true;\n')))] },
        { text: 'Done, with failures.' },
      ],
    ],
    async (c) => {
      const r = await codex(p, c, 'fail in every way');
      expectCleanRun(r, c);
      expect(c.model.script.finished()).toBe(true);
      // what the model got back for each call, in order
      const outs = c.model.main.slice(1, 6).map((q) => outputText([...toolOutputs(q).values()].at(-1)!.output));
      p.artifact('tool-outputs.json', JSON.stringify(outs, null, 2));
      return { outs, stderr: r.stderr };
    },
  );
  return { p, before, outputs, turn: turnsJson(p)[0], list: p.payloads() };
});

describe(`Codex ${VERSION}, the real binary, with git-scalpel installed as a devDependency`, () => {
  it('install wrote .codex/hooks.json: four events, the sh command that finds the project’s git-scalpel, and says the hooks need trust and how', () => {
    const p = codexProject('install', { logger: false });
    const hooks = JSON.parse(readFileSync(join(p.dir, '.codex/hooks.json'), 'utf8'));
    expect(Object.keys(hooks.hooks)).toEqual(['UserPromptSubmit', 'PreToolUse', 'PostToolUse', 'Stop']);
    const entries = Object.entries(
      hooks.hooks as Record<string, { matcher?: string; hooks: { type: string; command: string; timeout: number }[] }[]>,
    ).map(([event, groups]) => ({ event, matcher: groups[0].matcher, ...groups[0].hooks[0] }));
    for (const e of entries) expect(e).toMatchObject({ type: 'command', command: HOOK_COMMAND, timeout: 30 });
    expect(entries.filter((e) => e.matcher).map((e) => `${e.event} ${e.matcher}`)).toEqual([
      'PreToolUse apply_patch|Bash',
      'PostToolUse apply_patch|Bash',
    ]);
    const out = p.install.stdout;
    expect(out).toContain(
      `binary:  found: node_modules/git-scalpel/dist/git-scalpel-hook.sh found from ${p.dir}: ${p.dir}/node_modules/git-scalpel/dist/git-scalpel-hook.sh`,
    );
    // nothing trusted yet (no config.toml in the isolated CODEX_HOME): install says so, and both steps Codex needs
    expect(out).toContain('trust:   Codex CLI will NOT run these hooks until you trust them');
    expect(out).toContain(`[projects."${p.dir}"]\n       trust_level = "trusted"`);
    expect(out).toContain('2. trust the hooks:');
    expect(out).toContain('"Trust all and continue"');
  });

  // the command works where Codex runs it: from a subdirectory of the project, with nothing but sh
  it('the Codex hook command finds the project’s git-scalpel from a subdirectory', async () => {
    const p = codexProject('install subdir', { logger: false });
    const sub = join(p.dir, 'src/lib');
    const r = await runProcess('sh', ['-c', HOOK_COMMAND.replace(/ hook codex$/, ' turns --json')], {
      cwd: sub,
      env: p.env(),
      timeoutMs: 60_000,
    });
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout).data).toEqual([]);
  });

  // issue 19, "What must hold" 3: "`install` … never routes a hook through `npx`" (npx costs
  // 1.5–2.8 s per event against 0.3–0.65 s for the binary; DESIGN "Warm, not cold").
  it('install does not route the Codex hooks through npx', () => {
    const p = codexProject('install no npx', { logger: false });
    const hooks = JSON.parse(readFileSync(join(p.dir, '.codex/hooks.json'), 'utf8'));
    const commands = Object.values(hooks.hooks as Record<string, { hooks: { command: string }[] }[]>).flatMap((g) =>
      g.flatMap((x) => x.hooks.map((h) => h.command)),
    );
    for (const c of commands) expect(c).not.toMatch(/\bnpx\b/);
  });

  /**
   * Without trust (the state right after `install`): Codex 0.171.0 loads no project layer at all,
   * so .codex/hooks.json is never read; `codex exec` prints one warning line about "project-local
   * configuration", none about hooks, and the agent's edits run unprotected.
   */
  const untrusted = once(async () => {
    const p = codexProject('untrusted');
    return withModel(
      p,
      [
        [
          { calls: [cx.patch(patch.wrap(patch.add('gen/a.ts', 'export const a = 1;\n')))] },
          { calls: [cx.exec("sed -i 's/blue/red/' docs/guide.md")] },
          { text: 'Done.' },
        ],
      ],
      async (c) => {
        const server = new AppServer(p, c.env);
        let listed: { hooks: HookEntry[]; warnings: string[] };
        try {
          await server.call('initialize', { clientInfo: { name: 'git-scalpel-harness-test', version: '0' } });
          server.notify('initialized');
          listed = await listHooks(server, p.dir);
        } finally {
          server.close();
        }
        const r = await codex(p, c, 'edit without hooks');
        expectCleanRun(r, c);
        const turns = p.scalpel(['turns']);
        const turnsJsonRun = p.scalpel(['turns', '--json']);
        const rewind = p.scalpel(['rewind']);
        p.artifact('turns.txt', turns.stdout + turns.stderr);
        p.artifact('rewind.txt', rewind.stdout + rewind.stderr);
        const status = scalpelStatus(p, 'codex');
        return { p, r, listed, turns, turnsJsonRun, rewind, status, notifications: server.notifications };
      },
      { trust: false },
    );
  });

  it.concurrent('without trust Codex runs none of the hooks, silently: the turn is not protected', async () => {
    const { p, r, listed, turns, rewind, notifications } = await untrusted();
    expect(p.payloads()).toEqual([]);
    // what Codex says: one line about project config, nothing about hooks
    expect(r.stderr).toContain(
      'warning: Untrusted project-local configuration is disabled. Run `codex exec --trust` to allow project configuration and MCP servers for this and future chats in the project',
    );
    expect(r.stderr).not.toMatch(/hook/i);
    expect(r.events.filter((e) => e.type !== 'item.started' && e.type !== 'item.completed').map((e) => e.type)).toEqual([
      'thread.started',
      'turn.started',
      'turn.completed',
    ]);
    // what Codex's /hooks view would list: nothing (the project layer is off), so there is nothing to trust there yet
    expect(listed.hooks).toEqual([]);
    expect(JSON.stringify(notifications)).toContain(
      'Project-local config, hooks, and exec policies are disabled in the following folders until the project is trusted',
    );
    expect(p.read('gen/a.ts')).toBe('export const a = 1;\n');
    expect(turns.stdout).toContain('no turns');
    expect(rewind.stdout + rewind.stderr).toMatch(/nothing to rewind/i);
    expect(p.read('gen/a.ts')).toBe('export const a = 1;\n');
    expect(p.read('docs/guide.md')).toContain('red');
  });

  // issue 19, "What must hold" 3: "Where a harness will not run the hooks until a person trusts
  // them, … `turns` warns when hooks are installed and no event arrived since", and `git-scalpel
  // status` says whether protection is live.
  it.concurrent(
    'without trust, `turns` says the installed Codex hooks never ran and that Codex must trust them; `status` says the turn is not protected',
    async () => {
      const { p, turns, turnsJsonRun, status } = await untrusted();
      const warning = `git-scalpel: warning: Codex CLI hooks are installed in ${p.dir}/.codex/hooks.json but no Codex CLI event has reached this worktree since `;
      expect(turns.stderr).toContain(warning);
      expect(turns.stderr).toContain('is the project trusted? run npx git-scalpel status');
      // --json stays the array; the warning is on stderr only
      expect(turnsJsonRun.code).toBe(0);
      expect(JSON.parse(turnsJsonRun.stdout).data).toEqual([]);
      expect(turnsJsonRun.stderr).toContain(warning);
      // status: installed, not trusted (the project is not in config.toml), no event, not protected, and how to trust
      expect(status).toMatchObject({ live: 'no', lastEvent: null, trust: { trusted: 'no' } });
      expect(status.hooks.find((h: { scope: string }) => h.scope === 'project')).toMatchObject({
        installed: true,
        events: ['UserPromptSubmit', 'PreToolUse', 'PostToolUse', 'Stop'],
      });
      expect(status.trust.fix.join('\n')).toContain(`[projects."${p.dir}"]`);
    },
  );

  it.concurrent(
    'the main turn: apply_patch adding a file in new directories and updating one over unstaged edits, sed -i, rm, git add -A; turns lists it, rewind gives back every byte',
    async () => {
      const p = codexProject('main turn');
      const before = p.oracle();
      const { r, c } = await withModel(
        p,
        [
          [
            {
              calls: [
                cx.patch(
                  patch.wrap(
                    patch.add('gen/api/client.ts', 'export const client = 1;\n'),
                    patch.update('src/app.ts', [{ remove: ['export const b = 2;'], add: ['export const b = 20;'] }]),
                  ),
                ),
              ],
            },
            { calls: [cx.exec("sed -i 's/blue/red/' docs/guide.md")] },
            { calls: [cx.exec('rm old/legacy.txt')] },
            { calls: [cx.exec('git add -A')] },
            { text: 'Done: client added, b raised, button red, legacy gone, all staged.' },
          ],
        ],
        async (c) => {
          const r = await codex(p, c, 'Add the API client\nand tidy up the project');
          expectCleanRun(r, c);
          expect(c.model.script.finished()).toBe(true);
          const outs = c.model.main.slice(1).map((q) => outputText([...toolOutputs(q).values()].at(-1)!.output));
          p.artifact('tool-outputs.json', JSON.stringify(outs, null, 2));
          expect(outs[0]).toMatch(
            /^Exit code: 0\nWall time: [0-9.]+ seconds\nOutput:\nSuccess\. Updated the following files:\nA gen\/api\/client\.ts\nM src\/app\.ts\n$/,
          );
          for (const o of outs.slice(1)) expect(o).toContain('Process exited with code 0');
          // the trust Codex needed: one entry per hook of .codex/hooks.json, logger included
          expect(c.trust!.untrustedProject).toEqual([]);
          expect(c.trust!.before.map((h) => `${h.eventName} ${h.trustStatus} ${h.source}`)).toEqual(
            ['preToolUse', 'preToolUse', 'postToolUse', 'postToolUse', 'userPromptSubmit', 'userPromptSubmit', 'stop', 'stop'].map(
              (e) => `${e} untrusted project`,
            ),
          );
          expect(c.trust!.before[0].key).toBe(`${p.dir}/.codex/hooks.json:pre_tool_use:0:0`);
          expect(c.trust!.before[0].currentHash).toMatch(/^sha256:[0-9a-f]{64}$/);
          const config = readFileSync(join(codexHome(p), 'config.toml'), 'utf8');
          expect(config).toContain(`[projects."${p.dir}"]\ntrust_level = "trusted"`);
          expect(config).toContain(
            `[hooks.state."${p.dir}/.codex/hooks.json:pre_tool_use:0:0"]\ntrusted_hash = "${c.trust!.before[0].currentHash}"`,
          );
          return { r, c };
        },
      );
      // what the agent did, seen by git
      expectMainTurnOnDisk(p);

      // what Codex really sent
      const list = p.payloads();
      expectCommonFields(p, list);
      p.artifact('events.txt', events(list).join('\n') + '\n');
      p.artifact('hook-timing.txt', hookTiming(list, c.model, r));
      expect(events(list)).toEqual([
        'UserPromptSubmit',
        'PreToolUse:apply_patch',
        'PostToolUse:apply_patch',
        'PreToolUse:Bash',
        'PostToolUse:Bash',
        'PreToolUse:Bash',
        'PostToolUse:Bash',
        'PreToolUse:Bash',
        'PostToolUse:Bash',
        'Stop',
      ]);
      // one session (the exec thread) and one turn_id for the whole turn
      expect(new Set(list.map((x) => x.payload.session_id))).toEqual(new Set([r.threadId]));
      const turnIds = new Set(list.map((x) => x.payload.turn_id));
      expect(turnIds.size).toBe(1);
      expect([...turnIds][0]).toMatch(/^[0-9a-f-]{36}$/);
      for (const x of list)
        expect(x.payload).toMatchObject({
          model: MODEL,
          permission_mode: 'bypassPermissions',
          transcript_path: expect.stringContaining(`${codexHome(p)}/sessions/`),
        });
      // the call ids the model gave are the hooks' tool_use_id; Pre and Post carry the same tool_input
      const ids = c.model.script.log.flatMap((a) => a.ids);
      const pre = list.filter((x) => x.event === 'PreToolUse');
      const post = list.filter((x) => x.event === 'PostToolUse');
      expect(pre.map((x) => x.payload.tool_use_id)).toEqual(ids);
      expect(post.map((x) => x.payload.tool_use_id)).toEqual(ids);
      post.forEach((x, i) => expect(x.payload.tool_input).toEqual(pre[i].payload.tool_input));
      // tool_input: { command } for both tools — the raw patch for apply_patch, the command line for Bash (exec_command's cmd)
      expect(pre.map((x) => Object.keys(x.payload.tool_input))).toEqual([['command'], ['command'], ['command'], ['command']]);
      expect(pre[0].payload.tool_input.command).toBe(
        patch.wrap(
          patch.add('gen/api/client.ts', 'export const client = 1;\n'),
          patch.update('src/app.ts', [{ remove: ['export const b = 2;'], add: ['export const b = 20;'] }]),
        ),
      );
      expect(pre.slice(1).map((x) => x.payload.tool_input.command)).toEqual([
        "sed -i 's/blue/red/' docs/guide.md",
        'rm old/legacy.txt',
        'git add -A',
      ]);
      // tool_response: a string — apply_patch's "Exit code: 0 …" text; a command's output only (here empty), no exit code
      expect(post[0].payload.tool_response).toMatch(
        /^Exit code: 0\nWall time: [0-9.]+ seconds\nOutput:\nSuccess\. Updated the following files:\nA gen\/api\/client\.ts\nM src\/app\.ts\n$/,
      );
      expect(post.slice(1).map((x) => x.payload.tool_response)).toEqual(['', '', '']);
      expect(list[0].payload.prompt).toBe('Add the API client\nand tidy up the project');
      expect(list.at(-1)!.payload).toMatchObject({
        stop_hook_active: false,
        last_assistant_message: 'Done: client added, b raised, button red, legacy gone, all staged.',
      });
      // the hooks' environment: Codex's own (CODEX_HOME) and its npm wrapper's; no project-directory variable
      for (const x of list) expect(Object.keys(x.env).sort()).toEqual(['CODEX_HOME', 'CODEX_MANAGED_BY_NPM', 'CODEX_MANAGED_PACKAGE_ROOT']);
      const added = list[0].envNames!.filter((k) => !(k in c.env));
      p.artifact('hook-env-added.json', JSON.stringify({ added, env: list[0].env }, null, 2));
      expect(added.filter((k) => k.startsWith('CODEX'))).toEqual(['CODEX_MANAGED_BY_NPM', 'CODEX_MANAGED_PACKAGE_ROOT']);

      // turns: one turn, labelled with the prompt's first line, every path the agent changed
      const turns = turnsJson(p);
      expectMainTurnListed(turns, `codex-${r.threadId}`);
      // one entry per call, joined by the call id: apply_patch "ok" with exit code 0 (its "Exit code: 0" string);
      // the commands "unknown" (Codex sends their output only, no exit code), each with what it changed
      expect(
        turns[0].tools.map((t: ToolEntry) => ({
          tool: t.tool,
          outcome: t.outcome,
          paths: t.paths,
          command: t.command,
          exitCode: t.exitCode,
          toolUseId: t.toolUseId,
        })),
      ).toEqual([
        {
          tool: 'apply_patch',
          outcome: 'ok',
          paths: ['gen/api/client.ts', 'src/app.ts'],
          command: undefined,
          exitCode: 0,
          toolUseId: ids[0],
        },
        {
          tool: 'Bash',
          outcome: 'unknown',
          paths: ['docs/guide.md'],
          command: "sed -i 's/blue/red/' docs/guide.md",
          exitCode: undefined,
          toolUseId: ids[1],
        },
        {
          tool: 'Bash',
          outcome: 'unknown',
          paths: ['old/legacy.txt'],
          command: 'rm old/legacy.txt',
          exitCode: undefined,
          toolUseId: ids[2],
        },
        {
          tool: 'Bash',
          outcome: 'unknown',
          paths: ['README.md', 'docs/guide.md', 'gen/api/client.ts', 'notes.txt', 'old/legacy.txt', 'src/app.ts'],
          command: 'git add -A',
          exitCode: undefined,
          toolUseId: ids[3],
        },
      ]);
      expect(turns[0].rewind).toMatchObject({ refused: false, pruned: 2 });
      expect(p.scalpel(['turns']).stdout).toContain('(ran; the harness did not say how it ended');
      // status: trusted (config.toml has the project and each hook's hash), an event of this thread arrived
      expect(scalpelStatus(p, 'codex')).toMatchObject({
        live: 'yes',
        trust: { trusted: 'yes' },
        lastEvent: expect.objectContaining({ session: `codex-${r.threadId}` }),
      });

      expectMainTurnRewound(p, before);
    },
  );

  it.concurrent(
    'two turns (the second `codex exec resume --last`): one session, turns lists both, rewind undoes the newest, then the other',
    async () => {
      const p = codexProject('two turns');
      const { states, threads } = await twoTurns(p);
      const list = p.payloads();
      expectCommonFields(p, list);
      p.artifact('events.txt', events(list).join('\n') + '\n');
      // resume keeps the thread: one session_id; each prompt its own turn_id
      expect(threads[0]).toBe(threads[1]);
      expect(new Set(list.map((x) => x.payload.session_id))).toEqual(new Set([threads[0]]));
      const prompts = list.filter((x) => x.event === 'UserPromptSubmit');
      expect(prompts.map((x) => x.payload.prompt)).toEqual(['first: add gen/one.ts', 'second: change it again']);
      expect(prompts[0].payload.turn_id).not.toBe(prompts[1].payload.turn_id);
      for (const x of list) expect(x.payload.turn_id).toBe(prompts[list.indexOf(x) < list.indexOf(prompts[1]) ? 0 : 1].payload.turn_id);
      expect(events(list)).toEqual([
        'UserPromptSubmit',
        'PreToolUse:apply_patch',
        'PostToolUse:apply_patch',
        'Stop',
        'UserPromptSubmit',
        'PreToolUse:apply_patch',
        'PostToolUse:apply_patch',
        'PreToolUse:Bash',
        'PostToolUse:Bash',
        'Stop',
      ]);
      expectTwoTurnsRewoundOneByOne(p, states);
    },
  );

  it.concurrent('two turns: `rewind 1` undoes both at once', async () => {
    const p = codexProject('two turns rewind 1');
    const { states } = await twoTurns(p);
    expectTwoTurnsRewoundByRewind1(p, states);
  });

  it.concurrent(
    'a refusal: the person edits a file the agent wrote after the turn; rewind exits 3 naming it and writes nothing; rewind --force succeeds',
    async () => {
      const { p, before, personal } = await refusalScenario('refusal');
      expectRefusedThenForced(p, before, personal);
    },
  );

  it.concurrent('parallel tool calls: two commands and a patch in one response, then two read-only commands', async () => {
    // the logger holds each PreToolUse 2 s: overlapping intervals mean Codex runs the hooks of parallel calls at once
    const p = codexProject('parallel', { logger: { envNames: true, holdMs: { PreToolUse: 2000 } } });
    const before = p.oracle();
    await withModel(
      p,
      [
        [
          {
            calls: [
              cx.exec("sed -i 's/blue/green/' docs/guide.md"),
              cx.exec('mkdir -p tmp/out && echo generated > tmp/out/list.txt'),
              cx.patch(patch.wrap(patch.add('gen/par.ts', 'export const par = 1;\n'))),
            ],
          },
          { calls: [cx.exec('git status --short'), cx.exec('cat README.md')] },
          { text: 'Done.' },
        ],
      ],
      async (c) => {
        const r = await codex(p, c, 'three things at once');
        expectCleanRun(r, c);
        expect(c.model.script.finished()).toBe(true);
        // one follow-up request per step: the three calls' outputs came back together
        expect(c.model.main).toHaveLength(3);
        expect([...toolOutputs(c.model.main[1]).keys()].sort()).toEqual([...c.model.script.log[0].ids].sort());
      },
    );
    expectParallelCallsOnDisk(p);
    const list = p.payloads();
    expectCommonFields(p, list);
    const tools = list.filter((x) => x.event === 'PreToolUse' || x.event === 'PostToolUse');
    p.artifact(
      'timeline.txt',
      tools
        .map(
          (x) =>
            `${x.event} ${x.payload.tool_name} ${x.payload.tool_use_id} start=${x.start - tools[0].start} end=${x.end - tools[0].start} ${JSON.stringify(x.payload.tool_input).slice(0, 80)}`,
        )
        .join('\n') + '\n',
    );
    const overlap = (a: LoggedPayload, b: LoggedPayload) => a.start < b.end && b.start < a.end;
    const pre = (cmd: RegExp) => tools.find((x) => x.event === 'PreToolUse' && cmd.test(x.payload.tool_input.command))!;
    const postOf = (x: LoggedPayload) => tools.find((y) => y.event === 'PostToolUse' && y.payload.tool_use_id === x.payload.tool_use_id)!;
    // Codex runs the two commands at once (their PreToolUse hooks overlap; each one's PostToolUse
    // comes when it ends, overlapping the other's or not), and the patch alone, after both finished
    const sed = pre(/^sed /);
    const mk = pre(/^mkdir /);
    const pt = pre(/Add File: gen\/par\.ts/);
    expect(overlap(sed, mk), 'the two commands’ PreToolUse hooks overlap').toBe(true);
    expect(pt.start).toBeGreaterThanOrEqual(Math.max(postOf(sed).end, postOf(mk).end));
    expect(postOf(pt)).toBeDefined();
    expect(overlap(pre(/^git status/), pre(/^cat /)), 'the read-only commands’ PreToolUse hooks overlap').toBe(true);
    for (const x of tools.filter((y) => y.event === 'PreToolUse')) expect(postOf(x), `${x.payload.tool_use_id} paired`).toBeDefined();
    // a directory the command created joins as itself
    expect(turnsJson(p)[0].paths).toEqual(['docs/guide.md', 'gen/par.ts', 'tmp']);
    expectRewoundTo(p, before, 'after rewind');
    expectPersonWork(p);
  });

  it.concurrent(
    'failed calls: a command exiting 3, a patch that cannot apply, a patch git-scalpel blocks, a heredoc patch; the events each sends; rewind gives back every byte',
    async () => {
      const { p, before, outputs, turn, list } = await failedCalls();
      expectCommonFields(p, list);
      p.artifact('events.txt', events(list).join('\n') + '\n');
      p.artifact(
        'failure-events.json',
        JSON.stringify(
          list.map((x) => ({ event: x.event, payload: x.payload })),
          null,
          2,
        ),
      );
      // what the model was told
      expect(outputs.outs[0]).toContain('Process exited with code 3');
      expect(outputs.outs[1]).toMatch(
        /^apply_patch verification failed: Failed to find expected lines in .*src\/lib\/util\.ts:\nno such line/,
      );
      expect(outputs.outs[2]).toMatch(
        /^Command blocked by PreToolUse hook: git-scalpel could not capture the paths before this write, so it is blocked: refusing path: '\.git\/evil\.txt' is inside \.git/,
      );
      expect(outputs.outs[3]).toContain('Success. Updated the following files:\nA gen/heredoc.ts\n');
      expect(outputs.outs[4]).toMatch(/^Exit code: 0\n/);
      // the events: the command that exits 3 gets its PostToolUse, with its output only (empty: no exit code anywhere);
      // the patch that cannot apply, the blocked patch and the heredoc patch get a PreToolUse and no PostToolUse
      // (the heredoc arrives as Bash, its command the whole heredoc, and Codex applies it itself)
      expect(events(list)).toEqual([
        'UserPromptSubmit',
        'PreToolUse:Bash',
        'PostToolUse:Bash',
        'PreToolUse:apply_patch',
        'PreToolUse:apply_patch',
        'PreToolUse:Bash',
        'PreToolUse:apply_patch',
        'PostToolUse:apply_patch',
        'Stop',
      ]);
      const failedPost = list[2].payload;
      expect(failedPost.tool_response).toBe('');
      expect(Object.keys(failedPost).sort()).toEqual([
        'cwd',
        'hook_event_name',
        'model',
        'permission_mode',
        'session_id',
        'tool_input',
        'tool_name',
        'tool_response',
        'tool_use_id',
        'transcript_path',
        'turn_id',
      ]);
      expect(list[5].payload.tool_input.command).toMatch(/^apply_patch <<'EOF'\n\*\*\* Begin Patch\n\*\*\* Add File: gen\/heredoc\.ts\n/);
      expect(outputs.stderr).toContain('Command blocked by PreToolUse hook');
      // what happened on disk
      expect(existsSync(join(p.dir, '.git/evil.txt'))).toBe(false);
      expect(p.read('gen/heredoc.ts')).toBe('export const h = 1;\n');
      expect(p.read('gen/ok.ts')).toBe('export const ok = true;\n');
      expect(p.read('src/config.ts')).toContain('1234');
      expect(p.read('src/lib/util.ts')).toBe(BASE_FILES['src/lib/util.ts']);
      // the turn holds every path a call changed; the patch that could not apply changed nothing (its capture,
      // provisional, went at turn end: src/lib/util.ts held what it held before); the blocked one captured nothing
      expect(turn.paths).toEqual(['gen/heredoc.ts', 'gen/ok.ts', 'src/config.ts']);
      expectRewoundTo(p, before, 'after rewind');
      expectPersonWork(p);
    },
  );

  // issue 19, first bullet: "Codex's `tool_response` is a string ("Exit code: 0 …" for `apply_patch`,
  // only stdout for Bash): every Codex call shows "unknown"", and "What must hold" 2: "Tool outcomes as
  // each harness really reports them … one line per call in `turns`". The successful patch's PostToolUse
  // says "Exit code: 0"; a command's says nothing about its exit (3 here): unknown is all there is; the
  // patch that could not apply never reported its end.
  it.concurrent(
    'failed calls: turns records each outcome Codex reports (the patch ok, exit code 0; the command that exited 3 unknown; the patch that could not apply never finished; the one git-scalpel blocked)',
    async () => {
      const { turn, list } = await failedCalls();
      const id = (i: number) => list.filter((x) => x.event === 'PreToolUse')[i].payload.tool_use_id;
      const calls = (turn.tools as ToolEntry[]).map((t) => ({
        tool: t.tool,
        outcome: t.outcome,
        paths: t.paths,
        exitCode: t.exitCode,
        toolUseId: t.toolUseId,
      }));
      expect(calls[0]).toEqual({ tool: 'Bash', outcome: 'unknown', paths: ['src/config.ts'], exitCode: undefined, toolUseId: id(0) });
      expect(calls[1]).toEqual({
        tool: 'apply_patch',
        outcome: 'never-finished',
        paths: ['src/lib/util.ts'],
        exitCode: undefined,
        toolUseId: id(1),
      });
      // the patch into .git: blocked by git-scalpel's PreToolUse (exit 2), so it never ran
      expect(calls[2]).toEqual({
        tool: 'apply_patch',
        outcome: 'blocked',
        paths: ['.git/evil.txt'],
        exitCode: undefined,
        toolUseId: id(2),
      });
      expect(calls[3]).toMatchObject({ tool: 'Bash', outcome: 'unknown', paths: ['gen/heredoc.ts'], toolUseId: id(3) });
      expect(calls[4]).toEqual({ tool: 'apply_patch', outcome: 'ok', paths: ['gen/ok.ts'], exitCode: 0, toolUseId: id(4) });
      expect(calls).toHaveLength(5);
    },
  );

  // Codex applies a heredoc patch (`apply_patch <<'EOF'` run as Bash) itself and sends PreToolUse
  // and no PostToolUse: git-scalpel knows that kind never reports its end (HookEvent.unreported),
  // joins the call's capture at the session's next event, and lists the call as run ("unknown":
  // Codex did not say how it ended), as for Codex's other commands.
  it.concurrent(
    'failed calls: the heredoc patch Codex applied without reporting its end is shown as run, not as never finished',
    async () => {
      const { turn } = await failedCalls();
      const heredoc = (turn.tools as ToolEntry[]).find((t) => t.paths.includes('gen/heredoc.ts'))!;
      expect(heredoc.outcome).toBe('unknown');
    },
  );

  // DESIGN I10: "A call the person denied or that never ran changed nothing"; what cannot be told is
  // contested, not guessed. Codex sends PreToolUse for a patch before it finds the patch cannot
  // apply, then no PostToolUse. The person then fixes that file by hand. At turn end the call's
  // capture is still provisional and its path changed: whether the patch ran or someone else wrote
  // the file cannot be told, so the path joins the turn contested, and `rewind` refuses naming it
  // (exit 3, nothing written): the person's edit stays.
  it.concurrent(
    'a patch that cannot apply, then the person edits its file by hand: rewind refuses naming the file and keeps the person’s edit',
    async () => {
      const p = codexProject('failed patch then person');
      let afterPersonEdit: Oracle | undefined;
      const fixed = 'export function u() {\n  return 2; // the person fixed it by hand\n}\n';
      await withModel(
        p,
        [
          [
            { calls: [cx.patch(patch.wrap(patch.update('src/lib/util.ts', [{ remove: ['no such line'], add: ['x'] }])))] },
            {
              before: () => {
                p.write('src/lib/util.ts', fixed);
                afterPersonEdit = p.oracle();
              },
              calls: [cx.patch(patch.wrap(patch.add('gen/ok.ts', 'export const ok = true;\n')))],
            },
            { text: 'Done.' },
          ],
        ],
        async (c) => {
          const r = await codex(p, c, 'a patch that does not apply');
          expectCleanRun(r, c);
          expect(c.model.script.finished()).toBe(true);
          expect(events(p.payloads())).toEqual([
            'UserPromptSubmit',
            'PreToolUse:apply_patch',
            'PreToolUse:apply_patch',
            'PostToolUse:apply_patch',
            'Stop',
          ]);
          expect(afterPersonEdit).toBeDefined();
        },
      );
      const t = turnsJson(p)[0];
      expect(t.paths).toEqual(['gen/ok.ts', 'src/lib/util.ts']);
      expect(t.tools.map((x: ToolEntry) => `${x.tool}:${x.outcome}`)).toEqual(['apply_patch:never-finished', 'apply_patch:ok']);
      expect(t.rewind).toMatchObject({ refused: true });
      const afterTurn = p.oracle();
      const rw = scalpelSaved(p, 'rewind.txt', ['rewind']);
      expect(rw.code).toBe(3);
      expect(rw.stderr).toMatch(
        /^  src\/lib\/util\.ts \(worktree\): sealed .* \(before a tool call whose end was never reported: it may have run, or someone else changed it\), found /m,
      );
      expect(rw.stderr).toContain('Nothing was written');
      expectSameOracle(p.oracle(), afterTurn, 'after the refused rewind');
      expect(p.read('src/lib/util.ts')).toBe(fixed);
    },
  );

  it('no test failed on the harness side (so every it.fails above failed in the engine)', () => {
    expect(harnessFailures).toEqual([]);
  });
});
