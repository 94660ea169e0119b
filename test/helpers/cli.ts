/**
 * The command line in-process (src/cli/main.ts `run`), as a test calls it: exit code, stdout and
 * stderr, a thrown error turned into its exit code and message as the binary would print it.
 */
import { run } from '../../src/cli/main.js';
import { errorExitCode } from '../../src/cli/args.js';
import { nodeFs } from '../../src/node.js';

export async function cli(cwd: string, args: string[], stdin?: Uint8Array): Promise<{ code: number; out: string; err: string }> {
  let out = '';
  let err = '';
  try {
    const code = await run(args, { fs: nodeFs(), cwd, out: (t) => void (out += t), err: (t) => void (err += t), stdin: async () => stdin ?? new Uint8Array() });
    return { code, out, err };
  } catch (e) {
    return { code: errorExitCode(e), out, err: err + String((e as Error).message) };
  }
}
