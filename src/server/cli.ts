/**
 * `git-scalpel server status|stop|start|run`: the warm hook server as a person sees it. Loaded
 * only by that command, from its own bundle (dist/server.cjs, src/cli/lazy.ts), so a hook's
 * process does not load the HTTP server. The classes of this bundle are not the command line's:
 * its errors are printed here, through this bundle's own output.ts, never thrown to main.ts.
 */
import { request } from 'node:http';
import * as nfs from 'node:fs';
import { ScalpelError } from '../errors/index.js';
import { GitConfig } from '../repo/config.js';
import { parseArgs, UsageError } from '../cli/args.js';
import type { CliIo } from '../cli/io.js';
import { errorOutcome, ok, printOutcome, wantsJson } from '../cli/output.js';
import { DEFAULT_IDLE_SECONDS, IDLE_CONFIG_KEY, parseIdleSeconds, serverPlace, type ServerPlace } from './place.js';
import { ensureServerDir, spawnServer, takeStartLock } from './start.js';
import { HookServer, type ServerStatus } from './server.js';

/** What main.ts hands the server: the command line that answers hook events, and this build. */
export interface ServerDeps {
  runHook: (argv: string[], io: CliIo) => Promise<number>;
  version: string;
  build: string;
  /** The running CLI's path (process.argv[1]), for `server start` to run `server run` with. */
  script: string;
  /** The whole process environment, which a started server inherits. */
  processEnv: NodeJS.ProcessEnv;
}

const VERBS = ['status', 'stop', 'start', 'run'] as const;

export async function cmdServer(args: string[], io: CliIo, deps: ServerDeps): Promise<number> {
  try {
    return await serverVerb(args, io, deps);
  } catch (e) {
    const { outcome, text } = errorOutcome(e, 'server', io.bin);
    io.err(text);
    if (wantsJson(args)) printOutcome(io, outcome);
    return outcome.exit;
  }
}

async function serverVerb(args: string[], io: CliIo, deps: ServerDeps): Promise<number> {
  const { flags, positionals } = parseArgs(args, { switches: ['json', 'from-hook'], options: ['idle'] });
  const verb = positionals[0];
  if (positionals.length !== 1 || !(VERBS as readonly string[]).includes(verb))
    throw new UsageError(`server takes one of ${VERBS.join(', ')}`, 'server');
  const json = flags.has('json');
  const env = io.env ?? {};
  const place = serverPlace(env, deps.build);
  if (!place)
    throw new ScalpelError('UNSUPPORTED', 'no directory for the server: neither XDG_RUNTIME_DIR nor HOME is an absolute path', {
      capability: 'server-dir',
      reason: 'no-home',
    });
  const idleFlag = flags.get('idle');
  if (idleFlag !== undefined && (verb === 'status' || verb === 'stop'))
    throw new UsageError(`--idle is for server start and run`, 'server');
  const idle = idleFlag === undefined ? idleFromConfig(env) : parseIdleSeconds(idleFlag === true ? '' : idleFlag);
  if (idle === undefined) throw new UsageError(`--idle takes a whole number of seconds (0: never exit)`, 'server');

  if (verb === 'status') {
    const st = await ask(place, 'GET', 'status');
    if (!st) {
      const text = `no git-scalpel server ${deps.build} is running (socket ${place.socket})\n`;
      if (json) return ok(io, text.trimEnd(), { running: false, build: deps.build, socket: place.socket });
      io.out(text);
      return 0;
    }
    if (json) return ok(io, `server ${st.build} running, pid ${st.pid}`, { running: true, ...st });
    io.out(describeStatus(st));
    return 0;
  }
  if (verb === 'stop') {
    const st = await ask(place, 'POST', 'stop');
    if (st) await waitFor(async () => !nfs.existsSync(place.socket), 5000);
    const text = st ? `stopped the git-scalpel server ${st.build} (pid ${st.pid})` : `no git-scalpel server ${deps.build} was running`;
    if (json) return ok(io, text, { stopped: st !== null, ...(st ? { pid: st.pid } : {}), socket: place.socket });
    io.out(text + '\n');
    return 0;
  }
  if (verb === 'start') {
    ensureServerDir(place);
    let st = await ask(place, 'GET', 'status');
    const already = st !== null;
    if (!st) {
      // a hook may be starting one right now: then its server is the one waited for
      if (takeStartLock(place))
        spawnServer({ script: deps.script, env: deps.processEnv, args: idleFlag !== undefined ? ['--idle', String(idle)] : [] });
      await waitFor(async () => (st = await ask(place, 'GET', 'status')) !== null, 10_000);
    }
    if (!st)
      throw new ScalpelError('UNSUPPORTED', `the git-scalpel server did not start: nothing answers on ${place.socket}`, {
        path: place.socket,
        capability: 'server',
        reason: 'did-not-start',
      });
    const s = st as ServerStatus;
    const text = already
      ? `the git-scalpel server ${s.build} is already running (pid ${s.pid})`
      : `started the git-scalpel server ${s.build} (pid ${s.pid})`;
    if (json) return ok(io, text, { started: !already, ...s });
    io.out(`${text}\n`);
    return 0;
  }
  // run: in the foreground until idle, `server stop`, or a signal
  const server = await HookServer.listen({ place, version: deps.version, idleSeconds: idle, runHook: deps.runHook, fs: io.fs });
  if (!server) {
    if (flags.has('from-hook')) return 0; // another start won: that server serves
    throw new ScalpelError('UNSUPPORTED', `a git-scalpel server ${deps.build} already answers on ${place.socket}`, {
      path: place.socket,
      capability: 'server',
      reason: 'already-running',
    });
  }
  const stop = () => server.close();
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
  process.once('SIGHUP', stop);
  if (!flags.has('from-hook'))
    io.err(
      `git-scalpel server ${deps.build} (pid ${process.pid}) listening on ${place.socket}; exits after ${idle ? `${idle} s without a request` : 'server stop'}\n`,
    );
  await server.closed;
  return 0;
}

/** `scalpel.serverIdle` from git's global configs (later files win, as git reads them), else the default. */
function idleFromConfig(env: Readonly<Record<string, string | undefined>>): number {
  const files = [
    env.XDG_CONFIG_HOME ? `${env.XDG_CONFIG_HOME}/git/config` : env.HOME ? `${env.HOME}/.config/git/config` : null,
    env.HOME ? `${env.HOME}/.gitconfig` : null,
  ];
  let idle: number | undefined;
  for (const f of files) {
    if (!f) continue;
    let text: Buffer;
    try {
      text = nfs.readFileSync(f);
    } catch {
      continue;
    }
    const v = parseIdleSeconds(GitConfig.parse(new Uint8Array(text), f).getString(IDLE_CONFIG_KEY));
    if (v !== undefined) idle = v;
  }
  return idle ?? DEFAULT_IDLE_SECONDS;
}

function describeWatch(w: ServerStatus['watch']): string[] {
  if (!w) return ['watch:     off'];
  if (!w.supported) return ['watch:     not on this platform (shell baselines walk the worktree)'];
  return [
    `watch:     ${w.watches} directories watched`,
    ...w.views.map(
      (v) =>
        `  ${v.worktree}  ${v.state}${v.reason ? ` (${v.reason}${v.detail ? `: ${v.detail}` : ''})` : ''}, ${v.entries} entries held, ${v.walks} walk(s), ${v.rebuilds} rebuild(s)`,
    ),
  ];
}

function describeStatus(st: ServerStatus): string {
  const lines = [
    `git-scalpel server ${st.build}: running, pid ${st.pid}, up ${duration(st.uptimeSeconds)}`,
    `socket:    ${st.socket}`,
    `idle:      ${st.idleSeconds ? `exits after ${duration(st.idleSeconds)} without a request` : 'never exits on its own'}`,
    `requests:  ${st.requests} (${st.inFlight} in progress)`,
    `worktrees: ${st.worktrees.length ? st.worktrees.length : 'none yet'}`,
    ...st.worktrees.map((w) => `  ${w.worktree}  ${w.requests} request(s), last ${w.lastAt}`),
    ...describeWatch(st.watch),
  ];
  return lines.join('\n') + '\n';
}

function duration(s: number): string {
  if (s < 60) return `${s} s`;
  if (s < 3600) return `${Math.floor(s / 60)} min ${s % 60} s`;
  return `${Math.floor(s / 3600)} h ${Math.floor((s % 3600) / 60)} min`;
}

/** A request to the server; null when none answers (no socket, refused, not our server). */
function ask(place: ServerPlace, method: 'GET' | 'POST', what: string): Promise<ServerStatus | null> {
  if (!nfs.existsSync(place.socket)) return Promise.resolve(null);
  return new Promise((resolve) => {
    const req = request({ socketPath: place.socket, method, path: `/v1/${place.build}/${what}`, timeout: 5000 }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        if (res.statusCode !== 200) return resolve(null);
        try {
          resolve(JSON.parse(Buffer.concat(chunks).toString('utf8')) as ServerStatus);
        } catch {
          resolve(null);
        }
      });
      res.on('error', () => resolve(null));
    });
    req.on('timeout', () => req.destroy());
    req.on('error', () => resolve(null));
    req.end();
  });
}

async function waitFor(test: () => Promise<boolean>, ms: number): Promise<boolean> {
  const end = Date.now() + ms;
  for (;;) {
    if (await test()) return true;
    if (Date.now() > end) return false;
    await new Promise((r) => setTimeout(r, 25));
  }
}
