/**
 * The server's directory checked, and a server started in the background: what a hook's process
 * does after it answered an event the client could not send (no server yet, or a dead one), so
 * that the next event finds one. Node I/O; loaded by every hook process, so kept small (the
 * server itself is src/server/server.ts, bundled apart).
 */
import { spawn } from 'node:child_process';
import * as nfs from 'node:fs';
import { connect } from 'node:net';
import { ScalpelError } from '../errors/index.js';
import { socketPathFits, type ServerPlace } from './place.js';

/** A start lock older than this is a start that died: it is taken over. */
const STALE_LOCK_MS = 10_000;

/**
 * Make the server's directory (0700, with its parents) and check that only this user can enter
 * it: owned by the user, a directory (not a link), no group or other permission bits. Anything
 * else is UNSUPPORTED (data.path, data.capability 'server-dir', data.reason): another user could
 * then replace the socket, or reach it.
 */
export function ensureServerDir(place: ServerPlace): void {
  const dir = place.dir;
  try {
    nfs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  } catch (e) {
    throw new ScalpelError('UNSUPPORTED', `cannot make the server's directory ${dir}: ${(e as Error).message}`, {
      path: dir,
      capability: 'server-dir',
      reason: 'cannot-create',
      cause: (e as { code?: string }).code,
    });
  }
  const st = nfs.lstatSync(dir);
  const refuse = (reason: string, what: string): never => {
    throw new ScalpelError('UNSUPPORTED', `the server's directory ${dir} ${what}: only its user may enter it, so no server runs there`, {
      path: dir,
      capability: 'server-dir',
      reason,
    });
  };
  if (!st.isDirectory()) refuse('not-a-directory', 'is not a directory');
  const uid = process.getuid?.();
  if (uid !== undefined && st.uid !== uid) refuse('not-owned', `belongs to uid ${st.uid}, not to this user (uid ${uid})`);
  if ((st.mode & 0o077) !== 0) refuse('shared', `has mode ${(st.mode & 0o777).toString(8)}, which lets group or others in (chmod 700 it)`);
  if (!socketPathFits(place.socket))
    throw new ScalpelError('UNSUPPORTED', `the server's socket path ${place.socket} is longer than a Unix socket's 103 bytes`, {
      path: place.socket,
      capability: 'server-dir',
      reason: 'socket-path-too-long',
    });
}

/** Whether a server answers on `socket` (a connection is accepted within `ms`). */
export function serverAnswers(socket: string, ms = 1000): Promise<boolean> {
  return new Promise((resolve) => {
    const c = connect(socket);
    const done = (v: boolean) => {
      clearTimeout(t);
      c.destroy();
      resolve(v);
    };
    const t = setTimeout(() => done(false), ms);
    c.once('connect', () => done(true));
    c.once('error', () => done(false));
  });
}

/**
 * Take the start lock (`<build>.lock`, created exclusively): false when another start holds it,
 * so that the hooks of ten parallel tool calls start one server, not ten. A lock older than
 * STALE_LOCK_MS is a start that died, taken over. The server removes it once it listens.
 */
export function takeStartLock(place: ServerPlace, now = Date.now()): boolean {
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      nfs.closeSync(nfs.openSync(place.lock, 'wx', 0o600));
      return true;
    } catch (e) {
      if ((e as { code?: string }).code !== 'EEXIST') return false;
      const st = nfs.statSync(place.lock, { throwIfNoEntry: false });
      if (st && now - st.mtimeMs < STALE_LOCK_MS) return false;
      nfs.rmSync(place.lock, { force: true });
    }
  }
  return false;
}

/**
 * Start `node <script> server run` detached, in its own process group, stdio ignored and not
 * waited for: the harness waits for the hook's process and its pipes, never for the server.
 * `env` is the whole environment the server runs with. Returns the child's pid.
 */
export function spawnServer(o: { script: string; env: NodeJS.ProcessEnv; args?: string[] }): number | undefined {
  const child = spawn(process.execPath, [o.script, 'server', 'run', ...(o.args ?? [])], {
    detached: true,
    stdio: 'ignore',
    cwd: '/',
    env: o.env,
  });
  child.on('error', () => undefined);
  child.unref();
  return child.pid;
}

/**
 * After a hook answered in its own process because the client found no server: start one for the
 * next event, unless one answers or another hook is starting it. Never throws and never waits for
 * the server: a hook's answer does not depend on it.
 */
export async function startInBackground(o: { place: ServerPlace; script: string; env: NodeJS.ProcessEnv }): Promise<void> {
  try {
    ensureServerDir(o.place);
    if (nfs.existsSync(o.place.socket) && (await serverAnswers(o.place.socket, 200))) return;
    if (!takeStartLock(o.place)) return;
    spawnServer({ script: o.script, env: o.env, args: ['--from-hook'] });
  } catch {
    // no server this time: the next event's process tries again
  }
}
