/**
 * The errors an adapted filesystem throws: any implementation's failure as an FsError with an
 * errno-style `code` (node:fs codes pass through; DOMException names of the File System Access
 * API / OPFS and lightning-fs's messages are mapped), and UNSUPPORTED for a method it lacks.
 */
import { ScalpelError } from '../errors/index.js';
import { fsErrorCode } from './types.js';

/** The errors the adapter throws for a failed fs call: an OS-style `code`, the original as `cause`. */
export class FsError extends Error {
  readonly code: string;
  readonly syscall: string;
  readonly path?: string;
  readonly dest?: string;
  constructor(code: string, syscall: string, path?: string, cause?: unknown, dest?: string) {
    const orig = cause instanceof Error ? cause.message : cause === undefined ? '' : String(cause);
    const where = path === undefined ? syscall : `${syscall} '${path}'${dest === undefined ? '' : ` -> '${dest}'`}`;
    const message = orig.startsWith(code)
      ? `${orig}${orig.includes(syscall) ? '' : ` (${where})`}`
      : `${code}: ${orig ? orig + ', ' : ''}${where}`;
    super(message, cause === undefined ? undefined : { cause });
    this.name = 'FsError';
    this.code = code;
    this.syscall = syscall;
    if (path !== undefined) this.path = path;
    if (dest !== undefined) this.dest = dest;
  }
}

/** DOMException names of the File System Access API / OPFS, as errno codes. */
const DOM_CODES: Record<string, string> = {
  NotFoundError: 'ENOENT',
  TypeMismatchError: 'ENOTDIR',
  InvalidModificationError: 'ENOTEMPTY',
  NoModificationAllowedError: 'EACCES',
  NotAllowedError: 'EACCES',
  QuotaExceededError: 'ENOSPC',
  NotSupportedError: 'ENOTSUP',
  InvalidStateError: 'EIO',
};

/** The errno-style code of any error an fs implementation throws ('UNKNOWN' when there is none). */
export function normalizeErrorCode(e: unknown): string {
  const c = fsErrorCode(e);
  if (c !== undefined && /^E[A-Z0-9]+$/.test(c)) return c;
  if (c !== undefined && DOM_CODES[c]) return DOM_CODES[c];
  if (e && typeof e === 'object') {
    const name = (e as { name?: unknown }).name;
    if (typeof name === 'string' && DOM_CODES[name]) return DOM_CODES[name];
    const msg = (e as { message?: unknown }).message;
    // "ENOENT: no such file", and lightning-fs's "ENOTDIR is not a constructor" (a missing error class)
    const m = typeof msg === 'string' ? /^(E[A-Z]{2,})\b/.exec(msg) : null;
    if (m) return m[1];
  }
  return c ?? 'UNKNOWN';
}

export function wrapError(e: unknown, syscall: string, path?: string, dest?: string): Error {
  if (e instanceof ScalpelError || e instanceof FsError) return e;
  return new FsError(normalizeErrorCode(e), syscall, path, e, dest);
}

export function unsupported(fsName: string, capability: string, method: string, path?: string): ScalpelError {
  return new ScalpelError(
    'UNSUPPORTED',
    `filesystem ${fsName} has no ${method}${path === undefined ? '' : ` (needed for ${path})`}: capability '${capability}' is missing`,
    {
      capability,
      method,
      fs: fsName,
      ...(path === undefined ? {} : { path }),
    },
  );
}

/** Nothing there: the file, or a directory on its way to it (ENOENT, or ENOTDIR on a parent). */
export function isMissing(e: unknown): boolean {
  const c = fsErrorCode(e);
  return c === 'ENOENT' || c === 'ENOTDIR';
}
