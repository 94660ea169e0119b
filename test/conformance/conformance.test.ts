/**
 * The conformance kit (conformance/, issue 24): the corpus is consistent with itself and with
 * git, git-scalpel passes every case, the runner and its adapters behave as documented, and
 * `git-scalpel conformance` prints what the README says.
 */
import { describe, expect, it } from 'vitest';
import { existsSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { cli } from '../helpers/cli.js';
import { git, makeTempDir, makeTempRepo } from '../helpers/git.js';
import { runConformance, runCase, firstDifference, type CorpusSource } from '../../src/conformance/runner.js';
import { scalpelAdapter } from '../../src/conformance/adapter-scalpel.js';
import { isomorphicGitAdapter } from '../../src/conformance/adapter-isomorphic-git.js';
import {
  ERROR_CLASSES,
  type CaseAnswers,
  type ConformanceAdapter,
  type ConformanceReport,
  type Manifest,
} from '../../src/conformance/types.js';
import { decodeIndex, mergeSplitIndex, linkExtension, IndexEntry, checkEntryOrder, type GitIndex } from '../../src/index/index.js';
import { formatStageDebug, inMemoryFlags, CE_FSMONITOR_VALID } from '../../src/index/format.js';
import { isScalpelError } from '../../src/errors/index.js';

const ROOT = fileURLToPath(new URL('../../conformance/', import.meta.url));
const EXAMPLE = join(ROOT, 'examples', 'minimal-adapter.mjs');
const corpus: CorpusSource = { read: async (p) => new Uint8Array(readFileSync(join(ROOT, p))) };
const manifest = JSON.parse(readFileSync(join(ROOT, 'manifest.json'), 'utf8')) as Manifest;
const answersOf = (name: string) => JSON.parse(readFileSync(join(ROOT, 'cases', name, 'answers.json'), 'utf8')) as CaseAnswers;
const bytesOf = (name: string, file = 'index') => new Uint8Array(readFileSync(join(ROOT, 'cases', name, file)));
const latin1 = (s: string) => Buffer.from(s, 'utf8').toString('latin1');

describe('the corpus', () => {
  it('has at least 80 cases of every kind the issue asks for, each with its files and answers', () => {
    expect(manifest.cases.length).toBeGreaterThanOrEqual(80);
    expect(new Set(manifest.cases.map((c) => c.name)).size).toBe(manifest.cases.length);
    expect(readdirSync(join(ROOT, 'cases')).sort()).toEqual(manifest.cases.map((c) => c.name).sort());
    const counts: Record<string, number> = {};
    for (const c of manifest.cases) counts[c.kind] = (counts[c.kind] ?? 0) + 1;
    expect(counts).toEqual(manifest.counts);
    for (const c of manifest.cases) {
      const a = answersOf(c.name);
      expect([a.name, a.kind, a.objectFormat, a.files], c.name).toEqual([c.name, c.kind, c.objectFormat, c.files]);
      // git 2.39.5 wrote every case but the foreign ones (whose writer is what their project says), and listed them all
      if (c.kind === 'foreign') expect(c.gitVersion).toBe(a.provenance.writtenBy);
      else expect(c.gitVersion).toBe(manifest.gitVersion);
      expect(a.git.version).toBe(manifest.gitVersion);
      for (const f of Object.values(c.files)) expect(existsSync(join(ROOT, 'cases', c.name, f)), `${c.name}/${f}`).toBe(true);
      if (c.kind === 'damaged') expect(c.source && manifest.cases.some((s) => s.name === c.source && s.kind === 'written')).toBe(true);
      if (c.kind === 'damaged' || c.class) {
        expect(a.result, c.name).toBe('error');
        expect(a.error!.class).toBe(c.class);
      } else {
        expect(a.result, c.name).toBe('index');
        expect(a.index!.version).toBe(c.version);
        if (c.kind !== 'derived') expect(a.roundTrip?.required, c.name).toBe(true);
        // what git itself makes of a good file: it reads it
        expect(a.git.lsFiles.exitCode, c.name).toBe(0);
      }
    }
  });

  it('follows its JSON schemas (conformance/schema/)', async () => {
    // ajv is not a dependency of its own here: it comes with the MCP SDK
    const { default: Ajv2020 } = (await import('ajv/dist/2020.js')) as unknown as {
      default: new (o: object) => { addSchema(s: object): void; getSchema(id: string): ((d: unknown) => boolean) & { errors?: unknown } };
    };
    const ajv = new Ajv2020({ allErrors: false, strict: false });
    const schema = (f: string) => JSON.parse(readFileSync(join(ROOT, 'schema', f), 'utf8')) as { $id: string };
    const answers = schema('answers.schema.json');
    const man = schema('manifest.schema.json');
    ajv.addSchema(answers);
    ajv.addSchema(man);
    const checkManifest = ajv.getSchema(man.$id)!;
    expect(checkManifest(manifest), JSON.stringify(checkManifest.errors)).toBe(true);
    const checkAnswers = ajv.getSchema(answers.$id)!;
    for (const c of manifest.cases) expect(checkAnswers(answersOf(c.name)), `${c.name}: ${JSON.stringify(checkAnswers.errors)}`).toBe(true);
    const v2 = answersOf('v2-basic');
    v2.index!.entries[0].path = 'not hex';
    expect(checkAnswers(v2)).toBe(false);
  });

  it('covers every index shape the issue lists and every error class', () => {
    const features = new Set(manifest.cases.flatMap((c) => c.features ?? []));
    for (const f of [
      'v2',
      'v3',
      'v4',
      'sha1',
      'sha256',
      'TREE',
      'REUC',
      'UNTR',
      'FSMN',
      'EOIE',
      'IEOT',
      'link',
      'sdir',
      'conflicts',
      'intent-to-add',
      'skip-worktree',
      'assume-unchanged',
      'executable',
      'symlink',
      'gitlink',
      'sparse-directory',
      'long-path',
      'non-utf8-path',
      'skipHash',
    ]) {
      expect(features, f).toContain(f);
    }
    const classes = new Set(manifest.cases.map((c) => c.class).filter(Boolean));
    expect([...classes].sort()).toEqual([...ERROR_CLASSES].sort());
    expect(Object.keys(manifest.classes).sort()).toEqual([...ERROR_CLASSES].sort());
    // every stage of a conflict occurs
    const stages = new Set(
      manifest.cases.filter((c) => c.kind === 'written').flatMap((c) => answersOf(c.name).index!.entries.map((e) => e.stage)),
    );
    expect([...stages].sort()).toEqual([0, 1, 2, 3]);
  });

  it("holds git's listings of the very bytes it ships (formatted from the file they must equal git ls-files -s --debug and --resolve-undo)", () => {
    for (const c of manifest.cases.filter((x) => x.kind === 'written' || (x.kind === 'foreign' && !x.class))) {
      const a = answersOf(c.name);
      const file = decodeIndex(bytesOf(c.name), { objectFormat: c.objectFormat });
      const link = linkExtension(file);
      const index: GitIndex = link
        ? mergeSplitIndex(file, decodeIndex(bytesOf(c.name, a.files.sharedIndex!), { objectFormat: c.objectFormat }))
        : file;
      const mem = inMemoryFlags(index);
      const strip = (s: string) =>
        s.replace(/flags: ([0-9a-f]+)/g, (_m, h: string) => `flags: ${(parseInt(h, 16) & ~CE_FSMONITOR_VALID).toString(16)}`);
      const listed = index.entries.map((e, i) => formatStageDebug(e, mem[i])).join('');
      // git lists a sparse index expanded unless asked with --sparse
      const want = c.features?.includes('sdir') ? a.git.sparseStageDebug! : a.git.lsFiles.stageDebug!;
      expect(strip(latin1(listed)), c.name).toBe(strip(want));
      const reuc = index.extensions.find((x) => x.signature === 'REUC');
      const undo: string[] = [];
      if (reuc && 'records' in reuc) {
        for (const r of [...reuc.records].sort((x, y) => Buffer.compare(Buffer.from(x.path), Buffer.from(y.path)))) {
          for (let s = 0; s < 3; s++)
            if (r.modes[s])
              undo.push(`${r.modes[s].toString(8).padStart(6, '0')} ${r.oids[s]} ${s + 1}\t${Buffer.from(r.path).toString('latin1')}\n`);
        }
      }
      // (paths here are plain ASCII in every case with resolve-undo records)
      expect(undo.join(''), c.name).toBe(a.git.resolveUndo ?? '');
    }
  });

  it('git 2.39 lists the shipped files as the answers say (git ls-files -s --debug with GIT_INDEX_FILE)', () => {
    const repos = { sha1: makeTempRepo(), sha256: makeTempRepo({ objectFormat: 'sha256' }) };
    const strip = (s: string) =>
      s.replace(/flags: ([0-9a-f]+)/g, (_m, h: string) => `flags: ${(parseInt(h, 16) & ~CE_FSMONITOR_VALID).toString(16)}`);
    // a sparse index is not listed without the trees of its sparse directories (git reads them
    // even for --sparse outside a sparse checkout): those three are checked above from the bytes
    for (const c of manifest.cases.filter(
      (x) => (x.kind === 'written' || (x.kind === 'foreign' && !x.class)) && !x.features?.includes('sdir'),
    )) {
      const a = answersOf(c.name);
      // the split index's shared index is looked up beside the file
      const out = git(repos[c.objectFormat], ['ls-files', '-s', '--debug'], {
        env: { GIT_INDEX_FILE: join(ROOT, 'cases', c.name, 'index') },
      });
      expect(strip(out), c.name).toBe(strip(a.git.lsFiles.stageDebug!));
    }
  });
});

describe('the git-scalpel adapter', () => {
  it('passes every case of the corpus', async () => {
    const report = await runConformance({ corpus, adapter: scalpelAdapter() });
    const bad = report.cases.filter((c) => c.status !== 'pass').map((c) => `${c.name}: ${c.status} ${c.reason}`);
    expect(bad).toEqual([]);
    expect(report.summary).toEqual({ pass: manifest.cases.length, fail: 0, unsupported: 0 });
    // and was asked everything: every damaged case's class, every good case's entries, extensions and bytes
    for (const c of report.cases) {
      if (c.aspects.error !== 'n/a') expect(c.aspects.error, c.name).toBe('pass');
      else expect([c.aspects.entries, c.aspects.roundTrip], c.name).toEqual(['pass', 'pass']);
    }
  });

  it('refuses each damaged (and refused foreign) case with the class the manifest names', async () => {
    const adapter = scalpelAdapter();
    for (const c of manifest.cases.filter((x) => x.class)) {
      const a = answersOf(c.name);
      const out = await adapter.decode({
        name: c.name,
        bytes: bytesOf(c.name),
        objectFormat: c.objectFormat,
        ...(a.files.sharedIndex ? { sharedIndex: bytesOf(c.name, a.files.sharedIndex) } : {}),
      });
      expect('error' in out && out.error.class, `${c.name}: ${'error' in out ? out.error.message : 'read'}`).toBe(c.class);
    }
  });

  it('checkEntryOrder refuses what git fsck refuses, and names the reason', () => {
    const e = (path: string, stage: 0 | 1 | 2 | 3 = 0) => new IndexEntry({ path, oid: '1'.repeat(40), mode: 0o100644, stage });
    const idx = (entries: IndexEntry[]): GitIndex => ({ version: 2, objectFormat: 'sha1', entries, extensions: [], skipHash: false });
    const reason = (entries: IndexEntry[]) => {
      try {
        checkEntryOrder(idx(entries));
        return null;
      } catch (err) {
        return isScalpelError(err, 'BAD_ENTRY') ? err.data.reason : err;
      }
    };
    expect(reason([e('a-b'), e('a.b'), e('a/b'), e('a0'), e('c', 1), e('c', 2), e('c', 3)])).toBe(null);
    expect(reason([e('a/b'), e('a-b')])).toBe('unsorted');
    expect(reason([e('c'), e('c', 2)])).toBe('merged-not-alone');
    expect(reason([e('c', 3), e('c', 2)])).toBe('unsorted-stages');
    // like git: two entries of one path at one stage 1-3 pass
    expect(reason([e('c', 1), e('c', 1)])).toBe(null);
  });
});

describe('the runner', () => {
  it('reports the first difference, a refusal of the wrong class, and what an adapter does not support', async () => {
    const base = scalpelAdapter();
    const tamper: ConformanceAdapter = {
      name: 'tampered',
      capabilities: { versions: [2, 3], objectFormats: ['sha1'], extensions: ['TREE'], encode: true },
      async decode(input) {
        const out = await base.decode(input);
        if ('index' in out && out.index.entries.length > 2) out.index.entries[2].stat.mtimeSeconds += 1;
        if ('error' in out && out.error.class === 'order') out.error.class = 'entry';
        return out;
      },
      encode: (input) => ({ bytes: input.bytes.subarray(0, input.bytes.length - 1) }),
    };
    const r = await runConformance({
      corpus,
      adapter: tamper,
      cases: ['v2-basic', 'empty', 'damaged-order-swapped', 'v4-basic', 'reuc', 'derived-unknown-optional'],
    });
    const by = new Map(r.cases.map((c) => [c.name, c]));
    expect(by.get('v2-basic')).toMatchObject({ status: 'fail', aspects: { entries: 'fail', extensions: 'pass', roundTrip: 'fail' } });
    expect(by.get('v2-basic')!.reason).toMatch(/^entries\[2\]\.stat\.mtimeSeconds: expected \d+, got \d+$/);
    expect(by.get('empty')).toMatchObject({ status: 'fail', aspects: { roundTrip: 'fail' } });
    expect(by.get('empty')!.reason).toMatch(/^re-encoding differs from the file at byte 31 \(trailer/);
    expect(by.get('damaged-order-swapped')).toMatchObject({ status: 'fail', aspects: { error: 'fail' } });
    expect(by.get('damaged-order-swapped')!.reason).toMatch(/^expected class order .*got class entry/);
    expect(by.get('v4-basic')).toMatchObject({ status: 'unsupported', reason: 'not supported: index version 4' });
    // REUC is not parsed by this adapter: a case whose only other problem is that is not supported
    expect(by.get('reuc')!.aspects.extensions).toBe('unsupported');
    expect(r.summary.pass + r.summary.fail + r.summary.unsupported).toBe(6);
  });

  it('compares JSON values and names the first difference', () => {
    expect(firstDifference({ a: [1, { b: 'x' }] }, { a: [1, { b: 'x', extra: 1 }] }, 'v')).toBe(null);
    expect(firstDifference({ a: [1, 2] }, { a: [1] }, 'v')).toBe('v.a: expected 2 items, got 1 (first missing: 2)');
    expect(firstDifference({ path: '6162' }, { path: '6163' }, 'e')).toBe('e.path: expected 6162 ("ab"), got 6163 ("ac")');
  });

  it('treats a thrown error as a refusal of the class the adapter names for it', async () => {
    const thrower: ConformanceAdapter = {
      name: 'thrower',
      capabilities: { versions: [2, 3, 4], objectFormats: ['sha1', 'sha256'], extensions: 'all', encode: false },
      decode() {
        throw Object.assign(new Error('nope'), { conformanceClass: 'signature' });
      },
    };
    const m = manifest.cases.find((c) => c.name === 'damaged-signature')!;
    expect(await runCase(corpus, thrower, m)).toMatchObject({ status: 'pass' });
    const m2 = manifest.cases.find((c) => c.name === 'damaged-version-5')!;
    expect((await runCase(corpus, thrower, m2)).reason).toBe('expected class version (version 5), got class signature: nope');
  });
});

describe('the isomorphic-git adapter', () => {
  const require = createRequire(import.meta.url);
  it('runs isomorphic-git itself when it is installed: reads v2, drops extensions when it writes, does not do v4', async () => {
    const adapter = await isomorphicGitAdapter(async (s) => require(s));
    expect(adapter.description).toMatch(/^isomorphic-git \d/);
    const r = await runConformance({
      corpus,
      adapter,
      cases: ['empty', 'v2-basic', 'v4-basic', 'damaged-signature', 'damaged-order-swapped', 'odd-names'],
    });
    const by = new Map(r.cases.map((c) => [c.name, c]));
    expect(by.get('empty')!.status).toBe('pass');
    expect(by.get('v2-basic')).toMatchObject({
      status: 'fail',
      aspects: { entries: 'pass', extensions: 'unsupported', roundTrip: 'fail' },
    });
    expect(by.get('v2-basic')!.reason).toMatch(/\(TREE extension: expected 0x54/);
    expect(by.get('v4-basic')!.status).toBe('unsupported');
    expect(by.get('damaged-signature')!.status).toBe('pass');
    expect(by.get('damaged-order-swapped')!.reason).toMatch(/^read without an error/);
    expect(by.get('odd-names')!.aspects.entries).toBe('fail');
  });

  it('is unavailable, not a failure, when isomorphic-git is not installed', async () => {
    const err = await isomorphicGitAdapter(async (s) => {
      throw new Error(`Cannot find module '${s}'`);
    }).catch((e: unknown) => e);
    expect(isScalpelError(err, 'UNSUPPORTED') && err.data.capability).toBe('isomorphic-git');
  });
});

describe('git-scalpel conformance', () => {
  it('--json: the report, one document, exit 0 when nothing fails', async () => {
    const { code, out, err } = await cli(ROOT, ['conformance', '--corpus', ROOT, '--json', 'v2-basic', 'damaged-signature']);
    expect(err).toBe('');
    expect(code).toBe(0);
    const outcome = JSON.parse(out) as { code: string; exit: number; data: ConformanceReport & { corpus: { path: string } } };
    expect([outcome.code, outcome.exit]).toEqual(['OK', 0]);
    const r = outcome.data;
    expect(Object.keys(r)).toEqual(['adapter', 'corpus', 'summary', 'cases']);
    expect(r.adapter).toMatchObject({
      name: 'git-scalpel',
      capabilities: { versions: [2, 3, 4], objectFormats: ['sha1', 'sha256'], extensions: 'all', encode: true },
    });
    expect(r.corpus).toEqual({ gitVersion: manifest.gitVersion, cases: 2, path: ROOT.replace(/\/$/, '') });
    expect(r.summary).toEqual({ pass: 2, fail: 0, unsupported: 0 });
    expect(r.cases[0]).toEqual({
      name: 'v2-basic',
      kind: 'written',
      status: 'pass',
      aspects: { error: 'n/a', entries: 'pass', extensions: 'pass', roundTrip: 'pass' },
    });
    expect(r.cases[1]).toEqual({
      name: 'damaged-signature',
      kind: 'damaged',
      status: 'pass',
      aspects: { error: 'pass', entries: 'n/a', extensions: 'n/a', roundTrip: 'n/a' },
    });
  });

  it('finds the corpus beside the package when not told, prints a line a case, exits 1 when a case fails', async () => {
    const ok = await cli(ROOT, ['conformance', 'empty', 'split']);
    expect(ok.code).toBe(0);
    expect(ok.out.split('\n').slice(0, 2)).toEqual(['pass        empty', 'pass        split']);
    const iso = await cli(ROOT, ['conformance', '--adapter', 'isomorphic-git', 'v2-basic']);
    expect(iso.code).toBe(1);
    expect(iso.out).toMatch(/^fail {8}v2-basic: re-encoding differs/);
  });

  it('loads a third-party adapter from a module path', async () => {
    const { code, out } = await cli(makeTempDir(), [
      'conformance',
      '--corpus',
      ROOT,
      '--adapter',
      EXAMPLE,
      '--json',
      'empty',
      'damaged-signature',
      'damaged-order-swapped',
      'sha256-v2',
    ]);
    const outcome = JSON.parse(out) as { code: string; exit: number; data: ConformanceReport };
    expect([outcome.code, outcome.exit]).toEqual(['CONFORMANCE_FAILED', 1]);
    const r = outcome.data;
    expect(r.adapter.name).toBe('minimal-example');
    expect(r.cases.map((c) => [c.name, c.status])).toEqual([
      ['empty', 'unsupported'], // it reads the (no) entries right, but has no writer
      ['sha256-v2', 'unsupported'],
      ['damaged-signature', 'pass'],
      ['damaged-order-swapped', 'fail'],
    ]);
    expect(r.cases[0]).toMatchObject({ aspects: { entries: 'pass', roundTrip: 'unsupported' }, reason: 'not supported: no encoder' });
    expect(code).toBe(1);
  });

  it('refuses what is not an adapter, and a case that does not exist', async () => {
    const dir = makeTempDir();
    writeFileSync(join(dir, 'not-an-adapter.mjs'), 'export default { name: "x" };\n');
    const bad = await cli(dir, ['conformance', '--corpus', ROOT, '--adapter', './not-an-adapter.mjs']);
    expect(bad.code).toBe(2);
    expect(bad.err).toMatch(/not a conformance adapter: no `decode` function; no `capabilities`/);
    expect((await cli(dir, ['conformance', '--corpus', ROOT, '--adapter', 'libgit2'])).code).toBe(2);
    const none = await cli(dir, ['conformance', '--corpus', ROOT, 'no-such-case']);
    expect(none.code).toBe(2);
    expect(none.err).toMatch(/conformance: no case named "no-such-case"/);
  });

  it('the built binary finds the corpus it ships with', () => {
    const bin = fileURLToPath(new URL('../../dist/git-scalpel.cjs', import.meta.url));
    const r = spawnSync(process.execPath, [bin, 'conformance', '--json', 'all-extensions', 'damaged-split-wrong-shared'], {
      encoding: 'utf8',
      cwd: makeTempDir(),
    });
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
    expect((JSON.parse(r.stdout) as { data: ConformanceReport }).data.summary).toEqual({ pass: 2, fail: 0, unsupported: 0 });
  });
});

describe('conformance/REPORT.md', () => {
  it('is the table of the corpus as it is', () => {
    const report = readFileSync(join(ROOT, 'REPORT.md'), 'utf8');
    expect(report).toContain(`Corpus: ${manifest.cases.length} cases (`);
    expect(report).toMatch(new RegExp(`^\\| git-scalpel \\(.*\\) \\| ${manifest.cases.length} \\| 0 \\| 0 \\|`, 'm'));
    for (const c of manifest.cases) expect(report, c.name).toContain(`| ${c.name} |`);
  });
});
