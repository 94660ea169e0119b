/**
 * The generator: from a seed, a random repository (the setup steps) and then, step by step while
 * the trial runs, what happens next, chosen by looking at the worktree as it is now (which files
 * exist, which the agent touched, which directories it created). What it chooses is recorded as
 * concrete steps (trace.ts), so a trial replays from its trace alone and shrinks by dropping steps.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { prng } from '../helpers/prng.js';
import { supportsUndo } from './cli.js';
import { gates, type Gate } from './known.js';
import { analyze, READ_ONLY, type Sess, type World } from './run.js';
import { isUnder, related, type PathState } from './state.js';
import { agent, del, edit, person, setup, shell, write, type Call, type Form, type SessionSpec, type Step } from './trace.js';

type Rng = () => number;

const WORDS = ['alpha', 'beta', 'gamma', 'delta', 'line', 'value', 'todo', 'fix', 'const', 'return', 'name', 'port'];
export const GITIGNORE = '.env\n*.log\ndist/\nbuild/\nnode_modules/\n';

const TRACKED = [
  'README.md',
  'a.txt',
  'b.txt',
  'src/app.ts',
  'src/lib/util.ts',
  'docs/guide.md',
  'cfg/settings.json',
  'src/deep/x/y.txt',
  'empty.txt',
  'run.sh',
  'src/lib/data.bin',
];
const NEW_FILES = [
  'gen/api/client.ts',
  'src/new.ts',
  'src/lib/extra.ts',
  'pkg/x/y/z.txt',
  'docs/new/page.md',
  'c.txt',
  'tools/gen.sh',
  'src/deep/x/w.txt',
  'out/report.txt',
];
const NEW_DIRS = ['gen', 'newdir', 'pkg/sub', 'src/feature', 'docs/new', 'tmp/work'];
const NOTES = ['notes/todo.md', 'scratch/idea.txt', 'notes.txt', 'src/untracked.ts'];

function pick<T>(r: Rng, xs: readonly T[]): T {
  return xs[Math.floor(r() * xs.length)];
}

function chance(r: Rng, p: number): boolean {
  return r() < p;
}

function text(r: Rng, lines = 1 + Math.floor(r() * 4)): string {
  const out: string[] = [];
  for (let i = 0; i < lines; i++) out.push(`${pick(r, WORDS)} ${pick(r, WORDS)} ${Math.floor(r() * 100)}`);
  return out.join('\n') + (chance(r, 0.9) ? '\n' : '');
}

function hex(r: Rng, n = 6 + Math.floor(r() * 10)): string {
  let s = '';
  for (let i = 0; i < n; i++)
    s += Math.floor(r() * 256)
      .toString(16)
      .padStart(2, '0');
  return `00ff${s}`;
}

export interface GenOptions {
  /** main steps before the trial winds down (default 14–30) */
  steps?: number;
  gates?: ReadonlySet<Gate>;
}

/** Sessions of a trial: one agent, sometimes two in the same worktree. */
export function sessionsFor(seed: number): SessionSpec[] {
  const r = prng(seed ^ 0x5eed);
  const form = (): Form => {
    const x = r();
    return x < 0.6 ? 'generic' : x < 0.8 ? 'claude' : 'gemini';
  };
  const a = agent('A', form(), chance(r, 0.8)).spec;
  if (!chance(r, 0.35)) return [a];
  return [a, agent('B', form(), chance(r, 0.8)).spec];
}

/** The setup steps: a repository with history and a person's work in progress. */
export function setupSteps(r: Rng, g: ReadonlySet<Gate>): Step[] {
  const steps: Step[] = [setup.file('.gitignore', GITIGNORE)];
  const crlf = !g.has('crlf') && chance(r, 0.15);
  if (crlf) {
    if (chance(r, 0.5)) steps.push(setup.file('.gitattributes', '*.txt eol=crlf\n'));
    else steps.push(setup.sh('git config core.autocrlf true'));
  }
  const files = TRACKED.filter(() => chance(r, 0.55));
  if (!files.includes('a.txt')) files.push('a.txt');
  for (const f of files) {
    if (f.endsWith('.bin')) steps.push(setup.bin(f, hex(r)));
    else if (f === 'empty.txt') steps.push(setup.file(f, ''));
    else if (f.endsWith('.sh')) steps.push(setup.file(f, '#!/bin/sh\necho run\n', true));
    else {
      const t = text(r, 2 + Math.floor(r() * 3));
      steps.push(setup.file(f, crlf && f.endsWith('.txt') ? t.replace(/\n/g, '\r\n') : t));
    }
  }
  if (chance(r, 0.5)) steps.push(setup.link('link', pick(r, files)));
  if (chance(r, 0.3) && files.some((f) => f.startsWith('src/'))) steps.push(setup.link('srclink', 'src'));
  if (chance(r, 0.3)) steps.push(setup.link('dangling', 'does/not/exist'));
  steps.push(setup.sh('git add -A && git commit -qm base'));
  const texts = files.filter((f) => !f.endsWith('.bin') && f !== 'empty.txt');
  if (chance(r, 0.4)) {
    steps.push(setup.append(pick(r, texts), text(r, 1)));
    steps.push(setup.sh('git commit -qam second'));
  }
  if (chance(r, 0.12)) {
    const f = pick(r, texts);
    steps.push(
      setup.sh(
        `git checkout -q -b other && printf 'theirs\\n' >> ${f} && git commit -qam theirs && git checkout -q main && printf 'ours\\n' >> ${f} && git commit -qam ours && git merge -q other >/dev/null 2>&1; true`,
      ),
    );
    if (chance(r, 0.4)) steps.push(setup.sh(`printf 'resolved\\n' > ${f} && git add ${f}`));
  }
  if (!g.has('nested-repo') && chance(r, 0.12)) {
    steps.push(
      setup.sh(
        "mkdir -p vendor/lib && cd vendor/lib && git init -q && printf 'v1\\n' > v.txt && git add v.txt && git commit -qm v && printf 'wip\\n' >> v.txt",
      ),
    );
  }
  if (chance(r, 0.12)) {
    steps.push(
      setup.sh('git init -q --bare ../origin.git && git remote add origin ../origin.git && git push -q -u origin main 2>/dev/null'),
    );
    if (chance(r, 0.6))
      steps.push(
        setup.sh(
          "git clone -q ../origin.git ../other && cd ../other && printf 'o\\n' > other.txt && git add other.txt && git commit -qm other && git push -q origin main && cd ../repo && git fetch -q",
        ),
      );
  }
  // the person's work in progress
  for (const f of texts) {
    const x = r();
    if (x < 0.2) steps.push(person.append(f, `unstaged ${pick(r, WORDS)}\n`));
    else if (x < 0.32)
      steps.push(person.append(f, `staged ${pick(r, WORDS)}\n`), person.sh(`git add ${f}`), person.append(f, `on top ${pick(r, WORDS)}\n`));
    else if (x < 0.38 && !g.has('deletion-then-shell')) steps.push(person.rm(f));
    else if (x < 0.42) steps.push(person.rm(f), person.link(f, pick(r, files)));
    else if (x < 0.45 && !g.has('dir-over-tracked-then-shell')) steps.push(person.rm(f), person.file(`${f}/inner.txt`, text(r, 1)));
    else if (x < 0.48) steps.push(person.sh(`git rm -q --cached ${f}`));
  }
  if (chance(r, 0.7)) steps.push(person.file(pick(r, NOTES), text(r)));
  if (chance(r, 0.3)) steps.push(person.file('added.txt', text(r)), person.sh('git add added.txt'));
  if (chance(r, 0.15)) steps.push(person.file('ita.txt', text(r)), person.sh('git add -N ita.txt'));
  if (chance(r, 0.7)) steps.push(person.file('.env', `SECRET=${Math.floor(r() * 1000)}\n`));
  if (chance(r, 0.3)) steps.push(person.file('debug.log', text(r, 1)));
  if (chance(r, 0.4)) steps.push(person.file('dist/bundle.js', text(r, 1)));
  if (chance(r, 0.2)) steps.push(person.file('build/out/app.js', text(r, 1)));
  return steps;
}

interface View {
  files: string[];
  texts: string[];
  tracked: string[];
  dirs: string[];
  links: string[];
}

function view(w: World): View {
  const files: string[] = [];
  const texts: string[] = [];
  const tracked: string[] = [];
  const dirs: string[] = [];
  const links: string[] = [];
  for (const [p, s] of w.cur.paths) {
    if (p.startsWith('vendor/')) continue;
    if (s.wt?.startsWith('file ')) {
      files.push(p);
      if (w.previews.get(s.wt.split(' ')[2])?.startsWith('"') && !s.wt.endsWith('e69de29bb2d1d6434b8b29ae775ad8c2e48c5391')) texts.push(p);
    }
    if (s.wt === 'dir') dirs.push(p);
    if (s.wt?.startsWith('symlink')) links.push(p);
    if (s.idx?.startsWith('0 ')) tracked.push(p);
  }
  return { files, texts, tracked, dirs, links };
}

/** The online generator of one trial. */
export class Generator {
  private readonly r: Rng;
  private readonly g: ReadonlySet<Gate>;
  private readonly queue: Step[];
  private main: number;
  private n = 0;
  private winding = false;
  private denied: Call | null = null;
  private justRewound = false;
  /** rewinds left for the wind-down (a refused one leaves its turns: no endless retries) */
  private finalRewinds = -1;
  private lastFinal: { s: string; live: number } | null = null;

  constructor(
    readonly seed: number,
    opts: GenOptions = {},
  ) {
    this.r = prng(seed);
    this.g = opts.gates ?? gates();
    this.queue = setupSteps(this.r, this.g);
    this.main = opts.steps ?? 14 + Math.floor(this.r() * 17);
  }

  next(w: World): Step | null {
    const q = this.queue.shift();
    if (q) return q;
    w.flush();
    const step = this.choose(w);
    this.justRewound = step?.k === 'rewind';
    return step;
  }

  private newName(base: string): string {
    this.n++;
    const dot = base.lastIndexOf('.');
    return dot > base.lastIndexOf('/') ? `${base.slice(0, dot)}${this.n}${base.slice(dot)}` : `${base}${this.n}`;
  }

  private choose(w: World): Step | null {
    const r = this.r;
    const sessions = [...w.sessions.values()];
    if (this.denied) {
      // the person denied the call and makes a similar change by hand
      const c = this.denied;
      this.denied = null;
      if (c.tool === 'shell') return person.sh(c.cmd);
      if (c.op === 'write') return person.file(c.path, c.text ?? '');
      if (c.op === 'delete') return person.rm(c.path);
      return person.append(c.path, c.text ?? '');
    }
    if (this.justRewound && chance(r, 0.35) && w.lastRewind && (supportsUndo() || (w.lastRewind.forced && w.lastRewind.savedAs)))
      return { k: 'undo' };
    if (this.main > 0) {
      this.main--;
      const idle = sessions.filter((s) => !s.open);
      const open = sessions.filter((s) => s.open);
      const x = r();
      if (open.length === 0) {
        if (x < 0.6 || w.events.every((e) => e.actor.kind === 'setup'))
          return { k: 'start', s: pick(r, idle).spec.name, label: `prompt ${w.step + 1}` };
        if (x < 0.8) return this.personStep(w);
        return this.rewindStep(w) ?? this.personStep(w);
      }
      if (idle.length && x < 0.1) return { k: 'start', s: pick(r, idle).spec.name, label: `prompt ${w.step + 1}` };
      const s = pick(r, open);
      const y = r();
      if (y < 0.6) return this.callStep(w, s) ?? this.personStep(w);
      if (y < 0.78) return this.personStep(w, s);
      if (y < 0.94 && (s.open?.events.length ?? 0) > 0) return { k: 'end', s: s.spec.name };
      if (y < 0.97) return person.sh('git gc -q --prune=now');
      return this.callStep(w, s) ?? { k: 'end', s: s.spec.name };
    }
    // wind down: end every open turn, then rewind each session with turns
    const open = sessions.find((s) => s.open);
    if (open) return { k: 'end', s: open.spec.name };
    if (!this.winding) {
      this.winding = true;
      this.finalRewinds = 2 * sessions.length;
      if (chance(r, 0.4)) return this.personStep(w);
    }
    if (this.finalRewinds-- <= 0) return null;
    return this.rewindStep(w, true);
  }

  private rewindStep(w: World, final = false): Step | null {
    const r = this.r;
    const forced = (s: Sess) =>
      this.g.has('rewind-after-force') && w.events.some((e) => e.actor.kind === 'rewind' && e.actor.s === s.spec.name && e.forced);
    const candidates = [...w.sessions.values()].filter((s) => !s.open && !s.frozen && s.live.length > 0 && !forced(s));
    if (candidates.length === 0) return null;
    if (final && chance(r, 0.15) && ![...w.sessions.values()].some(forced)) return { k: 'rewind' };
    const s = pick(r, candidates);
    let turn = chance(r, 0.5) ? s.live.length : 1 + Math.floor(r() * s.live.length);
    // the wind-down's last rewind of this session was refused (its turns are all still there): force it, or take the newest turn only
    const refused = final && this.lastFinal?.s === s.spec.name && this.lastFinal.live === s.live.length;
    if (refused) turn = s.live.length;
    if (final) this.lastFinal = { s: s.spec.name, live: s.live.length };
    if (this.g.has('rewind-over-person-between-turns') && turn < s.live.length) {
      const a = analyze(w, s, s.live.slice(turn - 1), w.cur);
      if ([...a.ap.values()].some((i) => i.direct.length && !i.lastNonS)) turn = s.live.length;
    }
    const force = chance(r, refused ? 0.5 : final ? 0.2 : 0.12);
    const kill = chance(r, 0.1);
    // some of the turns' paths only (rewind -- PATH): one the agent changed, or its directory
    let paths: string[] | undefined;
    if (!refused && chance(r, 0.25)) {
      const changed = [...analyze(w, s, s.live.slice(turn - 1), w.cur).ap.keys()].sort();
      if (changed.length) {
        const p = pick(r, changed);
        paths = [chance(r, 0.3) && p.includes('/') ? p.slice(0, p.lastIndexOf('/')) : p];
      }
    }
    return { k: 'rewind', s: s.spec.name, turn, ...(force ? { force } : {}), ...(kill ? { kill } : {}), ...(paths ? { paths } : {}) };
  }

  /** Paths the open turn of `s` changed. */
  private touchedBy(s: Sess | undefined): string[] {
    if (!s?.open) return [];
    return [...new Set(s.open.events.flatMap((e) => [...e.changes.keys()]))];
  }

  /** Directories an agent's call created in a live turn. */
  private agentDirs(w: World): string[] {
    const out = new Set<string>();
    for (const s of w.sessions.values())
      for (const t of s.live)
        for (const e of t.events)
          for (const [p, [b, a]] of e.changes) if (a?.wt === 'dir' && b?.wt !== 'dir' && w.cur.paths.get(p)?.wt === 'dir') out.add(p);
    return [...out];
  }

  private personStep(w: World, during?: Sess): Step {
    const r = this.r;
    const v = view(w);
    // what the person must not touch while a gate is in force
    const avoid = new Set<string>();
    for (const s of w.sessions.values())
      if (s.open && !s.pay.ids && this.g.has('idless-person-between-calls')) for (const p of this.touchedBy(s)) avoid.add(p);
    const agentDirs = this.agentDirs(w);
    const ok = (p: string) =>
      ![...avoid].some((q) => related(p, q)) && !(this.g.has('note-in-agent-dir') && agentDirs.some((d) => isUnder(p, d) || d === p));
    const agentTouched = [...w.sessions.values()]
      .flatMap((s) => s.live.flatMap((t) => t.events.flatMap((e) => [...e.changes.keys()])))
      .filter((p) => w.cur.paths.get(p)?.wt?.startsWith('file ') && !p.startsWith('vendor/'));
    const x = r();
    if (x < 0.35 && agentTouched.filter(ok).length) {
      const p = pick(r, agentTouched.filter(ok));
      return chance(r, 0.6) ? person.append(p, `person ${pick(r, WORDS)}\n`) : person.file(p, text(r));
    }
    if (x < 0.45 && !this.g.has('note-in-agent-dir') && agentDirs.length)
      return person.file(`${pick(r, agentDirs)}/person-note.md`, text(r, 1));
    if (x < 0.55) return person.file(this.newName(pick(r, NOTES)), text(r));
    const files = v.files.filter(ok);
    const texts = v.texts.filter(ok);
    if (x < 0.68 && texts.length) return person.append(pick(r, texts), `person ${pick(r, WORDS)}\n`);
    if (x < 0.76 && files.length) return person.sh(`git add ${pick(r, files)}`);
    if (x < 0.82 && v.tracked.filter(ok).length) return person.sh(`git reset -q -- ${pick(r, v.tracked.filter(ok))}`);
    if (x < 0.86 && files.length) return person.chmod(pick(r, files), chance(r, 0.5));
    if (x < 0.9 && files.length && !(this.g.has('deletion-then-shell') && during)) {
      const p = pick(
        r,
        files.filter((f) => !this.g.has('deletion-then-shell') || !v.tracked.includes(f)).concat(NOTES.filter((n) => v.files.includes(n))),
      );
      if (p) return person.rm(p);
    }
    if (x < 0.93 && files.length) {
      const p = pick(r, files);
      return person.sh(`rm -f ${p} && ln -s ${pick(r, v.files)} ${p}`);
    }
    if (x < 0.95) return person.sh('git gc -q --prune=now');
    if (x < 0.97 && !during) return person.sh('git add -A');
    return person.file('.env', `SECRET=${Math.floor(r() * 1000)}\n`);
  }

  private callStep(w: World, s: Sess): Step | null {
    const r = this.r;
    const name = s.spec.name;
    if (!this.g.has('denied-call') && chance(r, 0.05)) {
      const c = this.call(w, s);
      if (c) {
        this.denied = c;
        return { k: 'call', s: name, calls: [c], denied: true };
      }
    }
    if (chance(r, 0.12)) {
      const a = this.call(w, s);
      const b = this.call(w, s);
      // the later-path gate sees both writes of a parallel pair (the second may not sort first)
      const sortsFirst =
        a?.tool === 'write' &&
        b?.tool === 'write' &&
        this.g.has('later-path-sorts-first') &&
        (b.path < a.path || a.path < (s.open?.declared[0] ?? ''));
      if (a && b && !sortsFirst) return { k: 'call', s: name, calls: [a, b], ...(chance(r, 0.5) ? { afterOrder: [1, 0] } : {}) };
    }
    const c = this.call(w, s);
    return c ? { k: 'call', s: name, calls: [c] } : null;
  }

  private call(w: World, s: Sess): Call | null {
    for (let tries = 0; tries < 6; tries++) {
      const c = chance(this.r, 0.45) ? this.writeCall(w, s) : this.shellCall(w, s);
      if (c && s.pay.canRun(c)) return c;
    }
    return null;
  }

  private writeCall(w: World, s: Sess): Call | null {
    const r = this.r;
    const v = view(w);
    const turn = s.open;
    const removed = (turn?.events ?? []).flatMap((e) =>
      [...e.changes].filter(([, [b, a]]) => b?.wt === 'dir' && a?.wt !== 'dir').map(([p]) => p),
    );
    const okPath = (p: string) => {
      // a write of .gitignore in parallel with a command un-ignores files inside the command's run
      if (this.g.has('command-changes-gitignore') && p.endsWith('.gitignore')) return false;
      if (this.g.has('write-under-removed-dir') && removed.some((d) => isUnder(p, d) || d === p)) return false;
      if (this.g.has('later-path-sorts-first') && turn?.declared.length && p < turn.declared[0]) return false;
      if (this.g.has('write-through-symlink') && throughLink(w, p)) return false;
      return true;
    };
    const x = r();
    let c: Call;
    if (x < 0.35) c = write(chance(r, 0.5) ? this.newName(pick(r, NEW_FILES)) : pick(r, NEW_FILES), text(r));
    else if (x < 0.6 && v.files.length) c = write(pick(r, v.files), text(r));
    else if (x < 0.8 && v.texts.length) {
      const p = pick(r, v.texts);
      const content = readFileSync(join(w.dir, p), 'latin1');
      const line = content.split('\n')[Math.floor(r() * content.split('\n').length)] || content.slice(0, 3);
      c = edit(p, line, `${line} edited`);
    } else if (x < 0.88 && v.files.length) c = del(pick(r, v.files));
    else if (x < 0.93) c = write(pick(r, ['dist/app.js', 'build/gen.js', '.env', 'debug.log']), text(r, 1));
    else if (x < 0.97 && v.links.length) c = write(pick(r, v.links), text(r, 1));
    else c = write(`${pick(r, v.dirs.length ? v.dirs : ['src'])}/${this.newName('f.txt')}`, text(r), { fail: chance(r, 0.5) });
    return okPath(c.path as string) ? c : null;
  }

  private shellCall(w: World, s: Sess): Call | null {
    const r = this.r;
    const v = view(w);
    const g = this.g;
    // gates on the state a command would start from
    // (also the turn's own deletion: the engine records it again, for a read-only command too)
    if (g.has('deletion-then-shell') && [...w.cur.paths].some(([, st]) => st.idx?.startsWith('0 ') && !st.wt)) return null;
    if (g.has('dir-over-tracked-then-shell') && [...w.cur.paths].some(([, st]) => st.idx && st.wt === 'dir')) return null;
    if (
      g.has('note-in-agent-dir') &&
      this.agentDirs(w).some((d) =>
        [...w.events].some((e) => e.actor.kind === 'person' && [...e.changes.keys()].some((q) => isUnder(q, d))),
      )
    )
      return null;
    if (g.has('crlf') && existsLine(w, '.gitattributes')) return null;
    const inIgnoredDir = (p: string) => /^(dist|build|node_modules)\//.test(p);
    const keep = (p: string) =>
      !(g.has('command-changes-gitignore') && p.endsWith('.gitignore')) && !(g.has('command-writes-ignored-dir') && inIgnoredDir(p));
    const files = v.files.filter(keep);
    const texts = v.texts.filter(keep);
    const F = () => pick(r, files.length ? files : ['a.txt']);
    const T = () => pick(r, texts.length ? texts : ['a.txt']);
    const D = () => pick(r, v.dirs.filter((d) => !d.startsWith('vendor')).length ? v.dirs.filter((d) => !d.startsWith('vendor')) : ['src']);
    const TR = () => pick(r, v.tracked.length ? v.tracked : ['a.txt']);
    const x = r();
    const cmd = (() => {
      if (x < 0.12) return pick(r, READ_ONLY);
      if (x < 0.2)
        return pick(r, [`sed -i '1s/^/agent: /' ${T()}`, `sed -i 's/line/LINE/g' ${T()}`, `sed -i '$a appended by agent' ${T()}`]);
      if (x < 0.27) return pick(r, [`rm ${F()}`, `rm -f ${F()}`, `rm -rf ${D()}`]);
      if (x < 0.32) {
        const d = this.newName(pick(r, NEW_DIRS));
        return pick(r, [`mv ${F()} ${this.newName('moved.txt')}`, `mkdir -p ${d} && mv ${F()} ${d}/`]);
      }
      if (x < 0.38) {
        const d = pick(r, NEW_DIRS);
        return `mkdir -p ${d} && echo ${pick(r, WORDS)} > ${d}/${this.newName('f.txt')}`;
      }
      if (x < 0.41) return `cp ${F()} ${this.newName('copy.txt')}`;
      if (x < 0.44) return pick(r, [`chmod +x ${F()}`, `chmod -x ${F()}`]);
      if (x < 0.47) return pick(r, [`ln -s ${F()} ${this.newName('ln')}`, `ln -sf ${F()} ${F()}`]);
      if (x < 0.5) return pick(r, [`echo TOKEN=agent >> .env`, `echo agent >> debug.log`]);
      if (x < 0.55)
        return pick(r, [
          'rm -rf dist',
          'rm -rf build',
          ...(g.has('command-writes-ignored-dir')
            ? []
            : [
                'mkdir -p dist && echo bundle > dist/bundle.js',
                'mkdir -p build/out && echo app > build/out/app.js',
                'mkdir -p node_modules/pkg && echo m > node_modules/pkg/index.js',
              ]),
        ]);
      if (x < 0.62) return pick(r, ['git add -A', `git add ${F()}`, `git add -A && git commit -qm agent`]);
      if (x < 0.65) return `git diff -U0 -- ${T()} | awk '/^@@/{n++} n<2' | git apply --cached --unidiff-zero -`;
      if (x < 0.7)
        return pick(r, [
          `git rm --cached -q ${TR()}`,
          `git rm -q ${TR()}`,
          `git restore ${TR()}`,
          `git restore --staged ${TR()}`,
          `git checkout -- ${TR()}`,
        ]);
      if (x < 0.74) return pick(r, ['git stash -q', 'git stash pop -q', 'git commit -qam agent', 'git reset -q', 'git reset -q --hard']);
      if (x < 0.76) return 'git gc -q --prune=now';
      if (x < 0.79 && !g.has('gc-in-command')) return `rm -f ${pick(r, NOTES)} ${F()} && git gc -q --prune=now`;
      if (x < 0.83)
        return pick(r, [
          `f=${F()}; rm -f $f && mkdir $f && echo x > $f/inner.txt`,
          `d=${D()}; rm -rf $d && echo x > $d`,
          `f=${F()}; rm -f $f && ln -s ${F()} $f`,
        ]);
      if (x < 0.88) return pick(r, [`echo partial >> ${T()}; exit 1`, 'false', 'sed -i s/a/b/ missing-file.txt']);
      if (x < 0.9 && w.nested.size) return pick(r, ['rm -rf vendor', 'echo agent >> vendor/lib/v.txt']);
      if (x < 0.93 && existsLine(w, 'origin'))
        return pick(r, [
          'git pull -q --ff-only',
          'git commit -qam pushed && git push -q origin HEAD',
          ...(g.has('push-skewed-clock') ? [] : ["GIT_COMMITTER_DATE='1500000000 +0000' git commit -qam old && git push -q origin HEAD"]),
        ]);
      return pick(r, [`echo ${pick(r, WORDS)} >> ${T()}`, `printf '${pick(r, WORDS)}\\n' > ${this.newName('out.txt')}`]);
    })();
    return shell(cmd);
  }
}

/** Is `p` a symlink or beneath one (a write would go through it)? */
function throughLink(w: World, p: string): boolean {
  const parts = p.split('/');
  for (let i = 1; i <= parts.length; i++) if (w.cur.paths.get(parts.slice(0, i).join('/'))?.wt?.startsWith('symlink')) return true;
  return false;
}

/** A marker of the setup: a .gitattributes file, or an origin remote. */
function existsLine(w: World, what: 'origin' | '.gitattributes'): boolean {
  if (what === '.gitattributes') return w.cur.paths.has('.gitattributes') || w.crlfConfig;
  return w.hasRemote;
}

export type { PathState };
