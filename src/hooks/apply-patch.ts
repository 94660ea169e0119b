import { badField } from './fields.js';
import { ADD, BEGIN, DELETE, END, EOF_MARKER, MOVE, UPDATE, lines, trim } from '../patch/codex.js';

/**
 * The paths an OpenAI Codex `apply_patch` touches, read from the patch text the way Codex's own
 * parser reads it (openai/codex, codex-rs/apply-patch/src/parser.rs, "lenient" mode, which is
 * what Codex applies), so that every patch Codex would apply is understood here and a patch it
 * would reject is rejected here too:
 *
 *   *** Begin Patch
 *   *** Add File: <path>          then lines starting with '+'
 *   *** Delete File: <path>
 *   *** Update File: <path>
 *   *** Move to: <path>           optional, right after Update File
 *   @@ <context>                  chunks of ' ', '+', '-' lines; '*** End of File' may end one
 *   *** End Patch
 *
 * The text is trimmed; lines end at LF or CRLF; the Begin/End markers and the hunk headers may
 * carry surrounding whitespace; a patch wrapped in a heredoc (`<<'EOF'` … `EOF`) is unwrapped.
 * Paths come back as written (relative to the session's cwd, or absolute), deduplicated, in
 * order, both sides of a move. A malformed patch (no Begin or End marker, an unknown header, an
 * empty update, no file at all) is a ScalpelError BAD_ARGUMENT with data.name 'patch', a
 * data.reason, and data.line (1-based, in the trimmed text) where it applies.
 *
 * Docs: https://developers.openai.com/codex/hooks (PreToolUse: "Bash and apply_patch use
 * tool_input.command"); https://github.com/openai/codex/pull/18391 ("Exposed the raw patch body
 * as tool_input.command").
 */

function fail(reason: string, message: string, line?: number): never {
  throw badField(
    'patch',
    reason,
    `invalid patch: ${message}${line !== undefined ? ` (line ${line})` : ''}`,
    line !== undefined ? { line } : {},
  );
}

function checkPath(path: string, line: number): string {
  if (path === '') fail('empty-path', 'a file header names no path', line);
  if (path.includes('\0')) fail('nul', 'a path contains a NUL character', line);
  return path;
}

export function applyPatchPaths(text: string): string[] {
  if (typeof text !== 'string') fail('wrong-type', 'the patch is not text');
  const all = lines(trim(text));
  let body: string[];
  let first = 2; // line number of body[0]
  if (isEnvelope(all)) body = all.slice(1, -1);
  else if (
    all.length >= 4 &&
    (all[0] === '<<EOF' || all[0] === "<<'EOF'" || all[0] === '<<"EOF"') &&
    all[all.length - 1].endsWith('EOF') &&
    isEnvelope(all.slice(1, -1))
  ) {
    body = all.slice(2, -2);
    first = 3;
  } else {
    const start = all.length ? trim(all[0]) : '';
    if (start !== BEGIN) fail('missing-begin', `the first line of the patch must be '${BEGIN}'`, 1);
    fail('missing-end', `the last line of the patch must be '${END}'`, all.length);
  }

  const paths: string[] = [];
  const seen = new Set<string>();
  const add = (p: string) => {
    if (!seen.has(p)) {
      seen.add(p);
      paths.push(p);
    }
  };
  let i = 0;
  while (i < body.length) {
    const at = first + i;
    const header = trim(body[i]);
    if (header.startsWith(ADD)) {
      add(checkPath(header.slice(ADD.length), at));
      i++;
      while (i < body.length && body[i].startsWith('+')) i++;
    } else if (header.startsWith(DELETE)) {
      add(checkPath(header.slice(DELETE.length), at));
      i++;
    } else if (header.startsWith(UPDATE)) {
      add(checkPath(header.slice(UPDATE.length), at));
      i++;
      if (i < body.length && body[i].startsWith(MOVE)) {
        add(checkPath(body[i].slice(MOVE.length), first + i));
        i++;
      }
      let chunks = 0;
      while (i < body.length) {
        if (trim(body[i]) === '') {
          i++;
          continue;
        }
        if (body[i].startsWith('*')) break;
        i += updateChunk(body, i, chunks === 0, first);
        chunks++;
      }
      if (chunks === 0) fail('empty-update', `the update of '${header.slice(UPDATE.length)}' changes nothing`, at);
    } else {
      fail(
        'bad-header',
        `'${header.length > 80 ? `${header.slice(0, 80)}...` : header}' is not a hunk header (*** Add File:, *** Delete File:, *** Update File:)`,
        at,
      );
    }
  }
  if (paths.length === 0) fail('no-paths', 'the patch names no file');
  return paths;
}

function isEnvelope(l: readonly string[]): boolean {
  return l.length >= 2 && trim(l[0]) === BEGIN && trim(l[l.length - 1]) === END;
}

/** One chunk of an update hunk starting at body[i]: how many lines it takes. */
function updateChunk(body: readonly string[], i: number, firstChunk: boolean, first: number): number {
  let start: number;
  if (body[i] === '@@' || body[i].startsWith('@@ ')) start = 1;
  else if (firstChunk) start = 0;
  else fail('bad-chunk', `expected a '@@' context line, not '${body[i].length > 80 ? `${body[i].slice(0, 80)}...` : body[i]}'`, first + i);
  if (i + start >= body.length) fail('empty-chunk', 'an update chunk has no lines', first + i + start);
  let taken = 0;
  for (let j = i + start; j < body.length; j++) {
    const l = body[j];
    if (l === EOF_MARKER) {
      if (taken === 0) fail('empty-chunk', 'an update chunk has no lines', first + j);
      taken++;
      break;
    }
    if (l === '' || l[0] === ' ' || l[0] === '+' || l[0] === '-') {
      taken++;
      continue;
    }
    if (taken === 0)
      fail('bad-line', `an update line must start with ' ', '+' or '-', not '${l.length > 80 ? `${l.slice(0, 80)}...` : l}'`, first + j);
    break;
  }
  return start + taken;
}

/**
 * The patch of a shell command that is nothing but an `apply_patch` (or `applypatch`) heredoc,
 * which Codex applies itself instead of running it (codex-rs/apply-patch/src/invocation.rs,
 * `maybe_parse_apply_patch_verified`); null for any other command (then it is a shell command).
 *
 *   apply_patch <<'EOF'
 *   *** Begin Patch
 *   ...
 *   *** End Patch
 *   EOF
 */
export function shellApplyPatch(command: string): string | null {
  const m = /^[ \t]*(?:apply_patch|applypatch)[ \t]*<<(-?)[ \t]*(['"]?)([A-Za-z_][A-Za-z0-9_]*)\2[ \t]*\r?\n/.exec(command);
  if (!m) return null;
  const strip = m[1] === '-';
  const delim = m[3];
  // `<<-` strips leading tabs from the body and the closing line, as the shell does
  const rest = command
    .slice(m[0].length)
    .split('\n')
    .map((l) => (strip ? l.replace(/^\t+/, '') : l));
  for (let k = 0; k < rest.length; k++) {
    if ((rest[k].endsWith('\r') ? rest[k].slice(0, -1) : rest[k]) !== delim) continue;
    // only whitespace may follow the heredoc: anything else makes it a real shell command
    if (
      rest
        .slice(k + 1)
        .join('\n')
        .trim() !== ''
    )
      return null;
    return rest.slice(0, k).join('\n').replace(/\r$/, '');
  }
  return null;
}
