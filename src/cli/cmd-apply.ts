import { ScalpelError } from '../errors/index.js';
import { resolvePath } from '../fs/path.js';
import { openRepository } from '../entry/root-node.js';
import { parseArgs, UsageError } from './args.js';
import type { CliIo } from './io.js';
import { ok, printOutcome, printWarnings } from './output.js';
import { outputTail as tail, runCheck } from '../process/check.js';

/** Exit code of a check that failed (the patch was rolled back, or kept with --keep-on-failure). */
export const CHECK_FAILED = 4;

/**
 * `git-scalpel apply [--session S] [--label L] [--index | --cached] [--check CMD]
 * [--keep-on-failure] [--dry-run] [--json] [PATCH | -]`: exit 0 applied (and the check passed),
 * 1 the patch does not apply (nothing written, file and hunk named), 4 the check failed (rolled
 * back, or kept with --keep-on-failure).
 */
export async function cmdApply(args: string[], io: CliIo): Promise<number> {
  const { flags, positionals } = parseArgs(args, {
    switches: ['json', 'index', 'cached', 'keep-on-failure', 'dry-run'],
    options: ['session', 'label', 'check'],
  });
  if (positionals.length > 1) throw new UsageError('apply takes one patch file (or - for standard input)');
  if (flags.has('index') && flags.has('cached')) throw new UsageError('--index and --cached do not go together');
  const source = positionals[0] ?? '-';
  const patch =
    source === '-' ? await (io.stdin ?? (() => Promise.reject(new UsageError('no standard input'))))() : await readPatchFile(io, source);
  const repo = await openRepository({ fs: io.fs, dir: io.cwd, env: io.env });
  const command = flags.get('check');
  if (command === true) throw new UsageError('--check needs a command');
  const label = flags.get('label');
  const session = flags.get('session');
  const r = await repo.apply(patch, {
    session: typeof session === 'string' ? session : undefined,
    label: typeof label === 'string' ? label : undefined,
    to: flags.has('index') ? 'index' : flags.has('cached') ? 'cached' : 'worktree',
    check: command ? () => runCheck(command, repo.worktree) : undefined,
    keepOnFailure: flags.has('keep-on-failure'),
    dryRun: flags.has('dry-run'),
  });
  // a patch that does not apply is BAD_ARGUMENT naming the patch: git apply's exit 1 (args.ts errorExitCode)
  const failed = r.check !== null && r.check.code !== 0;
  const head = `${r.dryRun ? 'would apply' : 'applied'} ${r.files.length} file(s)${r.snapshot ? ` (snapshot ${r.snapshot}, session ${r.session}: restore undoes it)` : ''}`;
  const checkLine = r.check
    ? `check: exit ${r.check.code}${r.check.code === 0 ? '' : r.rolledBack ? '; the patch was rolled back' : '; the patch is kept (--keep-on-failure), restore undoes it'}`
    : null;
  printWarnings(io, r.warnings);
  if (flags.has('json')) {
    if (!failed) return ok(io, head, r);
    printOutcome(io, { code: 'CHECK_FAILED', exit: CHECK_FAILED, message: checkLine as string, data: r });
    return CHECK_FAILED;
  }
  const lines = [head];
  for (const f of r.files)
    lines.push(
      `  ${f.deleted ? 'delete' : f.from && f.from !== f.path ? 'rename' : 'write'}  ${f.from && f.from !== f.path ? `${f.from} -> ` : ''}${f.path}${f.mode ? ` (${f.mode})` : ''}`,
    );
  if (r.check) {
    lines.push(checkLine as string);
    if (r.check.code !== 0 && r.check.output) lines.push(tail(r.check.output).replace(/^/gm, '  | '));
  }
  io.out(lines.join('\n') + '\n');
  return failed ? CHECK_FAILED : 0;
}

/** The patch file's bytes; one that cannot be read is a bad argument (exit 2), named. */
async function readPatchFile(io: CliIo, source: string): Promise<Uint8Array> {
  const path = resolvePath(io.cwd, source);
  try {
    return await io.fs.readFile(path);
  } catch (e) {
    const cause = (e as { code?: unknown }).code;
    throw new ScalpelError('BAD_ARGUMENT', `cannot read the patch file '${source}'${typeof cause === 'string' ? ` (${cause})` : ''}`, {
      name: 'patch-file',
      path,
      ...(typeof cause === 'string' ? { cause } : {}),
    });
  }
}
