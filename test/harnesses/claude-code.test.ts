/**
 * The real Claude Code CLI (the pinned native binary from the npm registry, in the harness cache),
 * driven by a scripted Anthropic API on 127.0.0.1, in a scratch project where a person has work in
 * progress and git-scalpel is a devDependency installed with `git-scalpel install claude-code`.
 * Every test asserts what DESIGN.md promises; git and the bytes on disk are the oracle. What the
 * harness really sent to its hooks is kept in test/harnesses/.payloads/claude-code/<test>/.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { existsSync, lstatSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  BASE_FILES,
  HARNESS_TEST_DIR,
  PERSON_WORK,
  expectSameOracle,
  harnessBinary,
  harnessPin,
  makeProject,
  runProcess,
  scalpelStatus,
  type LoggedPayload,
  type Oracle,
  type ProcResult,
  type ScratchProject,
  type Step,
} from './common.js';
import { CLAUDE_ENV, cc, startClaudeModel, toolResults, type ClaudeModel } from './claude-code.model.js';
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
  scalpelSaved,
  scenarioScripts,
  turnsJson,
  withScriptedModel,
  type FileTools,
  type ToolEntry,
} from './shared-checks.js';

const VERSION = harnessPin('claude-code').version;

/** Events git-scalpel does not install, logged too (to see what a denied or parallel call sends). */
const EXTRA_EVENTS = [
  'PermissionRequest',
  'Notification',
  'StopFailure',
  'SubagentStart',
  'PreCompact',
  'PostCompact',
  'UserPromptExpansion',
];

/** The ten events `install claude-code` writes (PermissionDenied and PostToolBatch: a refused call's only signals). */
const INSTALLED_EVENTS = [
  'UserPromptSubmit',
  'PreToolUse',
  'PostToolUse',
  'PostToolUseFailure',
  'PermissionDenied',
  'PostToolBatch',
  'Stop',
  'SubagentStop',
  'SessionStart',
  'SessionEnd',
];
const TOOL_MATCHER = 'Write|Edit|MultiEdit|NotebookEdit|Bash';

const DEFAULT_TOOLS = 'Write,Edit,Bash,Read';

/** Claude Code's tools for the shared scenario scripts. */
const TOOLS: FileTools = {
  write: cc.write,
  edit: (file, old, replacement) => cc.edit(file, old, replacement),
  shell: cc.bash,
  read: cc.read,
};

const BASE_CONFIG = BASE_FILES['src/config.ts'];

interface ClaudeRun extends ProcResult {
  /** stdout's stream-json lines. */
  lines: any[];
  /** The hook_response lines (--include-hook-events): every hook's exit code and output. */
  hookResponses: any[];
  sessionId: string | undefined;
}

let runCount = 0;

async function claude(
  p: ScratchProject,
  model: ClaudeModel,
  prompt: string,
  opts: { args?: string[]; allowed?: string } = {},
): Promise<ClaudeRun> {
  const n = ++runCount;
  const args = [
    '-p',
    prompt,
    '--allowedTools',
    opts.allowed ?? DEFAULT_TOOLS,
    '--output-format',
    'stream-json',
    '--verbose',
    '--include-hook-events',
    ...(opts.args ?? []),
  ];
  const r = await runProcess(harnessBinary('claude-code'), args, {
    cwd: p.dir,
    env: p.env({ ...CLAUDE_ENV, ANTHROPIC_BASE_URL: model.url }),
    timeoutMs: 120_000,
    artifactPrefix: join(p.artifacts, `claude-${n}`),
  });
  const lines = r.stdout
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l));
  const hookResponses = lines.filter((l) => l.type === 'system' && l.subtype === 'hook_response');
  const sessionId = lines.find((l) => l.type === 'system' && l.subtype === 'init')?.session_id;
  return Object.assign(r, { lines, hookResponses, sessionId });
}

/** The run ended normally, every scripted step was asked for, and no hook failed or printed anything. */
function expectCleanRun(r: ClaudeRun, model: ClaudeModel): void {
  expect(r.timedOut, 'claude timed out').toBe(false);
  expect(r.code, `claude exited ${r.code}: ${r.stderr}`).toBe(0);
  expect(model.errors).toEqual([]);
  expect(model.unexpected.map((q) => `${q.method} ${q.url}`)).toEqual([]);
  const failed = r.hookResponses.filter((h) => h.exit_code !== 0 || h.stderr || h.stdout);
  expect(failed, 'a hook failed or printed').toEqual([]);
  expect(r.lines.find((l) => l.type === 'result')?.subtype).toBe('success');
}

// Every payload's field types, by event (and tool), over the whole file: the report's source.
const shapes = new PayloadShapes();
afterAll(() => shapes.write(join(HARNESS_TEST_DIR, '.payloads/claude-code/shapes.json')));

/** The common fields every Claude Code hook payload carries, with the right types. */
function expectCommonFields(p: ScratchProject, list: LoggedPayload[]): void {
  for (const x of list) {
    expect(x.raw, `${x.event} payload is not JSON`).toBeUndefined();
    const pl = x.payload;
    expect(pl.hook_event_name).toBe(x.event);
    expect(pl.session_id).toMatch(/^[0-9a-f-]{36}$/);
    expect(typeof pl.transcript_path).toBe('string');
    expect(pl.cwd).toBe(p.dir);
    expect(x.env.CLAUDE_PROJECT_DIR).toBe(p.dir);
  }
  shapes.record(list);
}

/** PreToolUse and its PostToolUse / PostToolUseFailure share a tool_use_id; returns the pairs by id. */
function pairs(list: LoggedPayload[]): Map<string, { pre?: LoggedPayload; post?: LoggedPayload }> {
  const m = new Map<string, { pre?: LoggedPayload; post?: LoggedPayload }>();
  for (const x of list) {
    const id = x.payload?.tool_use_id;
    if (typeof id !== 'string') continue;
    const e = m.get(id) ?? {};
    if (x.event === 'PreToolUse') e.pre = x;
    else if (x.event === 'PostToolUse' || x.event === 'PostToolUseFailure') e.post = x;
    m.set(id, e);
  }
  return m;
}

/**
 * Failures of the harness side (the project, the model server, the CLI run and the checks made
 * inside `withModel`): an `it.fails` test must not count one of them as the engine's expected
 * failure, so each is also recorded here, and the file's last test requires none.
 */
const harnessFailures: string[] = [];

/** Starts the scripted model, runs `fn` (the harness runs and their checks), closes the model. */
function withModel<T>(p: ScratchProject, turns: Step[][], fn: (model: ClaudeModel) => Promise<T>): Promise<T> {
  return withScriptedModel(p, harnessFailures, () => startClaudeModel(turns, { logFile: join(p.artifacts, 'requests.jsonl') }), fn);
}

/** Two conversations turns in `project`: the second a `claude -p --continue`. The oracle before, after one, after two. */
async function twoTurns(project: ScratchProject): Promise<{ states: Oracle[]; sessions: (string | undefined)[] }> {
  const states: Oracle[] = [project.oracle()];
  const sessions: (string | undefined)[] = [];
  await withModel(project, scenarioScripts(TOOLS, project.dir).twoTurns(), async (model) => {
    const r1 = await claude(project, model, 'first: add gen/one.ts');
    expectCleanRun(r1, model);
    states.push(project.oracle());
    const r2 = await claude(project, model, 'second: change it again', { args: ['--continue'] });
    expectCleanRun(r2, model);
    expect(model.script.finished()).toBe(true);
    states.push(project.oracle());
    sessions.push(r1.sessionId, r2.sessionId);
  });
  return { states, sessions };
}

/** A turn writes gen/x.ts and edits src/config.ts; then the person edits gen/x.ts. */
async function refusalScenario(name: string): Promise<{ p: ScratchProject; before: Oracle; personal: Oracle }> {
  const p = makeProject({ harness: 'claude-code', name });
  const before = p.oracle();
  await withModel(p, scenarioScripts(TOOLS, p.dir).refusal(), async (model) => {
    expectCleanRun(await claude(p, model, 'write gen/x.ts'), model);
  });
  p.write('gen/x.ts', 'export const x = 1; // the person kept this and fixed it\n');
  return { p, before, personal: p.oracle() };
}

/**
 * One turn of failures: an Edit that -p mode denies (Edit is not in --allowedTools; there is
 * nobody to ask), after which the person makes a change of their own in that file by hand (the
 * state a rewind must give back: nothing of the agent's ran yet); an Edit whose old_string does
 * not match; a Bash that changes a file and exits 3; a Write that works.
 */
async function failedAndDenied(name: string): Promise<{ p: ScratchProject; afterPersonEdit: Oracle }> {
  const p = makeProject({ harness: 'claude-code', name, logger: { extraEvents: EXTRA_EVENTS } });
  const f = (rel: string) => join(p.dir, rel);
  let afterPersonEdit: Oracle | undefined;
  await withModel(
    p,
    [
      [
        { calls: [cc.edit(f('docs/guide.md'), 'blue', 'purple')] },
        {
          before: () => {
            p.write('docs/guide.md', '# guide\n\nThe colour of the button is blue. (the person wrote this by hand)\n');
            afterPersonEdit = p.oracle();
          },
          calls: [cc.edit(f('src/lib/util.ts'), 'no such text', 'x')],
        },
        { calls: [cc.bash("sed -i 's/8080/1234/' src/config.ts && exit 3", 'change then fail')] },
        { calls: [cc.write(f('gen/ok.ts'), 'export const ok = true;\n')] },
        { text: 'Done, with failures.' },
      ],
    ],
    async (model) => {
      const r = await claude(p, model, 'fail in every way', { allowed: 'Write,Bash,Read' });
      expectCleanRun(r, model);
      expect(model.script.finished()).toBe(true);
      p.artifact(
        'tool-results.json',
        JSON.stringify(
          model.main.slice(1).map((q) => [...toolResults(q).values()]),
          null,
          2,
        ),
      );
      const results = model.main.slice(1, 5).map((q) => [...toolResults(q).values()][0]);
      expect(results.map((x) => x.is_error ?? false)).toEqual([true, true, true, false]);
      expect(String(results[0].content)).toContain("you haven't granted it yet");
      expect(String(results[1].content)).toContain('String to replace not found in file');
      expect(String(results[2].content)).toBe('Exit code 3');
      expect(afterPersonEdit).toBeDefined();
    },
  );
  return { p, afterPersonEdit: afterPersonEdit! };
}

/** The hook command `install` writes for a devDependency: the warm server's sh client, run from the project's root. */
const CLIENT_COMMAND = 'sh "$CLAUDE_PROJECT_DIR"/node_modules/git-scalpel/dist/git-scalpel-hook.sh hook claude-code';

describe(`Claude Code ${VERSION}, the real binary, with git-scalpel installed as a devDependency`, () => {
  it('install wrote the project hook file with the project-relative command (the hook client)', () => {
    const p = makeProject({ harness: 'claude-code', name: 'install', logger: false });
    const settings = JSON.parse(readFileSync(join(p.dir, '.claude/settings.json'), 'utf8'));
    const cmds = Object.values(settings.hooks as Record<string, { hooks: { command: string }[] }[]>).flatMap((g) =>
      g.flatMap((x) => x.hooks.map((h) => h.command)),
    );
    expect(new Set(cmds)).toEqual(new Set([CLIENT_COMMAND]));
    expect(Object.keys(settings.hooks)).toEqual(INSTALLED_EVENTS);
    const groups = settings.hooks as Record<string, { matcher?: string; hooks: Record<string, unknown>[] }[]>;
    for (const [event, g] of Object.entries(groups)) {
      expect(g).toHaveLength(1);
      expect(g[0].matcher, event).toBe(
        ['PreToolUse', 'PostToolUse', 'PostToolUseFailure', 'PermissionDenied'].includes(event) ? TOOL_MATCHER : undefined,
      );
      expect(g[0].hooks).toEqual([{ type: 'command', command: CLIENT_COMMAND, timeout: 30 }]);
    }
    expect(p.install.code).toBe(0);
    expect(p.install.stdout).toContain(`events:  ${INSTALLED_EVENTS.join(', ')}`);
    // `claude -p` never asks about trust; what install can read of it is said, and how to give it
    expect(p.install.stdout).toContain('answer "Yes, I trust this folder"');
  });

  it.concurrent(
    'the main turn: Write in new directories, Edit over unstaged edits, sed -i, rm, git add -A; turns lists it, rewind gives back every byte',
    async () => {
      const p = makeProject({ harness: 'claude-code', name: 'main turn', logger: { extraEvents: EXTRA_EVENTS } });
      const f = (rel: string) => join(p.dir, rel);
      const before = p.oracle();
      const r = await withModel(p, scenarioScripts(TOOLS, p.dir).mainTurn(), async (model) => {
        const r = await claude(p, model, 'Add the API client\nand tidy up the project');
        expectCleanRun(r, model);
        expect(model.script.finished()).toBe(true);
        // every tool call succeeded (the tool_results the model got back)
        for (const q of model.main.slice(1))
          for (const [, res] of toolResults(q)) expect(res.is_error ?? false, JSON.stringify(res.content)).toBe(false);
        return r;
      });
      // what the agent did, seen by git
      expectMainTurnOnDisk(p);

      // what Claude Code really sent
      const list = p.payloads();
      expectCommonFields(p, list);
      expect(events(list)).toEqual([
        'SessionStart',
        'UserPromptSubmit',
        'PreToolUse:Write',
        'PostToolUse:Write',
        'PostToolBatch',
        'PreToolUse:Edit',
        'PostToolUse:Edit',
        'PostToolBatch',
        'PreToolUse:Bash',
        'PostToolUse:Bash',
        'PostToolBatch',
        'PreToolUse:Bash',
        'PostToolUse:Bash',
        'PostToolBatch',
        'PreToolUse:Bash',
        'PostToolUse:Bash',
        'PostToolBatch',
        'Stop',
        'SessionEnd',
      ]);
      const sessionIds = new Set(list.map((x) => x.payload.session_id));
      expect([...sessionIds]).toEqual([r.sessionId]);
      for (const [id, { pre, post }] of pairs(list)) {
        expect(id).toMatch(/^toolu_/);
        expect(pre && post, `tool_use_id ${id} has a PreToolUse and a PostToolUse`).toBeTruthy();
        expect(post!.payload.tool_input).toEqual(pre!.payload.tool_input);
        expect(typeof post!.payload.duration_ms).toBe('number');
      }
      const post = (tool: string, i = 0) => list.filter((x) => x.event === 'PostToolUse' && x.payload.tool_name === tool)[i].payload;
      expect(post('Write').tool_response).toMatchObject({
        type: 'create',
        filePath: f('gen/api/client.ts'),
        content: 'export const client = 1;\n',
        originalFile: null,
      });
      expect(post('Edit').tool_response).toMatchObject({
        filePath: f('src/app.ts'),
        oldString: 'export const b = 2;',
        newString: 'export const b = 20;',
        originalFile: PERSON_WORK.appWorktree,
        userModified: false,
      });
      expect(post('Bash').tool_response).toMatchObject({ stdout: '', stderr: '', interrupted: false });
      expect(post('Bash').tool_response).not.toHaveProperty('exit_code');
      const prompt = list.find((x) => x.event === 'UserPromptSubmit')!.payload;
      expect(prompt.prompt).toBe('Add the API client\nand tidy up the project');
      expect(list.find((x) => x.event === 'SessionStart')!.payload.source).toBe('startup');
      expect(list.find((x) => x.event === 'Stop')!.payload.stop_hook_active).toBe(false);

      // turns: one turn, labelled with the prompt's first line, every path the agent changed
      const turns = turnsJson(p);
      expectMainTurnListed(turns, `claude-${r.sessionId}`);
      // one entry per tool call, its start and end joined by the tool_use_id; what each changed
      // (PostToolUse of Bash carries no exit code: ok, none)
      const ids = list.filter((x) => x.event === 'PreToolUse').map((x) => x.payload.tool_use_id);
      expect(
        turns[0].tools.map((t: ToolEntry) => ({
          tool: t.tool,
          outcome: t.outcome,
          paths: t.paths,
          command: t.command,
          exitCode: t.exitCode,
          toolUseId: t.toolUseId,
          call: t.call,
        })),
      ).toEqual([
        {
          tool: 'Write',
          outcome: 'ok',
          paths: ['gen/api/client.ts'],
          command: undefined,
          exitCode: undefined,
          toolUseId: ids[0],
          call: ids[0],
        },
        { tool: 'Edit', outcome: 'ok', paths: ['src/app.ts'], command: undefined, exitCode: undefined, toolUseId: ids[1], call: ids[1] },
        {
          tool: 'Bash',
          outcome: 'ok',
          paths: ['docs/guide.md'],
          command: "sed -i 's/blue/red/' docs/guide.md",
          exitCode: undefined,
          toolUseId: ids[2],
          call: ids[2],
        },
        {
          tool: 'Bash',
          outcome: 'ok',
          paths: ['old/legacy.txt'],
          command: 'rm old/legacy.txt',
          exitCode: undefined,
          toolUseId: ids[3],
          call: ids[3],
        },
        {
          tool: 'Bash',
          outcome: 'ok',
          paths: ['README.md', 'docs/guide.md', 'gen/api/client.ts', 'notes.txt', 'old/legacy.txt', 'src/app.ts'],
          command: 'git add -A',
          exitCode: undefined,
          toolUseId: ids[4],
          call: ids[4],
        },
      ]);
      for (const t of turns[0].tools as ToolEntry[]) expect(t.durationMs).toEqual(expect.any(Number));
      expect(turns[0].rewind).toMatchObject({ refused: false, pruned: 2 });
      const human = p.scalpel(['turns']);
      expect(human.stdout).toContain('"Add the API client"');
      // status: the hooks ran (an event of this session arrived since they were installed)
      expect(scalpelStatus(p, 'claude-code')).toMatchObject({
        live: 'yes',
        lastEvent: expect.objectContaining({ session: `claude-${r.sessionId}` }),
      });

      expectMainTurnRewound(p, before);
    },
  );

  it.concurrent(
    'two separate sessions (two `claude -p` runs): a plain rewind finds the newest turn of the worktree, then the older one',
    async () => {
      const p = makeProject({ harness: 'claude-code', name: 'two sessions' });
      const f = (rel: string) => join(p.dir, rel);
      const v0 = p.oracle();
      let v1: Oracle | undefined;
      await withModel(
        p,
        [
          [{ calls: [cc.write(f('gen/a.ts'), 'export const a = 1;\n'), cc.bash('git add gen/a.ts src/config.ts')] }, { text: 'One.' }],
          [
            { calls: [cc.write(f('gen/a.ts'), 'export const a = 2;\n'), cc.bash("sed -i 's/colour/color/' docs/guide.md")] },
            { text: 'Two.' },
          ],
        ],
        async (model) => {
          const r1 = await claude(p, model, 'session one');
          expectCleanRun(r1, model);
          v1 = p.oracle();
          const r2 = await claude(p, model, 'session two');
          expectCleanRun(r2, model);
          expect(r2.sessionId).not.toBe(r1.sessionId);
          // a Write over a file that exists (no Read first needed in this version): type "update", originalFile the old text
          const writes = p.payloads().filter((x) => x.event === 'PostToolUse' && x.payload.tool_name === 'Write');
          expect(writes.map((x) => x.payload.tool_response.type)).toEqual(['create', 'update']);
          expect(writes[1].payload.tool_response).toMatchObject({
            originalFile: 'export const a = 1;\n',
            content: 'export const a = 2;\n',
          });
          expect(model.script.finished()).toBe(true);
        },
      );
      const turns = turnsJson(p);
      expect(turns.map((t: { label: string }) => t.label)).toEqual(['session two', 'session one']);
      expect(new Set(turns.map((t: { session: string }) => t.session)).size).toBe(2);
      expectRewoundTo(p, v1!, 'after the first rewind', { artifact: 'rewind-1.txt' });
      expectRewoundTo(p, v0, 'after the second rewind', { artifact: 'rewind-2.txt' });
      expectPersonWork(p);
    },
  );

  it.concurrent('parallel tool calls: two Bash commands and a Write in one assistant message', async () => {
    // the logger holds each PreToolUse 1.5 s: overlapping intervals mean the harness runs the hooks of parallel calls at once
    const p = makeProject({
      harness: 'claude-code',
      name: 'parallel',
      logger: { extraEvents: EXTRA_EVENTS, holdMs: { PreToolUse: 1500 } },
    });
    const before = p.oracle();
    await withModel(
      p,
      scenarioScripts(TOOLS, p.dir).parallel(cc.bash("sed -i 's/blue/green/' docs/guide.md", 'recolour')),
      async (model) => {
        const r = await claude(p, model, 'three things at once');
        expectCleanRun(r, model);
        expect(model.script.finished()).toBe(true);
      },
    );
    expectParallelCallsOnDisk(p);
    const list = p.payloads();
    expectCommonFields(p, list);
    const tools = list.filter((x) => x.event === 'PreToolUse' || x.event === 'PostToolUse' || x.event === 'PostToolUseFailure');
    p.artifact(
      'timeline.txt',
      tools
        .map(
          (x) =>
            `${x.event} ${x.payload.tool_name} ${x.payload.tool_use_id} start=${x.start - tools[0].start} end=${x.end - tools[0].start} ${JSON.stringify(x.payload.tool_input).slice(0, 80)}`,
        )
        .join('\n') + '\n',
    );
    for (const [id, { pre, post }] of pairs(list)) expect(pre && post, `tool_use_id ${id} paired`).toBeTruthy();
    // Claude Code runs the calls that write one after another (Pre, Post, Pre, Post … in the order
    // the message lists them), and read-only ones at once: their PreToolUse hooks run at the same time
    expect(tools.slice(0, 6).map((x) => `${x.event}:${x.payload.tool_name}`)).toEqual([
      'PreToolUse:Bash',
      'PostToolUse:Bash',
      'PreToolUse:Bash',
      'PostToolUse:Bash',
      'PreToolUse:Write',
      'PostToolUse:Write',
    ]);
    expect(tools.slice(0, 6).every((x, i, a) => i === 0 || a[i - 1].end <= x.start)).toBe(true);
    const [ro1, ro2] = tools.filter((x) => x.event === 'PreToolUse' && /^(git status|cat )/.test(x.payload.tool_input.command));
    expect(ro1.start < ro2.end && ro2.start < ro1.end, 'the read-only calls’ PreToolUse hooks overlap').toBe(true);
    expect(list.filter((x) => x.event === 'PostToolBatch')).toHaveLength(2);
    // a directory the command created joins as itself
    expect(turnsJson(p)[0].paths).toEqual(['docs/guide.md', 'gen/par.ts', 'tmp']);
    expectRewoundTo(p, before, 'after rewind');
    expectPersonWork(p);
  });

  it.concurrent(
    'writes through symlinks: Write and Edit of a link, a shell redirection through it, a Write beneath a symlinked directory',
    async () => {
      const p = makeProject({
        harness: 'claude-code',
        name: 'symlink write',
        logger: { extraEvents: EXTRA_EVENTS },
        files: { 'config-link': { link: 'src/config.ts' }, srclink: { link: 'src' } },
      });
      const f = (rel: string) => join(p.dir, rel);
      const before = p.oracle();
      await withModel(
        p,
        [
          [
            { calls: [cc.write(f('config-link'), 'export const mode = "written";\n')] },
            { calls: [cc.edit(f('config-link'), 'development', 'edited')] },
            { calls: [cc.bash(`printf 'export const mode = "shell";\\n' > config-link`, 'write through the link')] },
            { calls: [cc.write(f('srclink/new.ts'), 'export const viaLink = 1;\n')] },
            { text: 'Done.' },
          ],
        ],
        async (model) => {
          const r = await claude(p, model, 'write through the links');
          expect(r.code, r.stderr).toBe(0);
          expect(model.script.finished()).toBe(true);
          p.artifact(
            'tool-results.json',
            JSON.stringify(
              model.main.slice(1).map((q) => [...toolResults(q).values()]),
              null,
              2,
            ),
          );
          const results = model.main.slice(1, 5).map((q) => [...toolResults(q).values()][0]);
          // Claude Code itself refuses to Write or Edit a symbolic link (after PreToolUse ran)
          for (const x of results.slice(0, 2)) {
            expect(x.is_error).toBe(true);
            expect(String(x.content)).toContain('it is a symbolic link');
          }
          expect(results[2].is_error ?? false).toBe(false);
          // a Write beneath a symlinked directory runs (git-scalpel captures it at its target, src/new.ts)
          expect(results[3].is_error ?? false).toBe(false);
          expect(String(results[3].content)).toContain(`File created successfully at: ${f('srclink/new.ts')}`);
          expect(r.hookResponses.filter((h) => h.exit_code !== 0)).toEqual([]);
        },
      );
      const list = p.payloads();
      expectCommonFields(p, list);
      p.artifact('events.txt', events(list).join('\n') + '\n');
      // the calls Claude Code refused get a PreToolUse and no PostToolUse / PostToolUseFailure: their batch's PostToolBatch ends them
      expect(events(list).filter((e) => e.startsWith('Pre') || e.startsWith('Post'))).toEqual([
        'PreToolUse:Write',
        'PostToolBatch',
        'PreToolUse:Edit',
        'PostToolBatch',
        'PreToolUse:Bash',
        'PostToolUse:Bash',
        'PostToolBatch',
        'PreToolUse:Write',
        'PostToolUse:Write',
        'PostToolBatch',
      ]);
      p.artifact(
        'after-turn.json',
        JSON.stringify({
          linkIsLink: lstatSync(f('config-link')).isSymbolicLink(),
          target: p.read('src/config.ts'),
          viaLink: existsSync(f('src/new.ts')),
        }),
      );
      expect(lstatSync(f('config-link')).isSymbolicLink()).toBe(true);
      expect(lstatSync(f('srclink')).isSymbolicLink()).toBe(true);
      expect(p.read('src/config.ts')).toBe('export const mode = "shell";\n');
      expect(p.read('src/new.ts')).toBe('export const viaLink = 1;\n');
      // DESIGN I10: a write through a symlink is the target's. The refused Write and Edit changed nothing (denied);
      // the redirection through config-link changed src/config.ts; the Write beneath srclink/ made src/new.ts
      const t = turnsJson(p)[0];
      expect(t.paths).toEqual(['src/config.ts', 'src/new.ts']);
      expect(t.tools.map((x: ToolEntry) => `${x.tool}:${x.outcome}:${x.paths.join(',')}`)).toEqual([
        'Write:denied:src/config.ts,config-link',
        'Edit:denied:src/config.ts,config-link',
        'Bash:ok:src/config.ts',
        'Write:ok:src/new.ts',
      ]);
      expectRewoundTo(p, before, 'after rewind');
    },
  );

  it.concurrent(
    'the MCP tools (`install claude-code --mcp`): apply with a failing check rolls back, apply, snapshot and restore, alongside the hooks',
    async () => {
      const p = makeProject({ harness: 'claude-code', name: 'mcp tools', alsoInstall: [['--mcp']] });
      const mcp = JSON.parse(readFileSync(join(p.dir, '.mcp.json'), 'utf8'));
      // never through npx: sh looks for node_modules/.bin/git-scalpel in the session's directory and each one above it
      expect(mcp.mcpServers['git-scalpel']).toMatchObject({
        type: 'stdio',
        command: 'sh',
        args: ['-c', expect.stringContaining('node_modules/.bin/git-scalpel'), 'git-scalpel', 'mcp'],
      });
      expect(JSON.stringify(mcp)).not.toMatch(/\bnpx\b/);
      const before = p.oracle();
      const patch = [
        'diff --git a/docs/guide.md b/docs/guide.md',
        '--- a/docs/guide.md',
        '+++ b/docs/guide.md',
        '@@ -1,3 +1,3 @@',
        ' # guide',
        ' ',
        '-The colour of the button is blue.',
        '+The colour of the button is teal.',
        '',
      ].join('\n');
      const tool = (name: string, input: Record<string, unknown>) => cc.tool(`mcp__git-scalpel__${name}`, input);
      await withModel(
        p,
        [
          [
            { calls: [tool('apply', { patch, check: 'false', label: 'teal, checked' })] },
            { calls: [tool('apply', { patch, check: 'true', label: 'teal' })] },
            { calls: [tool('snapshot', { paths: ['src/config.ts'], label: 'before the port change' })] },
            { calls: [cc.bash("sed -i 's/8080/7070/' src/config.ts", 'change the port')] },
            { calls: [tool('restore', {})] },
            { calls: [tool('list', {})] },
            { text: 'Done.' },
          ],
        ],
        async (model) => {
          const r = await claude(p, model, 'use the git-scalpel tools', { allowed: `${DEFAULT_TOOLS},mcp__git-scalpel` });
          expectCleanRun(r, model);
          expect(model.script.finished()).toBe(true);
          const results = model.main.slice(1, 7).map((q) => [...toolResults(q).values()][0]);
          p.artifact('tool-results.json', JSON.stringify(results, null, 2));
          expect(results.map((x) => x.is_error ?? false)).toEqual([false, false, false, false, false, false]);
          // what the model gets back from an MCP tool is the tool's structuredContent, as JSON text (not its text content)
          const json = (i: number) => JSON.parse(String(results[i].content));
          expect(json(0)).toMatchObject({ session: 'mcp', rolledBack: true, check: { code: 1 }, files: [{ path: 'docs/guide.md' }] });
          expect(json(1)).toMatchObject({ session: 'mcp', rolledBack: false, check: { code: 0 }, files: [{ path: 'docs/guide.md' }] });
          expect(json(2)).toMatchObject({ session: 'mcp', paths: ['src/config.ts'], label: 'before the port change' });
          expect(json(4)).toMatchObject({ session: 'mcp', restored: [json(2).id], paths: [{ path: 'src/config.ts' }] });
          expect(json(5).snapshots.map((x: { id: string }) => x.id)).toEqual([json(1).snapshot]);
          // `claude -p` connects MCP servers without waiting for them (MCP_CONNECTION_NONBLOCKING is on by
          // default): init says "pending" or "connected", whichever came first (through npx it was always
          // "pending"; the server itself now starts in well under a second); never "failed"
          const servers = r.lines.find((l) => l.subtype === 'init').mcp_servers;
          expect(servers).toEqual([{ name: 'git-scalpel', status: expect.stringMatching(/^(pending|connected)$/), source: 'project' }]);
        },
      );
      expect(p.read('docs/guide.md')).toContain('teal');
      expect(p.read('src/config.ts')).toBe(BASE_CONFIG);
      // the patch applied through MCP is on the MCP session's stack; the turn holds only what the hooks saw
      const list = JSON.parse(p.scalpel(['list', '--session', 'mcp', '--json']).stdout).data;
      expect(list).toHaveLength(1);
      const rw = scalpelSaved(p, 'rewind.txt', ['rewind']);
      expect(rw.code, rw.stderr).toBe(0);
      const rs = scalpelSaved(p, 'restore-mcp.txt', ['restore', '--session', 'mcp']);
      expect(rs.code, rs.stderr).toBe(0);
      expectSameOracle(p.oracle(), before, 'after rewind and restore --session mcp');
    },
  );

  // issue 19, first row of the table: a person's unstaged deletion, then any shell command (even `ls`)
  // (DESIGN I10: what already differed before the call is not the turn's; a read-only command adds nothing).
  it.concurrent("a person's unstaged deletion, then a read-only command: rewind keeps the file deleted", async () => {
    const p = makeProject({ harness: 'claude-code', name: 'person deletion', personWork: (dir) => rmSync(join(dir, 'old/legacy.txt')) });
    const before = p.oracle();
    await withModel(
      p,
      [
        [
          { calls: [cc.bash('ls', 'look around')] },
          { calls: [cc.write(join(p.dir, 'gen/a.ts'), 'export const a = 1;\n')] },
          { text: 'Done.' },
        ],
      ],
      async (model) => {
        expectCleanRun(await claude(p, model, 'look, then write'), model);
      },
    );
    const t = turnsJson(p)[0];
    expect(t.paths).toEqual(['gen/a.ts']);
    expect(t.tools.map((x: ToolEntry) => `${x.tool}:${x.outcome}:${x.paths.join(',')}`)).toEqual(['Bash:ok:', 'Write:ok:gen/a.ts']);
    const r = expectRewoundTo(p, before, 'after rewind');
    expect(r.stdout).not.toContain('old/legacy.txt');
    expect(existsSync(join(p.dir, 'old/legacy.txt'))).toBe(false);
  });

  // issue 19, second bullet: files a shell command created inside ignored directories (DESIGN I11: an
  // ignored directory the turn created from nothing is removed with the turn; what a rewind leaves
  // inside an ignored directory that existed is named, LEFT, and listed in `left`).
  it.concurrent(
    'a command creates files in ignored directories: a new one goes with the turn, one left in an existing one is named',
    async () => {
      const p = makeProject({
        harness: 'claude-code',
        name: 'ignored dirs',
        files: { '.gitignore': '.env\nnode_modules/\n*.log\nbuild/\ndist/\ncache/\n' },
        personWork: (dir) => {
          mkdirSync(join(dir, 'cache'));
          writeFileSync(join(dir, 'cache/old.bin'), 'cached\n');
        },
      });
      const before = p.oracle();
      await withModel(
        p,
        [
          [
            {
              calls: [
                cc.bash(
                  'mkdir -p dist build/out && echo b > dist/bundle.js && echo a > build/out/app.js && echo n > cache/new.bin',
                  'build',
                ),
              ],
            },
            { text: 'Built.' },
          ],
        ],
        async (model) => {
          expectCleanRun(await claude(p, model, 'build it'), model);
        },
      );
      expect(p.read('dist/bundle.js')).toBe('b\n');
      const t = turnsJson(p)[0];
      expect(t.paths).toEqual(['build', 'dist']);
      const dry = scalpelSaved(p, 'rewind-dry-run.json', ['rewind', '--dry-run', '--json']);
      expect(dry.code, dry.stderr).toBe(0);
      expect(JSON.parse(dry.stdout).data).toMatchObject({ dryRun: true, left: ['cache/new.bin'], uncovered: [] });
      const r = scalpelSaved(p, 'rewind.txt', ['rewind']);
      expect(r.code, r.stderr).toBe(0);
      expect(r.stdout).toMatch(/^  LEFT     cache\/new\.bin: /m);
      expect(r.stdout).toContain('to undo this rewind: npx git-scalpel rewind --undo');
      expect(existsSync(join(p.dir, 'dist'))).toBe(false);
      expect(existsSync(join(p.dir, 'build'))).toBe(false);
      rmSync(join(p.dir, 'cache/new.bin'));
      expectSameOracle(p.oracle(), before, 'after rewind (and removing the named cache/new.bin)');
    },
  );

  // issue 19, row "turn 1 writes `a`, the person edits `a`, turn 2 writes `a`" (DESIGN I10: a rewind
  // over several turns checks each turn's sealed state against the state the next turn found).
  it.concurrent('turn 1 writes a file, the person edits it, turn 2 writes it again: `rewind 1` refuses and writes nothing', async () => {
    const p = makeProject({ harness: 'claude-code', name: 'person between turns' });
    const f = (rel: string) => join(p.dir, rel);
    await withModel(
      p,
      [
        [{ calls: [cc.write(f('gen/a.ts'), 'export const a = 1;\n')] }, { text: 'One.' }],
        [{ calls: [cc.bash("echo '// turn 2' >> gen/a.ts", 'touch it again')] }, { text: 'Two.' }],
      ],
      async (model) => {
        expectCleanRun(await claude(p, model, 'turn one'), model);
        p.write('gen/a.ts', 'export const a = 1; // the person\n');
        expectCleanRun(await claude(p, model, 'turn two', { args: ['--continue'] }), model);
      },
    );
    expect(p.read('gen/a.ts')).toBe('export const a = 1; // the person\n// turn 2\n');
    const personal = p.oracle();
    const r = scalpelSaved(p, 'rewind-1.txt', ['rewind', '1']);
    expectSameOracle(p.oracle(), personal, 'after rewind 1');
    expect(r.code).toBe(3);
    expect(r.stdout + r.stderr).toContain('gen/a.ts');
    expect(r.stdout + r.stderr).toContain('Nothing was written');
  });

  it.concurrent(
    'two turns (a second `claude -p --continue`): one session, turns lists both, rewind undoes the newest, then the other',
    async () => {
      const p = makeProject({ harness: 'claude-code', name: 'two turns', logger: { extraEvents: EXTRA_EVENTS } });
      const { states, sessions } = await twoTurns(p);
      const list = p.payloads();
      expectCommonFields(p, list);
      p.artifact('sessions.json', JSON.stringify(sessions));
      const starts = list.filter((x) => x.event === 'SessionStart').map((x) => x.payload.source);
      expect(starts).toEqual(['startup', 'resume']);
      // --continue keeps the conversation's session_id (2.1.332), so both turns are one session's
      expect(sessions[0]).toBe(sessions[1]);
      expect(new Set(list.map((x) => x.payload.session_id))).toEqual(new Set([sessions[0]]));
      expectTwoTurnsRewoundOneByOne(p, states);
    },
  );

  it.concurrent('two turns: `rewind 1` undoes both at once', async () => {
    const p = makeProject({ harness: 'claude-code', name: 'two turns rewind 1' });
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

  // issue 19, third bullet: after `rewind --force` only `restore --session claude-<uuid>` brought the
  // person's bytes back; What must hold 1: "a forced rewind prints that command" (DESIGN I11:
  // `rewind --undo` restores what the newest rewind, forced or not, replaced).
  it.concurrent('a forced rewind prints how to undo it, and `rewind --undo` brings the person’s edit back', async () => {
    const { p, before, personal } = await refusalScenario('refusal undo');
    const forced = expectRewoundTo(p, before, 'after rewind --force', { args: ['--force'], artifact: 'forced.txt' });
    expect(forced.stdout).toMatch(/^  FORCED   gen\/x\.ts \(worktree\): /m);
    expect(forced.stdout.endsWith('to undo this rewind: npx git-scalpel rewind --undo\n')).toBe(true);
    // the state the forced rewind replaced is not on the session's stack: `rewind --undo` is the way back
    expect(JSON.parse(p.scalpel(['turns', '--json']).stdout).data).toEqual([]);
    expect(p.scalpel(['turns']).stdout).toContain('undo it with: npx git-scalpel rewind --undo');
    expectRewoundTo(p, personal, 'after rewind --undo', { args: ['--undo'], artifact: 'undo.txt' });
    // the undone rewind's turn is back: forced again, with --json this time, and undone again
    expect(turnsJson(p).map((t: { turn: number }) => t.turn)).toEqual([1]);
    const again = expectRewoundTo(p, before, 'after the second rewind --force', {
      args: ['--force', '--json'],
      artifact: 'forced-again.json',
    });
    expect(JSON.parse(again.stdout).data).toMatchObject({
      dryRun: false,
      undo: 'npx git-scalpel rewind --undo',
      savedAs: expect.any(String),
      conflicts: [expect.objectContaining({ path: 'gen/x.ts' })],
    });
    expectRewoundTo(p, personal, 'after the second rewind --undo', { args: ['--undo'], artifact: 'undo-again.txt' });
  });

  it.concurrent(
    'failed and denied tool calls: the events each really sends; turns records the failure and only what the agent changed',
    async () => {
      const { p } = await failedAndDenied('failed and denied');
      const list = p.payloads();
      expectCommonFields(p, list);
      p.artifact('events.txt', events(list).join('\n') + '\n');
      p.artifact(
        'failure-events.json',
        JSON.stringify(
          list
            .filter((x) => !/^(SessionStart|SessionEnd|UserPromptSubmit|Stop)$/.test(x.event))
            .map((x) => ({ event: x.event, payload: x.payload })),
          null,
          2,
        ),
      );
      // the denied Edit: PreToolUse (git-scalpel captures), PermissionRequest, then no PostToolUse,
      // PostToolUseFailure or PermissionDenied: only PostToolBatch carries the denial, as text;
      // the Edit whose old_string does not match fails validation before any hook
      expect(events(list)).toEqual([
        'SessionStart',
        'UserPromptSubmit',
        'PreToolUse:Edit',
        'PermissionRequest:Edit',
        'PostToolBatch',
        'PostToolBatch',
        'PreToolUse:Bash',
        'PostToolUseFailure:Bash',
        'PostToolBatch',
        'PreToolUse:Write',
        'PostToolUse:Write',
        'PostToolBatch',
        'Stop',
        'SessionEnd',
      ]);
      const batches = list.filter((x) => x.event === 'PostToolBatch').map((x) => x.payload.tool_calls);
      const deniedId = list.find((x) => x.event === 'PreToolUse' && x.payload.tool_name === 'Edit')!.payload.tool_use_id;
      expect(batches[0]).toEqual([
        expect.objectContaining({
          tool_name: 'Edit',
          tool_use_id: deniedId,
          tool_response: expect.stringContaining("you haven't granted it yet"),
        }),
      ]);
      expect(batches[1]).toEqual([
        expect.objectContaining({ tool_name: 'Edit', tool_response: expect.stringContaining('String to replace not found') }),
      ]);
      // the Bash that exits 3: PreToolUse, then PostToolUseFailure with error "Exit code 3" (no PostToolUse, no tool_response)
      const bash = list.filter((x) => x.payload.tool_name === 'Bash');
      expect(bash[1].payload).toMatchObject({ error: 'Exit code 3', is_interrupt: false, tool_use_id: bash[0].payload.tool_use_id });
      expect(typeof bash[1].payload.duration_ms).toBe('number');
      expect(bash[1].payload).not.toHaveProperty('tool_response');

      // turns: one entry per call. The denied Edit (its PostToolBatch without a PostToolUse) is denied
      // and changed nothing; the Edit that failed validation sent no hook; the Bash failed with exit code 3
      // (PostToolUseFailure's "Exit code 3") and its change is the turn's
      const t = turnsJson(p)[0];
      expect(
        t.tools.map((x: ToolEntry) => ({ tool: x.tool, outcome: x.outcome, paths: x.paths, exitCode: x.exitCode, toolUseId: x.toolUseId })),
      ).toEqual([
        { tool: 'Edit', outcome: 'denied', paths: ['docs/guide.md'], exitCode: undefined, toolUseId: deniedId },
        { tool: 'Bash', outcome: 'failed', paths: ['src/config.ts'], exitCode: 3, toolUseId: bash[0].payload.tool_use_id },
        {
          tool: 'Write',
          outcome: 'ok',
          paths: ['gen/ok.ts'],
          exitCode: undefined,
          toolUseId: list.find((x) => x.event === 'PreToolUse' && x.payload.tool_name === 'Write')!.payload.tool_use_id,
        },
      ]);
      expect(t.paths).toEqual(['gen/ok.ts', 'src/config.ts']);
      const human = scalpelSaved(p, 'turns.txt', ['turns']);
      expect(human.stdout).toContain('(failed, exit code 3');
      expect(human.stdout).toContain('(denied');
    },
  );

  // issue 19, row "Claude Code: the person denies an Edit at the permission prompt and makes the
  // change by hand" (DESIGN I10: a call the person denied or that never ran changed nothing).
  it.concurrent(
    'failed and denied tool calls: rewind undoes the failed Bash’s change and the Write, and keeps the person’s hand edit of the denied Edit’s file',
    async () => {
      const { p, afterPersonEdit } = await failedAndDenied('failed and denied rewind');
      expectRewoundTo(p, afterPersonEdit, 'after rewind');
    },
  );

  it('no test failed on the harness side (so every it.fails above failed in the engine)', () => {
    expect(harnessFailures).toEqual([]);
  });
});
