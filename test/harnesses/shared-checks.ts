/**
 * What the harness test files (claude-code, codex, gemini) check alike: each runs its own harness
 * for a scenario (the main turn, two turns, a refusal, parallel calls) and hands the project and
 * the states it recorded to these checks, so every harness is held to the same promises.
 *
 *   const shapes = new PayloadShapes();                 // field types of every payload, per file
 *   afterAll(() => shapes.write(join(HARNESS_TEST_DIR, '.payloads/<harness>/shapes.json')));
 *   withScriptedModel(p, harnessFailures, () => startXModel(...), async (model) => ...)
 *   expectMainTurnOnDisk(p); expectMainTurnListed(turnsJson(p), session); expectMainTurnRewound(p, before)
 *   expectTwoTurnsRewoundOneByOne(p, states); expectTwoTurnsRewoundByRewind1(p, states)
 *   expectRefusedThenForced(p, before, personal)
 *   expectParallelCallsOnDisk(p); expectRewoundTo(p, before, 'after rewind')
 *   scenarioScripts(tools, p.dir).mainTurn()           // the same model script for every harness with file tools
 */
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { expect } from 'vitest';
import {
  PERSON_WORK,
  describeDifference,
  expectSameOracle,
  type LoggedPayload,
  type Oracle,
  type ScratchProject,
  type Step,
  type SyncRun,
  type ToolCall,
} from './common.js';

/** One tool call as `turns --json` lists it (the engine's own type). */
export type { ToolCall as ToolEntry } from '../../src/index.js';

// ---------------------------------------------------------------------------------------------
// Reading what a run left

/** Every payload's field types, by event (and tool), over a whole test file: the report's source. */
export class PayloadShapes {
  private readonly shapes: Record<string, Record<string, Set<string>>> = {};

  record(list: LoggedPayload[]): void {
    for (const x of list) {
      const key = x.payload?.tool_name ? `${x.event} ${x.payload.tool_name}` : x.event;
      const s = (this.shapes[key] ??= {});
      const walk = (o: Record<string, unknown>, prefix: string, depth: number) => {
        for (const [k, v] of Object.entries(o)) {
          (s[prefix + k] ??= new Set()).add(typeOf(v));
          if (depth < 2 && v && typeof v === 'object' && !Array.isArray(v)) walk(v as Record<string, unknown>, `${prefix}${k}.`, depth + 1);
        }
      };
      if (x.payload && typeof x.payload === 'object') walk(x.payload, '', 0);
    }
  }

  /** Writes the shapes as JSON (field → `type|type`) to `file`, its folder made. */
  write(file: string): void {
    const out = Object.fromEntries(
      Object.entries(this.shapes).map(([k, v]) => [k, Object.fromEntries(Object.entries(v).map(([f, t]) => [f, [...t].join('|')]))]),
    );
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(file, JSON.stringify(out, null, 2) + '\n');
  }
}

function typeOf(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return v.length ? `array<${[...new Set(v.map(typeOf))].join('|')}>` : 'array';
  return typeof v;
}

/** Each logged event as `Event` or `Event:tool`. */
export const events = (list: LoggedPayload[]) => list.map((x) => (x.payload?.tool_name ? `${x.event}:${x.payload.tool_name}` : x.event));

/** `git-scalpel turns --json` (exit 0 expected), kept as an artifact. */
export function turnsJson(p: ScratchProject): any[] {
  const r = p.scalpel(['turns', '--json']);
  expect(r.code, r.stderr).toBe(0);
  p.artifact(`turns-${Date.now()}.json`, r.stdout);
  return JSON.parse(r.stdout).data;
}

/** `git-scalpel ARGS` in the project, its exit code and output kept as the artifact `name`. */
export function scalpelSaved(p: ScratchProject, name: string, args: readonly string[]): SyncRun {
  const r = p.scalpel(args);
  p.artifact(name, `[exit ${r.code}]\n${r.stdout}${r.stderr}`);
  return r;
}

// ---------------------------------------------------------------------------------------------
// Running a scenario

/** Runs `fn` once; every caller gets the same promise (a scenario that several tests read). */
export function once<T>(fn: () => Promise<T>): () => Promise<T> {
  let p: Promise<T> | undefined;
  return () => (p ??= fn());
}

/**
 * Starts a scripted model (`start`), runs `fn` with it (the harness runs and their checks), closes
 * it. A failure of the harness side is also pushed on `failures` (naming the test's artifacts):
 * an `it.fails` test must not count it as the engine's expected failure, and each file's last test
 * requires none.
 */
export async function withScriptedModel<M extends { close(): Promise<void> }, T>(
  p: ScratchProject,
  failures: string[],
  start: () => Promise<M>,
  fn: (model: M) => Promise<T>,
): Promise<T> {
  const model = await start();
  try {
    return await fn(model);
  } catch (e) {
    failures.push(`${p.artifacts}: ${String((e as Error).message ?? e).split('\n')[0]}`);
    throw e;
  } finally {
    await model.close();
  }
}

// ---------------------------------------------------------------------------------------------
// The scenarios' model scripts, for a harness with file tools (Claude Code, Gemini CLI; Codex
// edits by patch and has its own)

/** A harness's file and shell tools, as its model calls them (absolute paths). */
export interface FileTools {
  write(file: string, content: string): ToolCall;
  /** Replaces `old` by `replacement` in `file`. */
  edit(file: string, old: string, replacement: string): ToolCall;
  shell(command: string, description?: string): ToolCall;
  read(file: string): ToolCall;
}

/** The scripts of the scenarios the checks below judge, in the project at `dir`. */
export function scenarioScripts(t: FileTools, dir: string) {
  const f = (rel: string) => join(dir, rel);
  return {
    /** One turn: a new file in new directories, an edit over the person's unstaged edits, sed -i, rm, git add -A. */
    mainTurn: (): Step[][] => [
      [
        { calls: [t.write(f('gen/api/client.ts'), 'export const client = 1;\n')] },
        { calls: [t.edit(f('src/app.ts'), 'export const b = 2;', 'export const b = 20;')] },
        { calls: [t.shell("sed -i 's/blue/red/' docs/guide.md", 'recolour the button')] },
        { calls: [t.shell('rm old/legacy.txt', 'remove the legacy file')] },
        { calls: [t.shell('git add -A', 'stage everything')] },
        { text: 'Done: client added, b raised, button red, legacy gone, all staged.' },
      ],
    ],
    /** Two turns (expectTwoTurnsRewoundOneByOne): gen/one.ts and src/config.ts; then gen/one.ts again and docs/guide.md removed, staged. */
    twoTurns: (): Step[][] => [
      [
        { calls: [t.write(f('gen/one.ts'), 'export const one = 1;\n'), t.edit(f('src/config.ts'), 'development', 'production')] },
        { text: 'Turn one done.' },
      ],
      [
        { calls: [t.edit(f('gen/one.ts'), 'one = 1', 'one = 11')] },
        { calls: [t.shell('rm docs/guide.md && git add -A gen docs')] },
        { text: 'Turn two done.' },
      ],
    ],
    /** A turn that writes gen/x.ts and changes src/config.ts (expectRefusedThenForced, once the person edited gen/x.ts). */
    refusal: (): Step[][] => [
      [
        { calls: [t.write(f('gen/x.ts'), 'export const x = 1;\n')] },
        { calls: [t.edit(f('src/config.ts'), '8080', '9090')] },
        { text: 'Done.' },
      ],
    ],
    /**
     * Parallel calls (expectParallelCallsOnDisk): `recolour` (the button green, as slowly as the
     * harness's test wants), a command making tmp/out/list.txt and a write in one answer; then two
     * read-only commands and a read in one answer.
     */
    parallel: (recolour: ToolCall): Step[][] => [
      [
        {
          calls: [
            recolour,
            t.shell('mkdir -p tmp/out && echo generated > tmp/out/list.txt', 'generate'),
            t.write(f('gen/par.ts'), 'export const par = 1;\n'),
          ],
        },
        { calls: [t.shell('git status --short', 'look'), t.shell('cat README.md', 'read'), t.read(f('src/app.ts'))] },
        { text: 'Done.' },
      ],
    ],
  };
}

// ---------------------------------------------------------------------------------------------
// The checks

/** The person's work in progress (makeProject's PERSON_WORK) is all there, byte for byte. */
export function expectPersonWork(p: ScratchProject): void {
  expect(p.read('README.md')).toBe(PERSON_WORK.readme);
  expect(p.read('src/app.ts')).toBe(PERSON_WORK.appWorktree);
  expect(p.git(['show', ':src/app.ts'])).toBe(PERSON_WORK.appStaged);
  expect(p.read('notes.txt')).toBe(PERSON_WORK.notes);
  expect(p.read('.env')).toBe(PERSON_WORK.env);
}

/** `git-scalpel rewind ARGS` (its output kept as `artifact`, default rewind.txt) exits 0 and gives back `state`. */
export function expectRewoundTo(
  p: ScratchProject,
  state: Oracle,
  what: string,
  opts: { args?: readonly string[]; artifact?: string } = {},
): SyncRun {
  const r = scalpelSaved(p, opts.artifact ?? 'rewind.txt', ['rewind', ...(opts.args ?? [])]);
  expect(r.code, r.stderr).toBe(0);
  expectSameOracle(p.oracle(), state, what);
  return r;
}

/**
 * The main turn (a new file gen/api/client.ts, b = 20 in src/app.ts over the person's edits, the
 * button recoloured red by sed -i, old/legacy.txt removed, then git add -A), seen by git.
 */
export function expectMainTurnOnDisk(p: ScratchProject): void {
  expect(p.read('gen/api/client.ts')).toBe('export const client = 1;\n');
  expect(p.read('src/app.ts')).toBe('export const a = 10;\nexport const b = 20;\nexport const c = 30;\n');
  expect(p.read('docs/guide.md')).toContain('red');
  expect(existsSync(join(p.dir, 'old/legacy.txt'))).toBe(false);
  expect(p.git(['status', '--porcelain'])).toBe(
    ['M  README.md', 'M  docs/guide.md', 'A  gen/api/client.ts', 'A  notes.txt', 'D  old/legacy.txt', 'M  src/app.ts', ''].join('\n'),
  );
}

/** turns: one turn of `session`, labelled with the prompt's first line, every path the agent changed. */
export function expectMainTurnListed(turns: any[], session: string): void {
  expect(turns).toHaveLength(1);
  expect(turns[0]).toMatchObject({ turn: 1, ended: true, sealed: true, label: 'Add the API client', session });
  expect(turns[0].paths).toEqual(['README.md', 'docs/guide.md', 'gen/api/client.ts', 'notes.txt', 'old/legacy.txt', 'src/app.ts']);
}

/** rewind gives back every byte of `before` and the person's work; gen/ is gone; nothing is left to rewind. */
export function expectMainTurnRewound(p: ScratchProject, before: Oracle): void {
  expectRewoundTo(p, before, 'after rewind');
  expectPersonWork(p);
  expect(existsSync(join(p.dir, 'gen'))).toBe(false);
  // nothing left to rewind (the prompt that would ask for it changed nothing)
  expect(JSON.parse(p.scalpel(['turns', '--json']).stdout).data).toEqual([]);
}

/**
 * After two turns ('first: add gen/one.ts': gen/one.ts and src/config.ts; 'second: change it
 * again': gen/one.ts and docs/guide.md), `states` the oracle before, after one, after two: turns
 * lists both, newest first, and each plain rewind undoes the newest turn left.
 */
export function expectTwoTurnsRewoundOneByOne(p: ScratchProject, states: Oracle[]): void {
  const [v0, v1, v2] = states;
  const turns = turnsJson(p);
  expect(turns.map((t: { label: string }) => t.label)).toEqual(['second: change it again', 'first: add gen/one.ts']);
  expect(turns.map((t: { turn: number }) => t.turn)).toEqual([2, 1]);
  expect(turns.every((t: { ended: boolean; sealed: boolean }) => t.ended && t.sealed)).toBe(true);
  expect(turns[0].paths).toEqual(['docs/guide.md', 'gen/one.ts']);
  expect(turns[1].paths).toEqual(['gen/one.ts', 'src/config.ts']);

  expect(describeDifference(p.oracle(), v2)).toBe('');
  expectRewoundTo(p, v1, 'after the first rewind', { artifact: 'rewind-1.txt' });
  expectRewoundTo(p, v0, 'after the second rewind', { artifact: 'rewind-2.txt' });
  expectPersonWork(p);
}

/** After the same two turns: `rewind 1` undoes both at once. */
export function expectTwoTurnsRewoundByRewind1(p: ScratchProject, states: Oracle[]): void {
  expect(describeDifference(p.oracle(), states[2])).toBe('');
  expect(turnsJson(p).map((t: { turn: number }) => t.turn)).toEqual([2, 1]);
  expectRewoundTo(p, states[0], 'after rewind 1', { args: ['1'] });
  expectPersonWork(p);
}

/**
 * After a turn wrote gen/x.ts and the person then edited it (`personal`; `before` the state before
 * the turn): rewind exits 3 naming the file and --force, and writes nothing; rewind --force gives
 * back `before` and the person's work in progress.
 */
export function expectRefusedThenForced(p: ScratchProject, before: Oracle, personal: Oracle): void {
  const r = scalpelSaved(p, 'refused.txt', ['rewind']);
  expect(r.code).toBe(3);
  expect(r.stderr + r.stdout).toContain('gen/x.ts');
  expect(r.stderr + r.stdout).toContain('--force');
  expectSameOracle(p.oracle(), personal, 'after the refused rewind');
  expectRewoundTo(p, before, 'after rewind --force', { args: ['--force'], artifact: 'forced.txt' });
  expectPersonWork(p);
}

/** The parallel calls' changes (the button green, tmp/out/list.txt generated, gen/par.ts written) are on disk. */
export function expectParallelCallsOnDisk(p: ScratchProject): void {
  expect(p.read('docs/guide.md')).toContain('green');
  expect(p.read('tmp/out/list.txt')).toBe('generated\n');
  expect(p.read('gen/par.ts')).toBe('export const par = 1;\n');
}
