/**
 * The command line's outcomes. With `--json`, every run of a command (but `hook` and `mcp`, which
 * speak their harness's and MCP's protocols) prints exactly one JSON object on stdout, whatever
 * happened:
 *
 *   { "code": "OK", "exit": 0, "message": "restored 1a2b3c4d (session default)", "data": { ... } }
 *   { "code": "REFUSED", "exit": 3, "message": "restore refused: ...", "data": { "conflicts": [...] } }
 *   { "code": "USAGE", "exit": 2, "message": "unknown option --frce", "data": { "command": "restore", "usage": "..." } }
 *
 * `code` is "OK" on success, the ScalpelError's code for an error or a refusal (errors/index.ts),
 * and for the outcomes that are no library error: "USAGE" (exit 2), "CHECK_FAILED" (apply's check,
 * exit 4), "VERIFY_FAILED" (index --verify: re-encoding differs, exit 1), "CONFORMANCE_FAILED"
 * (conformance: a case failed, exit 1), "UNEXPECTED" (a bug or
 * a system error the library does not type, exit 1). A dry run that would be refused is "REFUSED",
 * exit 3, as the command itself would be. stderr still carries the human text of an error.
 */
import { ScalpelError } from '../errors/index.js';
import { toJsonText } from '../bytes/json.js';
import { UsageError, errorExitCode } from './args.js';
import { errorDataJson } from './report-json.js';
import { usageLines } from './usage.js';
import type { CliIo } from './io.js';

export type CliCode = 'OK' | 'USAGE' | 'CHECK_FAILED' | 'VERIFY_FAILED' | 'CONFORMANCE_FAILED' | 'UNEXPECTED' | ScalpelError['code'];

export interface Outcome {
  code: CliCode;
  exit: number;
  message: string;
  data: unknown;
}

/** Print `o` as the one JSON object of this run. */
export function printOutcome(io: CliIo, o: Outcome): void {
  io.out(toJsonText({ code: o.code, exit: o.exit, message: o.message, data: o.data }) + '\n');
}

/** What an operation read past without stopping, one line each on stderr (with --json too: stdout holds the one object). */
export function printWarnings(io: CliIo, warnings: readonly string[] | undefined): void {
  for (const w of warnings ?? []) io.err(`git-scalpel: warning: ${w}\n`);
}

/** A success: exit 0, `data` the command's result. */
export function ok(io: CliIo, message: string, data: unknown): number {
  printOutcome(io, { code: 'OK', exit: 0, message, data });
  return 0;
}

/**
 * Whether the command line asks for JSON: `--json` before a `--` (after it, it is a path). Read
 * from the words themselves, so that a run whose options did not parse answers in JSON too.
 */
export function wantsJson(argv: readonly string[]): boolean {
  for (const a of argv) {
    if (a === '--') return false;
    if (a === '--json') return true;
  }
  return false;
}

/** The outcome of a run that ended in `e`, and the text a person reads on stderr. */
export function errorOutcome(e: unknown, command: string | undefined, bin = 'git-scalpel'): { outcome: Outcome; text: string } {
  const exit = errorExitCode(e);
  if (e instanceof UsageError) {
    const cmd = e.command ?? command;
    const usage = usageLines(cmd);
    const known = usage !== usageLines(undefined);
    const see = known ? `${bin} ${cmd} --help` : `${bin} --help`;
    return {
      outcome: { code: 'USAGE', exit, message: e.message, data: { command: known ? cmd : null, usage: usage.trimEnd() } },
      text: `git-scalpel${known ? ` ${cmd}` : ''}: ${e.message}\n${usage}(${see} for the options)\n`,
    };
  }
  if (e instanceof ScalpelError) {
    return {
      outcome: { code: e.code, exit, message: e.message, data: errorDataJson(e.data) },
      text: `git-scalpel: ${exit === 3 ? 'refused' : 'error'} [${e.code}]: ${e.message}\n`,
    };
  }
  const err = e instanceof Error ? e : new Error(String(e));
  const sys = (err as { code?: unknown }).code;
  return {
    outcome: {
      code: 'UNEXPECTED',
      exit,
      message: err.message,
      data: { name: err.name, ...(typeof sys === 'string' ? { cause: sys } : {}) },
    },
    text: `git-scalpel: unexpected error: ${err.stack ?? err.message}\n`,
  };
}
