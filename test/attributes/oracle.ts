/**
 * git as the oracle for src/attributes: `git check-attr -a` for every file of a worktree, and
 * real conversions (`git add`, then a checkout of deleted files) for the final question.
 */
import { execFileSync } from 'node:child_process';
import { lstatSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { expect } from 'vitest';
import { decodePath, encodePath } from '../../src/bytes/text.js';
import { conversionOf, type AttributeRules, type AttrValue, type DirAttributes } from '../../src/attributes/index.js';
import type { Fs } from '../../src/fs/types.js';
import { joinPath } from '../../src/fs/path.js';
import { catObjects, git, gitEnv, splitNul } from '../helpers/git.js';

/** How `git check-attr` prints a value. */
export function printed(v: AttrValue): string {
  return v === true ? 'set' : v === false ? 'unset' : v;
}

/** Ours, printed as check-attr prints them, sorted by name. */
export function printedMap(m: Map<string, AttrValue>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const k of [...m.keys()].sort()) out[k] = printed(m.get(k)!);
  return out;
}

/** `git check-attr -a -z --stdin` for each path: attribute → printed value, sorted by name. */
export function gitCheckAttrAll(repo: string, paths: readonly string[], env?: NodeJS.ProcessEnv): Map<string, Record<string, string>> {
  const res = new Map<string, Record<string, string>>();
  for (const p of paths) res.set(p, {});
  if (paths.length === 0) return res;
  const input = Buffer.concat(paths.flatMap((p) => [Buffer.from(encodePath(p)), Buffer.from([0])]));
  const out = execFileSync('git', ['check-attr', '-a', '-z', '--stdin'], {
    cwd: repo,
    env: gitEnv(env),
    input,
    stdio: ['pipe', 'pipe', 'pipe'],
    maxBuffer: 1 << 30,
  });
  const parts = splitNul(out);
  const raw = new Map<string, Array<[string, string]>>();
  for (let i = 0; i + 2 < parts.length; i += 3) {
    const p = decodePath(parts[i]);
    let l = raw.get(p);
    if (!l) raw.set(p, (l = []));
    l.push([parts[i + 1].toString('latin1'), decodePath(parts[i + 2])]);
  }
  for (const [p, l] of raw) res.set(p, Object.fromEntries(l.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0))));
  return res;
}

/** Every file (not directory) of the worktree below `.git`-less directories, as path strings, sorted. */
export function listFiles(repo: string, rel = ''): string[] {
  const out: string[] = [];
  const abs = rel === '' ? repo : `${repo}/${rel}`;
  for (const b of readdirSync(Buffer.from(encodePath(abs)), { encoding: 'buffer' })) {
    const name = decodePath(b);
    if (rel === '' && name === '.git') continue;
    const r = rel === '' ? name : `${rel}/${name}`;
    const st = lstatSync(Buffer.from(encodePath(`${repo}/${r}`)));
    if (st.isDirectory()) out.push(...listFiles(repo, r));
    else out.push(r);
  }
  return out.sort();
}

export interface WalkAnswer {
  mayConvert: boolean;
  dir: DirAttributes;
  name: string;
}

/** Ask every file of the tree through a walk that enters each directory with its readdir's hint, as a shell baseline would. */
export async function walkAnswers(fs: Fs, worktree: string, rules: AttributeRules): Promise<Map<string, WalkAnswer>> {
  const out = new Map<string, WalkAnswer>();
  const walk = async (dir: DirAttributes, names: string[]): Promise<void> => {
    for (const name of names.sort()) {
      if (dir.path === '' && name === '.git') continue;
      const rel = dir.path === '' ? name : `${dir.path}/${name}`;
      const abs = joinPath(worktree, rel);
      const st = await fs.lstat(abs);
      if (!st) continue;
      if (st.type === 'directory') {
        const sub = await fs.readdir(abs);
        await walk(await dir.enter(name, sub.includes('.gitattributes')), sub);
      } else {
        out.set(rel, { mayConvert: dir.mayConvert(name), dir, name });
      }
    }
  };
  await walk(rules.root, await fs.readdir(worktree));
  return out;
}

/**
 * Every file of the worktree against git: our attributes = `git check-attr -a`; the walk's
 * answer = a one-path query's = the conversion git's own attribute values give. Returns the
 * walk's answers.
 */
export async function expectAgreesWithGit(
  fs: Fs,
  repo: string,
  rules: AttributeRules,
  fresh: () => Promise<AttributeRules>,
  env?: NodeJS.ProcessEnv,
  extraPaths: readonly string[] = [],
): Promise<Map<string, WalkAnswer>> {
  const files = listFiles(repo);
  const paths = [...files, ...extraPaths];
  const theirs = gitCheckAttrAll(repo, paths, env);
  const wrong: unknown[] = [];
  for (const p of paths) {
    const ours = printedMap(await rules.check(p));
    if (JSON.stringify(ours) !== JSON.stringify(theirs.get(p))) wrong.push({ path: p, ours, git: theirs.get(p) });
  }
  expect(wrong).toEqual([]);
  const walked = await walkAnswers(fs, repo, rules);
  // a fresh rules object per path: the single-path case, nothing cached between paths
  const one = await fresh();
  for (const p of paths) {
    const t = theirs.get(p)!;
    // check-attr prints `x=set` as it prints `x`: where the printed forms agreed (checked above),
    // our value says which one it is
    const mine = await rules.check(p);
    const get = (k: string): AttrValue | null =>
      t[k] === undefined ? null : t[k] === 'set' || t[k] === 'unset' ? (mine.get(k) ?? null) : t[k];
    const expected = conversionOf(
      {
        text: get('text'),
        crlf: get('crlf'),
        eol: get('eol'),
        filter: get('filter'),
        ident: get('ident'),
        'working-tree-encoding': get('working-tree-encoding'),
      },
      rules.config,
    ).mayDiffer;
    const w = walked.get(p);
    const single = await one.mayConvert(p);
    const conv = await rules.conversion(p);
    const got = { path: p, walk: w?.mayConvert ?? expected, single, conversion: conv.mayDiffer };
    if (got.walk !== expected || got.single !== expected || got.conversion !== expected) wrong.push({ ...got, expected, attrs: t });
  }
  expect(wrong).toEqual([]);
  return walked;
}

/**
 * What git really does to each regular file (or to `only`): `git add`, then each file's bytes
 * against its staged blob (checkin), then every file deleted and checked out again, against the
 * blob (checkout). The worktree is left as the checkout wrote it.
 */
export function gitConverts(
  repo: string,
  env?: NodeJS.ProcessEnv,
  only?: readonly string[],
): Map<string, { checkin: boolean; checkout: boolean }> {
  const files = only ? [...only] : listFiles(repo).filter((p) => lstatSync(Buffer.from(encodePath(`${repo}/${p}`))).isFile());
  if (files.length === 0) return new Map();
  const before = new Map(files.map((p) => [p, readFileSync(Buffer.from(encodePath(`${repo}/${p}`)))]));
  const spec = Buffer.concat(files.flatMap((p) => [Buffer.from(encodePath(p)), Buffer.from([0])]));
  if (only) git(repo, ['add', '--pathspec-from-file=-', '--pathspec-file-nul'], { env, input: spec });
  else git(repo, ['add', '-A'], { env });
  const staged = new Map<string, string>();
  for (const rec of splitNul(git(repo, ['ls-files', '-s', '-z'], { encoding: 'buffer', env }))) {
    const tab = rec.indexOf(9);
    const [, oid] = rec.subarray(0, tab).toString('latin1').split(' ');
    staged.set(decodePath(rec.subarray(tab + 1)), oid);
  }
  const blobs = new Map<string, Buffer>();
  const oids = files.map((p) => staged.get(p)!);
  catObjects(repo, oids).forEach((o, i) => blobs.set(files[i], o.content));
  const checkedOut = files.filter((p) => !p.endsWith('.gitattributes'));
  for (const p of checkedOut) rmSync(Buffer.from(encodePath(`${repo}/${p}`)));
  if (only) {
    if (checkedOut.length)
      git(repo, ['checkout', '--pathspec-from-file=-', '--pathspec-file-nul'], {
        env,
        input: Buffer.concat(checkedOut.flatMap((p) => [Buffer.from(encodePath(p)), Buffer.from([0])])),
      });
  } else git(repo, ['checkout', '--', '.'], { env });
  const out = new Map<string, { checkin: boolean; checkout: boolean }>();
  for (const p of files) {
    const blob = blobs.get(p)!;
    const after = readFileSync(Buffer.from(encodePath(`${repo}/${p}`)));
    out.set(p, { checkin: !before.get(p)!.equals(blob), checkout: !p.endsWith('.gitattributes') && !after.equals(blob) });
  }
  return out;
}

/** The index's blob of each staged `.gitattributes` (for AttributeOptions.indexBlob), by path. */
export function indexAttributeBlobs(repo: string, env?: NodeJS.ProcessEnv): Map<string, Uint8Array> {
  const entries: Array<[string, string]> = [];
  for (const rec of splitNul(git(repo, ['ls-files', '-s', '-z'], { encoding: 'buffer', env }))) {
    const tab = rec.indexOf(9);
    const path = decodePath(rec.subarray(tab + 1));
    if (path === '.gitattributes' || path.endsWith('/.gitattributes'))
      entries.push([path, rec.subarray(0, tab).toString('latin1').split(' ')[1]]);
  }
  const objs = catObjects(
    repo,
    entries.map((e) => e[1]),
  );
  return new Map(entries.map((e, i) => [e[0], new Uint8Array(objs[i].content)]));
}
