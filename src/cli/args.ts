import { ScalpelError } from '../errors/index.js';

/** Usage errors exit with code 2; the message is the one thing that was wrong, `command` whose usage to show (run() fills it in). */
export class UsageError extends Error {
  constructor(
    message: string,
    readonly command?: string,
  ) {
    super(message);
    this.name = 'UsageError';
  }
}

export interface ParsedArgs {
  /** Flags seen, by long name; value true for switches. */
  flags: Map<string, string | true>;
  positionals: string[];
}

/**
 * Parse `args` against a spec: `switches` take no value, `options` take one (`--x=v` or `--x v`).
 * `--` ends flags; everything after is positional.
 */
export function parseArgs(args: readonly string[], spec: { switches?: string[]; options?: string[] }): ParsedArgs {
  const switches = new Set(spec.switches ?? []);
  const options = new Set(spec.options ?? []);
  const flags = new Map<string, string | true>();
  const positionals: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const a = args[i];
    if (a === '--') {
      positionals.push(...args.slice(i + 1));
      break;
    }
    if (a.startsWith('--') && a.length > 2) {
      const eq = a.indexOf('=');
      const name = eq < 0 ? a.slice(2) : a.slice(2, eq);
      if (switches.has(name)) {
        if (eq >= 0) throw new UsageError(`option --${name} takes no value`);
        flags.set(name, true);
      } else if (options.has(name)) {
        let v: string | undefined = eq >= 0 ? a.slice(eq + 1) : args[++i];
        if (v === undefined) throw new UsageError(`option --${name} needs a value`);
        flags.set(name, v);
      } else {
        throw new UsageError(`unknown option --${name}`);
      }
      continue;
    }
    if (a.startsWith('-') && a.length > 1) throw new UsageError(`unknown option ${a}`);
    positionals.push(a);
  }
  return { flags, positionals };
}

/** Refusals (exit 3): nothing was written because it was not safe. */
const REFUSALS = new Set(['REFUSED', 'INDEX_LOCKED', 'SNAPSHOT_CORRUPT', 'BAD_PATH', 'SPARSE_PATH']);

export function errorExitCode(e: unknown): number {
  if (e instanceof UsageError) return 2;
  // a patch that does not apply is git apply's exit 1, not a usage error
  if (e instanceof ScalpelError && e.code === 'BAD_ARGUMENT' && e.data.name === 'patch') return 1;
  if (e instanceof ScalpelError && e.code === 'BAD_ARGUMENT') return 2;
  if (e instanceof ScalpelError && REFUSALS.has(e.code)) return 3;
  return 1;
}
