/**
 * The warm hook server (`git-scalpel server run`): one process per user and build, listening on a
 * Unix socket in the user-only directory (place.ts), answering hook events for every worktree of
 * that user as `git-scalpel hook <harness>` answers them in a process — the same command line
 * runs them (`runHook`, which is main.ts's runCli), so the same payload parsing, size limit,
 * typed errors, exit codes and output — and exiting after an idle time. The client is
 * src/server/hook-client.sh; when it cannot reach this server it runs the process path itself.
 *
 * Protocol (HTTP/1.1 over the socket, which only the user can reach):
 * - `POST /v1/<build>/hook/<harness>[/--fail-open]`, the event's bytes as the body, the hook
 *   process's HOME and XDG_CONFIG_HOME in headers (ENV_HEADERS): status 200 + the exit code,
 *   header `x-scalpel-stdout` the length of stdout, the body stdout then stderr. With the
 *   client's pid (PID_HEADER, as the client sends it): an empty body, the lengths of stdout and
 *   stderr in headers, each written to `out.<pid>` / `err.<pid>` in the server's directory when
 *   not empty, and the client's copy of the event, `in.<pid>` there, removed once the answer is
 *   sent (an answer that was not sent leaves it for the client's process path).
 * - `GET /v1/<build>/status`: the status as JSON. `POST /v1/<build>/stop`: the server exits.
 * - Another build in the path: 409 (the client then runs the process path). A body larger than
 *   the hook's limit: 413 (the process path answers it, with its own message).
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import * as nfs from 'node:fs';
import type { CliIo } from '../cli/io.js';
import {
  BUILD_HEADER,
  CLIENT_PID,
  ENV_HEADERS,
  ERR_HEADER,
  HOOK_PATH,
  OUT_HEADER,
  PID_HEADER,
  STDOUT_HEADER,
  type ServerPlace,
} from './place.js';
import { ensureServerDir, serverAnswers } from './start.js';
import { watchWorktrees, type WatchHost, type WatchHostStatus } from '../platform/node-watch.js';

/** The hook's own limit (src/cli/cmd-turns.ts MAX_PAYLOAD): a larger event goes to the process path, which says so. */
const MAX_BODY = 256 << 20;

/** How often the server checks that its socket is still its own. */
const SOCKET_CHECK_MS = 5000;

/** How one worktree was served. */
export interface WorktreeServed {
  worktree: string;
  requests: number;
  lastAt: string;
}

export interface ServerStatus {
  pid: number;
  version: string;
  build: string;
  socket: string;
  startedAt: string;
  uptimeSeconds: number;
  /** Seconds without a request after which the server exits; 0: never. */
  idleSeconds: number;
  /** Hook requests answered (events outside any repository included). */
  requests: number;
  /** Hook requests in progress now. */
  inFlight: number;
  worktrees: WorktreeServed[];
  /** The watched worktrees' state (shell baselines answered from memory where the watcher vouches); null: not watching. */
  watch: WatchHostStatus | null;
}

export interface HookServerOptions {
  place: ServerPlace;
  version: string;
  /** Seconds without a request before the server exits (0: never). */
  idleSeconds: number;
  /** The command line (main.ts runCli): what answers `hook <harness> ...` given its argv and io. */
  runHook: (argv: string[], io: CliIo) => Promise<number>;
  /** The filesystem hook events run on. */
  fs: CliIo['fs'];
  /** Watch the worktrees served, for shell baselines (default true; where the platform cannot, the view says so and the walk runs). */
  watch?: boolean;
  now?: () => Date;
}

/** A running server: `closed` settles when it stopped (idle, `stop`, a signal). */
export class HookServer {
  private readonly http: Server;
  private readonly startedAt: Date;
  private readonly served = new Map<string, WorktreeServed>();
  /** OpenOptions.cache of every repository the server opens: filesystems probed once, index reads kept while unchanged. */
  private readonly cache: object = {};
  /** OpenOptions.views of every repository the server opens: each worktree watched from its first shell baseline. */
  private readonly watch: WatchHost | null;
  private requests = 0;
  private inFlight = 0;
  private hooksInFlight = 0;
  private idleTimer: NodeJS.Timeout | null = null;
  private socketIno: number | null = null;
  private watchdog: NodeJS.Timeout | null = null;
  private closing = false;
  readonly closed: Promise<void>;
  private resolveClosed!: () => void;

  private constructor(private readonly o: HookServerOptions) {
    this.startedAt = this.now();
    this.watch = o.watch === false ? null : watchWorktrees();
    this.closed = new Promise((r) => (this.resolveClosed = r));
    this.http = createServer((req, res) => void this.handle(req, res));
    // a client that went away mid-request: its socket is dropped, nothing else
    this.http.on('clientError', (_e, sock) => sock.destroy());
  }

  /**
   * Check the directory, remove a dead server's socket, listen. Null when another server of this
   * build already answers on the socket (nothing to do). The socket is created 0600 (umask).
   */
  static async listen(o: HookServerOptions): Promise<HookServer | null> {
    ensureServerDir(o.place);
    const { socket } = o.place;
    if (nfs.existsSync(socket)) {
      if (await serverAnswers(socket)) return null;
      nfs.rmSync(socket, { force: true });
    }
    const s = new HookServer(o);
    const old = process.umask(0o077);
    try {
      await new Promise<void>((resolve, reject) => {
        s.http.once('error', reject);
        s.http.listen(socket, () => {
          s.http.off('error', reject);
          resolve();
        });
      });
    } catch (e) {
      if ((e as { code?: string }).code === 'EADDRINUSE') return null;
      throw e;
    } finally {
      process.umask(old);
    }
    s.socketIno = nfs.statSync(socket).ino;
    nfs.rmSync(o.place.lock, { force: true });
    s.armIdle();
    // a socket removed or replaced (its directory deleted, another server's) reaches this one no
    // more: nothing could ask it to stop, so it stops itself
    s.watchdog = setInterval(() => {
      if (nfs.statSync(socket, { throwIfNoEntry: false })?.ino !== s.socketIno) s.close();
    }, SOCKET_CHECK_MS);
    s.watchdog.unref();
    return s;
  }

  private now(): Date {
    return this.o.now ? this.o.now() : new Date();
  }

  status(): ServerStatus {
    const now = this.now();
    return {
      pid: process.pid,
      version: this.o.version,
      build: this.o.place.build,
      socket: this.o.place.socket,
      startedAt: this.startedAt.toISOString(),
      uptimeSeconds: Math.round((now.getTime() - this.startedAt.getTime()) / 1000),
      idleSeconds: this.o.idleSeconds,
      requests: this.requests,
      inFlight: this.hooksInFlight,
      worktrees: [...this.served.values()].sort((a, b) => (a.worktree < b.worktree ? -1 : a.worktree > b.worktree ? 1 : 0)),
      watch: this.watch ? this.watch.status() : null,
    };
  }

  /** Stop listening, remove the socket (when it is still ours), and settle `closed` once requests in flight are answered. */
  close(): void {
    if (this.closing) return;
    this.closing = true;
    if (this.idleTimer) clearTimeout(this.idleTimer);
    if (this.watchdog) clearInterval(this.watchdog);
    this.watch?.close();
    const st = nfs.statSync(this.o.place.socket, { throwIfNoEntry: false });
    if (st && st.ino === this.socketIno) nfs.rmSync(this.o.place.socket, { force: true });
    this.http.close(() => this.resolveClosed());
    this.http.closeIdleConnections();
  }

  private armIdle(): void {
    if (this.idleTimer) clearTimeout(this.idleTimer);
    this.idleTimer = null;
    if (this.o.idleSeconds > 0 && this.inFlight === 0 && !this.closing)
      this.idleTimer = setTimeout(() => this.close(), this.o.idleSeconds * 1000);
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    this.inFlight++;
    if (this.idleTimer) clearTimeout(this.idleTimer);
    try {
      await this.route(req, res);
    } catch (e) {
      // a bug of ours: the client runs the event in a process instead
      if (!res.headersSent) send(res, 500, `${(e as Error).message}\n`);
      else res.destroy();
    } finally {
      this.inFlight--;
      this.armIdle();
    }
  }

  private async route(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const path = (req.url ?? '').split('?')[0];
    const m = /^\/v1\/([^/]+)\/(.*)$/.exec(path);
    if (!m) return send(res, 404, 'not a git-scalpel server request\n');
    res.setHeader(BUILD_HEADER, this.o.place.build);
    if (m[1] !== this.o.place.build) return send(res, 409, `this server is git-scalpel ${this.o.place.build}, not ${m[1]}\n`);
    if (m[2] === 'status' && req.method === 'GET') return send(res, 200, JSON.stringify(this.status()) + '\n', 'application/json');
    if (m[2] === 'stop' && req.method === 'POST') {
      send(res, 200, JSON.stringify(this.status()) + '\n', 'application/json');
      res.once('finish', () => this.close());
      return;
    }
    const hook = HOOK_PATH.exec(path);
    if (!hook || req.method !== 'POST') return send(res, 404, 'not a git-scalpel server request\n');
    const body = await readBody(req);
    if (body === null) return send(res, 413, 'the event is larger than a hook reads\n');
    await this.answerHook(hook[2].split('/'), body, req, res);
  }

  /** One hook event, answered as `git-scalpel <argv>` with the body on stdin answers it in a process. */
  private async answerHook(argv: string[], body: Uint8Array, req: IncomingMessage, res: ServerResponse): Promise<void> {
    const out: string[] = [];
    const err: string[] = [];
    const env: Record<string, string> = {};
    for (const [name, header] of Object.entries(ENV_HEADERS)) {
      const v = req.headers[header];
      // header bytes arrive as Latin-1 code units: a UTF-8 path is decoded back from them
      if (typeof v === 'string') env[name] = Buffer.from(v, 'latin1').toString('utf8');
    }
    const io: CliIo = {
      fs: this.o.fs,
      cwd: '/',
      out: (t) => void out.push(t),
      err: (t) => void err.push(t),
      env,
      stdin: () => Promise.resolve(body),
      hookServer: { served: (worktree) => this.count(worktree), cache: this.cache, views: this.watch ?? undefined },
    };
    this.requests++;
    this.hooksInFlight++;
    let exit: number;
    try {
      exit = await this.o.runHook(argv, io);
    } finally {
      this.hooksInFlight--;
    }
    if (!Number.isInteger(exit) || exit < 0 || exit > 99) return send(res, 500, `exit code ${exit} does not fit a frame\n`);
    const stdout = Buffer.from(out.join(''), 'utf8');
    const stderr = Buffer.from(err.join(''), 'utf8');
    const pid = req.headers[PID_HEADER];
    if (typeof pid === 'string' && CLIENT_PID.test(pid)) {
      const dir = this.o.place.dir;
      writeOwn(`${dir}/out.${pid}`, stdout);
      writeOwn(`${dir}/err.${pid}`, stderr);
      res.writeHead(200 + exit, { 'content-length': 0, [OUT_HEADER]: stdout.length, [ERR_HEADER]: stderr.length });
      // sent: the client will not need its copy of the event for the process path
      res.once('finish', () => nfs.rmSync(`${dir}/in.${pid}`, { force: true }));
      res.end();
      return;
    }
    res.writeHead(200 + exit, {
      'content-type': 'application/octet-stream',
      'content-length': stdout.length + stderr.length,
      [STDOUT_HEADER]: stdout.length,
    });
    res.end(Buffer.concat([stdout, stderr]));
  }

  private count(worktree: string): void {
    const w = this.served.get(worktree) ?? { worktree, requests: 0, lastAt: '' };
    w.requests++;
    w.lastAt = this.now().toISOString();
    this.served.set(worktree, w);
  }
}

/**
 * Write `bytes` to `path` (in the user-only directory) for the client to read, not following a
 * link there. Nothing for no bytes: the client reads the file only when the answer names a
 * length (a file a client of a recycled pid left unread is then written over first).
 */
function writeOwn(path: string, bytes: Buffer): void {
  if (bytes.length === 0) return;
  const fd = nfs.openSync(path, nfs.constants.O_WRONLY | nfs.constants.O_CREAT | nfs.constants.O_TRUNC | nfs.constants.O_NOFOLLOW, 0o600);
  try {
    for (let at = 0; at < bytes.length;) at += nfs.writeSync(fd, bytes, at);
  } finally {
    nfs.closeSync(fd);
  }
}

function send(res: ServerResponse, status: number, text: string, type = 'text/plain; charset=utf-8'): void {
  const b = Buffer.from(text, 'utf8');
  res.writeHead(status, { 'content-type': type, 'content-length': b.length });
  res.end(b);
}

/** The request's body; null past MAX_BODY (the rest is not read). */
async function readBody(req: IncomingMessage): Promise<Uint8Array | null> {
  const declared = Number(req.headers['content-length'] ?? 0);
  if (declared > MAX_BODY) return null;
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const c of req) {
    size += (c as Buffer).length;
    if (size > MAX_BODY) return null;
    chunks.push(c as Buffer);
  }
  return new Uint8Array(Buffer.concat(chunks));
}
