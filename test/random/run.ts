/**
 * Runs a trace against the built command line and judges every rewind with git and the bytes on
 * disk as the oracle (DESIGN.md I1, I2, I3, I5, I10, I11).
 *
 * The tester keeps the ground truth itself: the full state (state.ts) before and after every agent
 * tool call, every person's step and every rewind, so it knows which paths each one changed and
 * when. A rewind of turn T of session S (and every later turn of S) is then judged against that
 * history:
 *
 * - refused (exit 3): nothing may have changed; the refusal must be justified (a path S's agent
 *   changed in those turns, or an ancestor or descendant of it, was changed afterwards by someone
 *   else; or S's commits since were pushed; or id-less parallel calls made pairing ambiguous).
 *   An unjustified refusal is a soft failure (reported, fails only under RANDOM_STRICT=1).
 * - done (exit 0): every path whose last change is someone else's holds it; every path S's agent
 *   changed in those turns that nobody else touched since is back to its state right before the
 *   agent's first change of it in those turns; every other path is untouched; refs, HEAD, stash,
 *   reflog unchanged; `git fsck` clean; no index entry claims a dirty file clean (racy-git);
 *   directories the turns created are gone unless they hold someone else's files; what the tool
 *   cannot bring back (files of ignored directories that existed, a nested repository's work) is
 *   named in `uncovered`.
 * - `--force`: the agent's changes are undone even over later edits; `rewind --undo` (or, while
 *   the build has no --undo, `restore` of the state the forced rewind saved) brings back exactly
 *   the state before it.
 */
import { spawnSync } from 'node:child_process';
import {
  appendFileSync,
  chmodSync,
  existsSync,
  lstatSync,
  mkdirSync,
  readFileSync,
  rmSync,
  cpSync,
  symlinkSync,
  unlinkSync,
  writeFileSync,
} from 'node:fs';
import { dirname, join } from 'node:path';
import { gitEnv, makeTempDir } from '../helpers/git.js';
import { cli, cliKilledAtLock, engineSession, hook, HARNESS, jsonData, Payloads, supportsUndo, type Run } from './cli.js';
import {
  captureState,
  describeState,
  diffPaths,
  fsckProblems,
  gitQuiet,
  isUnder,
  key,
  racyClean,
  refsView,
  related,
  same,
  writeTargets,
  type PathState,
  type State,
} from './state.js';
import { stepText, type Call, type SessionSpec, type Step, type Trace } from './trace.js';

export type Actor =
  | { kind: 'setup' }
  | { kind: 'person' }
  | { kind: 'agent'; s: string; turn: number }
  | { kind: 'rewind'; s: string }
  | { kind: 'undo' }
  | { kind: 'hook' };

export interface HEvent {
  pos: number;
  /** index of the step in the trace */
  step: number;
  actor: Actor;
  changes: Map<string, [PathState | undefined, PathState | undefined]>;
  /** paths a write call declared (before-write) */
  declared: string[];
  /** a rewind event: was it forced */
  forced?: boolean;
  /** consecutive steps of a person (or of the setup) make one event: their indexes */
  steps?: number[];
  /** a rewind event an undo took back exactly */
  undone?: boolean;
  /** an undo event: the session whose rewind it took back exactly */
  undoes?: string;
  /** an agent event: the directories git ignored when its calls began (the rules a command's baseline sees) */
  ignoredAtStart?: Set<string>;
  /** an agent call's: the paths git called clean on stat alone when it began, their content differing (racyClean), and their state then */
  racyAtStart?: Map<string, PathState | undefined>;
}

export interface Failure {
  kind: string;
  /** the paths it is about (a shrink keeps at least one of them failing) */
  paths?: string[];
  /** soft: reported, not a failure unless RANDOM_STRICT=1 (an unjustified refusal) */
  soft: boolean;
  step: number;
  text: string;
}

export interface ModelTurn {
  uid: number;
  label: string;
  events: HEvent[];
  /** paths declared by before-write, in order */
  declared: string[];
  /** HEAD when the turn started, and what the remote held */
  head: string;
  remote: Set<string>;
  /** id-less parallel calls happened in this turn (pairing may be ambiguous) */
  ambiguous: boolean;
  ended: boolean;
  /**
   * calls the person denied at the prompt (no event says so): the paths each declared and the
   * worktree when it was asked. A forced rewind may take such a path back to that state (the
   * tool cannot tell the call did not run; what it overwrites it saves for --undo)
   */
  denied?: Array<{ paths: string[]; before: State }>;
  /** paths a rewind of part of the turn took back: no longer the turn's (`rewind -- PATH`) */
  taken?: string[];
}

export interface Sess {
  spec: SessionSpec;
  pay: Payloads;
  engine: string;
  open: ModelTurn | null;
  live: ModelTurn[];
  /** after a native `rewind --undo` the tester no longer knows this session's stack: no more rewinds of it */
  frozen: boolean;
}

export interface RunOptions {
  /** generate the next step from the world (online generation); null ends the trial */
  next?: (w: World) => Step | null;
  /** stop at the first hard failure (default true) */
  stopAtFirst?: boolean;
  /** print each step as it runs */
  verbose?: boolean;
}

export interface Outcome {
  trace: Trace;
  failures: Failure[];
  hard: Failure[];
  hookCalls: number;
  /** paths: how many paths the agent changed, over the rewinds done (what the oracle checked came back) */
  rewinds: { done: number; refused: number; forced: number; undone: number; paths: number };
  ms: number;
}

const AGENT_ENV = (() => {
  const env = gitEnv({ GIT_EDITOR: 'true', GIT_MERGE_AUTOEDIT: 'no' });
  // an agent's commits get the real clock (a snapshot's history walk compares commit dates)
  delete env.GIT_AUTHOR_DATE;
  delete env.GIT_COMMITTER_DATE;
  return env;
})();
const PERSON_ENV = gitEnv({ GIT_EDITOR: 'true', GIT_MERGE_AUTOEDIT: 'no' });

function sh(cwd: string, cmd: string, env: NodeJS.ProcessEnv): { code: number; out: string } {
  const p = spawnSync('/bin/sh', ['-c', cmd], { cwd, env, encoding: 'utf8', timeout: 60_000, maxBuffer: 1 << 26 });
  return { code: p.status ?? -1, out: ((p.stdout ?? '') + (p.stderr ?? '')).slice(0, 2000) };
}

/** The read-only commands the generator runs (a turn must list no path for them). */
export const READ_ONLY = [
  'ls -la',
  'git status',
  'git status --short',
  'grep -rn line . || true',
  'git diff --stat',
  'git log --oneline -3',
  'true',
  'find . -name "*.md" -not -path "./.git/*"',
  'ls',
  'cat a.txt',
];

/** Failure kinds of a wrong rewind, the worst first (the first one present names the failure). */
const SEVERITY = ['person-lost', 'outside-picks', 'collateral', 'not-restored', 'unnamed-loss', 'empty-dir'];

/** Is `s` only a directory (no index entry, no resolve-undo)? */
const isDir = (s: PathState | undefined) => s?.wt === 'dir' && !s.idx && !s.ru;

export class World {
  readonly root: string;
  readonly dir: string;
  readonly remote: string;
  cur: State;
  readonly events: HEvent[] = [];
  readonly sessions = new Map<string, Sess>();
  readonly failures: Failure[] = [];
  readonly previews = new Map<string, string>();
  /** every directory seen holding a nested repository's .git */
  readonly nested = new Set<string>();
  step = -1;
  hookCalls = 0;
  turnUid = 0;
  lastRewind: { s: string; pre: State; event: HEvent; forced: boolean; savedAs: string | null; turns: number[] } | null = null;
  /** turns (uids) a rewind took back: their agent events are cancelled, for every session's oracle */
  readonly rewound = new Set<number>();
  readonly rewinds = { done: 0, refused: 0, forced: 0, undone: 0, paths: 0 };
  /** shell calls whose run changed no path: their `turns` entry must list none (read-only commands add nothing) */
  readonly quietCalls: Array<{ engine: string; id?: string; cmd: string; step: number }> = [];
  log: string[] = [];
  /** consecutive steps of the setup or of the person, not captured yet (one capture for all of them) */
  private pending: { actor: 'setup' | 'person'; steps: number[] } | null = null;
  /** capture around every hook (RANDOM_DRIFT=1): a hook that writes the worktree is caught at once */
  private readonly driftChecks = process.env.RANDOM_DRIFT === '1';

  constructor(readonly trace: Trace) {
    this.root = makeTempDir('scalpel-random-');
    this.dir = join(this.root, 'repo');
    this.remote = join(this.root, 'origin.git');
    mkdirSync(this.dir);
    const init = sh(this.dir, 'git init -q . && git config core.autocrlf false', PERSON_ENV);
    if (init.code !== 0) throw new Error(`git init failed: ${init.out}`);
    for (const spec of trace.sessions) {
      this.sessions.set(spec.name, {
        spec,
        pay: new Payloads(spec, this.dir),
        engine: engineSession(spec),
        open: null,
        live: [],
        frozen: false,
      });
    }
    this.cur = this.capture();
  }

  get hasRemote(): boolean {
    return existsSync(this.remote);
  }

  get crlfConfig(): boolean {
    return gitQuiet(this.dir, ['config', 'core.autocrlf']).out.trim() === 'true';
  }

  capture(): State {
    const s = captureState(this.dir);
    for (const [k, v] of s.previews) this.previews.set(k, v);
    for (const p of nestedRepos(this.dir, s)) this.nested.add(p);
    return s;
  }

  fail(kind: string, text: string, soft = false, paths?: string[]): void {
    this.failures.push({ kind, soft, step: this.step, text, ...(paths ? { paths } : {}) });
  }

  get hardFailed(): boolean {
    return this.failures.some((f) => !f.soft);
  }

  /** Capture what the pending steps of the setup or the person did, as one event. */
  flush(): void {
    const p = this.pending;
    if (!p) return;
    this.pending = null;
    const after = this.capture();
    const step = this.step;
    this.step = p.steps[0];
    const e = this.record(p.actor === 'setup' ? { kind: 'setup' } : { kind: 'person' }, this.cur, after);
    e.steps = p.steps;
    this.step = step;
    this.cur = after;
  }

  private record(actor: Actor, before: State, after: State, declared: string[] = []): HEvent {
    const changes = new Map<string, [PathState | undefined, PathState | undefined]>();
    for (const p of diffPaths(before, after)) changes.set(p, [before.paths.get(p), after.paths.get(p)]);
    const e: HEvent = { pos: this.events.length, step: this.step, actor, changes, declared };
    this.events.push(e);
    return e;
  }

  /** Nothing but the tool's own hooks ran between `before` and `after`: they must not have changed a path. */
  private drift(before: State, after: State, what: string): void {
    const d = diffPaths(before, after);
    if (d.length === 0) return;
    this.fail(
      'hook-wrote',
      `${what} changed ${d.length} path(s) of the worktree or index:\n${d.map((p) => this.pathDiff(p, before.paths.get(p), after.paths.get(p), 'before', 'after')).join('\n')}`,
    );
    this.record({ kind: 'hook' }, before, after);
  }

  private hook(s: Sess, payload: unknown, what: string, blockable = false): Run {
    this.hookCalls++;
    const r = hook(this.dir, HARNESS[s.spec.form], payload);
    if (r.code !== 0 && !(blockable && r.code === 2)) {
      this.fail(
        'hook-exit',
        `hook ${HARNESS[s.spec.form]} ${what} exited ${r.code} for a well-formed event:\n${indent(r.stderr.trim() || r.stdout.trim())}`,
      );
    }
    return r;
  }

  // ------------------------------------------------------------------------------ steps

  run(step: Step, index: number): void {
    this.step = index;
    if (!('who' in step)) this.flush();
    switch (step.k) {
      case 'file':
      case 'bin':
      case 'append':
      case 'rm':
      case 'link':
      case 'chmod':
      case 'sh':
        return this.personStep(step);
      case 'start':
        return this.turnStart(step.s, step.label);
      case 'end':
        return this.turnEnd(step.s);
      case 'call':
        return this.callStep(step);
      case 'rewind':
        return this.rewindStep(step);
      case 'undo':
        return this.undoStep();
    }
  }

  private personStep(step: Extract<Step, { who: string }>): void {
    const abs = join(this.dir, 'path' in step ? step.path : '');
    const mkParent = () => mkdirSync(dirname(abs), { recursive: true });
    try {
      switch (step.k) {
        case 'file':
          mkParent();
          writeFileSync(abs, step.text);
          if (step.exec !== undefined) chmodSync(abs, step.exec ? 0o755 : 0o644);
          break;
        case 'bin':
          mkParent();
          writeFileSync(abs, Buffer.from(step.hex, 'hex'));
          break;
        case 'append':
          mkParent();
          appendFileSync(abs, step.text);
          break;
        case 'rm':
          rmSync(abs, { recursive: true, force: true });
          break;
        case 'link':
          mkParent();
          if (existsOrLink(abs) && !lstatSync(abs).isDirectory()) unlinkSync(abs);
          symlinkSync(step.target, abs);
          break;
        case 'chmod':
          if (existsSync(abs)) chmodSync(abs, step.exec ? 0o755 : 0o644);
          break;
        case 'sh': {
          const r = sh(this.dir, step.cmd, PERSON_ENV);
          if (r.code !== 0)
            this.log.push(`step ${this.step}: ${step.who} command exited ${r.code}: ${r.out.trim().split('\n').slice(-2).join(' / ')}`);
          break;
        }
      }
    } catch (e) {
      this.log.push(`step ${this.step}: ${stepText(step)} failed: ${(e as Error).message}`);
    }
    if (this.pending && this.pending.actor !== step.who) this.flush();
    if (!this.pending) this.pending = { actor: step.who, steps: [] };
    this.pending.steps.push(this.step);
  }

  private head(): string {
    return gitQuiet(this.dir, ['rev-parse', '-q', '--verify', 'HEAD']).out.trim();
  }

  private remoteCommits(): Set<string> {
    if (!existsSync(this.remote)) return new Set();
    return new Set(gitQuiet(this.remote, ['rev-list', '--all']).out.split('\n').filter(Boolean));
  }

  private turnStart(name: string, label?: string): void {
    const s = this.sessions.get(name);
    if (!s) return;
    if (s.open) s.open.ended = true; // a prompt while a turn is open ends it (the engine seals it)
    const text = label ?? `prompt ${this.step}`;
    this.hook(s, s.pay.turnStart(text), 'turn-start');
    const t: ModelTurn = {
      uid: ++this.turnUid,
      label: text,
      events: [],
      declared: [],
      head: this.head(),
      remote: this.remoteCommits(),
      ambiguous: false,
      ended: false,
    };
    s.open = t;
    s.live.push(t);
    if (!this.driftChecks) return;
    const after = this.capture();
    this.drift(this.cur, after, `${name}'s turn-start hook`);
    this.cur = after;
  }

  private turnEnd(name: string): void {
    const s = this.sessions.get(name);
    if (!s?.open) return;
    this.hook(s, s.pay.turnEnd(), 'turn-end');
    s.open.ended = true;
    s.open = null;
    if (!this.driftChecks) return;
    const after = this.capture();
    this.drift(this.cur, after, `${name}'s turn-end hook`);
    this.cur = after;
  }

  private callStep(step: Extract<Step, { k: 'call' }>): void {
    const s = this.sessions.get(step.s);
    if (!s?.open || step.calls.length === 0 || !step.calls.every((c) => s.pay.canRun(c))) {
      this.log.push(`step ${this.step}: skipped (${s ? 'no open turn of the session' : 'no such session'})`);
      return;
    }
    const turn = s.open;
    const ids = step.calls.map(() => (s.pay.ids ? s.pay.callId() : undefined));
    const blocked = step.calls.map((c, i) => this.hook(s, s.pay.before(c, ids[i]), `before ${describeCall(c)}`, true).code === 2);
    let b = this.cur;
    if (this.driftChecks || step.denied) {
      b = this.capture();
      this.drift(this.cur, b, `${step.s}'s before-event hook`);
    }
    if (step.denied) {
      // the person denied it at the permission prompt: it never runs, no after event comes
      this.cur = b;
      // a write through a symlink declares its target too (the hook captured it there)
      const paths = step.calls
        .filter((c, i): c is Extract<Call, { tool: 'write' }> => c.tool === 'write' && !blocked[i])
        .flatMap((c) => [c.path, ...writeTargets(b, c.path)]);
      if (paths.length) (turn.denied ??= []).push({ paths, before: b });
      return;
    }
    if (step.calls.length > 1 && !s.pay.ids) turn.ambiguous = true;
    const ignoredAtStart = ignoredDirs(this.dir, b);
    const racyAtStart = new Map(racyClean(this.dir, b, true).map((p) => [p, b.paths.get(p)]));
    const results = step.calls.map((c, i) => (blocked[i] ? null : runCall(this.dir, c)));
    const a = this.capture();
    const declared = step.calls
      .filter((c, i): c is Extract<Call, { tool: 'write' }> => c.tool === 'write' && !blocked[i])
      .map((c) => c.path);
    const ev = this.record({ kind: 'agent', s: step.s, turn: turn.uid }, b, a, declared);
    ev.ignoredAtStart = ignoredAtStart;
    ev.racyAtStart = racyAtStart;
    turn.events.push(ev);
    for (const p of declared) if (!turn.declared.includes(p)) turn.declared.push(p);
    if (ev.changes.size === 0 && step.calls.length === 1 && step.calls[0].tool === 'shell' && !blocked[0]) {
      this.quietCalls.push({ engine: s.engine, id: ids[0], cmd: step.calls[0].cmd, step: this.step });
    }
    const order = step.afterOrder && step.afterOrder.length === step.calls.length ? step.afterOrder : step.calls.map((_c, i) => i);
    for (const i of order) {
      const r = results[i];
      if (!r) continue;
      this.hook(s, s.pay.after(step.calls[i], ids[i], r.ok, r.out), `after ${describeCall(step.calls[i])}`);
    }
    const c = this.capture();
    this.drift(a, c, `${step.s}'s after-tool hook`);
    this.cur = c;
  }

  // ------------------------------------------------------------------------------ rewinds

  /** `turns --json` of every session; checks that read-only calls added nothing. */
  private turnsJson(): EngineTurn[] | null {
    const r = cli(this.dir, ['turns', '--json']);
    if (r.code !== 0) {
      this.fail('turns-exit', `turns --json exited ${r.code}:\n${indent(r.stderr.trim())}`);
      return null;
    }
    let list: EngineTurn[];
    try {
      list = jsonData<EngineTurn[]>(r.stdout);
    } catch {
      this.fail('turns-exit', `turns --json printed no JSON:\n${indent(r.stdout.slice(0, 500))}`);
      return null;
    }
    for (const q of this.quietCalls.splice(0)) {
      const entries = list
        .filter((t) => t.session === q.engine)
        .flatMap((t) => t.tools.filter((c) => c.phase === 'after' && (q.id ? c.toolUseId === q.id : c.command === q.cmd)));
      const noisy = q.id ? entries : entries.length && entries.every((c) => c.paths.length) ? entries : [];
      for (const c of noisy) {
        // a read-only command (ls, git status, grep) that adds paths is a failure; any other command
        // whose run changed no path's state (touch, chmod to the same mode) is a soft one (I10)
        const readOnly = READ_ONLY.includes(q.cmd);
        if (c.paths.length)
          this.fail(
            readOnly ? 'read-only-paths' : 'unchanged-paths',
            `step ${q.step}: the command ${JSON.stringify(q.cmd)} changed nothing${readOnly ? '' : " (no path's bytes, mode, type or index entries)"}, yet turns --json lists paths for it: ${c.paths.join(', ')}`,
            !readOnly,
            c.paths,
          );
      }
    }
    return list;
  }

  private rewindStep(step: Extract<Step, { k: 'rewind' }>): void {
    const engine = this.turnsJson();
    if (!engine) return;
    let s: Sess | undefined;
    let from: number; // index into s.live
    if (step.s === undefined) {
      // plain `rewind`: the engine picks the worktree's newest turn that changed anything
      const pick = engine.find((t) => t.paths.length > 0);
      if (!pick) {
        // (what lies in ignored directories or a nested repository is not captured: not counted)
        const captured = (p: string) => !/^(dist|build|node_modules|vendor)(\/|$)/.test(p);
        // (and what a rewind of some paths took back is no longer the turn's)
        const left = (t: ModelTurn) => (p: string) => !t.taken?.some((k) => p === k || isUnder(p, k));
        const changed = (x: Sess) =>
          [...new Set(x.live.flatMap((t) => t.events.flatMap((e) => [...e.changes.keys()].filter(left(t)))))].filter(captured);
        const pending = [...this.sessions.values()].filter((x) => !x.frozen && changed(x).length > 0);
        if (pending.length)
          this.fail(
            'not-recorded',
            `turns --json lists no turn that changed anything, while ${pending.map((x) => `${x.spec.name}'s turns changed ${changed(x).join(', ')}`).join('; ')}`,
          );
        return;
      }
      s = [...this.sessions.values()].find((x) => x.engine === pick.session);
      if (!s || s.frozen) return;
      const mine = engine.filter((t) => t.session === s?.engine).reverse();
      from = mine.findIndex((t) => t.id === pick.id);
      if (!this.sameTurnCount(s, mine)) return;
    } else {
      s = this.sessions.get(step.s);
      if (!s || s.frozen || s.live.length === 0 || s.open) return;
      const mine = engine.filter((t) => t.session === s?.engine).reverse();
      if (!this.sameTurnCount(s, mine)) return;
      from = Math.min(Math.max(1, step.turn ?? s.live.length), s.live.length) - 1;
      if (step.turn !== undefined) step.turn = from + 1; // as run: the trace prints the turn it took
    }
    if (s.open) {
      this.log.push(`step ${this.step}: skipped (the session's turn is open)`);
      return;
    }
    const mine = engine.filter((t) => t.session === s.engine).reverse();
    const target = mine[from];
    const numberUnique = mine.filter((t) => t.turn === target.turn).length === 1;
    const args = ['rewind', '--json', ...(step.force ? ['--force'] : [])];
    if (step.s !== undefined) args.push('--session', s.engine, numberUnique ? String(target.turn) : target.id);
    if (step.paths?.length) args.push('--', ...step.paths);
    this.judgeRewind(s, from, args, !!step.force, !!step.kill, step.paths);
  }

  private sameTurnCount(s: Sess, mine: EngineTurn[]): boolean {
    if (mine.length === s.live.length) return true;
    this.fail(
      'turn-count',
      `session ${s.spec.name} (${s.engine}): the hooks were sent ${s.live.length} live turn(s), turns --json lists ${mine.length}: ${mine.map((t) => `${t.turn} ${JSON.stringify(t.label)} [${t.paths.join(', ')}]`).join('; ')}`,
    );
    return false;
  }

  private judgeRewind(s: Sess, from: number, args: string[], force: boolean, kill: boolean, picks?: string[]): void {
    const range = s.live.slice(from);
    // a rewind of some paths: those, the directories above them it may remove, and what lies
    // beneath them are judged as a rewind's; every other path must stay as it was
    const picked = (p: string) => !picks || picks.some((k) => related(k, p));
    const pre = this.cur;
    const preRefs = refsView(this.dir);
    // git's own stat-clean entries whose content no longer matches (an attribute changed since:
    // git does not look again until `git add --renormalize`) are not the rewind's
    const racyBefore = new Set(racyClean(this.dir, pre));
    const a = analyze(this, s, range, pre);
    let killedNote = '';
    let r: Run | null = null;
    if (kill) {
      // killed the moment it creates index.lock; running it again must complete it (I6). A run
      // that wrote no index (no lock) was not killed: it is the one judged.
      const k = cliKilledAtLock(this.dir, args, join(this.dir, '.git', 'index.lock'));
      if (k.killed)
        killedNote = ` (run again after a run killed -9 the moment index.lock appeared${k.lockSize === 0 ? ', still empty' : ''})`;
      else r = k.run;
      this.log.push(
        `step ${this.step}: the first run was ${k.killed ? 'killed' : 'not killed (it wrote no index)'}; index.lock ${existsSync(join(this.dir, '.git', 'index.lock')) ? `left, ${readFileSync(join(this.dir, '.git', 'index.lock')).length} bytes` : 'gone'}`,
      );
    }
    r ??= cli(this.dir, args);
    const post = this.capture();
    const cmd = `git-scalpel ${args.join(' ')}${killedNote}`;
    if (killedNote && existsSync(join(this.dir, '.git', 'index.lock')))
      this.fail('lock-left', `${cmd}: .git/index.lock is still there after the run (git is blocked)`);
    if (killedNote && r.code === 3 && /\[INDEX_LOCKED\]/.test(r.stderr)) {
      this.fail('lock-left', `${cmd} refused: its own killed run's index.lock blocks it:\n${indent(r.stderr.trim())}`);
      return;
    }
    const context = `${cmd} (turns ${range.map((t) => `"${t.label}"`).join(', ')} of ${s.spec.name})`;
    if (r.code === 3 && !force) {
      this.rewinds.refused++;
      const changed = diffPaths(pre, post);
      if (changed.length)
        this.fail(
          'refusal-wrote',
          `${context} refused (exit 3) but changed:\n${changed.map((p) => this.pathDiff(p, pre.paths.get(p), post.paths.get(p), 'before', 'after')).join('\n')}`,
        );
      if (refsView(this.dir) !== preRefs) this.fail('refs-moved', `${context} refused but moved refs`);
      const code = /\[([A-Z_]+)\]/.exec(r.stderr)?.[1] ?? '?';
      if (code === 'SNAPSHOT_CORRUPT')
        this.fail('corrupt', `${context} refused: the turn's snapshot is corrupt:\n${indent(r.stderr.trim())}\n${a.summary()}`);
      else if (!a.justification)
        this.fail(
          'unjustified-refusal',
          `${context} refused though no path the turns' agent changed was changed by anyone else since, nothing was pushed:\n${indent(r.stderr.trim())}\n${a.summary()}`,
          true,
        );
      if (changed.length) {
        this.record({ kind: 'rewind', s: s.spec.name }, pre, post);
        this.cur = post;
      }
      return;
    }
    // some paths none of the turns' agent changed (a sequence shrunk around a rewind of them), or
    // only directories the agent made to hold paths an earlier rewind took back (they stay, empty,
    // when that rewind's picks lay beneath them): a wrong argument, named, and nothing written
    const takenHere = range.flatMap((t) => t.taken ?? []);
    const madeForTaken = (p: string) => takenHere.some((t) => isUnder(t, p));
    if (
      r.code === 2 &&
      picks &&
      /\[BAD_ARGUMENT\]: '[^']*' is not a path of/.test(r.stderr) &&
      !picks.some((k) => [...a.ap.keys()].some((p) => related(k, p) && !madeForTaken(p)))
    ) {
      const changed = diffPaths(pre, post);
      if (changed.length) this.fail('refusal-wrote', `${context} exited 2 (a wrong argument) but changed: ${changed.join(', ')}`);
      return;
    }
    // what no force overrides: a path to restore whose parent is now a file or a link that the
    // turns' agent never changed (someone else's), or that a rewind of some paths beneath it does
    // not take back (the agent's, but not among the picks): refused, named, nothing written
    const blocked = /cannot restore '[^']*': its parent '([^']*)' is now a (?:file|symlink), outside the snapshot's paths/.exec(r.stderr);
    const notTaken = (q: string) => !a.ap.has(q) || (!!picks && !picks.some((k) => q === k || isUnder(q, k)));
    if (r.code === 3 && force && blocked && notTaken(blocked[1]) && pre.paths.has(blocked[1]) && !isDir(pre.paths.get(blocked[1]))) {
      this.rewinds.refused++;
      const changed = diffPaths(pre, post);
      if (changed.length) this.fail('refusal-wrote', `${context} refused (exit 3) but changed: ${changed.join(', ')}`);
      if (refsView(this.dir) !== preRefs) this.fail('refs-moved', `${context} refused but moved refs`);
      return;
    }
    if (r.code !== 0) {
      this.fail('rewind-exit', `${context} exited ${r.code}:\n${indent((r.stderr || r.stdout).trim())}`);
      this.cur = post;
      return;
    }
    let report: RewindReport;
    try {
      report = jsonData<RewindReport>(r.stdout);
    } catch {
      this.fail('rewind-exit', `${context} printed no JSON report:\n${indent(r.stdout.slice(0, 400))}`);
      return;
    }
    this.rewinds.done++;
    this.rewinds.paths += a.ap.size;
    if (force) this.rewinds.forced++;
    if (!force && a.pushed.length)
      this.fail('pushed-not-refused', `${context} exited 0 though the turns' commits ${a.pushed.join(', ')} were pushed (I5)`);
    // what the rewind names as not brought back: `uncovered` (no snapshot holds it) and `left`
    // (made or changed by a command inside an ignored directory that was there before)
    const uncovered = [...(report.uncovered ?? []), ...(report.left ?? [])];
    const problems: Array<{ kind: string; text: string; path: string }> = [];
    for (const p of [...new Set([...pre.paths.keys(), ...post.paths.keys(), ...a.ap.keys()])].sort()) {
      const found = post.paths.get(p);
      if (!picked(p)) {
        if (!same(found, pre.paths.get(p)))
          problems.push({
            kind: 'outside-picks',
            path: p,
            text: `${this.pathDiff(p, pre.paths.get(p), found, 'expected', 'found')}\n    not among the paths taken back (${(picks ?? []).join(', ')}): it must stay as it was\n${this.history(p)}`,
          });
        continue;
      }
      const verdict = a.expect(p, force);
      if (verdict.allowed.some((x) => same(x, found))) continue;
      // a path above the picks only (not one of them, nor beneath one): the rewind of what lies
      // beneath may remove it when it was a directory made for them, or leave it as it was
      if (picks && !picks.some((k) => p === k || isUnder(p, k)) && same(found, pre.paths.get(p))) continue;
      // or make it the directory that holds them again, its index entries left as they were (a
      // file entry the agent's command put back there is not among the picks)
      if (
        picks &&
        !picks.some((k) => p === k || isUnder(p, k)) &&
        found?.wt === 'dir' &&
        hasChildren(post, p) &&
        found?.idx === pre.paths.get(p)?.idx &&
        found?.ru === pre.paths.get(p)?.ru &&
        verdict.allowed.some((x) => isDir(x))
      )
        continue;
      // forced: a directory the rewind made to hold what it brought back beneath (a person's note
      // the agent's rm -rf took, in a directory the agent had created)
      if (
        force &&
        isDir(found) &&
        hasChildren(post, p) &&
        verdict.allowed.some((x) => x === undefined) &&
        [...post.paths.keys()].some(
          (q) => isUnder(q, p) && !isDir(post.paths.get(q)) && a.expect(q, force).allowed.some((x) => same(x, post.paths.get(q))),
        )
      )
        continue;
      if (verdict.uncoverable && (same(found, pre.paths.get(p)) || ('laterCapture' in verdict && same(found, verdict.laterCapture)))) {
        if (!uncovered.some((u) => related(u, p))) {
          problems.push({
            kind: 'unnamed-loss',
            path: p,
            text: `${this.pathDiff(p, verdict.allowed[0], found, 'expected', 'found')}\n    the tool cannot bring it back, but the report's uncovered and left [${uncovered.join(', ')}] do not name it\n${this.history(p)}`,
          });
        }
        continue;
      }
      // an empty directory where none is expected, or none where an empty one is, is its own kind
      const emptyDir = (isDir(found) && !hasChildren(post, p)) || (found === undefined && verdict.allowed.some(isDir));
      problems.push({
        kind: emptyDir ? 'empty-dir' : verdict.kind,
        path: p,
        text: `${this.pathDiff(p, verdict.allowed[0], found, 'expected', 'found')}${
          verdict.allowed.length > 1
            ? `\n    (or: ${verdict.allowed
                .slice(1)
                .map((x) => describeState(x, this.previews))
                .join(' | ')})`
            : ''
        }\n    ${verdict.why}\n${this.history(p)}`,
      });
    }
    if (problems.length) {
      const kind = SEVERITY.find((k) => problems.some((x) => x.kind === k)) ?? problems[0].kind;
      this.fail(
        kind,
        `${context} exited 0 and left ${problems.length} path(s) wrong (${[...new Set(problems.map((x) => x.kind))].join(', ')}):\n${problems
          .slice(0, 6)
          .map((x) => `${x.text}`)
          .join('\n')}${
          problems.length > 6
            ? `\n  and ${problems.length - 6} more: ${problems
                .slice(6)
                .map((x) => x.path)
                .join(', ')}`
            : ''
        }\n${a.summary()}`,
        false,
        problems.filter((x) => x.kind === kind).map((x) => x.path),
      );
    }
    const refs = refsView(this.dir);
    if (refs !== preRefs)
      this.fail(
        'refs-moved',
        `${context} moved HEAD, a ref, the stash or the reflog:\nbefore:\n${indent(preRefs)}\nafter:\n${indent(refs)}`,
      );
    const fsck = fsckProblems(this.dir);
    if (fsck) this.fail('fsck', `after ${context}, git fsck:\n${indent(fsck)}`);
    // nor is one that holds what it held when an agent's call of the range began, when git called
    // it clean then too: the rewind put it back so (I3: the index entry and the bytes are what git
    // reported before), or put back the rule files of then (a `.gitattributes` the turn restored),
    // which leave git's stat-clean answer for a path no one changed as it was then
    const racyWhenTaken = (p: string) =>
      range.some((t) => t.events.some((e) => e.racyAtStart?.has(p) && same(e.racyAtStart.get(p), post.paths.get(p))));
    const racy = racyClean(this.dir, post).filter(
      (p) => (!racyBefore.has(p) || !same(pre.paths.get(p), post.paths.get(p))) && !racyWhenTaken(p),
    );
    if (racy.length)
      this.fail('racy-clean', `after ${context}, git diff calls ${racy.join(', ')} clean, yet the bytes differ from the index (racy-git)`);
    const ev = this.record({ kind: 'rewind', s: s.spec.name }, pre, post);
    ev.forced = force;
    if (picks) {
      // the turns stay, without those paths: a later rewind judges what is left of them
      for (const t of range) t.taken = [...(t.taken ?? []), ...picks];
    } else {
      for (const t of range) this.rewound.add(t.uid);
      s.live.splice(from);
    }
    this.cur = post;
    this.lastRewind = { s: s.spec.name, pre, event: ev, forced: force, savedAs: report.savedAs ?? null, turns: range.map((t) => t.uid) };
  }

  private undoStep(): void {
    const last = this.lastRewind;
    if (!last) return;
    const s = this.sessions.get(last.s) as Sess;
    const native = supportsUndo();
    let args: string[];
    if (native) args = ['rewind', '--undo', '--json'];
    else if (last.forced && last.savedAs && process.env.RANDOM_RESTORE_UNDO !== '0') args = ['restore', '--session', s.engine, '--json'];
    else return;
    this.lastRewind = null;
    const pre = this.cur;
    // since the rewind, someone else changed what it wrote: the undo may refuse
    const since = this.events.filter((e) => e.pos > last.event.pos);
    const touched = (p: string) => since.some((e) => [...e.changes.keys()].some((q) => related(p, q)));
    const r = cli(this.dir, args);
    const post = this.capture();
    const context = `git-scalpel ${args.join(' ')} (undoing the rewind at step ${last.event.step})`;
    if (r.code === 3) {
      const changed = diffPaths(pre, post);
      if (changed.length) this.fail('refusal-wrote', `${context} refused but changed ${changed.join(', ')}`);
      if (![...last.event.changes.keys()].some(touched))
        this.fail(
          'unjustified-refusal',
          `${context} refused though nothing the rewind wrote changed since:\n${indent(r.stderr.trim())}`,
          true,
        );
      return;
    }
    if (r.code !== 0) {
      this.fail('undo-exit', `${context} exited ${r.code}:\n${indent((r.stderr || r.stdout).trim())}`);
      this.cur = post;
      return;
    }
    this.rewinds.undone++;
    const problems: string[] = [];
    for (const p of [...new Set([...pre.paths.keys(), ...post.paths.keys(), ...last.event.changes.keys()])].sort()) {
      const wanted = last.event.changes.has(p) && !touched(p) ? last.pre.paths.get(p) : pre.paths.get(p);
      const found = post.paths.get(p);
      if (same(wanted, found)) continue;
      if (isDir(found) && wanted === undefined && hasChildren(post, p)) continue;
      problems.push(`${this.pathDiff(p, wanted, found, 'expected', 'found')}\n${this.history(p)}`);
    }
    if (problems.length) this.fail('undo-mismatch', `${context} did not bring back the state before the rewind:\n${problems.join('\n')}`);
    const fsck = fsckProblems(this.dir);
    if (fsck) this.fail('fsck', `after ${context}, git fsck:\n${indent(fsck)}`);
    const ue = this.record({ kind: 'undo' }, pre, post);
    if (problems.length === 0) {
      // the rewind and its undo together changed nothing (for every other session); the rewound
      // turns' changes are back on disk
      last.event.undone = true;
      ue.undoes = last.s;
      for (const uid of last.turns) this.rewound.delete(uid);
    }
    this.cur = post;
    if (native) s.frozen = true;
  }

  // ------------------------------------------------------------------------------ messages

  pathDiff(p: string, a: PathState | undefined, b: PathState | undefined, an: string, bn: string): string {
    return `  ${p}\n    ${an}: ${describeState(a, this.previews)}\n    ${bn}: ${describeState(b, this.previews)}`;
  }

  /** Who changed `p` (or a path beneath or above it), step by step: one line per step, then its paths. */
  history(p: string): string {
    const lines: string[] = [];
    for (const e of this.events) {
      if (e.actor.kind === 'setup') continue;
      const hits = [...e.changes].filter(([q]) => related(p, q));
      if (hits.length === 0) continue;
      // in a run of person steps, the one that names the path (or the commands among them)
      let steps = e.steps ?? [e.step];
      if (steps.length > 1) {
        const named = steps.filter((i) => {
          const st = this.trace.steps[i];
          return st && 'path' in st && hits.some(([q]) => related(st.path, q));
        });
        steps = named.length ? named.slice(-1) : steps.filter((i) => this.trace.steps[i]?.k === 'sh');
      }
      const what = steps.map((i) => (this.trace.steps[i] ? stepText(this.trace.steps[i]) : '')).join('; ');
      lines.push(`      step ${steps.join(', ')} (${actorText(e.actor)}) ${what.length > 140 ? `${what.slice(0, 137)}...` : what}:`);
      for (const [q, [, after]] of hits.slice(0, 6)) lines.push(`        ${q} → ${describeState(after, this.previews)}`);
      if (hits.length > 6) lines.push(`        (${hits.length - 6} more)`);
    }
    return lines.length ? `    history:\n${lines.slice(-24).join('\n')}` : '    history: (setup only)';
  }
}

interface EngineTurn {
  id: string;
  session: string;
  label: string;
  turn: number;
  paths: string[];
  tools: Array<{ phase: string; paths: string[]; command?: string; toolUseId?: string }>;
}

interface RewindReport {
  savedAs?: string | null;
  uncovered?: string[];
  left?: string[];
}

function actorText(a: Actor): string {
  if (a.kind === 'agent') return `agent ${a.s}`;
  if (a.kind === 'rewind') return `rewind of ${a.s}`;
  return a.kind;
}

function describeCall(c: Call): string {
  return c.tool === 'shell' ? JSON.stringify(c.cmd) : `${c.op} ${c.path}`;
}

function indent(s: string): string {
  return s
    .split('\n')
    .map((l) => `    ${l}`)
    .join('\n');
}

function existsOrLink(abs: string): boolean {
  try {
    lstatSync(abs);
    return true;
  } catch {
    return false;
  }
}

function hasChildren(s: State, p: string): boolean {
  for (const q of s.paths.keys()) if (isUnder(q, p)) return true;
  return false;
}

/** Directories (worktree-relative) holding a nested repository's .git. */
function nestedRepos(dir: string, s: State): string[] {
  const out: string[] = [];
  for (const [p, st] of s.paths) if (st.wt === 'dir' && existsSync(join(dir, p, '.git'))) out.push(p);
  return out;
}

/** An agent's tool call, as the harness runs it. */
function runCall(dir: string, c: Call): { ok: boolean; out: string } {
  if (c.tool === 'shell') {
    const r = sh(dir, c.cmd, AGENT_ENV);
    return { ok: r.code === 0, out: r.out };
  }
  const abs = join(dir, c.path);
  try {
    if (c.op === 'write') {
      mkdirSync(dirname(abs), { recursive: true });
      writeFileSync(abs, c.text ?? '');
    } else if (c.op === 'edit') {
      const text = readFileSync(abs, 'latin1');
      const at = text.indexOf(c.old ?? '');
      if (at < 0) throw new Error(`old_string not found in ${c.path}`);
      writeFileSync(abs, Buffer.from(text.slice(0, at) + (c.text ?? '') + text.slice(at + (c.old ?? '').length), 'latin1'));
    } else {
      unlinkSync(abs);
    }
    return { ok: !c.fail, out: 'done' };
  } catch (e) {
    return { ok: false, out: (e as Error).message };
  }
}

// ------------------------------------------------------------------------------ the oracle

export interface Verdict {
  allowed: Array<PathState | undefined>;
  kind: string;
  why: string;
  /** the tool may leave it as it is, if it names it in `uncovered` */
  uncoverable: boolean;
  /** an uncoverable path a later write of the agent captured: the tool may put back what that capture found (named) */
  laterCapture?: PathState | undefined;
}

interface ApInfo {
  firstPos: number;
  firstStep: number;
  before: PathState | undefined;
  /** someone else changed this very path after the agent's first change of it */
  direct: HEvent[];
  /** someone else changed it, or a path above or beneath it, after the agent's first change */
  relatedNonS: HEvent[];
  /** the last change of the path (by anyone) was someone else's */
  lastNonS: boolean;
  uncoverable: boolean;
  /** a write declaring it after an uncapturable change of it (a command's, in an ignored directory): what that write's hook found */
  laterCapture?: { state: PathState | undefined };
}

/** What a rewind of `range` (turns of `s`, oldest first) must do, given the history. */
export function analyze(w: World, s: Sess, range: ModelTurn[], pre: State) {
  const name = s.spec.name;
  // what a rewind of part of a turn took back is no longer that turn's
  const kept = (t: ModelTurn, e: HEvent): HEvent => {
    const taken = t.taken;
    if (!taken?.length) return e;
    return { ...e, changes: new Map([...e.changes].filter(([p]) => !taken.some((k) => p === k || isUnder(p, k)))) };
  };
  const agentEvents = range.flatMap((t) => t.events.map((e) => kept(t, e))).sort((x, y) => x.pos - y.pos);
  // S's own changes, and changes another session made and a rewind of it took back (its rewound
  // turns' calls and that rewind: together they changed nothing, if the rewind was not forced),
  // (and another session's rewind that an undo took back exactly, with that undo)
  const neutral = (e: HEvent) =>
    (e.actor.kind === 'agent' && (e.actor.s === name || w.rewound.has(e.actor.turn))) ||
    (e.actor.kind === 'rewind' && (e.actor.s === name || !e.forced || !!e.undone)) ||
    (e.actor.kind === 'undo' && e.undoes !== undefined && e.undoes !== name) ||
    e.actor.kind === 'setup';
  // another session's change of a path a (partial) rewind of its turn took back since: together
  // they changed nothing there, as for a turn rewound whole
  const turnOf = new Map<number, ModelTurn>();
  for (const sess of w.sessions.values()) for (const t of sess.live) turnOf.set(t.uid, t);
  const takenBack = (e: HEvent, p: string) =>
    e.actor.kind === 'agent' && e.actor.s !== name && !!turnOf.get(e.actor.turn)?.taken?.some((k) => p === k || isUnder(p, k));
  const ap = new Map<string, ApInfo>();
  for (const e of agentEvents) {
    for (const [p, [before]] of e.changes) {
      if (!ap.has(p))
        ap.set(p, { firstPos: e.pos, firstStep: e.step, before, direct: [], relatedNonS: [], lastNonS: false, uncoverable: false });
    }
  }
  // what `p` held right before the event at `pos` (the last change before it, or the state the
  // first change after it started from)
  const stateAt = (p: string, pos: number): PathState | undefined => {
    let last: HEvent | undefined;
    for (const e of w.events) {
      if (!e.changes.has(p)) continue;
      if (e.pos >= pos) return last ? last.changes.get(p)?.[1] : e.changes.get(p)?.[0];
      last = e;
    }
    return last?.changes.get(p)?.[1];
  };
  for (const [p, info] of ap) {
    let last: HEvent | null = null;
    for (const e of w.events) {
      if (e.changes.has(p)) last = e;
      if (e.pos <= info.firstPos || neutral(e)) continue;
      if (e.changes.has(p) && !takenBack(e, p)) info.direct.push(e);
      if ([...e.changes.keys()].some((q) => related(p, q) && !takenBack(e, q))) info.relatedNonS.push(e);
    }
    info.lastNonS = last !== null && !neutral(last) && !takenBack(last, p);
  }
  // ignored directories: files a command changed inside one that existed may stay if named (as
  // git ignored them when the command began: a later edit of .gitignore does not change that)
  // (a directory the range never changed: what it held when the agent first changed the path, not
  // now: a rewind of another session since may have removed it)
  const stateBeforeFirst = (d: string, pos: number) => (ap.has(d) ? ap.get(d)?.before : stateAt(d, pos));
  for (const [p, info] of ap) {
    // a declared path, or one beneath a declared directory that held it then, was captured by the
    // write's hook; a directory above a declared path was not (only the path itself is), nor what
    // was not there when the write was asked (beneath a path that was a file then)
    const declaring = agentEvents.find((e) => e.declared.some((d) => p === d || (isUnder(p, d) && stateAt(p, e.pos) !== undefined)));
    if (declaring && declaring.pos <= info.firstPos) continue;
    // a write after the agent's first change (a command's, maybe uncapturable): what it captured
    if (declaring) info.laterCapture = { state: stateAt(p, declaring.pos) };
    const ignored = new Set<string>();
    for (const e of agentEvents) if (e.changes.has(p)) for (const d of e.ignoredAtStart ?? []) ignored.add(d);
    const parts = p.split('/');
    for (let i = 1; i <= parts.length; i++) {
      const d = parts.slice(0, i).join('/');
      if ((ignored.has(d) && stateBeforeFirst(d, info.firstPos)?.wt === 'dir') || w.nested.has(d)) info.uncoverable = true;
    }
    // a directory that held a nested repository: the tool does not capture what is in it
    if (info.before?.wt === 'dir' && [...w.nested].some((n) => isUnder(n, p))) info.uncoverable = true;
  }
  // pushed commits the agent made since the range began
  const first = range[0];
  let pushed: string[] = [];
  const head = gitQuiet(w.dir, ['rev-parse', '-q', '--verify', 'HEAD']).out.trim();
  if (first && head && first.head && head !== first.head) {
    const made = gitQuiet(w.dir, ['rev-list', head, `^${first.head}`])
      .out.split('\n')
      .filter(Boolean);
    const remote = new Set(gitQuiet(w.dir, ['rev-list', '--remotes']).out.split('\n').filter(Boolean));
    pushed = made.filter((c) => remote.has(c) && !first.remote.has(c));
  }
  const contested = [...ap].filter(([, i]) => i.relatedNonS.length > 0);
  const justification = contested.length
    ? `someone else changed ${contested.map(([p, i]) => `${p} (step ${i.relatedNonS.map((e) => e.step).join(', ')})`).join(', ')} after the agent did`
    : pushed.length
      ? `commits ${pushed.join(', ')} were pushed`
      : range.some((t) => t.ambiguous)
        ? 'id-less parallel calls'
        : '';
  // beneath a path the agent changed as a whole (created, deleted, replaced), a forced rewind brings
  // that path back as it was before the agent: what someone else made beneath it since may go (the
  // unforced rewind names each such path, and the forced one saves it for --undo). A path beneath it
  // that existed then was changed by the agent too, so it is in `ap` and judged on its own.
  const forcedAway = (p: string) => [...ap].some(([q]) => isUnder(p, q));
  // what a path a rewind took out of a turn (rewind -- PATH) held before the turn first changed
  // it: a forced rewind of a path above it (the rest of the turn) writes the pre-image there
  const takenBefore = (p: string): Array<PathState | undefined> =>
    range
      .filter((t) => t.taken?.some((k) => p === k || isUnder(p, k)))
      .flatMap((t) => t.events.filter((e) => e.changes.has(p)).map((e) => e.changes.get(p)?.[0]))
      .slice(0, 1);
  // what a path held when a denied call of the range declaring it (or a path beneath it) was asked
  const deniedBefore = (p: string): Array<PathState | undefined> =>
    range
      .flatMap((t) => t.denied ?? [])
      .filter((d) => d.paths.some((q) => related(q, p)))
      .map((d) => d.before.paths.get(p));
  return {
    ap,
    pushed,
    justification,
    summary(): string {
      const lines = [...ap].map(
        ([p, i]) =>
          `    ${p}: first changed by the agent at step ${i.firstStep}${i.direct.length ? `; changed by someone else at step ${i.direct.map((e) => e.step).join(', ')}` : i.relatedNonS.length ? `; a path above/beneath it changed by someone else at step ${i.relatedNonS.map((e) => e.step).join(', ')}` : ''}`,
      );
      return `  what the rewound turns' agent changed (ground truth):\n${lines.join('\n') || '    nothing'}`;
    },
    expect(p: string, force: boolean): Verdict {
      const now = pre.paths.get(p);
      const info = ap.get(p);
      if (!info) {
        if (force && forcedAway(p))
          return {
            allowed: [now, undefined, ...takenBefore(p)],
            kind: 'collateral',
            why: 'the rewound turns never changed this path (it lies beneath one they did)',
            uncoverable: false,
          };
        if (force && deniedBefore(p).length)
          return {
            allowed: [now, ...deniedBefore(p)],
            kind: 'person-lost',
            why: 'the rewound turns never changed this path; a call they were denied declared it, so a forced rewind may put back what it held when that call was asked (saved for --undo)',
            uncoverable: false,
          };
        const byPerson = w.events.some(
          (e) => e.changes.has(p) && (e.actor.kind === 'person' || (e.actor.kind === 'agent' && e.actor.s !== name)),
        );
        return {
          allowed: [now],
          kind: byPerson ? 'person-lost' : 'collateral',
          why: `the rewound turns never changed this path: it must be left as it was${byPerson ? " (it holds someone else's change)" : ''}`,
          uncoverable: false,
        };
      }
      const firstBefore = info.before;
      if (force) {
        const allowed = [firstBefore, ...deniedBefore(p)];
        if (firstBefore === undefined && isDir(now)) allowed.push(now);
        // a directory the agent made (to hold a write beneath it) that someone else then replaced by
        // a file or link: an ancestor outside the turn's paths keeps what is there (I1, I2)
        const agentFirst = agentEvents.find((e) => e.changes.has(p))?.changes.get(p)?.[1];
        if (firstBefore === undefined && isDir(agentFirst) && now !== undefined && !isDir(now) && info.lastNonS) allowed.push(now);
        return {
          allowed,
          kind: 'not-restored',
          why: `forced: back to its state before the agent's first change (step ${info.firstStep})`,
          uncoverable: info.uncoverable,
          ...(info.uncoverable && info.laterCapture ? { laterCapture: info.laterCapture.state } : {}),
        };
      }
      // what the agent's last change of the path left: if the path holds it again (another
      // session's forced rewind put it back), nobody else's change is there to keep
      const agentLast = [...agentEvents]
        .reverse()
        .find((e) => e.changes.has(p))
        ?.changes.get(p)?.[1];
      if (info.direct.length && info.lastNonS && same(now, agentLast))
        return {
          allowed: [firstBefore, now],
          kind: 'not-restored',
          why: `the agent changed it first at step ${info.firstStep}; someone else changed it since, and it holds the agent's last change again`,
          uncoverable: false,
        };
      // a rewind is judged part by part (worktree, index, resolve-undo: the engine's Conflict
      // parts): where each part holds either the agent's last change (taken back) or already what
      // it held before the agent (someone else's change that nothing needs to undo, so nothing
      // is written there), no one else's change is overwritten by taking the path back
      if (info.direct.length && info.lastNonS && partsFrom(now, agentLast, firstBefore))
        return {
          allowed: [firstBefore, now],
          kind: 'person-lost',
          why: `someone else changed it last (step ${info.direct[info.direct.length - 1].step}), each part to what it held before the agent or left as the agent left it: a rewind takes the agent's parts back, or keeps it all`,
          uncoverable: false,
        };
      if (info.direct.length) {
        if (info.lastNonS)
          return {
            allowed: [now],
            kind: 'person-lost',
            why: `someone else changed it last (step ${info.direct[info.direct.length - 1].step}): a rewind keeps that (or refuses)`,
            uncoverable: false,
          };
        const personVersion = info.direct[info.direct.length - 1].changes.get(p)?.[1];
        // the agent's change after that person's one was a turn rewound since, outside this range:
        // that rewind was judged on what it could not bring back (named as lost), not this one
        const lastAgent = [...w.events].reverse().find((e) => e.changes.has(p) && e.actor.kind === 'agent');
        const inRange = new Set(range.map((t) => t.uid));
        if (lastAgent && lastAgent.actor.kind === 'agent' && w.rewound.has(lastAgent.actor.turn) && !inRange.has(lastAgent.actor.turn))
          return {
            // and when that later rewind put back what the range's agent left, nothing of anyone
            // else's is there: the range's rewind may take it back to before the agent
            allowed: [now, personVersion, ...(same(now, agentLast) ? [firstBefore] : [])],
            kind: 'person-lost',
            why: `someone else changed it at step ${info.direct.map((e) => e.step).join(', ')}, then a turn rewound since (step ${lastAgent.step}): a rewind keeps what is there, or brings back that person's version`,
            uncoverable: info.uncoverable,
            ...(info.uncoverable && info.laterCapture ? { laterCapture: info.laterCapture.state } : {}),
          };
        return {
          allowed: [personVersion],
          kind: 'person-lost',
          why: `someone else changed it at step ${info.direct.map((e) => e.step).join(', ')}, then the agent again: a rewind must refuse, or bring back that person's version`,
          uncoverable: false,
        };
      }
      if (info.relatedNonS.length)
        return {
          allowed: [firstBefore, now],
          kind: 'not-restored',
          why: `the agent changed it first at step ${info.firstStep}; a path above or beneath it changed by someone else since`,
          uncoverable: false,
        };
      return {
        allowed: [firstBefore],
        kind: 'not-restored',
        why: `the agent changed it first at step ${info.firstStep}: back to its state right before that`,
        uncoverable: info.uncoverable,
        ...(info.uncoverable && info.laterCapture ? { laterCapture: info.laterCapture.state } : {}),
      };
    },
  };
}

/** Does each part of `now` (worktree, index entries, resolve-undo) hold what `a` or `b` holds there? */
function partsFrom(now: PathState | undefined, a: PathState | undefined, b: PathState | undefined): boolean {
  return (['wt', 'idx', 'ru'] as const).every((k) => now?.[k] === a?.[k] || now?.[k] === b?.[k]);
}

/** The directories of `state` git ignores now (each as a directory: `d/`). */
function ignoredDirs(dir: string, state: State): Set<string> {
  const dirs = [...state.paths].filter(([, st]) => st.wt === 'dir').map(([p]) => p);
  const out = new Set<string>();
  if (!dirs.length) return out;
  const r = gitQuiet(dir, ['check-ignore', '--stdin', '--no-index'], dirs.map((d) => `${d}/`).join('\n') + '\n').out;
  for (const l of r.split('\n')) if (l) out.add(l.replace(/\/$/, ''));
  return out;
}

// ------------------------------------------------------------------------------ running a trace

export function runTrace(trace: Trace, opts: RunOptions = {}): Outcome {
  const t0 = Date.now();
  // the steps as run (a rewind's turn is rewritten to the one it took): copies, the caller's stay as they were
  trace = { sessions: trace.sessions, steps: trace.steps.map((s) => ({ ...s })) };
  const w = new World(trace);
  const stopAtFirst = opts.stopAtFirst ?? true;
  let i = 0;
  for (;;) {
    let step: Step | null | undefined = trace.steps[i];
    if (step === undefined && opts.next) {
      step = opts.next(w);
      if (step) trace.steps.push(step);
    }
    if (!step) break;
    if (opts.verbose) console.log(`${i}: ${stepText(step)}`);
    w.run(step, i);
    i++;
    if (stopAtFirst && w.hardFailed) break;
  }
  w.flush();
  if (!(stopAtFirst && w.hardFailed)) {
    const fsck = fsckProblems(w.dir);
    if (fsck) {
      w.step = i;
      w.fail('fsck', `at the end, git fsck:\n${indent(fsck)}`);
    }
  }
  // the trace as run: nothing after the step of the first hard failure matters
  const firstHard = w.failures.find((f) => !f.soft);
  const ran: Trace = { sessions: trace.sessions, steps: trace.steps.slice(0, firstHard ? firstHard.step + 1 : i) };
  // RANDOM_KEEP=DIR: a copy of the repository as the trace left it goes to DIR, for a look at what the tool recorded
  if (process.env.RANDOM_KEEP) cpSync(w.dir, process.env.RANDOM_KEEP, { recursive: true, verbatimSymlinks: true });
  rmSync(w.root, { recursive: true, force: true });
  return {
    trace: ran,
    failures: w.failures,
    hard: w.failures.filter((f) => !f.soft),
    hookCalls: w.hookCalls,
    rewinds: w.rewinds,
    ms: Date.now() - t0,
    log: w.log,
  } as Outcome & { log: string[] };
}

export { key };
