import type { CliIo } from './io.js';
import { parseArgs, UsageError } from './args.js';
import { ScalpelError } from '../errors/index.js';
import { joinPath, resolvePath } from '../fs/path.js';
import { printOutcome } from './output.js';
import { runConformance, type CorpusSource } from '../conformance/runner.js';
import { scalpelAdapter } from '../conformance/adapter-scalpel.js';
import { isomorphicGitAdapter, type ModuleLoader } from '../conformance/adapter-isomorphic-git.js';
import type { AdapterCapabilities, CaseResult, ConformanceAdapter } from '../conformance/types.js';

/** The adapters built in; anything else given to --adapter is a module path. */
export const BUILT_IN_ADAPTERS = ['git-scalpel', 'isomorphic-git'] as const;

/**
 * `git-scalpel conformance [--adapter NAME|MODULE] [--corpus DIR] [--json] [CASE...]`: run the
 * index conformance corpus (conformance/ in the package) through an adapter and report every case
 * as pass, fail (with the first difference) or unsupported. Exit 0 when no case fails, 1 otherwise.
 */
export async function cmdConformance(args: string[], io: CliIo): Promise<number> {
  const { flags, positionals } = parseArgs(args, { switches: ['json'], options: ['adapter', 'corpus'] });
  const json = flags.has('json');
  const spec = (flags.get('adapter') as string | undefined) ?? 'git-scalpel';
  const corpusDir = await findCorpus(io, flags.get('corpus') as string | undefined);
  const corpus: CorpusSource = { read: (p) => io.fs.readFile(joinPath(corpusDir, p)) };
  const adapter = await resolveAdapter(spec, io);
  const report = await runConformance({
    corpus,
    adapter,
    cases: positionals,
    onCase: json ? undefined : (r) => io.out(caseLine(r)),
  });
  const s = report.summary;
  const line = `${report.corpus.cases} cases of ${corpusDir} (written by ${report.corpus.gitVersion}) through ${report.adapter.name}: ${s.pass} pass, ${s.fail} fail, ${s.unsupported} not supported`;
  const exit = s.fail === 0 ? 0 : 1;
  if (json)
    printOutcome(io, {
      code: exit === 0 ? 'OK' : 'CONFORMANCE_FAILED',
      exit,
      message: line,
      data: { ...report, corpus: { ...report.corpus, path: corpusDir } },
    });
  else io.out(line + '\n');
  return exit;
}

function caseLine(r: CaseResult): string {
  const status = r.status === 'unsupported' ? 'unsupported' : r.status;
  let line = `${status.padEnd(11)} ${r.name}`;
  if (r.reason) line += `: ${r.reason.replace(/\s*\n\s*/g, ' ')}`;
  for (const n of r.notes ?? []) line += `\n            note: ${n}`;
  return line + '\n';
}

async function findCorpus(io: CliIo, given: string | undefined): Promise<string> {
  if (given !== undefined) {
    const dir = resolvePath(io.cwd, given);
    if (!(await io.fs.stat(joinPath(dir, 'manifest.json')))) throw new UsageError(`--corpus ${given}: no manifest.json there`);
    return dir;
  }
  let dirs: string[];
  if (typeof __dirname === 'string') {
    // the bundled command line (dist/cli.cjs): the corpus ships beside dist/; the sources under
    // a test runner that gives modules a __dirname (src/cli/): two levels up
    dirs = [joinPath(__dirname, '..', 'conformance'), joinPath(__dirname, '..', '..', 'conformance')];
  } else {
    dirs = ((await import(['.', 'corpus-dir.js'].join('/'))) as typeof import('./corpus-dir.js')).corpusDirs();
  }
  for (const d of dirs) if (await io.fs.stat(joinPath(d, 'manifest.json'))) return d;
  throw new ScalpelError(
    'UNSUPPORTED',
    `the conformance corpus is not installed beside this git-scalpel (looked in ${dirs.join(', ')}); pass --corpus DIR`,
    { capability: 'conformance corpus', looked: dirs },
  );
}

/** require in the bundled command line, import() in the unbundled one (a file path as a file: URL). */
const loadModule: ModuleLoader = async (specifier) => {
  if (typeof require === 'function') return require(specifier) as unknown;
  const { isAbsolute } = await import('node:path');
  const { pathToFileURL } = await import('node:url');
  return (await import(isAbsolute(specifier) ? pathToFileURL(specifier).href : specifier)) as unknown;
};

async function resolveAdapter(spec: string, io: CliIo): Promise<ConformanceAdapter> {
  if (spec === 'git-scalpel') return scalpelAdapter();
  if (spec === 'isomorphic-git') return isomorphicGitAdapter(loadModule);
  if (!/[\\/]|\.[cm]?js$/.test(spec)) {
    throw new UsageError(
      `--adapter ${spec}: not a built-in adapter (${BUILT_IN_ADAPTERS.join(', ')}) nor a module path (./my-adapter.mjs)`,
    );
  }
  const path = resolvePath(io.cwd, spec);
  if (!(await io.fs.stat(path))) throw new UsageError(`--adapter ${spec}: no such file`);
  let mod: Record<string, unknown>;
  try {
    mod = (await loadModule(path)) as Record<string, unknown>;
  } catch (e) {
    throw new ScalpelError('BAD_ARGUMENT', `--adapter ${spec}: the module does not load: ${e instanceof Error ? e.message : String(e)}`, {
      name: 'adapter',
      reason: 'load-failed',
    });
  }
  let candidate: unknown = mod.default ?? mod.adapter;
  // a CommonJS module loaded through import(): its exports object is the default
  if (candidate && typeof candidate === 'object' && !('decode' in candidate) && 'default' in candidate)
    candidate = (candidate as { default: unknown }).default;
  if (typeof candidate === 'function') candidate = await (candidate as () => unknown)();
  checkAdapter(candidate, spec);
  return candidate;
}

function checkAdapter(a: unknown, spec: string): asserts a is ConformanceAdapter {
  const problems: string[] = [];
  const x = a as Partial<ConformanceAdapter> | null;
  if (!x || typeof x !== 'object') problems.push('its default export (or `adapter`) is not an object or a function returning one');
  else {
    if (typeof x.name !== 'string' || !x.name) problems.push('no `name`');
    if (typeof x.decode !== 'function') problems.push('no `decode` function');
    if (x.encode !== undefined && typeof x.encode !== 'function') problems.push('`encode` is not a function');
    const c = x.capabilities as Partial<AdapterCapabilities> | undefined;
    if (!c || typeof c !== 'object') problems.push('no `capabilities`');
    else {
      if (!Array.isArray(c.versions)) problems.push('`capabilities.versions` is not an array');
      if (!Array.isArray(c.objectFormats)) problems.push('`capabilities.objectFormats` is not an array');
      if (c.extensions !== 'all' && !Array.isArray(c.extensions)) problems.push("`capabilities.extensions` is neither an array nor 'all'");
      if (typeof c.encode !== 'boolean') problems.push('`capabilities.encode` is not a boolean');
    }
  }
  if (problems.length) {
    throw new ScalpelError(
      'BAD_ARGUMENT',
      `--adapter ${spec}: not a conformance adapter: ${problems.join('; ')} (see conformance/README.md)`,
      { name: 'adapter', reason: 'not-an-adapter', problems },
    );
  }
}
