/**
 * What both patch readers (parse.ts for git's formats, codex.ts for Codex's `*** Begin Patch`)
 * share: the error a malformed patch raises and the FilePatch a reader starts from. Below both,
 * so parse.ts can hand a Codex patch to codex.ts without codex.ts importing parse.ts back.
 */
import { ScalpelError } from '../errors/index.js';
import type { FilePatch } from './types.js';

/** A malformed patch: ScalpelError BAD_ARGUMENT, data `{ name: 'patch', reason, line? }`. */
export function patchError(reason: string, message: string, line: number | undefined): ScalpelError {
  return new ScalpelError('BAD_ARGUMENT', `invalid patch: ${message}${line !== undefined ? ` (line ${line})` : ''}`, {
    name: 'patch',
    reason,
    ...(line !== undefined ? { line } : {}),
  });
}

/** A FilePatch with nothing said yet, for a parser to fill. */
export function emptyPatch(format: FilePatch['format'], line: number): FilePatch {
  return {
    format,
    status: 'modify',
    oldPath: null,
    newPath: null,
    oldMode: null,
    newMode: null,
    similarity: null,
    dissimilarity: null,
    oldOid: null,
    newOid: null,
    hunks: [],
    line,
  };
}
