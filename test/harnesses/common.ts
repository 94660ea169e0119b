/**
 * Shared infrastructure of `npm run test:harnesses`: the real harness CLIs (Claude Code, Codex,
 * Gemini CLI), installed from the registry into a cache folder by scripts/install-harnesses.mjs,
 * each driven by a scripted model server on 127.0.0.1, in a scratch project where a person has
 * work in progress and git-scalpel is a devDependency installed through its own `install`.
 * Real git and the bytes on disk are the oracle.
 *
 *   const p = await makeProject({ harness: 'claude-code', name: 'main turn' });
 *   const before = p.oracle();
 *   const server = await startModelServer((req, res) => ...);           // or a harness's own model
 *   const run = await runProcess(harnessBinary('claude-code'), [...], { cwd: p.dir, env: p.env({...}) });
 *   p.payloads()                                   // what the harness really sent to its hooks
 *   expect(p.scalpel(['rewind']).code).toBe(0);
 *   expectSameOracle(p.oracle(), before, 'after rewind');
 *
 * Stable API (other harness tests build on it; add, do not change):
 *   harnessPins, harnessPin, harnessCacheDir, harnessBinary, harnessAvailable
 *   scalpelPackage                        the `npm pack` tarball of ./dist and an installed node_modules
 *   makeProject(opts) → ScratchProject    dir, home, env(), scalpel(), git(), oracle(), payloads(), artifact()
 *                                         (opts: files, personWork, installArgs, alsoInstall, logger, commitConfig)
 *   BASE_FILES, PERSON_WORK               what every scratch project holds, and the person's work in progress
 *   scalpelStatus(p, harness)             `git-scalpel status --json`'s entry for one harness (kept as an artifact)
 *   makeHome, harnessEnv                  an isolated HOME (git identity, XDG, TMPDIR) and the harness's environment
 *   addPayloadLogger(file, opts)          (makeProject calls it) a logging hook entry beside each of ours,
 *                                         extraEvents for events git-scalpel does not install, envNames for
 *                                         the names of every variable a hook gets; loggerCommand
 *   readPayloads(file)                    the logged events, in start order
 *   oracle(dir), describeDifference(a, b), expectSameOracle(actual, expected, what)
 *   runProcess(cmd, args, opts)           async, timeout (process group killed), captured output
 *   startModelServer(handler, opts)       HTTP on 127.0.0.1, random port, every request recorded
 *   sendJson, sendSse, readBody
 *   ScriptRunner, Step, ToolCall          a model script: assistant steps, advanced by tool results
 *   ScriptedModel, startScriptedModel     a model server answering from a script (main/side/unexpected requests);
 *   answerStep, answerUnexpected          its main-loop step and its 404, recorded
 *   artifactDir(harness, name)            test/harnesses/.payloads/<harness>/<name>/ (gitignored)
 */
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  appendFileSync,
  chmodSync,
  cpSync,
  existsSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { homedir, tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect, onTestFailed } from 'vitest';
import { git, makeTempDir } from '../helpers/git.js';
import { gitView, worktreeView, type GitView, type TreeItem } from '../helpers/view.js';

export type HarnessName = 'claude-code' | 'codex' | 'gemini';

/** The repository this test runs from (where package.json and dist/ are). */
export const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
export const HARNESS_TEST_DIR = join(REPO_ROOT, 'test/harnesses');
export const PAYLOAD_LOGGER = join(HARNESS_TEST_DIR, 'payload-logger.mjs');

// ---------------------------------------------------------------------------------------------
// Pinned harnesses and the cache they are installed into

export interface HarnessPin {
  package: string;
  version: string;
  bin: string[];
  ignoreScripts?: boolean;
  versionArgs?: string[];
}

export function harnessPins(): Record<string, HarnessPin> {
  const all = JSON.parse(readFileSync(join(HARNESS_TEST_DIR, 'versions.json'), 'utf8')) as Record<string, unknown>;
  return Object.fromEntries(Object.entries(all).filter(([k]) => !k.startsWith('$'))) as Record<string, HarnessPin>;
}

export function harnessPin(name: HarnessName): HarnessPin {
  const pin = harnessPins()[name];
  if (!pin) throw new Error(`test/harnesses/versions.json pins no ${name}`);
  return pin;
}

/** `$GIT_SCALPEL_HARNESS_CACHE`, default `~/.cache/git-scalpel/harnesses` (as scripts/install-harnesses.mjs). */
export function harnessCacheDir(): string {
  return process.env.GIT_SCALPEL_HARNESS_CACHE || join(process.env.HOME || homedir(), '.cache/git-scalpel/harnesses');
}

function installedMarker(name: HarnessName): { bin: string; version: string; versionText?: string } | null {
  const pin = harnessPin(name);
  const marker = join(harnessCacheDir(), `${name}@${pin.version}`, '.installed.json');
  if (!existsSync(marker)) return null;
  const m = JSON.parse(readFileSync(marker, 'utf8')) as { bin: string; version: string; versionText?: string };
  return m.bin && existsSync(m.bin) ? m : null;
}

/** Whether the pinned version of `name` is installed in the cache. */
export function harnessAvailable(name: HarnessName): boolean {
  return installedMarker(name) !== null;
}

/** The pinned harness's executable in the cache; throws saying how to install it. */
export function harnessBinary(name: HarnessName): string {
  const m = installedMarker(name);
  if (!m)
    throw new Error(
      `${name} ${harnessPin(name).version} is not installed in ${harnessCacheDir()}: run node scripts/install-harnesses.mjs ${name}`,
    );
  return m.bin;
}

// ---------------------------------------------------------------------------------------------
// Artifacts: what each test's harness sent, kept after the run (test/harnesses/.payloads is gitignored)

export function slug(name: string): string {
  return (
    name
      .toLowerCase()
      .replace(/[^a-z0-9]+/g, '-')
      .replace(/^-|-$/g, '')
      .slice(0, 80) || 'test'
  );
}

/** A fresh, empty `test/harnesses/.payloads/<harness>/<slug(name)>/`. */
export function artifactDir(harness: string, name: string): string {
  const dir = join(HARNESS_TEST_DIR, '.payloads', harness, slug(name));
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  return dir;
}

// ---------------------------------------------------------------------------------------------
// git-scalpel as a package: `npm pack` of the current build, installed once, reused

export interface ScalpelPackage {
  /** The tarball `npm pack` wrote. */
  tarball: string;
  /** A project whose node_modules holds git-scalpel installed from the tarball (copied into each scratch project). */
  template: string;
}

let packageMemo: ScalpelPackage | undefined;

function distDigest(): string {
  const h = createHash('sha1');
  const walk = (dir: string, rel: string) => {
    for (const name of readdirSync(dir).sort()) {
      const abs = join(dir, name);
      const st = lstatSync(abs);
      if (st.isDirectory()) walk(abs, `${rel}${name}/`);
      else if (st.isFile()) h.update(`${rel}${name}\0${st.size}\0`).update(readFileSync(abs));
    }
  };
  const dist = join(REPO_ROOT, 'dist');
  if (!existsSync(join(dist, 'git-scalpel.cjs'))) throw new Error(`no build in ${dist}: run npm run build`);
  walk(dist, '');
  h.update(readFileSync(join(REPO_ROOT, 'package.json')));
  return h.digest('hex').slice(0, 16);
}

/**
 * `npm pack` of the current build, and `npm install --no-audit --no-fund <tarball>` into a
 * template project, once per build: keyed by a digest of dist/ and package.json under
 * `$TMPDIR/git-scalpel-harness-pkg/<digest>` and shared by every test file and run of that build
 * (built in a temp folder, renamed into place, so concurrent test files do not collide).
 */
export function scalpelPackage(): ScalpelPackage {
  if (packageMemo) return packageMemo;
  const base = join(tmpdir(), 'git-scalpel-harness-pkg');
  const digest = distDigest();
  const dir = join(base, digest);
  const done = join(dir, 'done.json');
  if (!existsSync(done)) {
    mkdirSync(base, { recursive: true });
    const tmp = `${dir}.tmp-${process.pid}-${Date.now()}`;
    mkdirSync(join(tmp, 'template'), { recursive: true });
    const npmEnv = { ...process.env, npm_config_update_notifier: 'false', npm_config_audit: 'false', npm_config_fund: 'false' };
    const out = execFileSync('npm', ['pack', '--silent', '--pack-destination', tmp, REPO_ROOT], { cwd: tmp, env: npmEnv, encoding: 'utf8' })
      .trim()
      .split('\n')
      .pop()!;
    const tarballTmp = join(tmp, out);
    writeFileSync(
      join(tmp, 'template/package.json'),
      JSON.stringify({ name: 'scratch-project', version: '1.0.0', private: true }, null, 2) + '\n',
    );
    execFileSync('npm', ['install', '--no-audit', '--no-fund', '--loglevel=error', '--save-dev', tarballTmp], {
      cwd: join(tmp, 'template'),
      env: npmEnv,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    writeFileSync(join(tmp, 'done.json'), JSON.stringify({ tarball: out, digest }) + '\n');
    try {
      renameSync(tmp, dir);
    } catch {
      rmSync(tmp, { recursive: true, force: true }); // another process won the race
    }
    // older builds' packages go
    for (const name of readdirSync(base))
      if (name !== digest && !name.includes('.tmp-')) rmSync(join(base, name), { recursive: true, force: true });
  }
  const meta = JSON.parse(readFileSync(done, 'utf8')) as { tarball: string };
  packageMemo = { tarball: join(dir, meta.tarball), template: join(dir, 'template') };
  return packageMemo;
}

/** node_modules of the template into `dest`: hard links (fast, nothing writes there), a copy where links fail. */
function copyNodeModules(template: string, dest: string): void {
  const from = join(template, 'node_modules');
  const to = join(dest, 'node_modules');
  const r = spawnSync('cp', ['-al', from, to], { stdio: 'pipe' });
  if (r.status !== 0) {
    rmSync(to, { recursive: true, force: true });
    cpSync(from, to, { recursive: true, verbatimSymlinks: true });
  }
}

// ---------------------------------------------------------------------------------------------
// The harness's environment: an isolated HOME, nothing of the caller's agent or test runner

const DROPPED_ENV =
  /^(GIT_|ANTHROPIC_|CLAUDE|CODEX_|OPENAI_|GEMINI_|GOOGLE_|VERTEX|VITEST|NODE_OPTIONS$|NODE_V8_COVERAGE$|npm_|MCP_|OTEL_|TEST$)/;

let sharedCodeCache: string | undefined;

/**
 * A fresh home directory: `.gitconfig` (identity, `init.defaultBranch=main`, no gpg, no auto gc),
 * XDG folders inside it.
 */
export function makeHome(prefix = 'scalpel-harness-home-'): string {
  const home = makeTempDir(prefix);
  writeFileSync(
    join(home, '.gitconfig'),
    '[init]\n\tdefaultBranch = main\n[user]\n\tname = A Person\n\temail = person@example.com\n[core]\n\tautocrlf = false\n[commit]\n\tgpgSign = false\n[gc]\n\tauto = 0\n[maintenance]\n\tauto = false\n',
  );
  for (const d of ['.config', '.cache', '.local/share', '.local/state', 'tmp']) mkdirSync(join(home, d), { recursive: true });
  return home;
}

/**
 * The environment a harness (and so its hooks) runs with: the caller's PATH and locale, none of
 * its GIT_*, agent (ANTHROPIC_*, CLAUDE*, CODEX_*, OPENAI_*, GEMINI_*, GOOGLE_*) or test-runner
 * variables, HOME and XDG_* inside `home`, git's system config off, git-scalpel's V8 code cache in
 * one folder shared by the run, TMPDIR inside `home`; `extra` on top (undefined values remove a variable).
 */
export function harnessEnv(home: string, extra: Record<string, string | undefined> = {}): NodeJS.ProcessEnv {
  if (sharedCodeCache === undefined) sharedCodeCache = makeTempDir('scalpel-harness-codecache-');
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!DROPPED_ENV.test(k) && v !== undefined) env[k] = v;
  Object.assign(env, {
    HOME: home,
    XDG_CONFIG_HOME: join(home, '.config'),
    XDG_CACHE_HOME: join(home, '.cache'),
    XDG_DATA_HOME: join(home, '.local/share'),
    XDG_STATE_HOME: join(home, '.local/state'),
    // the harness's own temporary files (Claude Code: /tmp/claude-<uid>/…, its sockets) go with the home
    TMPDIR: join(home, 'tmp'),
    LANG: 'C.UTF-8',
    LC_ALL: 'C.UTF-8',
    TZ: 'UTC',
    GIT_CONFIG_NOSYSTEM: '1',
    GIT_TERMINAL_PROMPT: '0',
    GIT_SCALPEL_CACHE_DIR: sharedCodeCache,
  });
  for (const [k, v] of Object.entries(extra)) {
    if (v === undefined) delete env[k];
    else env[k] = v;
  }
  return env;
}

// ---------------------------------------------------------------------------------------------
// Processes

export interface ProcResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  ms: number;
  timedOut: boolean;
}

export interface RunOptions {
  cwd: string;
  env: NodeJS.ProcessEnv;
  /** Killed (its whole process group, SIGKILL after SIGTERM) after this long; default 120 s. */
  timeoutMs?: number;
  input?: string;
  /** When set, stdout and stderr are also written to `<prefix>.stdout.txt` / `.stderr.txt`. */
  artifactPrefix?: string;
}

/**
 * Runs a process without blocking the event loop (a model server in this same process must keep
 * answering): stdin from `input` (else closed), stdout/stderr captured, a timeout that kills the
 * process group.
 */
export function runProcess(cmd: string, args: readonly string[], opts: RunOptions): Promise<ProcResult> {
  const t0 = Date.now();
  return new Promise((resolvePromise, reject) => {
    const child = spawn(cmd, args, { cwd: opts.cwd, env: opts.env, stdio: ['pipe', 'pipe', 'pipe'], detached: true });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    let timedOut = false;
    child.stdout.on('data', (c: Buffer) => out.push(c));
    child.stderr.on('data', (c: Buffer) => err.push(c));
    child.stdin.on('error', () => {});
    child.stdin.end(opts.input ?? '');
    const kill = (sig: NodeJS.Signals) => {
      try {
        process.kill(-child.pid!, sig);
      } catch {
        // gone
      }
    };
    const timer = setTimeout(() => {
      timedOut = true;
      kill('SIGTERM');
      setTimeout(() => kill('SIGKILL'), 3000).unref();
    }, opts.timeoutMs ?? 120_000);
    child.on('error', (e) => {
      clearTimeout(timer);
      reject(e);
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      const r: ProcResult = {
        code,
        signal,
        stdout: Buffer.concat(out).toString('utf8'),
        stderr: Buffer.concat(err).toString('utf8'),
        ms: Date.now() - t0,
        timedOut,
      };
      if (opts.artifactPrefix) {
        writeFileSync(`${opts.artifactPrefix}.stdout.txt`, r.stdout);
        writeFileSync(
          `${opts.artifactPrefix}.stderr.txt`,
          `${r.stderr}\n[exit ${code}${signal ? ` signal ${signal}` : ''}${timedOut ? ' TIMED OUT' : ''} after ${r.ms} ms]\n`,
        );
      }
      resolvePromise(r);
    });
  });
}

export interface SyncRun {
  code: number;
  stdout: string;
  stderr: string;
}

// ---------------------------------------------------------------------------------------------
// The oracle: git's view and every byte on disk

export interface Oracle {
  git: GitView;
  /** Every path but `.git` and the skipped top-level folders: type, exec bit, content hash, link target. */
  tree: Record<string, TreeItem>;
}

/** Top-level entries the oracle does not walk (the installed package, unchanged by any turn). */
export const ORACLE_SKIP = ['node_modules'];

export function oracle(dir: string, opts: { skip?: readonly string[] } = {}): Oracle {
  return { git: gitView(dir), tree: worktreeView(dir, { skip: opts.skip ?? ORACLE_SKIP }) };
}

function describeTreeItem(t: TreeItem | undefined): string {
  if (!t) return 'absent';
  if (t.type === 'symlink') return `symlink -> ${t.target}`;
  if (t.type === 'dir') return 'dir';
  return `file ${t.mode?.toString(8)} ${t.sha?.slice(0, 12)}`;
}

function lineDiff(a: string, b: string): string {
  const al = a.split('\n');
  const bl = b.split('\n');
  const bs = new Set(bl);
  const as = new Set(al);
  const lines = [...al.filter((l) => !bs.has(l)).map((l) => `  - ${l}`), ...bl.filter((l) => !as.has(l)).map((l) => `  + ${l}`)];
  return lines.slice(0, 60).join('\n') + (lines.length > 60 ? `\n  … ${lines.length - 60} more` : '');
}

/**
 * '' when the two oracles agree; otherwise a readable account: per git view (status, diff, …) the
 * lines only in `expected` (-) and only in `actual` (+), and per path what it was and what it is.
 */
export function describeDifference(actual: Oracle, expected: Oracle): string {
  const parts: string[] = [];
  for (const key of Object.keys(expected.git) as (keyof GitView)[]) {
    if (actual.git[key] !== expected.git[key])
      parts.push(`git ${key} differs (- expected, + actual):\n${lineDiff(expected.git[key], actual.git[key])}`);
  }
  const paths = [...new Set([...Object.keys(expected.tree), ...Object.keys(actual.tree)])].sort();
  const changed = paths.filter((p) => JSON.stringify(actual.tree[p]) !== JSON.stringify(expected.tree[p]));
  if (changed.length)
    parts.push(
      `worktree differs:\n${changed.map((p) => `  ${p}: expected ${describeTreeItem(expected.tree[p])}, found ${describeTreeItem(actual.tree[p])}`).join('\n')}`,
    );
  return parts.join('\n');
}

/** Fails with `describeDifference` unless the two oracles agree. */
export function expectSameOracle(actual: Oracle, expected: Oracle, what: string): void {
  const d = describeDifference(actual, expected);
  expect(d, `${what}:\n${d}`).toBe('');
}

// ---------------------------------------------------------------------------------------------
// The payload logger: a second hook entry beside each of git-scalpel's

export interface LoggedPayload {
  /** The event name as configured (the key of the hooks object). */
  event: string;
  /** When the hook process started, read its stdin, and ended (ms since the epoch). */
  start: number;
  read: number;
  end: number;
  pid: number;
  cwd: string;
  /** The payload as parsed JSON (undefined when it was not JSON: then `raw`). */
  payload?: any;
  raw?: string;
  /** The CLAUDE*, GEMINI*, CODEX* variables the harness gave its hook. */
  env: Record<string, string>;
  /** With LoggerOptions.envNames: the names of every variable the hook got, sorted. */
  envNames?: string[];
}

export interface LoggerOptions {
  /** The log file (JSON lines). */
  log: string;
  /** What the logger prints on stdout (Gemini CLI wants JSON: '{}'). */
  stdout?: string;
  /** Per event name: how long the logger keeps running after reading (to see hooks overlap). */
  holdMs?: Record<string, number>;
  /** Which hook entries are git-scalpel's (default: the command contains `git-scalpel` and ` hook `). */
  isOurs?: (command: string) => boolean;
  /**
   * Events git-scalpel does not install that the logger should record too (e.g. Claude Code's
   * PermissionDenied, Notification): one group per event, no matcher, the logger alone, added when
   * the config has no group for that event yet. `group` adds fields to those groups (a matcher).
   */
  extraEvents?: string[];
  extraGroup?: Record<string, unknown>;
  /** Also record the names of every environment variable the hook got (LoggedPayload.envNames). */
  envNames?: boolean;
}

/** The logger's command line for one event. */
export function loggerCommand(opts: LoggerOptions, event: string): string {
  const q = (s: string) => (/^[A-Za-z0-9_@%+=:,./-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`);
  const parts = ['node', q(PAYLOAD_LOGGER), '--log', q(opts.log), '--event', q(event)];
  const hold = opts.holdMs?.[event];
  if (hold) parts.push('--hold', String(hold));
  if (opts.stdout !== undefined) parts.push('--stdout', q(opts.stdout));
  if (opts.envNames) parts.push('--env-names');
  return parts.join(' ');
}

/**
 * Adds, in the hooks file `file` (`{"hooks": {"<Event>": [{"matcher"?, "hooks": [entry…]}]}}`,
 * the shape Claude Code's settings.json, Codex's hooks.json and Gemini CLI's settings.json share),
 * a logger entry after each of git-scalpel's entries, in the same group, copied from ours with its
 * command (and `name`, where ours has one) replaced. Returns the events it added a logger to.
 */
export function addPayloadLogger(file: string, opts: LoggerOptions): string[] {
  const isOurs = opts.isOurs ?? ((c: string) => c.includes('git-scalpel') && c.includes(' hook '));
  const config = JSON.parse(readFileSync(file, 'utf8')) as { hooks?: Record<string, { hooks?: Record<string, unknown>[] }[]> };
  const events: string[] = [];
  for (const [event, groups] of Object.entries(config.hooks ?? {})) {
    for (const group of groups) {
      const entries = group.hooks ?? [];
      const i = entries.findIndex((e) => typeof e.command === 'string' && isOurs(e.command));
      if (i < 0) continue;
      const logger: Record<string, unknown> = { ...entries[i], command: loggerCommand(opts, event) };
      if ('name' in logger) logger.name = 'payload-logger';
      entries.splice(i + 1, 0, logger);
      events.push(event);
    }
  }
  const template = Object.values(config.hooks ?? {})
    .flat()
    .flatMap((g) => g.hooks ?? [])
    .find((e) => typeof e.command === 'string' && isOurs(e.command));
  for (const event of opts.extraEvents ?? []) {
    config.hooks ??= {};
    if (config.hooks[event]) continue;
    const logger: Record<string, unknown> = { ...(template ?? { type: 'command' }), command: loggerCommand(opts, event) };
    if ('name' in logger) logger.name = 'payload-logger';
    config.hooks[event] = [{ ...(opts.extraGroup ?? {}), hooks: [logger] }];
    events.push(event);
  }
  writeFileSync(file, JSON.stringify(config, null, 2) + '\n');
  return events;
}

/** The logged events, in the order their hook processes started. */
export function readPayloads(file: string): LoggedPayload[] {
  if (!existsSync(file)) return [];
  const list = readFileSync(file, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as LoggedPayload);
  return list.sort((a, b) => a.start - b.start || a.read - b.read);
}

// ---------------------------------------------------------------------------------------------
// The scratch project

/** Files every scratch project starts with (committed), besides package.json and the harness config. */
export const BASE_FILES: Readonly<Record<string, string>> = {
  '.gitignore': '.env\nnode_modules/\n*.log\nbuild/\n',
  'README.md': '# project\n\nline 1\nline 2\n',
  'src/app.ts': 'export const a = 1;\nexport const b = 2;\nexport const c = 3;\n',
  'src/lib/util.ts': 'export function u() {\n  return 1;\n}\n',
  'src/config.ts': 'export const mode = "development";\nexport const port = 8080;\n',
  'docs/guide.md': '# guide\n\nThe colour of the button is blue.\n',
  'old/legacy.txt': 'legacy code, to be removed\n',
};

/** The person's work in progress, on top of the base commit. */
export const PERSON_WORK = {
  /** README.md: an unstaged edit. */
  readme: '# project\n\nline 1 edited by the person\nline 2\n',
  /** src/app.ts: a staged hunk (a = 10)… */
  appStaged: 'export const a = 10;\nexport const b = 2;\nexport const c = 3;\n',
  /** …with an unstaged edit on top (c = 30). */
  appWorktree: 'export const a = 10;\nexport const b = 2;\nexport const c = 30;\n',
  /** notes.txt: untracked. */
  notes: 'untracked notes of the person\n',
  /** .env: ignored, kept by hand. */
  env: 'SECRET=person\n',
};

export interface ProjectOptions {
  harness: HarnessName;
  /** The test's name: names the artifact folder. */
  name: string;
  /** More committed files (a Buffer for bytes; `{ link }` for a symlink; `{ content, mode }` for an executable). */
  files?: Record<string, string | Buffer | { link: string } | { content: string | Buffer; mode: number }>;
  /** Runs after the person's work in progress is made (more of it). */
  personWork?: (dir: string) => void;
  /** Extra arguments to `git-scalpel install <harness>`. */
  installArgs?: string[];
  /** More `git-scalpel install <harness> ARGS…` runs after the first (e.g. [['--mcp']]: the MCP server too). */
  alsoInstall?: string[][];
  /** The logger (default: on, printing nothing). `false`: no logger. */
  logger?: false | Omit<LoggerOptions, 'log'>;
  /** Whether the harness's config (and package.json) are committed with the base (default true). */
  commitConfig?: boolean;
}

export interface ScratchProject {
  harness: HarnessName;
  dir: string;
  home: string;
  /** This test's artifact folder (payloads.jsonl, the harness's output, model requests). */
  artifacts: string;
  payloadLog: string;
  /** The project file `install` wrote (relative to dir), and what it printed. */
  configFile: string;
  install: SyncRun;
  /** The harness's environment (harnessEnv with this project's home), `extra` on top. */
  env(extra?: Record<string, string | undefined>): NodeJS.ProcessEnv;
  /** The project's own `node_modules/.bin/git-scalpel` with `args`, in dir (as a person runs it). */
  scalpel(args: readonly string[], opts?: { cwd?: string }): SyncRun;
  /** git in dir, with the test helpers' fixed environment. */
  git(args: readonly string[]): string;
  oracle(): Oracle;
  payloads(): LoggedPayload[];
  /** Writes `text` to `<artifacts>/<name>`. */
  artifact(name: string, text: string): void;
  /** Writes a worktree file (parents made). */
  write(rel: string, content: string | Buffer, mode?: number): void;
  read(rel: string): string;
}

function writeInto(dir: string, rel: string, content: string | Buffer, mode?: number): void {
  const abs = join(dir, rel);
  mkdirSync(dirname(abs), { recursive: true });
  writeFileSync(abs, content);
  if (mode !== undefined) chmodSync(abs, mode);
}

/**
 * A scratch project as a person has it: the base files and a package.json committed, git-scalpel
 * installed as a devDependency from the tarball of this build (node_modules copied from the
 * template), `node_modules/.bin/git-scalpel install <harness>` run exactly as a user would (its
 * output in `install`), a payload logger beside each hook entry, config committed; then the
 * person's work in progress (PERSON_WORK: an unstaged edit, a staged hunk with an unstaged edit
 * on top, an untracked note, an ignored .env).
 */
export function makeProject(opts: ProjectOptions): ScratchProject {
  const pkg = scalpelPackage();
  const artifacts = artifactDir(opts.harness, opts.name);
  const payloadLog = join(artifacts, 'payloads.jsonl');
  const home = makeHome();
  const dir = makeTempDir(`scalpel-${opts.harness}-project-`);
  git(dir, ['init', '-q', '.']);
  for (const [rel, content] of Object.entries(BASE_FILES)) writeInto(dir, rel, content);
  writeInto(dir, 'run.sh', '#!/bin/sh\necho run\n', 0o755);
  for (const [rel, spec] of Object.entries(opts.files ?? {})) {
    if (typeof spec === 'string' || Buffer.isBuffer(spec)) writeInto(dir, rel, spec);
    else if ('link' in spec) {
      mkdirSync(dirname(join(dir, rel)), { recursive: true });
      symlinkSync(spec.link, join(dir, rel));
    } else writeInto(dir, rel, spec.content, spec.mode);
  }
  const templatePkg = JSON.parse(readFileSync(join(pkg.template, 'package.json'), 'utf8')) as { devDependencies: Record<string, string> };
  const spec = templatePkg.devDependencies['git-scalpel'];
  writeInto(
    dir,
    'package.json',
    JSON.stringify(
      {
        name: 'scratch-project',
        version: '1.0.0',
        private: true,
        scripts: { test: 'node -e "process.exit(0)"' },
        devDependencies: { 'git-scalpel': spec.startsWith('file:') ? `file:${pkg.tarball}` : spec },
      },
      null,
      2,
    ) + '\n',
  );
  copyNodeModules(pkg.template, dir);
  const env = (extra: Record<string, string | undefined> = {}) => harnessEnv(home, extra);
  const bin = join(dir, 'node_modules/.bin/git-scalpel');
  const scalpel = (args: readonly string[], o: { cwd?: string } = {}): SyncRun => {
    const p = spawnSync(bin, args, { cwd: o.cwd ?? dir, env: env(), encoding: 'utf8', maxBuffer: 1 << 28, timeout: 120_000 });
    return { code: p.status ?? -1, stdout: p.stdout ?? '', stderr: p.stderr ?? '' };
  };
  const install = scalpel(['install', opts.harness, ...(opts.installArgs ?? [])]);
  if (install.code !== 0) throw new Error(`git-scalpel install ${opts.harness} exited ${install.code}: ${install.stderr}${install.stdout}`);
  let installText = `$ git-scalpel install ${[opts.harness, ...(opts.installArgs ?? [])].join(' ')}\n${install.stdout}${install.stderr}`;
  for (const more of opts.alsoInstall ?? []) {
    const r = scalpel(['install', opts.harness, ...more]);
    if (r.code !== 0) throw new Error(`git-scalpel install ${opts.harness} ${more.join(' ')} exited ${r.code}: ${r.stderr}${r.stdout}`);
    installText += `$ git-scalpel install ${[opts.harness, ...more].join(' ')}\n${r.stdout}${r.stderr}`;
  }
  writeFileSync(join(artifacts, 'install.txt'), installText);
  const configFile = { 'claude-code': '.claude/settings.json', codex: '.codex/hooks.json', gemini: '.gemini/settings.json' }[opts.harness];
  if (opts.logger !== false) addPayloadLogger(join(dir, configFile), { ...(opts.logger ?? {}), log: payloadLog });
  writeFileSync(join(artifacts, 'hooks-config.json'), readFileSync(join(dir, configFile)));
  git(dir, ['add', '-A']);
  if (opts.commitConfig === false) git(dir, ['rm', '-q', '--cached', '-r', '--', configFile.split('/')[0], 'package.json']);
  git(dir, ['commit', '-qm', 'base']);
  // the person's work in progress
  writeInto(dir, 'README.md', PERSON_WORK.readme);
  writeInto(dir, 'src/app.ts', PERSON_WORK.appStaged);
  git(dir, ['add', 'src/app.ts']);
  writeInto(dir, 'src/app.ts', PERSON_WORK.appWorktree);
  writeInto(dir, 'notes.txt', PERSON_WORK.notes);
  writeInto(dir, '.env', PERSON_WORK.env);
  opts.personWork?.(dir);
  // a failing test names where its artifacts are and what the harness sent
  try {
    onTestFailed(() => {
      const sent = readPayloads(payloadLog).map((x) => (x.payload?.tool_name ? `${x.event}:${x.payload.tool_name}` : x.event));
      console.error(`[${opts.harness}] ${opts.name}: artifacts in ${artifacts}\n  hook events: ${sent.join(' ') || 'none'}`);
    });
  } catch {
    // not inside a test (beforeAll): nothing to attach to
  }
  return {
    harness: opts.harness,
    dir,
    home,
    artifacts,
    payloadLog,
    configFile,
    install,
    env,
    scalpel,
    git: (args) => git(dir, args),
    oracle: () => oracle(dir),
    payloads: () => readPayloads(payloadLog),
    artifact: (name, text) => writeFileSync(join(artifacts, name), text),
    write: (rel, content, mode) => writeInto(dir, rel, content, mode),
    read: (rel) => readFileSync(join(dir, rel), 'utf8'),
  };
}

/**
 * `git-scalpel status --json` in the project (exit 0 expected), written to `<artifacts>/<name>`;
 * returns the entry of `harness` (hooks, trust, lastEvent, live, summary).
 */
export function scalpelStatus(p: ScratchProject, harness: HarnessName, name = 'status.json'): any {
  const r = p.scalpel(['status', '--json']);
  p.artifact(name, r.stdout + r.stderr);
  expect(r.code, r.stderr).toBe(0);
  const entry = (JSON.parse(r.stdout).data as { harnesses: { harness: string }[] }).harnesses.find((h) => h.harness === harness);
  expect(entry, `status --json lists ${harness}`).toBeDefined();
  return entry;
}

// ---------------------------------------------------------------------------------------------
// A model server on 127.0.0.1

export interface RecordedRequest {
  seq: number;
  /** ms since the epoch, when the body was read. */
  t: number;
  method: string;
  url: string;
  headers: http.IncomingHttpHeaders;
  body: string;
  /** The body parsed as JSON, when it is JSON. */
  json?: any;
  /** What the handler decided this request was (set by the handler, for the log). */
  kind?: string;
  /** Status answered. */
  status?: number;
  error?: string;
}

export type ModelHandler = (req: RecordedRequest, res: http.ServerResponse) => void | Promise<void>;

export interface ModelServer {
  url: string;
  port: number;
  requests: RecordedRequest[];
  /** Handler errors (each was answered 500); a test expects none. */
  errors: string[];
  close(): Promise<void>;
}

export async function readBody(req: http.IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

export function sendJson(res: http.ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(text)), ...headers });
  res.end(text);
}

/** Server-sent events: `event: <name>` (when given) and `data: <JSON or text>` per item. */
export function sendSse(
  res: http.ServerResponse,
  events: readonly { event?: string; data: unknown }[],
  headers: Record<string, string> = {},
): void {
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive', ...headers });
  for (const e of events) {
    const data = typeof e.data === 'string' ? e.data : JSON.stringify(e.data);
    res.write(`${e.event !== undefined ? `event: ${e.event}\n` : ''}data: ${data}\n\n`);
  }
  res.end();
}

/**
 * An HTTP server on 127.0.0.1 at a random port. Every request is read whole, recorded (and
 * appended to `logFile` as JSON lines when given) and handed to `handler`; a handler that throws
 * is answered 500 and its error kept in `errors`.
 */
export async function startModelServer(handler: ModelHandler, opts: { logFile?: string } = {}): Promise<ModelServer> {
  const requests: RecordedRequest[] = [];
  const errors: string[] = [];
  let seq = 0;
  const serveOne = async (req: http.IncomingMessage, res: http.ServerResponse): Promise<void> => {
    const body = await readBody(req);
    const rec: RecordedRequest = { seq: ++seq, t: Date.now(), method: req.method ?? '', url: req.url ?? '', headers: req.headers, body };
    try {
      rec.json = body ? JSON.parse(body) : undefined;
    } catch {
      // not JSON
    }
    requests.push(rec);
    try {
      await handler(rec, res);
      rec.status = res.statusCode;
    } catch (e) {
      rec.error = String((e as Error).stack ?? e);
      errors.push(`${rec.method} ${rec.url}: ${rec.error}`);
      if (!res.headersSent) sendJson(res, 500, { type: 'error', error: { type: 'api_error', message: String(e) } });
      else res.end();
      rec.status = 500;
    }
    if (opts.logFile)
      appendFileSync(
        opts.logFile,
        JSON.stringify({
          seq: rec.seq,
          t: rec.t,
          method: rec.method,
          url: rec.url,
          kind: rec.kind,
          status: rec.status,
          headers: rec.headers,
          body: rec.json ?? rec.body,
        }) + '\n',
      );
  };
  // a request whose body could not be read is an error of the run, not an unhandled rejection
  const server = http.createServer((req, res) => {
    serveOne(req, res).catch((e: unknown) => {
      errors.push(`${req.method ?? ''} ${req.url ?? ''}: ${String((e as Error)?.stack ?? e)}`);
      res.destroy();
    });
  });
  server.keepAliveTimeout = 1000;
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    requests,
    errors,
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

// ---------------------------------------------------------------------------------------------
// A model script: what the assistant answers, step by step

/** One tool call the model makes: the harness's tool name and its input. */
export interface ToolCall {
  name: string;
  input: Record<string, unknown>;
}

/**
 * One assistant message: tool calls (several = parallel calls in one message), optionally with
 * text before them, or final text (the turn ends). `before` runs once, when the server is about to
 * answer this step (after the previous step's tool results arrived): what a person does between
 * two tool calls, or a check of the state the previous calls left. A model server awaits it
 * (`runBefore`) before answering.
 */
export type Step = ({ calls: ToolCall[]; text?: string } | { text: string }) & { before?: () => void | Promise<void> };

export interface AnsweredStep {
  turn: number;
  step: number;
  /** The step, with an id per call (ids[i] for calls[i]). */
  value: Step;
  ids: string[];
}

/**
 * A script of turns, each a list of steps. A harness's model server asks `next(...)` with what the
 * request carries: the ids of the tool results it answers (then the step after the one that made
 * those calls), or no ids (a new prompt: the first step of the next turn not yet started). The
 * same question always gets the same answer (a retried request is answered alike). After the last
 * step of a turn, or of the script, a final text is answered.
 */
export class ScriptRunner {
  private readonly byId = new Map<string, { turn: number; step: number }>();
  private readonly prompts = new Map<string, number>();
  private readonly answered = new Map<string, AnsweredStep>();
  private nextTurn = 0;
  /** Every answer given, in order (retries included). */
  readonly log: AnsweredStep[] = [];

  constructor(
    readonly turns: Step[][],
    private readonly makeId: (turn: number, step: number, call: number) => string = (t, s, c) =>
      `call_${t}_${s}_${c}_${Math.random().toString(36).slice(2, 10)}`,
  ) {}

  /** The answer to a request: `resultIds` the tool-call ids it returns results for (empty: a new prompt, keyed by `promptKey`). */
  next(resultIds: readonly string[], promptKey = ''): AnsweredStep {
    let turn: number;
    let step: number;
    const known = resultIds.map((id) => this.byId.get(id)).find((x) => x !== undefined);
    if (known) {
      turn = known.turn;
      step = known.step + 1;
    } else {
      if (!this.prompts.has(promptKey)) this.prompts.set(promptKey, this.nextTurn++);
      turn = this.prompts.get(promptKey)!;
      step = 0;
    }
    const key = `${turn}/${step}`;
    let a = this.answered.get(key);
    if (!a) {
      const steps = this.turns[turn] ?? [];
      const value: Step = steps[step] ?? { text: turn >= this.turns.length ? 'The script has no more turns.' : 'Done.' };
      const ids = 'calls' in value ? value.calls.map((_c, i) => this.makeId(turn, step, i)) : [];
      ids.forEach((id) => this.byId.set(id, { turn, step }));
      a = { turn, step, value, ids };
      this.answered.set(key, a);
    }
    this.log.push(a);
    return a;
  }

  private readonly ran = new Set<string>();

  /** Runs the answered step's `before` the first time that step is answered. */
  async runBefore(a: AnsweredStep): Promise<void> {
    const key = `${a.turn}/${a.step}`;
    if (this.ran.has(key)) return;
    this.ran.add(key);
    await a.value.before?.();
  }

  /** Whether every scripted step was answered. */
  finished(): boolean {
    return this.turns.every((steps, t) => steps.every((_s, s) => this.answered.has(`${t}/${s}`)));
  }
}

/** A harness's model server answering from a script (claude-code.model.ts, codex.model.ts, gemini.model.ts). */
export interface ScriptedModel extends ModelServer {
  script: ScriptRunner;
  /** Requests of the agent's main loop (they offer the agent's tools), in order. */
  main: RecordedRequest[];
  /** Side requests (no agent tools offered: a title, a summary, a classifier). */
  side: RecordedRequest[];
  /** Requests for anything the model does not serve (answered 404). */
  unexpected: RecordedRequest[];
}

type ScriptedRecords = Pick<ScriptedModel, 'script' | 'main' | 'side' | 'unexpected'>;

/** A model server (startModelServer) answering from `script`: `handler` gets the records to file each request in. */
export async function startScriptedModel(
  script: ScriptRunner,
  handler: (req: RecordedRequest, res: http.ServerResponse, model: ScriptedRecords) => void | Promise<void>,
  opts: { logFile?: string } = {},
): Promise<ScriptedModel> {
  const model: ScriptedRecords = { script, main: [], side: [], unexpected: [] };
  const server = await startModelServer((req, res) => handler(req, res, model), opts);
  return Object.assign(server, model);
}

/**
 * A main-loop request: recorded in `main`, answered with the script's step for what it carries
 * (`resultIds`, or a new prompt keyed by `promptKey`), that step's `before` run first.
 */
export async function answerStep(
  model: ScriptedRecords,
  req: RecordedRequest,
  resultIds: readonly string[],
  promptKey: string,
): Promise<AnsweredStep> {
  model.main.push(req);
  const a = model.script.next(resultIds, promptKey);
  req.kind = `main turn ${a.turn} step ${a.step}`;
  await model.script.runBefore(a);
  return a;
}

/** A request the model does not serve: recorded in `unexpected`, answered 404 with `body` (the API's error shape). */
export function answerUnexpected(model: ScriptedRecords, req: RecordedRequest, res: http.ServerResponse, body: unknown): void {
  req.kind = 'unexpected';
  model.unexpected.push(req);
  sendJson(res, 404, body);
}
