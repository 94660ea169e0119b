/**
 * The package as a user gets it: `npm pack` of the build, `npm install` of the tarball into a
 * fresh project, and then, against what was installed (never src/):
 *
 * - what the install pulls in: git-scalpel and its runtime dependencies, at most 5 packages;
 * - only what runs ships: every JavaScript file is loaded by an entry, every import resolves in
 *   the package or in a runtime dependency, and the runtime dependencies are exactly the packages
 *   the shipped JavaScript imports; LICENSE ships; a source map's sources ship with it;
 * - the declarations: the consumer files in test/package/consumer/ type-check with `strict` and
 *   `skipLibCheck: false` on the TypeScript this project builds with, under module /
 *   moduleResolution node16, nodenext and bundler (module esnext and preserve), as ES modules
 *   (.mts) and as CommonJS (.cts, `import x = require()`), on Node's libraries without DOM and in
 *   a browser project; bad.mts (`fs: 42`) fails there and only there; every shipped declaration
 *   file type-checks; their comments cite no file of this repository, invariant label or issue;
 * - it runs: use.mts and use.cts, compiled, snapshot and restore a file in a repository made by
 *   the git CLI, through `import`, `require()` and `import()` of the installed package.
 *
 * TypeScript and @types/node come from this repository's node_modules (the consumer project
 * installs nothing but the tarball). Needs a build (`npm run build`).
 */
import { execFile, execFileSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, posix } from 'node:path';
import { promisify } from 'node:util';
import ts from 'typescript';
import { beforeAll, describe, expect, it } from 'vitest';
import { git, makeTempDir, makeTempRepo } from '../helpers/git.js';

const ROOT = process.cwd();
const TSC = join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc');
const TYPE_ROOTS = join(ROOT, 'node_modules', '@types');
const CONSUMER = join(ROOT, 'test', 'package', 'consumer');
const run = promisify(execFile);

const npmEnv = { ...process.env, npm_config_update_notifier: 'false', npm_config_audit: 'false', npm_config_fund: 'false' };

interface PackageJson {
  name: string;
  version: string;
  license: string;
  dependencies: Record<string, string>;
  exports: Record<string, unknown>;
  bin: Record<string, string>;
  files: string[];
}

let work: string;
let project: string;
/** The installed package. */
let pkgDir: string;
let pkg: PackageJson;

/** Every file under `dir`, '/'-separated and relative to it. */
function listFiles(dir: string, rel = ''): string[] {
  return readdirSync(join(dir, rel)).flatMap((name) => {
    const r = rel ? `${rel}/${name}` : name;
    return statSync(join(dir, r)).isDirectory() ? listFiles(dir, r) : [r];
  });
}

/** The module specifiers a JavaScript or declaration file imports, requires or refers to (`import("…")` types too). */
function specifiers(text: string): string[] {
  const found = ts.preProcessFile(text, true, true).importedFiles.map((f) => f.fileName);
  for (const m of text.matchAll(/import\(\s*["']([^"']+)["']\s*\)/g)) found.push(m[1]);
  return found;
}

/** The package a bare specifier names (`@noble/hashes/legacy.js` is `@noble/hashes`). */
function packageOf(spec: string): string {
  const parts = spec.split('/');
  return spec.startsWith('@') ? parts.slice(0, 2).join('/') : parts[0];
}

/** The files an `exports` target tree names, for every condition. */
function targets(v: unknown): string[] {
  if (typeof v === 'string') return [v];
  if (v && typeof v === 'object') return Object.values(v).flatMap(targets);
  return [];
}

beforeAll(() => {
  if (!existsSync(join(ROOT, 'dist', 'git-scalpel.cjs'))) throw new Error(`no build in ${ROOT}/dist: run npm run build`);
  work = makeTempDir('scalpel-pkg-');
  const tarball = execFileSync('npm', ['pack', '--silent', '--pack-destination', work, ROOT], { cwd: work, env: npmEnv, encoding: 'utf8' })
    .trim()
    .split('\n')
    .pop()!;
  project = join(work, 'consumer');
  mkdirSync(project);
  writeFileSync(join(project, 'package.json'), JSON.stringify({ name: 'consumer', version: '1.0.0', private: true }, null, 2) + '\n');
  // the registry only where the npm cache lacks a dependency
  execFileSync('npm', ['install', '--prefer-offline', '--no-audit', '--no-fund', '--loglevel=error', join(work, tarball)], {
    cwd: project,
    env: npmEnv,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  pkgDir = join(project, 'node_modules', 'git-scalpel');
  pkg = JSON.parse(readFileSync(join(pkgDir, 'package.json'), 'utf8')) as PackageJson;
  cpSync(CONSUMER, project, { recursive: true });
}, 180_000);

describe('the installed package', () => {
  it('is git-scalpel and its runtime dependencies, at most 5 packages', () => {
    const lock = JSON.parse(readFileSync(join(project, 'node_modules', '.package-lock.json'), 'utf8')) as {
      packages: Record<string, unknown>;
    };
    const installed = Object.keys(lock.packages)
      .filter((k) => k.startsWith('node_modules/'))
      .map((k) => k.slice(k.lastIndexOf('node_modules/') + 'node_modules/'.length));
    expect(installed.length).toBeLessThanOrEqual(5);
    expect(new Set(installed)).toEqual(new Set(['git-scalpel', ...Object.keys(pkg.dependencies)]));
  });

  it('ships only JavaScript an entry loads, with every import in the package or a runtime dependency, and depends on exactly what it imports', () => {
    const files = listFiles(pkgDir);
    const runtime = files.filter((f) => /\.(js|cjs|mjs)$/.test(f));
    // the entries: `exports` targets and the binary, and what the command line loads by a computed
    // path (its bundle, the MCP server's bundle, the usage text)
    const entries = [...targets(pkg.exports), ...Object.values(pkg.bin)]
      .map((f) => posix.normalize(f))
      .filter((f) => !f.endsWith('.d.ts') && f !== 'package.json');
    // and the example adapter `conformance --adapter` loads by path (conformance/README.md)
    const dynamic = [
      'dist/cli.cjs',
      'dist/tools.cjs',
      'dist/mcp.cjs',
      'dist/server.cjs',
      'dist/git-scalpel-hook.sh',
      'dist/help.json',
      'conformance/examples/minimal-adapter.mjs',
    ];
    const reached = new Set<string>();
    const bare = new Set<string>();
    const missing: string[] = [];
    const stack = [...entries, ...dynamic];
    while (stack.length > 0) {
      const f = stack.pop()!;
      if (reached.has(f)) continue;
      reached.add(f);
      if (!existsSync(join(pkgDir, f))) {
        missing.push(f);
        continue;
      }
      if (!/\.(js|cjs|mjs)$/.test(f)) continue;
      for (const spec of specifiers(readFileSync(join(pkgDir, f), 'utf8'))) {
        if (spec.startsWith('.')) stack.push(posix.join(posix.dirname(f), spec));
        else if (!spec.startsWith('node:')) bare.add(packageOf(spec));
      }
    }
    expect(missing, 'loaded but not in the package (package.json files)').toEqual([]);
    expect(
      runtime.filter((f) => !reached.has(f)),
      'in the package but loaded by no entry: leave them out in package.json files',
    ).toEqual([]);
    expect([...bare].sort(), 'packages the shipped JavaScript imports, against package.json dependencies').toEqual(
      Object.keys(pkg.dependencies).sort(),
    );
  });

  it('has its LICENSE, and no source map without its sources', () => {
    expect(pkg.license).toBe('MIT');
    expect(readFileSync(join(pkgDir, 'LICENSE'), 'utf8')).toMatch(/^MIT License\n\nCopyright \(c\) \d{4} git-scalpel contributors\n/);
    const files = listFiles(pkgDir);
    for (const f of files.filter((x) => /\.(js|cjs|mjs)$/.test(x))) {
      const url = /\/\/# sourceMappingURL=(\S+)\s*$/.exec(readFileSync(join(pkgDir, f), 'utf8'))?.[1];
      if (url && !url.startsWith('data:')) expect(existsSync(join(pkgDir, dirname(f), url)), `${f} points at ${url}`).toBe(true);
    }
    for (const f of files.filter((x) => x.endsWith('.map'))) {
      const map = JSON.parse(readFileSync(join(pkgDir, f), 'utf8')) as {
        sources: string[];
        sourceRoot?: string;
        sourcesContent?: unknown[];
      };
      for (const s of map.sources) expect(existsSync(join(pkgDir, dirname(f), map.sourceRoot ?? '', s)), `${f} cites ${s}`).toBe(true);
    }
  });

  it('has declaration comments that cite no file of this repository, invariant label, issue or test', () => {
    const found: string[] = [];
    for (const f of listFiles(pkgDir).filter((x) => x.endsWith('.d.ts'))) {
      const text = readFileSync(join(pkgDir, f), 'utf8');
      // a declaration tree's files mirror src/: `dist/types/esm/hooks/handle.d.ts` is src/hooks/handle.ts
      const srcDir = posix.dirname(f.replace(/^dist\/types\/(esm|cjs)\//, ''));
      const scanner = ts.createScanner(ts.ScriptTarget.Latest, false, ts.LanguageVariant.Standard, text);
      for (let k = scanner.scan(); k !== ts.SyntaxKind.EndOfFileToken; k = scanner.scan()) {
        if (k !== ts.SyntaxKind.SingleLineCommentTrivia && k !== ts.SyntaxKind.MultiLineCommentTrivia) continue;
        const comment = scanner.getTokenText();
        const where = `${f}:${text.slice(0, scanner.getTokenStart()).split('\n').length}`;
        for (const m of comment.matchAll(/\bI\d+\b|\bDESIGN\b|\btest\/|\bbench\/|\bseed \d+|\bissue \d+/g)) found.push(`${where}: ${m[0]}`);
        // a file or folder named as this repository has it (`hooks/handle.ts`, `bytes/text`, `src/bytes/`,
        // `splice.ts` beside the module); example paths (`src/app.ts`) are no citation
        for (const m of comment.matchAll(/(?:[\w.-]+\/)*[\w.-]+\.(?:ts|cjs|mjs)\b|\bsrc\/[\w./-]*|\b[\w-]+\/[\w-]+\b/g)) {
          const p = m[0].replace(/^src\//, '');
          const inRepo = (q: string) => existsSync(join(ROOT, 'src', q)) || existsSync(join(ROOT, 'src', `${q}.ts`));
          if (inRepo(p) || (!p.includes('/') && inRepo(posix.join(srcDir, p)))) found.push(`${where}: ${m[0]}`);
        }
      }
    }
    expect(found).toEqual([]);
  });
});

/**
 * tsc (this repository's) on a tsconfig written into the consumer project; its diagnostics, one per
 * line. `strict`, `skipLibCheck: false`; `skipDefaultLibCheck` spares checking TypeScript's own
 * lib.*.d.ts again in every run (the package's declarations and @types/node are still checked).
 */
async function tsc(
  name: string,
  compilerOptions: Record<string, unknown>,
  files: { files?: string[]; include?: string[] },
): Promise<string[]> {
  // two at a time: the other test files run beside these
  while (running >= 2) await new Promise<void>((wake) => waiting.push(wake));
  running++;
  try {
    return await tscNow(name, compilerOptions, files);
  } finally {
    running--;
    waiting.shift()?.();
  }
}

let running = 0;
const waiting: Array<() => void> = [];

async function tscNow(
  name: string,
  compilerOptions: Record<string, unknown>,
  files: { files?: string[]; include?: string[] },
): Promise<string[]> {
  const config = {
    compilerOptions: {
      strict: true,
      skipLibCheck: false,
      skipDefaultLibCheck: true,
      noEmit: true,
      target: 'es2022',
      typeRoots: [TYPE_ROOTS],
      types: [],
      ...compilerOptions,
    },
    ...files,
    exclude: [],
  };
  writeFileSync(join(project, `tsconfig.${name}.json`), JSON.stringify(config, null, 2) + '\n');
  const out = await run(process.execPath, [TSC, '-p', `tsconfig.${name}.json`, '--pretty', 'false'], {
    cwd: project,
    encoding: 'utf8',
  }).then(
    (r) => r.stdout,
    (e: { stdout?: string }) => e.stdout ?? String(e),
  );
  return out.split('\n').filter((l) => l.trim() !== '');
}

/** Node.js projects: no DOM library. */
const NODE = { lib: ['es2022'] };
const BROWSER = { lib: ['es2022', 'dom'] };
/** The one error bad.mts must give: `fs: 42` is no filesystem. */
const BAD = /^bad\.mts\(4,38\): error TS2322: Type 'number' is not assignable to type 'FsInput'\.$/;
/** Type-checking runs are slow on a busy machine (each checks the package's declarations again). */
const TSC_TIMEOUT = 180_000;

describe('a consumer type-checks against the installed declarations (strict, skipLibCheck false)', () => {
  // api.mts and api.cts use the API without Node's types; use.mts and use.cts are Node.js
  // programs (node:fs as `fs`), checked once with @types/node, together with every declaration
  // file the package ships (both trees, ES module and CommonJS)
  it.concurrent.each([
    ['node16', { module: 'node16', moduleResolution: 'node16', ...NODE }, { files: ['api.mts', 'api.cts', 'bad.mts'] }],
    [
      'nodenext, with Node.js types and every shipped declaration file',
      { module: 'nodenext', moduleResolution: 'nodenext', ...NODE, types: ['node'] },
      { files: ['api.mts', 'api.cts', 'use.mts', 'use.cts', 'bad.mts'], include: ['node_modules/git-scalpel/**/*.d.ts'] },
    ],
    [
      'bundler with module esnext, in a browser project',
      { module: 'esnext', moduleResolution: 'bundler', ...BROWSER },
      { files: ['api.mts', 'browser.mts', 'bad.mts'] },
    ],
    [
      'bundler with module preserve, in a browser project',
      { module: 'preserve', moduleResolution: 'bundler', ...BROWSER },
      { files: ['api.mts', 'api.cts', 'browser.mts', 'bad.mts'] },
    ],
  ] as const)(
    'under %s: the consumer files pass, fs: 42 fails',
    async (name, options, files) => {
      const diagnostics = await tsc(name.replace(/\W+/g, '-'), options, {
        files: [...files.files],
        ...('include' in files ? { include: [...files.include] } : {}),
      });
      expect(diagnostics).toEqual([expect.stringMatching(BAD)]);
    },
    TSC_TIMEOUT,
  );
});

describe('the installed package runs', () => {
  it(
    'as an ES module (import) and as CommonJS (require() and import()): a snapshot and a restore of a file',
    async () => {
      // compiled without checking (the nodenext run above checks these files)
      expect(
        await tsc(
          'emit',
          { module: 'nodenext', moduleResolution: 'nodenext', noCheck: true, noEmit: false, outDir: 'out', types: ['node'] },
          { files: ['use.mts', 'use.cts'] },
        ),
      ).toEqual([]);
      const repo = makeTempRepo();
      writeFileSync(join(repo, 'a.txt'), 'hello\n');
      git(repo, ['add', 'a.txt']);
      git(repo, ['commit', '-q', '-m', 'init']);
      const status = git(repo, ['status', '--porcelain=v2']);
      const outside = makeTempDir('scalpel-outside-');
      // the code cache of the Node entry goes to a directory of this test's own
      const env = { ...process.env, GIT_SCALPEL_CACHE_DIR: join(work, 'code-cache') };
      const esm = await run(process.execPath, [join(project, 'out', 'use.mjs'), repo, outside], { cwd: project, env, encoding: 'utf8' });
      expect(esm.stderr).toBe('');
      expect(JSON.parse(esm.stdout)).toEqual({
        restored: true,
        codecRoundTrip: true,
        blobMatches: true,
        nodeEntry: true,
        error: 'NOT_A_REPOSITORY',
        internal: true,
      });
      const cjs = await run(process.execPath, [join(project, 'out', 'use.cjs'), repo], { cwd: project, env, encoding: 'utf8' });
      expect(cjs.stderr).toBe('');
      expect(JSON.parse(cjs.stdout)).toEqual({ restored: true, sameClasses: true, listed: 0, error: 'TRUNCATED' });
      expect(git(repo, ['status', '--porcelain=v2'])).toBe(status);
      expect(readFileSync(join(repo, 'a.txt'), 'utf8')).toBe('hello\n');
    },
    TSC_TIMEOUT,
  );
});
