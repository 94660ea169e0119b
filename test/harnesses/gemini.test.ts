/**
 * The real Gemini CLI (the pinned @google/gemini-cli bundle from the npm registry, in the harness
 * cache), driven by a scripted Gemini API on 127.0.0.1, in a scratch project where a person has
 * work in progress and git-scalpel is a devDependency installed with `git-scalpel install gemini`.
 * Every test asserts what DESIGN.md promises; git and the bytes on disk are the oracle. What the
 * harness really sent to its hooks is kept in test/harnesses/.payloads/gemini/<test>/, the field
 * types of every payload in .payloads/gemini/shapes.json, each hook event's duration in
 * .payloads/gemini/hook-durations.json.
 *
 * How the CLI is set up, as a person would (the isolated home's ~/.gemini/):
 * - settings.json: `security.auth.selectedType: "gemini-api-key"` with GEMINI_API_KEY and
 *   GOOGLE_GEMINI_BASE_URL in the environment; auto-update, its notification, usage statistics
 *   and telemetry off; `hooksConfig.enabled: true` (0.61.0's default, written out).
 * - trustedFolders.json: the project as TRUST_FOLDER (what the trust dialog writes). Folder trust
 *   is on by default: in a folder that is not trusted the project's .gemini/settings.json (so
 *   every hook git-scalpel installed) is not read, and `gemini -p` refuses to start.
 * - `gemini -p PROMPT --yolo -o stream-json`: headless, every tool call approved (root is fine),
 *   stream-json for the tool results. Runs whose payloads are not checked add --debug, which prints
 *   each hook event's duration and outcome ("Hook execution for BeforeTool: 2 hooks executed
 *   successfully, total duration: 1808ms"); it is not used everywhere because it changes what a
 *   shell call's AfterTool carries (returnDisplay becomes llmContent's text). A failed hook is
 *   printed on stderr with or without it ("Hook(s) [git-scalpel] failed for event …").
 * - GEMINI_CLI_NO_RELAUNCH=true except in the main turn: the CLI otherwise starts a second Node
 *   process of itself only to raise its heap limit (5–8 s a run on a loaded two-core machine);
 *   its hooks see the variable either way.
 * - Installed with --ignore-scripts (versions.json): the package is one bundle; of its optional
 *   dependencies only @github/keytar (prebuild-install, which downloads) and node-pty (node-gyp)
 *   have install scripts; the CLI needs neither (an API key from the environment; the prebuilt
 *   @lydell/node-pty-<platform>). Neither the install, `gemini --version` nor a run connects
 *   anywhere but the registry and 127.0.0.1 (checked with strace).
 */
import { afterAll, describe, expect, it } from 'vitest';
import { mkdirSync, readFileSync, realpathSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  HARNESS_TEST_DIR,
  PERSON_WORK,
  expectSameOracle,
  harnessBinary,
  harnessPin,
  makeProject,
  runProcess,
  scalpelStatus,
  type LoggedPayload,
  type LoggerOptions,
  type Oracle,
  type ProcResult,
  type ScratchProject,
  type Step,
} from './common.js';
import { functionResponses, gm, startGeminiModel, type GeminiModel } from './gemini.model.js';
import {
  PayloadShapes,
  events,
  expectMainTurnListed,
  expectMainTurnOnDisk,
  expectMainTurnRewound,
  expectParallelCallsOnDisk,
  expectPersonWork,
  expectTwoTurnsRewoundByRewind1,
  expectTwoTurnsRewoundOneByOne,
  once,
  scalpelSaved,
  scenarioScripts,
  turnsJson,
  withScriptedModel,
  type FileTools,
  type ToolEntry,
} from './shared-checks.js';

const VERSION = harnessPin('gemini').version;

/** The isolated home's ~/.gemini/settings.json. */
export const GEMINI_USER_SETTINGS = {
  security: { auth: { selectedType: 'gemini-api-key' } },
  general: { enableAutoUpdate: false, enableAutoUpdateNotification: false },
  privacy: { usageStatisticsEnabled: false },
  telemetry: { enabled: false },
  hooksConfig: { enabled: true },
};

const API_KEY = 'test-gemini-key';

/** Gemini CLI's tools for the shared scenario scripts. */
const TOOLS: FileTools = {
  write: gm.write,
  edit: (file, old, replacement) => gm.replace(file, old, replacement),
  shell: gm.shell,
  read: gm.read,
};

/** ~/.gemini/settings.json and (when `trust`) ~/.gemini/trustedFolders.json trusting the project. */
function setUpGeminiHome(p: ScratchProject, opts: { trust?: boolean; settings?: Record<string, unknown> } = {}): void {
  const dir = join(p.home, '.gemini');
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'settings.json'), JSON.stringify(opts.settings ?? GEMINI_USER_SETTINGS, null, 2) + '\n');
  if (opts.trust ?? true)
    writeFileSync(join(dir, 'trustedFolders.json'), JSON.stringify({ [realpathSync(p.dir)]: 'TRUST_FOLDER' }, null, 2) + '\n');
}

/** A scratch project with git-scalpel's Gemini hooks, a payload logger printing `{}`, the home set up. */
function geminiProject(
  name: string,
  opts: {
    logger?: Omit<LoggerOptions, 'log' | 'stdout'>;
    trust?: boolean;
    files?: Parameters<typeof makeProject>[0]['files'];
    personWork?: (dir: string) => void;
  } = {},
): ScratchProject {
  const p = makeProject({
    harness: 'gemini',
    name,
    logger: { ...(opts.logger ?? {}), stdout: '{}' },
    files: opts.files,
    personWork: opts.personWork,
  });
  setUpGeminiHome(p, { trust: opts.trust });
  return p;
}

interface HookRun {
  event: string;
  ok: number;
  failed: number;
  failedNames?: string;
  ms: number;
}

interface GeminiRun extends ProcResult {
  /** stdout's stream-json lines. */
  lines: any[];
  sessionId: string | undefined;
  toolUses: any[];
  toolResults: any[];
  /** From --debug: each hook event's hooks (ours and the logger, run in parallel), their outcome and total duration. */
  hookRuns: HookRun[];
  debug: boolean;
}

let runCount = 0;
/** Every hook event's duration over the file (the report's source). */
const hookDurations: (HookRun & { test: string })[] = [];
const runTimes: { test: string; ms: number; relaunch: boolean; debug: boolean }[] = [];

function parseHookRuns(stderr: string): HookRun[] {
  const out: HookRun[] = [];
  for (const line of stderr.split('\n')) {
    let m = /Hook execution for (\w+): (\d+) hooks executed successfully, total duration: (\d+)ms/.exec(line);
    if (m) {
      out.push({ event: m[1], ok: Number(m[2]), failed: 0, ms: Number(m[3]) });
      continue;
    }
    m = /Hook execution for (\w+): (\d+) succeeded, (\d+) failed \(([^)]*)\), total duration: (\d+)ms/.exec(line);
    if (m) out.push({ event: m[1], ok: Number(m[2]), failed: Number(m[3]), failedNames: m[4], ms: Number(m[5]) });
  }
  return out;
}

/**
 * `gemini -p PROMPT --yolo -o stream-json`; `debug` adds --debug (each hook event's duration on
 * stderr; it also changes what a shell call's AfterTool carries: returnDisplay becomes llmContent's
 * text, so the tests that check payloads run without it).
 */
async function gemini(
  p: ScratchProject,
  model: GeminiModel,
  prompt: string,
  opts: { args?: string[]; relaunch?: boolean; debug?: boolean; timeoutMs?: number } = {},
): Promise<GeminiRun> {
  const n = ++runCount;
  const args = ['-p', prompt, '--yolo', '--output-format', 'stream-json', ...(opts.debug ? ['--debug'] : []), ...(opts.args ?? [])];
  const r = await runProcess(harnessBinary('gemini'), args, {
    cwd: p.dir,
    env: p.env({
      GEMINI_API_KEY: API_KEY,
      GOOGLE_GEMINI_BASE_URL: model.url,
      ...(opts.relaunch ? {} : { GEMINI_CLI_NO_RELAUNCH: 'true' }),
    }),
    timeoutMs: opts.timeoutMs ?? 180_000,
    artifactPrefix: join(p.artifacts, `gemini-${n}`),
  });
  const lines = r.stdout
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l));
  const hookRuns = parseHookRuns(r.stderr);
  hookDurations.push(...hookRuns.map((h) => ({ ...h, test: p.artifacts.split('/').pop()! })));
  runTimes.push({ test: p.artifacts.split('/').pop()!, ms: r.ms, relaunch: !!opts.relaunch, debug: !!opts.debug });
  return Object.assign(r, {
    debug: !!opts.debug,
    lines,
    sessionId: lines.find((l) => l.type === 'init')?.session_id,
    toolUses: lines.filter((l) => l.type === 'tool_use'),
    toolResults: lines.filter((l) => l.type === 'tool_result'),
    hookRuns,
  });
}

/**
 * The run ended normally, the model saw no error, and every hook of every event succeeded (a
 * failed hook prints "Hook execution for <Event>: 1 succeeded, 1 failed (<name>) …" and "Hook(s)
 * [<name>] failed for event <Event>" on stderr, --debug or not).
 */
function expectCleanRun(r: GeminiRun, model: GeminiModel): void {
  expect(r.timedOut, 'gemini timed out').toBe(false);
  expect(r.code, `gemini exited ${r.code}: ${r.stderr.slice(-2000)}`).toBe(0);
  expect(model.errors).toEqual([]);
  expect(model.unexpected.map((q) => `${q.method} ${q.url}`)).toEqual([]);
  expect(
    r.hookRuns.filter((h) => h.failed > 0),
    'a hook failed',
  ).toEqual([]);
  expect(r.stderr).not.toMatch(/failed for event/);
  if (r.debug) expect(r.hookRuns.length, 'no hook ran (--debug prints each event)').toBeGreaterThan(0);
  expect(r.lines.find((l) => l.type === 'result')?.status).toBe('success');
}

// Every payload's field types, by event (and tool), over the whole file: the report's source.
const shapes = new PayloadShapes();

afterAll(() => {
  const dir = join(HARNESS_TEST_DIR, '.payloads/gemini');
  shapes.write(join(dir, 'shapes.json'));
  const byEvent: Record<string, { n: number; min: number; median: number; max: number }> = {};
  for (const ev of [...new Set(hookDurations.map((h) => h.event))]) {
    const ms = hookDurations
      .filter((h) => h.event === ev)
      .map((h) => h.ms)
      .sort((a, b) => a - b);
    byEvent[ev] = { n: ms.length, min: ms[0], median: ms[Math.floor(ms.length / 2)], max: ms[ms.length - 1] };
  }
  writeFileSync(join(dir, 'hook-durations.json'), JSON.stringify({ byEvent, runs: runTimes, all: hookDurations }, null, 2) + '\n');
});

const BASE_KEYS = ['session_id', 'transcript_path', 'cwd', 'hook_event_name', 'timestamp'];
/** Every key each event's payload may have (0.61.0): no call id anywhere. */
const EVENT_KEYS: Record<string, string[]> = {
  SessionStart: [...BASE_KEYS, 'source'],
  SessionEnd: [...BASE_KEYS, 'reason'],
  BeforeAgent: [...BASE_KEYS, 'prompt'],
  AfterAgent: [...BASE_KEYS, 'prompt', 'prompt_response', 'stop_hook_active'],
  BeforeTool: [...BASE_KEYS, 'tool_name', 'tool_input'],
  AfterTool: [...BASE_KEYS, 'tool_name', 'tool_input', 'tool_response'],
};

/** The common fields every Gemini CLI hook payload carries, with the right types, and the hook's environment. */
function expectCommonFields(p: ScratchProject, list: LoggedPayload[]): void {
  for (const x of list) {
    expect(x.raw, `${x.event} payload is not JSON`).toBeUndefined();
    const pl = x.payload;
    expect(pl.hook_event_name).toBe(x.event);
    expect(pl.session_id).toMatch(/^[0-9a-f-]{36}$/);
    expect(typeof pl.transcript_path).toBe('string');
    expect(pl.cwd).toBe(p.dir);
    expect(new Date(pl.timestamp).toISOString()).toBe(pl.timestamp);
    expect(
      Object.keys(pl).filter((k) => !(EVENT_KEYS[x.event] ?? []).includes(k)),
      `${x.event}: keys beyond the known ones`,
    ).toEqual([]);
    // the hook's environment: the project, the session, and (surprise) the API key
    expect(x.env).toMatchObject({
      GEMINI_PROJECT_DIR: p.dir,
      GEMINI_CWD: p.dir,
      CLAUDE_PROJECT_DIR: p.dir,
      GEMINI_SESSION_ID: pl.session_id,
      GEMINI_API_KEY: API_KEY,
    });
  }
  shapes.record(list);
}

const toolEvents = (list: LoggedPayload[]) => list.filter((x) => x.event === 'BeforeTool' || x.event === 'AfterTool');

/** `tool:outcome` of each call of a turn (a ToolEntry: Gemini CLI sends no call id, so `call` is one git-scalpel made, and there is no toolUseId). */
const outcomes = (t: any) => (t.tools as ToolEntry[]).map((x) => `${x.tool}:${x.outcome}`);

/**
 * Failures of the harness side (the project, the model server, the CLI run and the checks made
 * inside `withModel`): an `it.fails` test must not count one of them as the engine's expected
 * failure, so each is also recorded here, and the file's last test requires none.
 */
const harnessFailures: string[] = [];

/** Starts the scripted model, runs `fn` (the harness runs and their checks), closes the model. */
function withModel<T>(p: ScratchProject, turns: Step[][], fn: (model: GeminiModel) => Promise<T>): Promise<T> {
  return withScriptedModel(p, harnessFailures, () => startGeminiModel(turns, { logFile: join(p.artifacts, 'requests.jsonl') }), fn);
}

/**
 * What a scenario leaves for the tests that judge it (each harness run happens once, see `once`):
 * `turns` as JSON and as a person reads it, then a `rewind` and the oracle after it.
 */
function turnsThenRewind<T extends object>(p: ScratchProject, scenario: T) {
  const turns = turnsJson(p);
  const human = p.scalpel(['turns']);
  const rw = scalpelSaved(p, 'rewind.txt', ['rewind']);
  return { ...scenario, turns, human, rw, afterRewind: p.oracle() };
}

/** Two turns in `project`: the second a `gemini -p --resume latest`. The oracle before, after one, after two. */
async function twoTurns(project: ScratchProject): Promise<{ states: Oracle[]; sessions: (string | undefined)[] }> {
  const states: Oracle[] = [project.oracle()];
  const sessions: (string | undefined)[] = [];
  await withModel(project, scenarioScripts(TOOLS, project.dir).twoTurns(), async (model) => {
    const r1 = await gemini(project, model, 'first: add gen/one.ts', { debug: true });
    expectCleanRun(r1, model);
    states.push(project.oracle());
    const r2 = await gemini(project, model, 'second: change it again', { args: ['--resume', 'latest'], debug: true });
    expectCleanRun(r2, model);
    expect(model.script.finished()).toBe(true);
    // the resumed conversation's history reached the model (turn two's first request holds turn one)
    expect(model.main.find((q) => q.kind === 'main turn 1 step 0')!.json.contents.length).toBeGreaterThan(3);
    states.push(project.oracle());
    sessions.push(r1.sessionId, r2.sessionId);
  });
  return { states, sessions };
}

/**
 * A turn writes gen/x.ts and replaces in src/config.ts; the person edits gen/x.ts; then `rewind`
 * (refused), `rewind --force`, `rewind --undo`, each with the oracle after it.
 */
const refusal = once(async () => {
  const p = geminiProject('refusal');
  const before = p.oracle();
  await withModel(p, scenarioScripts(TOOLS, p.dir).refusal(), async (model) => {
    expectCleanRun(await gemini(p, model, 'write gen/x.ts', { debug: true }), model);
  });
  p.write('gen/x.ts', 'export const x = 1; // the person kept this and fixed it\n');
  const personal = p.oracle();
  const refused = scalpelSaved(p, 'refused.txt', ['rewind']);
  const afterRefused = p.oracle();
  const forced = scalpelSaved(p, 'forced.txt', ['rewind', '--force']);
  const afterForced = p.oracle();
  const personWorkAfterForced = (() => {
    try {
      expectPersonWork(p);
      return '';
    } catch (e) {
      return String(e);
    }
  })();
  const undo = scalpelSaved(p, 'undo.txt', ['rewind', '--undo']);
  const afterUndo = p.oracle();
  return { p, before, personal, refused, afterRefused, forced, afterForced, personWorkAfterForced, undo, afterUndo };
});

/**
 * PARALLEL calls (issue 19's first row): one answer with two run_shell_command calls, the first
 * slower (`sleep 10 && sed …`: parallel commands rarely take the same time; had both ended before
 * the first AfterTool's hook looked, its diff would have caught both), and a write_file; then one
 * answer with two read-only commands and a read_file. The logger holds each BeforeTool and
 * AfterTool 1 s, so overlapping intervals show the CLI running the hooks of parallel calls at
 * once. The harness's facts are checked inside the run; `turns` is read before any rewind.
 */
const parallel = once(async () => {
  const p = geminiProject('parallel', { logger: { holdMs: { BeforeTool: 1000, AfterTool: 1000 } } });
  const before = p.oracle();
  let list: LoggedPayload[] = [];
  await withModel(
    p,
    scenarioScripts(TOOLS, p.dir).parallel(gm.shell("sleep 10 && sed -i 's/blue/green/' docs/guide.md", 'recolour, slowly')),
    async (model) => {
      const r = await gemini(p, model, 'three things at once');
      expectCleanRun(r, model);
      expect(model.script.finished()).toBe(true);
      expectParallelCallsOnDisk(p);
      list = p.payloads();
      expectCommonFields(p, list);
      // in the order the CLI sent them (the payload's timestamp; the hook processes start irregularly)
      const sent = (x: LoggedPayload) => Date.parse(x.payload.timestamp);
      const tools = toolEvents(list).sort((a, b) => sent(a) - sent(b));
      const t0 = tools[0].start;
      p.artifact(
        'timeline.txt',
        tools
          .map(
            (x) =>
              `${x.event} ${x.payload.tool_name} start=${x.start - t0} end=${x.end - t0} sent=${Date.parse(x.payload.timestamp) - t0} ${JSON.stringify(x.payload.tool_input).slice(0, 80)}`,
          )
          .join('\n') + '\n',
      );
      // the CLI runs consecutive calls that are not edits (shell, read) at once, an edit (write_file, replace) alone:
      // BeforeTool, BeforeTool (their hooks at the same time, in the answer's order), the commands at once, each
      // one's AfterTool when it ends (the fast one's first), then the write's BeforeTool and AfterTool
      const first = (x: LoggedPayload) =>
        x.payload.tool_name === 'run_shell_command' ? String(x.payload.tool_input.command).split(' ')[0] : x.payload.tool_name;
      expect(tools.map((x) => `${x.event}:${first(x)}`)).toEqual([
        'BeforeTool:sleep',
        'BeforeTool:mkdir',
        'AfterTool:mkdir',
        'AfterTool:sleep',
        'BeforeTool:write_file',
        'AfterTool:write_file',
        expect.stringMatching(/^BeforeTool:(git|cat)$/),
        expect.stringMatching(/^BeforeTool:(git|cat)$/),
        expect.stringMatching(/^AfterTool:(git|cat)$/),
        expect.stringMatching(/^AfterTool:(git|cat)$/),
      ]);
      // at once: the CLI sent the second event (its payload's timestamp) before the first event's hooks
      // had ended (the logger holds 1 s after reading; the hook processes' own start-up is too
      // irregular on a loaded machine to compare their intervals)
      const atOnce = (a: LoggedPayload, b: LoggedPayload) => sent(b) < a.end;
      expect(atOnce(tools[0], tools[1]), 'the two BeforeTool events are sent at once').toBe(true);
      expect(atOnce(tools[6], tools[7]), 'the read-only pair’s BeforeTool events are sent at once').toBe(true);
      expect(atOnce(tools[8], tools[9]), 'the read-only pair’s AfterTool events are sent at once').toBe(true);
      // the slow command's AfterTool is sent about 10 s after the fast one's, the write only after both
      expect(sent(tools[3]) - sent(tools[2])).toBeGreaterThan(3000);
      expect(tools[4].start).toBeGreaterThanOrEqual(Math.max(tools[2].end, tools[3].end));
      // the AfterTool of each call carries the call's tool_input, and nothing else ties it to its BeforeTool
      for (const x of tools.filter((y) => y.event === 'AfterTool')) {
        expect(
          tools.filter((y) => y.event === 'BeforeTool' && JSON.stringify(y.payload.tool_input) === JSON.stringify(x.payload.tool_input)),
        ).toHaveLength(1);
      }
      // a successful command: llmContent names the output, no exit code, no error
      const cat = tools.find((x) => x.event === 'AfterTool' && x.payload.tool_input.command === 'cat README.md')!.payload.tool_response;
      p.artifact('cat-response.json', JSON.stringify(cat, null, 2));
      expect(cat.llmContent).toMatch(
        /^<untrusted_context>\nOutput: # project\n\nline 1 edited by the person\nline 2\nProcess Group PGID: \d+\n<\/untrusted_context>$/,
      );
      expect(Object.keys(cat)).toEqual(['llmContent', 'returnDisplay']);
      // what the model got back for the parallel calls: one user content, one functionResponse per call, ids the CLI made
      const responses = functionResponses(model.main[1]);
      expect(responses.map((x) => x.name)).toEqual(['run_shell_command', 'run_shell_command', 'write_file']);
      for (const x of responses) expect(x.id).toMatch(new RegExp(`^${x.name}_\\d+_\\d+$`));
    },
  );
  return turnsThenRewind(p, { p, before, list });
});

/**
 * Failed calls in one turn: a replace whose old_string is not in the file (the tool fails), a
 * command that changes a file and exits 3, a write that works. `turns` is read before the rewind.
 */
const failures = once(async () => {
  const p = geminiProject('failed calls');
  const f = (rel: string) => join(p.dir, rel);
  const before = p.oracle();
  let list: LoggedPayload[] = [];
  await withModel(
    p,
    [
      [
        { calls: [gm.replace(f('docs/guide.md'), 'no such text', 'x')] },
        { calls: [gm.shell("sed -i 's/8080/1234/' src/config.ts && exit 3", 'change then fail')] },
        { calls: [gm.write(f('gen/ok.ts'), 'export const ok = true;\n')] },
        { text: 'Done, with failures.' },
      ],
    ],
    async (model) => {
      const r = await gemini(p, model, 'fail in every way');
      expectCleanRun(r, model);
      expect(model.script.finished()).toBe(true);
      expect(p.read('src/config.ts')).toContain('1234');
      list = p.payloads();
      expectCommonFields(p, list);
      p.artifact(
        'failure-events.json',
        JSON.stringify(
          toolEvents(list).map((x) => ({ event: x.event, payload: x.payload })),
          null,
          2,
        ),
      );
      expect(events(list)).toEqual([
        'SessionStart',
        'BeforeAgent',
        'BeforeTool:replace',
        'AfterTool:replace',
        'BeforeTool:run_shell_command',
        'AfterTool:run_shell_command',
        'BeforeTool:write_file',
        'AfterTool:write_file',
        'AfterAgent',
        'SessionEnd',
      ]);
      const after = (tool: string) => list.find((x) => x.event === 'AfterTool' && x.payload.tool_name === tool)!.payload.tool_response;
      // the failed replace: tool_response.error { type, message }
      expect(after('replace')).toEqual({
        llmContent: expect.stringContaining("Could not find an exact match for 'old_string'"),
        returnDisplay: expect.stringContaining('Error: Could not find an exact match for old_string'),
        error: { type: 'edit_no_occurrence_found', message: expect.stringContaining("Could not find an exact match for 'old_string'") },
      });
      // the command that exited 3: no error; the exit code is only in llmContent's text (and returnDisplay's)
      expect(after('run_shell_command')).toEqual({
        llmContent: expect.stringMatching(
          /^<untrusted_context>\nOutput: \(empty\)\nExit Code: 3\nProcess Group PGID: \d+\n<\/untrusted_context>$/,
        ),
        returnDisplay: 'Command exited with code: 3',
      });
      // stream-json: the replace is an error, the command a success
      expect(r.toolResults.map((x) => x.status)).toEqual(['error', 'success', 'success']);
      expect(r.toolResults[0].error).toMatchObject({ type: 'edit_no_occurrence_found' });
      expect(r.toolResults[1].output).toBe('Command exited with code: 3');
      const responses = model.main.slice(1, 4).map((q) => functionResponses(q)[0]);
      p.artifact('function-responses.json', JSON.stringify(responses, null, 2));
      expect(responses[1].response).toEqual({ output: expect.stringContaining('Exit Code: 3') });
    },
  );
  return turnsThenRewind(p, { p, before, list });
});

describe(`Gemini CLI ${VERSION}, the real CLI, with git-scalpel installed as a devDependency`, () => {
  it('install wrote the project hook file: the hook client under $GEMINI_PROJECT_DIR, six events, named git-scalpel', () => {
    const p = makeProject({ harness: 'gemini', name: 'install', logger: false });
    const settings = JSON.parse(readFileSync(join(p.dir, '.gemini/settings.json'), 'utf8'));
    expect(Object.keys(settings)).toEqual(['hooks']);
    const groups = settings.hooks as Record<string, { matcher?: string; hooks: Record<string, unknown>[] }[]>;
    expect(Object.keys(groups)).toEqual(['BeforeAgent', 'BeforeTool', 'AfterTool', 'AfterAgent', 'SessionStart', 'SessionEnd']);
    for (const [event, g] of Object.entries(groups)) {
      expect(g).toHaveLength(1);
      expect(g[0].matcher).toBe(event === 'BeforeTool' || event === 'AfterTool' ? 'write_file|replace|run_shell_command' : undefined);
      expect(g[0].hooks).toEqual([
        {
          name: 'git-scalpel',
          type: 'command',
          command: 'sh $GEMINI_PROJECT_DIR/node_modules/git-scalpel/dist/git-scalpel-hook.sh hook gemini',
          timeout: 30000,
        },
      ]);
    }
    // nothing trusted yet (the isolated home has no trustedFolders.json): install says so, and how
    const out = p.install.stdout + p.install.stderr;
    expect(out).toContain('trust:   Gemini CLI will NOT run these hooks until you trust them');
    expect(out).toContain(`add "${p.dir}": "TRUST_FOLDER" to ${p.home}/.gemini/trustedFolders.json`);
    expect(scalpelStatus(p, 'gemini', 'status-untrusted.json')).toMatchObject({ live: 'no', trust: { trusted: 'no' }, lastEvent: null });
    // trusted as the dialog does it: status says the hooks will run, before any event
    setUpGeminiHome(p);
    expect(scalpelStatus(p, 'gemini', 'status-trusted.json')).toMatchObject({ live: 'yes', trust: { trusted: 'yes' }, lastEvent: null });
  });

  it.concurrent(
    'the main turn: write_file in new directories, replace over unstaged edits, sed -i, rm, git add -A; turns lists it, rewind gives back every byte',
    async () => {
      const p = geminiProject('main turn');
      const f = (rel: string) => join(p.dir, rel);
      const before = p.oracle();
      const r = await withModel(p, scenarioScripts(TOOLS, p.dir).mainTurn(), async (model) => {
        // as a person runs it: the CLI relaunches itself (a second Node process with a larger heap)
        const r = await gemini(p, model, 'Add the API client\nand tidy up the project', { relaunch: true });
        expectCleanRun(r, model);
        expect(model.script.finished()).toBe(true);
        expect(r.toolResults.map((x) => x.status)).toEqual(['success', 'success', 'success', 'success', 'success']);
        // the only other request: the model router's classifier (flash-lite, a JSON schema)
        expect(model.side.map((q) => q.url.split(':')[1])).toEqual(['generateContent']);
        expect(model.side[0].json.generationConfig.responseJsonSchema.required).toEqual(['complexity_reasoning', 'complexity_score']);
        p.artifact('tools.json', JSON.stringify(model.main[0].json.tools, null, 2));
        return r;
      });
      // what the agent did, seen by git
      expectMainTurnOnDisk(p);

      // what Gemini CLI really sent
      const list = p.payloads();
      expectCommonFields(p, list);
      expect(events(list)).toEqual([
        'SessionStart',
        'BeforeAgent',
        'BeforeTool:write_file',
        'AfterTool:write_file',
        'BeforeTool:replace',
        'AfterTool:replace',
        'BeforeTool:run_shell_command',
        'AfterTool:run_shell_command',
        'BeforeTool:run_shell_command',
        'AfterTool:run_shell_command',
        'BeforeTool:run_shell_command',
        'AfterTool:run_shell_command',
        'AfterAgent',
        'SessionEnd',
      ]);
      expect(new Set(list.map((x) => x.payload.session_id))).toEqual(new Set([r.sessionId]));
      const pl = (event: string, tool?: string, i = 0) =>
        list.filter((x) => x.event === event && (tool === undefined || x.payload.tool_name === tool))[i].payload;
      expect(pl('SessionStart').source).toBe('startup');
      expect(pl('BeforeAgent').prompt).toBe('Add the API client\nand tidy up the project');
      // prompt_response: the final text, then (0.61.0) every streamed chunk after the first again, joined by spaces
      // (Turn.getResponseText joins its debug responses, whose first already holds the merged text)
      const finalText = 'Done: client added, b raised, button red, legacy gone, all staged.';
      expect(pl('AfterAgent')).toMatchObject({
        prompt: 'Add the API client\nand tidy up the project',
        prompt_response: `${finalText} ${finalText.slice(Math.ceil(finalText.length / 2))}`,
        stop_hook_active: false,
      });
      expect(pl('SessionEnd').reason).toBe('exit');
      // tool_input is the call's args as the model sent them; AfterTool repeats it
      expect(pl('BeforeTool', 'write_file').tool_input).toEqual({
        file_path: f('gen/api/client.ts'),
        content: 'export const client = 1;\n',
      });
      expect(pl('BeforeTool', 'replace').tool_input).toEqual({
        file_path: f('src/app.ts'),
        instruction: 'make the change',
        old_string: 'export const b = 2;',
        new_string: 'export const b = 20;',
      });
      expect(pl('BeforeTool', 'run_shell_command').tool_input).toEqual({
        command: "sed -i 's/blue/red/' docs/guide.md",
        description: 'recolour the button',
      });
      for (const x of list.filter((y) => y.event === 'AfterTool'))
        expect(x.payload.tool_input).toEqual(list[list.indexOf(x) - 1].payload.tool_input);
      // tool_response: { llmContent, returnDisplay } (no error key on success)
      expect(pl('AfterTool', 'write_file').tool_response).toEqual({
        llmContent: `Successfully created and wrote to new file: ${f('gen/api/client.ts')}. Here is the updated code:\nexport const client = 1;\n`,
        returnDisplay: expect.objectContaining({
          fileName: 'client.ts',
          filePath: f('gen/api/client.ts'),
          originalContent: '',
          newContent: 'export const client = 1;\n',
          isNewFile: true,
          fileDiff: expect.any(String),
          diffStat: expect.any(Object),
        }),
      });
      expect(pl('AfterTool', 'replace').tool_response).toEqual({
        llmContent: expect.stringContaining(`Successfully modified file: ${f('src/app.ts')}`),
        returnDisplay: expect.objectContaining({
          fileName: 'app.ts',
          filePath: f('src/app.ts'),
          originalContent: PERSON_WORK.appWorktree,
          newContent: 'export const a = 10;\nexport const b = 20;\nexport const c = 30;\n',
          isNewFile: false,
        }),
      });
      expect(pl('AfterTool', 'run_shell_command').tool_response).toEqual({
        llmContent: expect.stringMatching(/^<untrusted_context>\nOutput: \(empty\)\nProcess Group PGID: \d+\n<\/untrusted_context>$/),
        returnDisplay: '',
      });

      // turns: one turn, labelled with the prompt's first line, every path the agent changed
      const turns = turnsJson(p);
      expectMainTurnListed(turns, `gemini-${r.sessionId}`);
      // one entry per call, its BeforeTool and AfterTool paired by tool, input and order (no call id);
      // a command's exit code read from llmContent ("Exit Code: N", absent when it is 0)
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
        { tool: 'write_file', outcome: 'ok', paths: ['gen/api/client.ts'], command: undefined, exitCode: undefined, toolUseId: undefined },
        { tool: 'replace', outcome: 'ok', paths: ['src/app.ts'], command: undefined, exitCode: undefined, toolUseId: undefined },
        {
          tool: 'run_shell_command',
          outcome: 'ok',
          paths: ['docs/guide.md'],
          command: "sed -i 's/blue/red/' docs/guide.md",
          exitCode: 0,
          toolUseId: undefined,
        },
        {
          tool: 'run_shell_command',
          outcome: 'ok',
          paths: ['old/legacy.txt'],
          command: 'rm old/legacy.txt',
          exitCode: 0,
          toolUseId: undefined,
        },
        {
          tool: 'run_shell_command',
          outcome: 'ok',
          paths: ['README.md', 'docs/guide.md', 'gen/api/client.ts', 'notes.txt', 'old/legacy.txt', 'src/app.ts'],
          command: 'git add -A',
          exitCode: 0,
          toolUseId: undefined,
        },
      ]);
      const keys = (turns[0].tools as ToolEntry[]).map((t) => t.call);
      expect(new Set(keys).size).toBe(5);
      for (const k of keys) expect(typeof k).toBe('string');
      expect(turns[0].rewind).toMatchObject({ refused: false });
      expect(p.scalpel(['turns']).stdout).toContain('"Add the API client"');
      // status: trusted (the folder is in trustedFolders.json), an event of this session arrived
      expect(scalpelStatus(p, 'gemini')).toMatchObject({
        live: 'yes',
        trust: { trusted: 'yes' },
        lastEvent: expect.objectContaining({ session: `gemini-${r.sessionId}` }),
      });

      expectMainTurnRewound(p, before);
    },
  );

  it.concurrent(
    'two turns (a second `gemini -p --resume latest`): turns lists both, rewind undoes the newest, then the other',
    async () => {
      const p = geminiProject('two turns');
      const { states, sessions } = await twoTurns(p);
      const list = p.payloads();
      expectCommonFields(p, list);
      p.artifact('sessions.json', JSON.stringify(sessions));
      expect(list.filter((x) => x.event === 'SessionStart').map((x) => x.payload.source)).toEqual(['startup', 'resume']);
      // --resume latest keeps the conversation's session_id, so both turns are one session's
      expect(sessions[0]).toBe(sessions[1]);
      expect(new Set(list.map((x) => x.payload.session_id))).toEqual(new Set([sessions[0]]));
      expectTwoTurnsRewoundOneByOne(p, states);
    },
  );

  it.concurrent('two turns: `rewind 1` undoes both at once', async () => {
    const p = geminiProject('two turns rewind 1');
    const { states } = await twoTurns(p);
    expectTwoTurnsRewoundByRewind1(p, states);
  });

  it.concurrent(
    'a refusal: the person edits a file the agent wrote after the turn; rewind exits 3 naming it and writes nothing; rewind --force succeeds',
    async () => {
      const s = await refusal();
      expect(s.refused.code).toBe(3);
      expect(s.refused.stderr + s.refused.stdout).toContain('gen/x.ts');
      expect(s.refused.stderr + s.refused.stdout).toContain('--force');
      expectSameOracle(s.afterRefused, s.personal, 'after the refused rewind');
      expect(s.forced.code, s.forced.stderr).toBe(0);
      expectSameOracle(s.afterForced, s.before, 'after rewind --force');
      expect(s.personWorkAfterForced).toBe('');
    },
  );

  // issue 19, third bullet: after `rewind --force` only `restore --session <harness session>`
  // brought the person's bytes back; What must hold 1: "a forced rewind prints that command"
  // (DESIGN I11: `rewind --undo` restores what the newest rewind, forced or not, replaced).
  it.concurrent('a forced rewind prints how to undo it, and `rewind --undo` brings the person’s edit back', async () => {
    const s = await refusal();
    expect(s.forced.code).toBe(0);
    expect(s.forced.stdout).toMatch(/^  FORCED   gen\/x\.ts \(worktree\): /m);
    expect(s.forced.stdout.endsWith('to undo this rewind: npx git-scalpel rewind --undo\n')).toBe(true);
    expect(s.undo.stdout).toContain('the rewound turns are back in `npx git-scalpel turns`');
    expect(s.undo.code, s.undo.stderr).toBe(0);
    expectSameOracle(s.afterUndo, s.personal, 'after rewind --undo');
  });

  it.concurrent(
    'parallel calls: what the hooks see (BeforeTool, BeforeTool at once, each AfterTool when its command ends, no call id)',
    async () => {
      const s = await parallel();
      // (the harness's facts were checked inside the run)
      expect(s.list.length).toBeGreaterThan(0);
    },
  );

  // issue 19, first bullet: Gemini CLI's parallel shell calls (BeforeTool, BeforeTool, AfterTool,
  // AfterTool, no call id) shared one baseline and the slow command's `sed` never joined the turn
  // (DESIGN I10: harnesses without call ids are paired by tool, input and order; each parallel
  // command has its own baseline).
  it.concurrent('parallel calls: turns lists both commands’ changes and the write; rewind gives back every byte', async () => {
    const s = await parallel();
    expect(s.turns[0].paths).toEqual(['docs/guide.md', 'gen/par.ts', 'tmp']);
    // each call once, paired with its own AfterTool; the slow command's baseline was taken before the
    // fast one ran, so it sees tmp/ too (what ran at once cannot be told apart); the read-only ones changed nothing
    const calls = (s.turns[0].tools as ToolEntry[]).map((t) => ({
      tool: t.tool,
      outcome: t.outcome,
      command: t.command,
      exitCode: t.exitCode,
      paths: t.paths,
    }));
    const byCommand = (c: string) => calls.filter((x) => x.command === c);
    expect(calls).toHaveLength(5);
    expect(byCommand("sleep 10 && sed -i 's/blue/green/' docs/guide.md")).toEqual([
      {
        tool: 'run_shell_command',
        outcome: 'ok',
        command: "sleep 10 && sed -i 's/blue/green/' docs/guide.md",
        exitCode: 0,
        paths: ['docs/guide.md', 'tmp'],
      },
    ]);
    expect(byCommand('mkdir -p tmp/out && echo generated > tmp/out/list.txt')).toEqual([
      {
        tool: 'run_shell_command',
        outcome: 'ok',
        command: 'mkdir -p tmp/out && echo generated > tmp/out/list.txt',
        exitCode: 0,
        paths: ['tmp'],
      },
    ]);
    expect(calls.filter((x) => x.tool === 'write_file')).toEqual([
      { tool: 'write_file', outcome: 'ok', command: undefined, exitCode: undefined, paths: ['gen/par.ts'] },
    ]);
    for (const c of ['git status --short', 'cat README.md'])
      expect(byCommand(c)).toEqual([{ tool: 'run_shell_command', outcome: 'ok', command: c, exitCode: 0, paths: [] }]);
    expect(s.rw.code, s.rw.stderr).toBe(0);
    expectSameOracle(s.afterRewind, s.before, 'after rewind');
  });

  it.concurrent('failed calls: rewind undoes the change of the command that exited 3 and the write, and nothing else', async () => {
    const s = await failures();
    expect(s.turns[0].paths).toEqual(expect.arrayContaining(['gen/ok.ts', 'src/config.ts']));
    expect(s.rw.code, s.rw.stderr).toBe(0);
    expectSameOracle(s.afterRewind, s.before, 'after rewind');
  });

  // issue 19, first bullet: "Gemini's `turns` lists each call twice (before and after never
  // paired); a shell command that exited 3 is recorded "ok" (the exit code is only in
  // `llmContent`)"; What must hold 2: "Tool outcomes as each harness really reports them (…
  // Gemini's `llmContent` exit codes); one line per call in `turns`".
  it.concurrent('failed calls: turns records each call once, the failed replace and the command that exited 3 as failed', async () => {
    const s = await failures();
    expect(outcomes(s.turns[0])).toEqual(['replace:failed', 'run_shell_command:failed', 'write_file:ok']);
    expect((s.turns[0].tools as ToolEntry[]).map((t) => t.exitCode)).toEqual([undefined, 3, undefined]);
    const lines = s.human.stdout.split('\n').filter((l) => l.trim().startsWith('tool:'));
    expect(lines).toHaveLength(3);
    expect(lines[1]).toContain('(failed, exit code 3');
  });

  // DESIGN I10: "a path joins when an agent's tool call changed it (its state after the call
  // differs from its state just before)". The replace whose old_string is not in docs/guide.md
  // changes nothing (its AfterTool says so: tool_response.error, edit_no_occurrence_found), so its
  // capture does not join the turn, and a person's later edit of that file is no refusal.
  it.concurrent('failed calls: the replace that failed changed nothing, so its file is not the turn’s', async () => {
    const s = await failures();
    expect(s.turns[0].paths).toEqual(['gen/ok.ts', 'src/config.ts']);
  });

  // issue 19, row "Gemini, or the generic form without a call id: the person fixes `a` between the
  // agent's calls" (DESIGN I10: what a person changed between tool calls is not the agent's; I5: a
  // path changed after the agent wrote it makes the rewind refuse, naming it).
  it.concurrent(
    "a person's fix between two of the agent's calls in one turn: rewind refuses naming the file and writes nothing",
    async () => {
      const p = geminiProject('person between calls');
      const f = (rel: string) => join(p.dir, rel);
      const fixed = '# guide\n\nThe colour of the button is red.\nThe person fixed this line by hand.\n';
      await withModel(
        p,
        [
          [
            { calls: [gm.replace(f('docs/guide.md'), 'blue', 'red')] },
            {
              before: () => {
                expect(p.read('docs/guide.md')).toBe('# guide\n\nThe colour of the button is red.\n');
                p.write('docs/guide.md', fixed);
              },
              calls: [gm.shell('mkdir -p gen && echo built > gen/out.txt', 'build')],
            },
            { text: 'Done.' },
          ],
        ],
        async (model) => {
          expectCleanRun(await gemini(p, model, 'recolour, then build', { debug: true }), model);
          expect(model.script.finished()).toBe(true);
        },
      );
      expect(p.read('docs/guide.md')).toBe(fixed);
      const personal = p.oracle();
      const r = scalpelSaved(p, 'rewind.txt', ['rewind']);
      expectSameOracle(p.oracle(), personal, 'after rewind');
      expect(r.code).toBe(3);
      expect(r.stderr).toMatch(/^  docs\/guide\.md \(worktree\): sealed .* \(the agent's last write\), found /m);
      expect(r.stderr).toContain('Nothing was written');
    },
  );

  it.concurrent('a folder that is not trusted: `gemini -p` refuses to start, no hook runs, nothing changes', async () => {
    const p = geminiProject('untrusted folder', { trust: false });
    const before = p.oracle();
    await withModel(p, [[{ calls: [gm.write(join(p.dir, 'gen/x.ts'), 'x\n')] }, { text: 'Done.' }]], async (model) => {
      const r = await gemini(p, model, 'write gen/x.ts', { timeoutMs: 120_000 });
      expect(r.timedOut).toBe(false);
      expect(r.code).not.toBe(0);
      expect(r.stderr).toContain('Gemini CLI is not running in a trusted directory');
      expect(model.requests).toEqual([]);
      p.artifact('exit.txt', `exit ${r.code}\n`);
    });
    expect(p.payloads()).toEqual([]);
    expectSameOracle(p.oracle(), before, 'after the refused start');
  });

  // Issue 19, What must hold 3 asks `turns` to warn when hooks are installed and no event arrived;
  // this records what the CLI itself does: nothing visible.
  it.concurrent(
    'hooks switched off (`hooksConfig.enabled: false` in ~/.gemini/settings.json): the turn runs, no hook runs, the CLI says nothing',
    async () => {
      const p = geminiProject('hooks disabled');
      setUpGeminiHome(p, { settings: { ...GEMINI_USER_SETTINGS, hooksConfig: { enabled: false } } });
      await withModel(p, [[{ calls: [gm.write(join(p.dir, 'gen/x.ts'), 'export const x = 1;\n')] }, { text: 'Done.' }]], async (model) => {
        const r = await gemini(p, model, 'write gen/x.ts');
        expect(r.code, r.stderr).toBe(0);
        expect(model.script.finished()).toBe(true);
        expect(r.stderr).not.toMatch(/hook/i);
      });
      expect(p.read('gen/x.ts')).toBe('export const x = 1;\n');
      expect(p.payloads()).toEqual([]);
      expect(turnsJson(p)).toEqual([]);
    },
  );

  it('no test failed on the harness side (so every it.fails above failed in the engine)', () => {
    expect(harnessFailures).toEqual([]);
  });
});
