/**
 * Layers one way (DESIGN.md "Layers"): no module of src/ reaches itself through its imports.
 * Every import counts — `import type`, `export ... from`, a bare `import './x.js'` and a dynamic
 * `import('./x.js')` — so a circle is not hidden behind a type or a lazy import. And the package's
 * public entries reach no devDependency (the install editors' jsonc-parser and smol-toml are bundled
 * into the command line only).
 */
import { describe, expect, it } from 'vitest';
import { readFileSync, readdirSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const SRC = join(ROOT, 'src');

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((d) =>
    d.isDirectory() ? sourceFiles(join(dir, d.name)) : d.name.endsWith('.ts') ? [join(dir, d.name)] : [],
  );
}

interface Graph {
  /** Module (path relative to src/) → the modules of src/ it imports. */
  local: Map<string, string[]>;
  /** Module → the packages it imports (bare specifiers, `node:` builtins included). */
  packages: Map<string, string[]>;
}

function importGraph(): Graph {
  const local = new Map<string, string[]>();
  const packages = new Map<string, string[]>();
  for (const file of sourceFiles(SRC)) {
    const info = ts.preProcessFile(readFileSync(file, 'utf8'), true, true);
    const from = relative(SRC, file);
    const locals: string[] = [];
    const pkgs: string[] = [];
    for (const { fileName } of info.importedFiles) {
      if (fileName.startsWith('.')) locals.push(relative(SRC, resolve(dirname(file), fileName)).replace(/\.js$/, '.ts'));
      else pkgs.push(fileName);
    }
    local.set(from, [...new Set(locals)]);
    packages.set(from, [...new Set(pkgs)]);
  }
  return { local, packages };
}

/** Every circle, each once, as the path that closes it (`a.ts → b.ts → a.ts`). */
function cycles(graph: Map<string, string[]>): string[] {
  const found = new Set<string>();
  const state = new Map<string, 'open' | 'done'>();
  const stack: string[] = [];
  const visit = (m: string): void => {
    state.set(m, 'open');
    stack.push(m);
    for (const next of graph.get(m) ?? []) {
      if (!graph.has(next)) continue;
      if (state.get(next) === 'open') {
        const loop = stack.slice(stack.indexOf(next));
        // the same circle entered elsewhere: start it at its least module
        const k = loop.indexOf([...loop].sort()[0]);
        const canonical = [...loop.slice(k), ...loop.slice(0, k)];
        found.add([...canonical, canonical[0]].join(' → '));
      } else if (!state.has(next)) visit(next);
    }
    stack.pop();
    state.set(m, 'done');
  };
  for (const m of [...graph.keys()].sort()) if (!state.has(m)) visit(m);
  return [...found].sort();
}

function reachable(graph: Map<string, string[]>, from: string[]): Set<string> {
  const seen = new Set<string>();
  const todo = [...from];
  while (todo.length) {
    const m = todo.pop()!;
    if (seen.has(m) || !graph.has(m)) continue;
    seen.add(m);
    todo.push(...graph.get(m)!);
  }
  return seen;
}

describe('layers', () => {
  const graph = importGraph();

  it('the graph is read: every relative import names a module of src/', () => {
    expect(graph.local.size).toBeGreaterThan(100);
    const missing = [...graph.local].flatMap(([m, deps]) => deps.filter((d) => !graph.local.has(d)).map((d) => `${m} imports ${d}`));
    expect(missing).toEqual([]);
  });

  it('no import circle in src/', () => {
    expect(cycles(graph.local)).toEqual([]);
  });

  it('finds a circle when there is one, through any kind of import', () => {
    const g = new Map([
      ['a.ts', ['b.ts']],
      ['b.ts', ['c.ts', 'x.ts']],
      ['c.ts', ['a.ts']],
      ['x.ts', []],
      ['p.ts', ['q.ts']],
      ['q.ts', ['p.ts']],
    ]);
    expect(cycles(g)).toEqual(['a.ts → b.ts → c.ts → a.ts', 'p.ts → q.ts → p.ts']);
    const kinds = ts.preProcessFile(
      "import type { T } from './t.js';\nexport { e } from './e.js';\nimport './side.js';\nconst lazy = () => import('./lazy.js');\n",
      true,
      true,
    );
    expect(kinds.importedFiles.map((f) => f.fileName)).toEqual(['./t.js', './e.js', './side.js', './lazy.js']);
  });

  it('the public entries reach only dependencies and node: builtins', () => {
    const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { dependencies: Record<string, string> };
    const allowed = (spec: string) =>
      spec.startsWith('node:') || Object.keys(pkg.dependencies).some((d) => spec === d || spec.startsWith(`${d}/`));
    const entries = ['index.ts', 'node.ts', 'internal.ts'];
    const bad = [...reachable(graph.local, entries)].sort().flatMap((m) =>
      graph.packages
        .get(m)!
        .filter((p) => !allowed(p))
        .map((p) => `${m} imports ${p}`),
    );
    expect(bad).toEqual([]);
  });
});
