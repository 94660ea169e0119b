/**
 * Codex's `apply_patch` format (openai/codex, codex-rs/apply-patch: parser.rs in lenient mode,
 * lib.rs `compute_replacements` / `apply_replacements`, seek_sequence.rs) read into the
 * FilePatch model and applied with Codex's own rules — not git's: an update chunk is found by
 * its `@@` context line and its old lines, searched forward from the previous chunk, exactly
 * first, then ignoring trailing whitespace, then surrounding whitespace, then with Unicode
 * punctuation folded to ASCII; the result always ends with a newline.
 */
import { decodePath, encodePath } from '../bytes/text.js';
import { emptyPatch, patchError } from './common.js';
import type { CodexChunk, FilePatch } from './types.js';

/** The markers of Codex's patch format (also read by the hook, src/hooks/apply-patch.ts, for its paths). */
export const BEGIN = '*** Begin Patch';
export const END = '*** End Patch';
export const ADD = '*** Add File: ';
export const DELETE = '*** Delete File: ';
export const UPDATE = '*** Update File: ';
export const MOVE = '*** Move to: ';
export const EOF_MARKER = '*** End of File';

const WS = '[\\t\\n\\v\\f\\r \\u0085\\u00a0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000]';
const TRIM = new RegExp(`^${WS}+|${WS}+$`, 'g');
const TRIM_END = new RegExp(`${WS}+$`);
/** Rust's str::trim: Unicode White_Space at both ends (JavaScript's trim also strips U+FEFF and not U+0085). */
export const trim = (s: string) => s.replace(TRIM, '');
const trimEnd = (s: string) => s.replace(TRIM_END, '');

/** Rust's str::lines: split at LF, one CR before each LF dropped; no empty line after a final LF. */
export function lines(s: string): string[] {
  if (s === '') return [];
  const out = s.split('\n');
  if (out[out.length - 1] === '') out.pop();
  return out.map((l) => (l.endsWith('\r') ? l.slice(0, -1) : l));
}

export function isCodexPatch(bytes: Uint8Array): boolean {
  let p = 0;
  while (p < bytes.length && (bytes[p] === 0x20 || bytes[p] === 9 || bytes[p] === 10 || bytes[p] === 13)) p++;
  const b = '*** Begin Patch';
  for (let k = 0; k < b.length; k++) if (bytes[p + k] !== b.charCodeAt(k)) return false;
  return true;
}

function checkPath(p: string, line: number): string {
  if (p === '') throw patchError('empty-path', 'a file header names no path', line);
  if (p.includes('\0')) throw patchError('nul', 'a path contains a NUL character', line);
  return p;
}

export function parseCodexPatch(bytes: Uint8Array): FilePatch[] {
  const all = lines(trim(decodePath(bytes)));
  if (all.length < 2 || trim(all[0]) !== BEGIN) throw patchError('missing-begin', `the first line of the patch must be '${BEGIN}'`, 1);
  if (trim(all[all.length - 1]) !== END) throw patchError('missing-end', `the last line of the patch must be '${END}'`, all.length);
  const body = all.slice(1, -1);
  const first = 2;
  const out: FilePatch[] = [];
  let i = 0;
  while (i < body.length) {
    const at = first + i;
    const header = trim(body[i]);
    if (header.startsWith(ADD)) {
      const fp = emptyPatch('codex', at);
      fp.status = 'add';
      fp.newPath = checkPath(header.slice(ADD.length), at);
      fp.newMode = '100644';
      i++;
      let content = '';
      while (i < body.length && body[i].startsWith('+')) content += `${body[i++].slice(1)}\n`;
      fp.codexContent = encodePath(content);
      out.push(fp);
    } else if (header.startsWith(DELETE)) {
      const fp = emptyPatch('codex', at);
      fp.status = 'delete';
      fp.oldPath = checkPath(header.slice(DELETE.length), at);
      i++;
      out.push(fp);
    } else if (header.startsWith(UPDATE)) {
      const fp = emptyPatch('codex', at);
      fp.oldPath = fp.newPath = checkPath(header.slice(UPDATE.length), at);
      i++;
      if (i < body.length && body[i].startsWith(MOVE)) {
        fp.newPath = checkPath(body[i].slice(MOVE.length), first + i);
        fp.status = 'rename';
        i++;
      }
      const chunks: CodexChunk[] = [];
      while (i < body.length) {
        if (trim(body[i]) === '') {
          i++;
          continue;
        }
        if (body[i].startsWith('*')) break;
        i += parseChunk(body, i, chunks.length === 0, first, chunks);
      }
      if (chunks.length === 0) throw patchError('empty-update', `the update of '${fp.oldPath}' changes nothing`, at);
      fp.codexChunks = chunks;
      out.push(fp);
    } else {
      throw patchError(
        'bad-header',
        `'${header.slice(0, 80)}' is not a hunk header (*** Add File:, *** Delete File:, *** Update File:)`,
        at,
      );
    }
  }
  if (out.length === 0) throw patchError('no-paths', 'the patch names no file', undefined);
  return out;
}

function parseChunk(body: readonly string[], i: number, firstChunk: boolean, first: number, into: CodexChunk[]): number {
  let start: number;
  let context: string | null = null;
  if (body[i] === '@@') start = 1;
  else if (body[i].startsWith('@@ ')) {
    context = body[i].slice(3);
    start = 1;
  } else if (firstChunk) start = 0;
  else throw patchError('bad-chunk', `expected a '@@' context line, not '${body[i].slice(0, 80)}'`, first + i);
  if (i + start >= body.length) throw patchError('empty-chunk', 'an update chunk has no lines', first + i + start);
  const chunk: CodexChunk = { context, oldLines: [], newLines: [], endOfFile: false };
  let taken = 0;
  for (let j = i + start; j < body.length; j++) {
    const l = body[j];
    if (l === EOF_MARKER) {
      if (taken === 0) throw patchError('empty-chunk', 'an update chunk has no lines', first + j);
      chunk.endOfFile = true;
      taken++;
      break;
    }
    if (l === '') {
      chunk.oldLines.push('');
      chunk.newLines.push('');
    } else if (l[0] === ' ') {
      chunk.oldLines.push(l.slice(1));
      chunk.newLines.push(l.slice(1));
    } else if (l[0] === '+') chunk.newLines.push(l.slice(1));
    else if (l[0] === '-') chunk.oldLines.push(l.slice(1));
    else {
      if (taken === 0) throw patchError('bad-line', `an update line must start with ' ', '+' or '-', not '${l.slice(0, 80)}'`, first + j);
      break;
    }
    taken++;
  }
  into.push(chunk);
  return start + taken;
}

function normalise(s: string): string {
  return trim(s)
    .replace(/[\u2010-\u2015\u2212]/g, '-')
    .replace(/[\u2018-\u201b]/g, "'")
    .replace(/[\u201c-\u201f]/g, '"')
    .replace(/[\u00a0\u2002-\u200a\u202f\u205f\u3000]/g, ' ');
}

function seekSequence(lines: readonly string[], pattern: readonly string[], start: number, eof: boolean): number | null {
  if (pattern.length === 0) return start;
  if (pattern.length > lines.length) return null;
  const from = eof && lines.length >= pattern.length ? lines.length - pattern.length : start;
  const last = lines.length - pattern.length;
  const passes: ((s: string) => string)[] = [(s) => s, trimEnd, trim, normalise];
  for (const f of passes) {
    for (let i = from; i <= last; i++) {
      let ok = true;
      for (let k = 0; k < pattern.length; k++) {
        if (f(lines[i + k]) !== f(pattern[k])) {
          ok = false;
          break;
        }
      }
      if (ok) return i;
    }
  }
  return null;
}

/** Codex's `derive_new_contents_from_chunks`; `fail(reason, hunk)` throws the caller's error. */
export function applyCodexChunks(
  old: Uint8Array,
  chunks: readonly CodexChunk[],
  fail: (reason: string, hunk: number) => never,
): Uint8Array {
  const text = decodePath(old);
  const original = text.split('\n');
  if (original.length && original[original.length - 1] === '') original.pop();
  const replacements: [number, number, string[]][] = [];
  let lineIndex = 0;
  chunks.forEach((chunk, n) => {
    if (chunk.context !== null) {
      const idx = seekSequence(original, [chunk.context], lineIndex, false);
      if (idx === null) fail(`failed to find context '${chunk.context}'`, n + 1);
      lineIndex = idx + 1;
    }
    if (chunk.oldLines.length === 0) {
      const at = original.length && original[original.length - 1] === '' ? original.length - 1 : original.length;
      replacements.push([at, 0, chunk.newLines.slice()]);
      return;
    }
    let pattern = chunk.oldLines;
    let news = chunk.newLines;
    let found = seekSequence(original, pattern, lineIndex, chunk.endOfFile);
    if (found === null && pattern[pattern.length - 1] === '') {
      pattern = pattern.slice(0, -1);
      if (news.length && news[news.length - 1] === '') news = news.slice(0, -1);
      found = seekSequence(original, pattern, lineIndex, chunk.endOfFile);
    }
    if (found === null) fail(`failed to find the expected lines:\n${chunk.oldLines.join('\n')}`, n + 1);
    replacements.push([found, pattern.length, news.slice()]);
    lineIndex = found + pattern.length;
  });
  replacements.sort((a, b) => a[0] - b[0]);
  const result = original.slice();
  for (let k = replacements.length - 1; k >= 0; k--) {
    const [at, del, ins] = replacements[k];
    result.splice(at, del, ...ins);
  }
  if (!(result.length && result[result.length - 1] === '')) result.push('');
  return encodePath(result.join('\n'));
}
