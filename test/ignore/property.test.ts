/**
 * Random small trees with random .gitignore files (nested, CRLF, BOM, symlinked), a random
 * info/exclude and core.excludesFile, core.ignoreCase on or off: our answer for every path is
 * git's. Each run costs three git processes (one `check-ignore --stdin` for every path, two
 * `status`); the repository is made once and its worktree rewritten per run.
 */
import { mkdirSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { encodePath } from '../../src/bytes/text.js';
import { nodeFs } from '../../src/fs/node.js';
import { ignoreOptionsFromConfig, loadIgnoreRules } from '../../src/ignore/index.js';
import { discoverRepository, readRepoConfig } from '../../src/repo/discover.js';
import { makeTempDir, makeTempRepo } from '../helpers/git.js';
import { classifyTree, collapsedView, compareWithGit, gitCheckIgnore, gitStatusIgnoredCollapsed, writeRaw } from './oracle.js';

const fs = nodeFs();
const raw = (b: number) => String.fromCharCode(0xdc00 + b);

/** Names in the trees; pattern literals are drawn from the same pieces so that patterns hit. */
const NAMES = [
  'a', 'b', 'A', 'ab', 'aB', 'x.log', 'X.LOG', 'build', 'Build', 'node_modules', '.env', 'foo bar', 'keep', 'd', 'sub',
  '\u00e9', 'x\u00e9y', `caf${raw(0xe9)}`, `${raw(0xff)}`, 'tr ', '#h', '!b', '[ab]', 'a*', 'x?', 'back\\slash', 'cr\r', 'z1', '-', ']',
];

const LITERALS = ['a', 'b', 'A', 'B', 'x', 'log', '.log', '.LOG', 'build', 'node_modules', '.env', 'foo bar', 'keep', 'd', 'sub', 'z', '1', '\u00e9', `${raw(0xe9)}`, `${raw(0xff)}`, ' ', '-', 'caf', 'cr\r'];
const WILD = [
  '*', '?', '??', '**', '***', '[ab]', '[!a]', '[a-c]', '[A-Z]', '[Z-a]', '[c-a]', '[[:upper:]]', '[[:alpha:]]', '[[:digit:]]', '[[:space:]]', '[]a]', '[\u00e9]', `[${raw(0xe9)}-${raw(0xff)}]`,
  '[/]', '[!/]', '[a/]', '[\\a-\\c]', '[[:lower:]]', '[[:punct:]]', '[--0]', '[!--0]', '*[ab]*', '//',
  '[\\]]', '[a-]', '[!]]', '[A]', '[!A]', '\\*', '\\?', '\\[', '\\a', '\\A', '\\ ', '\\#', '\\!', '\\\\', '\\/', '[', '[[:nope:]]', '\\',
];

const segment = fc.array(fc.oneof({ weight: 3, arbitrary: fc.constantFrom(...LITERALS) }, { weight: 2, arbitrary: fc.constantFrom(...WILD) }), { minLength: 1, maxLength: 3 }).map((a) => a.join(''));
const generic = fc
  .tuple(
    fc.constantFrom('', '', '', '!', '!', '/', '!/', '\\#', '\\!', '#'),
    fc.array(segment, { minLength: 1, maxLength: 3 }),
    fc.constantFrom('', '', '', '/', ' ', '  ', '\\ ', '/ ', '\t'),
  )
  .map(([pre, segs, post]) => pre + segs.join('/') + post);
/** Where git and the package read runs of stars differently: after the literal prefix (`a**`), around an escaped slash. */
const starry = fc
  .tuple(
    fc.constantFrom('', '!', '/', 'a/', 'sub/', '!a/'),
    fc.constantFrom('a', 'b', 'ab', 'd', '', 'a?'),
    fc.constantFrom('**', '***', '**/**', '*'),
    fc.constantFrom('/', '\\/', '', '/**/', '\\/**/'),
    fc.constantFrom('b', 'a', 'ab', '', '*', 'b/', 'x.log', '**'),
  )
  .map(([pre, lit, stars, sep, rest]) => pre + lit + stars + sep + rest);
const pattern = fc.oneof({ weight: 4, arbitrary: generic }, { weight: 1, arbitrary: starry });
const patternFile = fc.record({
  patterns: fc.array(pattern, { minLength: 1, maxLength: 6 }),
  crlf: fc.boolean(),
  bom: fc.boolean(),
});

type Node = { kind: 'file' } | { kind: 'symlink'; target: string } | { kind: 'dir'; dir: DirSpec };
interface DirSpec {
  entries: Array<[string, Node]>;
  gitignore: { file: { patterns: string[]; crlf: boolean; bom: boolean }; symlink: boolean } | null;
}

const dirSpec = (depth: number, minLength = 0): fc.Arbitrary<DirSpec> =>
  fc.record({
    entries: fc.uniqueArray(
      fc.tuple(
        fc.constantFrom(...NAMES),
        depth > 0
          ? fc.oneof(
              { weight: 3, arbitrary: fc.constant<Node>({ kind: 'file' }) },
              { weight: 1, arbitrary: fc.constantFrom(...NAMES).map<Node>((t) => ({ kind: 'symlink', target: t })) },
              { weight: 3, arbitrary: fc.constant(null).chain(() => dirSpec(depth - 1).map<Node>((dir) => ({ kind: 'dir', dir }))) },
            )
          : fc.oneof({ weight: 3, arbitrary: fc.constant<Node>({ kind: 'file' }) }, { weight: 1, arbitrary: fc.constantFrom(...NAMES).map<Node>((t) => ({ kind: 'symlink', target: t })) }),
      ),
      { selector: (t) => t[0], minLength, maxLength: 4 },
    ),
    gitignore: fc.option(fc.record({ file: patternFile, symlink: fc.nat(6).map((n) => n === 0) }), { freq: 2 }),
  });

function fileBytes(f: { patterns: string[]; crlf: boolean; bom: boolean }): Buffer {
  const text = f.patterns.join(f.crlf ? '\r\n' : '\n') + (f.crlf ? '\r\n' : '\n');
  return Buffer.concat([f.bom ? Buffer.from([0xef, 0xbb, 0xbf]) : Buffer.alloc(0), Buffer.from(encodePath(text))]);
}

function writeTree(root: string, rel: string, d: DirSpec): void {
  if (d.gitignore) {
    const at = rel ? `${rel}/` : '';
    if (d.gitignore.symlink) {
      writeRaw(root, `${at}gi-target`, fileBytes(d.gitignore.file));
      symlinkSync('gi-target', Buffer.from(encodePath(`${root}/${at}.gitignore`)));
    } else writeRaw(root, `${at}.gitignore`, fileBytes(d.gitignore.file));
  }
  for (const [name, node] of d.entries) {
    const p = rel ? `${rel}/${name}` : name;
    if (node.kind === 'file') writeRaw(root, p, 'x');
    else if (node.kind === 'symlink') symlinkSync(Buffer.from(encodePath(node.target)), Buffer.from(encodePath(`${root}/${p}`)));
    else {
      mkdirSync(Buffer.from(encodePath(`${root}/${p}`)), { recursive: true });
      writeTree(root, p, node.dir);
    }
  }
}

/** The [core] section of the config; core.ignoreCase and core.excludesFile are added per run. */
const CONFIG_HEAD = '[core]\n\trepositoryformatversion = 0\n\tfilemode = true\n\tbare = false\n';

const scenario = fc.record({
  tree: dirSpec(2, 1),
  info: fc.option(patternFile, { freq: 2 }),
  global: fc.option(patternFile, { freq: 2 }),
  ignoreCase: fc.boolean(),
});

describe('ignore rules: random trees and patterns against git', () => {
  it('every path of the tree: ours = git check-ignore --no-index = git status --ignored -uall, the same deciding pattern, and the same collapsed ignored directories as git status --ignored', async () => {
    const repo = makeTempRepo();
    const outside = makeTempDir('scalpel-xf-');
    const literal = {};
    await fc.assert(
      fc.asyncProperty(scenario, async (s) => {
        for (const name of readdirSync(repo, { encoding: 'buffer' })) {
          if (name.toString('latin1') !== '.git') rmSync(Buffer.concat([Buffer.from(repo + '/'), name]), { recursive: true, force: true });
        }
        rmSync(join(repo, '.git', 'info'), { recursive: true, force: true });
        rmSync(join(outside, 'ignore'), { force: true });
        writeTree(repo, '', s.tree);
        if (s.info) writeRaw(repo, '.git/info/exclude', fileBytes(s.info));
        if (s.global) writeFileSync(join(outside, 'ignore'), fileBytes(s.global));
        writeFileSync(join(repo, '.git', 'config'), `${CONFIG_HEAD}\tignorecase = ${s.ignoreCase}\n\texcludesFile = ${join(outside, 'ignore')}\n`);

        const config = await readRepoConfig(fs, await discoverRepository(fs, repo));
        const rules = await loadIgnoreRules(fs, { worktree: repo, gitDir: join(repo, '.git'), env: {}, ...ignoreOptionsFromConfig(config) });
        const entries = await classifyTree(fs, repo, rules);
        expect(compareWithGit(repo, entries, literal)).toEqual([]);
        // ignored directories and hand-kept files as `git status --ignored` collapses them
        expect(collapsedView(entries)).toEqual(gitStatusIgnoredCollapsed(repo, literal));
        const verdicts = gitCheckIgnore(
          repo,
          entries.map((e) => e.path),
          literal,
        );
        for (const e of entries) {
          const v = verdicts.get(e.path)!;
          const m = await rules.explain(e.path, e.type === 'directory');
          const theirs = v.source ? { line: v.line, pattern: v.pattern, source: v.source.startsWith('/') ? v.source : join(repo, v.source) } : null;
          expect({ path: e.path, m: m && { line: m.line, pattern: m.pattern, source: m.source } }).toEqual({ path: e.path, m: theirs });
        }
      }),
      { numRuns: Number(process.env.IGNORE_PROPERTY_RUNS ?? 300) },
    );
  }, 120_000);
});

