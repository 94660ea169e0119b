import type { HookEvent } from './events.js';
import {
  badField,
  checkString,
  cwdField,
  describe,
  givenSession,
  optBoolean,
  optString,
  own,
  reqString,
  turnLabel,
  type Obj,
} from './fields.js';

/**
 * git-scalpel's own hook JSON (`git-scalpel hook generic`), for any harness or script without an
 * adapter of its own: one object per event.
 *
 *   {"session": "agent-7", "event": "turn-start",   "cwd": "/repo", "label": "fix the parser"}
 *   {"session": "agent-7", "event": "before-write", "cwd": "/repo", "paths": ["src/a.ts", "/repo/b.md"], "tool": "edit"}
 *   {"session": "agent-7", "event": "before-shell", "cwd": "/repo", "command": "npm test", "tool": "bash"}
 *   {"session": "agent-7", "event": "after-tool",   "cwd": "/repo", "tool": "edit", "outcome": "ok"}
 *   {"session": "agent-7", "event": "turn-end",     "cwd": "/repo"}
 *
 * - session (required): a git-scalpel session name, used as given (letters, digits, '.', '_',
 *   '-'; at most 100; no '..'; not ending in '.lock').
 * - event (required): turn-start, before-write, before-shell, after-tool, turn-end
 *   (session-start and session-end too, with an optional "detail").
 * - cwd (required): the directory the paths are relative to, inside the repository.
 * - paths: required (a non-empty array of path strings) for before-write; optional for after-tool.
 * - label: turn-start's label (optional, default "(no label)"; its first line, 120 characters at most).
 * - command: required for before-shell; optional for after-tool.
 * - tool: the tool's name (optional; default: the event name).
 * - toolUseId: optional; pairs a before-* event with its after-tool.
 * - outcome: after-tool's "ok", "failed", or "denied" (the call never ran: what its before-write
 *   captured is dropped) (optional; default "unknown"); exitCode: a shell command's (optional).
 * - final: turn-end's; false when only a subagent stopped (optional; default true).
 */

const EVENTS = Object.freeze([
  'turn-start',
  'before-write',
  'before-shell',
  'after-tool',
  'turn-end',
  'session-start',
  'session-end',
] as const);

export function parseGeneric(p: Obj): HookEvent {
  const event = reqString(p, 'event');
  if (!(EVENTS as readonly string[]).includes(event))
    throw badField(
      'event',
      'unknown-value',
      `event '${event.length > 40 ? `${event.slice(0, 40)}...` : event}' is not one of ${EVENTS.join(', ')}`,
    );
  const session = givenSession(p);
  const cwd = cwdField(p);
  const tool = () => optString(p, 'tool') ?? event;
  const toolUseId = () => {
    const id = optString(p, 'toolUseId', '', { maxLength: 1024 });
    return id !== undefined ? { toolUseId: id } : {};
  };
  switch (event) {
    case 'turn-start':
      return {
        kind: 'turn-start',
        session,
        cwd,
        label: turnLabel(optString(p, 'label', '', { allowEmpty: true, allowNul: true }) ?? '', '(no label)'),
      };
    case 'before-write':
      return { kind: 'before-write', session, cwd, paths: pathList(p, true) as string[], tool: tool(), ...toolUseId() };
    case 'before-shell':
      return { kind: 'before-shell', session, cwd, command: reqString(p, 'command', '', { allowNul: true }), tool: tool(), ...toolUseId() };
    case 'after-tool': {
      const outcome = optString(p, 'outcome');
      if (outcome !== undefined && outcome !== 'ok' && outcome !== 'failed' && outcome !== 'denied')
        throw badField(
          'outcome',
          'unknown-value',
          `outcome must be "ok", "failed" or "denied", not '${outcome.length > 40 ? `${outcome.slice(0, 40)}...` : outcome}'`,
        );
      const exitCode = own(p, 'exitCode');
      if (
        exitCode !== undefined &&
        exitCode !== null &&
        !(typeof exitCode === 'number' && Number.isInteger(exitCode) && exitCode >= 0 && exitCode <= 255)
      )
        throw badField('exitCode', 'wrong-type', 'exitCode must be a whole number from 0 to 255');
      const paths = pathList(p, false);
      const command = optString(p, 'command', '', { allowNul: true });
      return {
        kind: 'after-tool',
        session,
        cwd,
        tool: tool(),
        ...toolUseId(),
        outcome: outcome ?? 'unknown',
        ...(typeof exitCode === 'number' ? { exitCode } : {}),
        ...(paths ? { paths } : {}),
        ...(command !== undefined ? { command } : {}),
      };
    }
    case 'turn-end':
      return { kind: 'turn-end', session, cwd, final: optBoolean(p, 'final') ?? true };
    default: {
      const detail = optString(p, 'detail', '', { allowNul: true });
      return { kind: event as 'session-start' | 'session-end', session, cwd, ...(detail !== undefined ? { detail } : {}) };
    }
  }
}

/** `paths`: an array of non-empty strings without NUL (required: also non-empty). */
function pathList(p: Obj, required: boolean): string[] | undefined {
  const v = own(p, 'paths');
  if (v === undefined || v === null) {
    if (required) throw badField('paths', 'missing', 'paths is missing (before-write needs the paths about to be written)');
    return undefined;
  }
  if (!Array.isArray(v)) throw badField('paths', 'wrong-type', `paths must be an array of strings, not ${describe(v)}`);
  if (required && v.length === 0) throw badField('paths', 'empty', 'paths is empty (before-write needs the paths about to be written)');
  return v.map((x, i) => checkString(x, `paths[${i}]`));
}
