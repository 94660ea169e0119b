/**
 * Where the warm hook server of one user and one build listens (DESIGN "Warm, not cold"), as the
 * hook client (src/server/hook-client.sh) finds it with shell builtins alone: the directory
 * `$XDG_RUNTIME_DIR/git-scalpel` (a per-user runtime directory where the system has one), else
 * `$HOME/.cache/git-scalpel`, created 0700; in it `<build>.sock`, the server's Unix socket, and
 * `<build>.lock`, held while one is being started. The build is the package's version and a hash
 * of its compiled code, so two projects with different git-scalpel devDependencies each get
 * their own server instead of one answering for the other. Pure: no I/O.
 */

/** A socket path longer than this (in bytes) cannot be bound everywhere: macOS's sun_path holds 104 bytes with its NUL, Linux's 108. */
export const MAX_SOCKET_PATH = 103;

/** The idle time after which a server exits when no request came (15 minutes). */
export const DEFAULT_IDLE_SECONDS = 15 * 60;

/** The git config key (the user's global config) that sets the idle time, in seconds. */
export const IDLE_CONFIG_KEY = 'scalpel.serverIdle';

/** The environment variables the server's place is found by. */
export interface ServerEnv {
  HOME?: string;
  XDG_RUNTIME_DIR?: string;
}

export interface ServerPlace {
  /** The user-only directory. */
  dir: string;
  /** The server's Unix socket. */
  socket: string;
  /** The start lock: present while a hook's process is starting a server. */
  lock: string;
  /** The build both ends must share. */
  build: string;
}

/** The user-only directory, as the client computes it; null when neither variable holds an absolute path. */
export function serverDir(env: ServerEnv): string | null {
  const abs = (v: string | undefined) => (v && v.startsWith('/') ? v.replace(/\/+$/, '') : undefined);
  const runtime = abs(env.XDG_RUNTIME_DIR);
  if (runtime !== undefined) return `${runtime}/git-scalpel`;
  const home = abs(env.HOME);
  return home !== undefined ? `${home}/.cache/git-scalpel` : null;
}

/** A build id as a file name: the characters the client puts in a URL path unescaped, nothing else. */
export function buildName(build: string): string {
  return build.replace(/[^A-Za-z0-9._-]/g, '_');
}

/** The server's files for `build` under `env`; null when there is no directory to put them in. */
export function serverPlace(env: ServerEnv, build: string): ServerPlace | null {
  const dir = serverDir(env);
  if (dir === null) return null;
  const name = buildName(build);
  return { dir, socket: `${dir}/${name}.sock`, lock: `${dir}/${name}.lock`, build: name };
}

/** Whether a socket path can be bound (MAX_SOCKET_PATH, in UTF-8 bytes). */
export function socketPathFits(path: string): boolean {
  return new TextEncoder().encode(path).length <= MAX_SOCKET_PATH;
}

/**
 * The idle time from `git config scalpel.serverIdle` (seconds; `0` never exits) or a flag's
 * value; undefined for a value that is not a whole number of seconds.
 */
export function parseIdleSeconds(v: string | null | undefined): number | undefined {
  if (v === null || v === undefined || !/^\s*\d+\s*$/.test(v)) return undefined;
  const n = Number(v.trim());
  return Number.isSafeInteger(n) ? n : undefined;
}

/**
 * The URL path of a hook request: `/v1/<build>/hook/<arg>...`. Arguments travel as path segments,
 * so the client only sends words of [A-Za-z0-9_-] (it falls back for anything else).
 */
export const HOOK_PATH = /^\/v1\/([A-Za-z0-9._-]+)\/(hook(?:\/[A-Za-z0-9_-]+)*)$/;

/** The response of a hook request: HTTP status 200 + the exit code, this header the length of stdout, the body stdout then stderr. */
export const STDOUT_HEADER = 'x-scalpel-stdout';
/**
 * The hook client's process id (the request header): the server then answers with an empty body
 * and the lengths of stdout and stderr in OUT_HEADER and ERR_HEADER, each written (when not
 * empty) to `out.<pid>` and `err.<pid>` in its directory, and removes the event's file
 * `in.<pid>` there once the answer is sent. The client then spawns nothing more for an event
 * with no output (no `rm`, no `head`, no `tail`).
 */
export const PID_HEADER = 'x-scalpel-pid';
export const OUT_HEADER = 'x-scalpel-out';
export const ERR_HEADER = 'x-scalpel-err';
/** A client's pid as the header carries it. */
export const CLIENT_PID = /^[1-9][0-9]{0,9}$/;
export const BUILD_HEADER = 'x-scalpel-build';
/** The request headers carrying the hook process's HOME and XDG_CONFIG_HOME (what a hook reads of the environment). */
export const ENV_HEADERS = { HOME: 'x-scalpel-home', XDG_CONFIG_HOME: 'x-scalpel-xdg-config-home' } as const;
