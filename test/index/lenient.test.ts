/**
 * Lenient decode: every index git reads decodes, an optional cache extension git would discard
 * is left out and named in `dropped`, and what is encoded from the result is an index git accepts.
 *
 * The damaged indexes are made here, from indexes real git writes in test repositories: one
 * extension's payload is changed (size and trailer recomputed, test/helpers/index-damage.ts), and
 * real git is run on each to show it still reads it, so the corpus is "indexes git reads".
 */
import { chmodSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { dirname, join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { decodeIndex, type GitIndex } from '../../src/index/decode.js';
import { encodeIndex } from '../../src/index/encode.js';
import { ScalpelError } from '../../src/errors/index.js';
import { nodeHash } from '../../src/hash/node-crypto.js';
import { git, makeTempDir, makeTempRepo } from '../helpers/git.js';
import { prng } from '../helpers/prng.js';
import {
  extensionOffset,
  extensionSpans,
  getU32,
  parseFsmonitor,
  parseTree,
  rebuild,
  serializeTree,
  setU32,
  treeNodeStarts,
  withPayload,
  type Format,
} from '../helpers/index-damage.js';

function write(dir: string, rel: string, text: string): void {
  mkdirSync(dirname(join(dir, rel)), { recursive: true });
  writeFileSync(join(dir, rel), text);
}

const indexFile = (dir: string) => join(dir, '.git', 'index');
const readIndexBytes = (dir: string) => new Uint8Array(readFileSync(indexFile(dir)));

interface Repo {
  dir: string;
  fmt: Format;
  /** The index as git left it. */
  original: Uint8Array;
  /** `git ls-files -s` of that index. */
  stage: string;
  /** `git status --porcelain=v2` with that index. */
  status: string;
}

function snapshotRepo(dir: string, fmt: Format): Repo {
  const stage = git(dir, ['ls-files', '-s']);
  const status = git(dir, ['status', '--porcelain=v2']);
  // status may have refreshed and rewritten the index: keep what git wrote last
  return { dir, fmt, original: readIndexBytes(dir), stage, status };
}

/** Files in nested directories, committed: the index has a fully valid TREE. */
function treeRepo(fmt: Format, version: 2 | 4): Repo {
  const dir = makeTempRepo({ objectFormat: fmt });
  for (const f of ['a.txt', 'dir/b.txt', 'dir/sub/c.txt', 'dir/sub/d.txt', 'dir/sub/deeper/e.txt', 'other/f.txt', 'z.txt'])
    write(dir, f, `${f}\n`);
  git(dir, ['add', '.']);
  git(dir, ['commit', '-qm', 'base']);
  if (version === 4) git(dir, ['update-index', '--index-version', '4']);
  return snapshotRepo(dir, fmt);
}

/** core.untrackedCache on and populated by git status (as fixtures/make-fixtures.sh fx_untr). */
function untrRepo(): Repo {
  const dir = makeTempRepo();
  write(dir, '.gitignore', '*.log\n');
  write(dir, 'src/main.c', 'main\n');
  write(dir, 'README.md', 'readme\n');
  git(dir, ['add', '.']);
  git(dir, ['commit', '-qm', 'base']);
  git(dir, ['config', 'core.untrackedCache', 'true']);
  git(dir, ['update-index', '--untracked-cache']);
  write(dir, 'notes.txt', 'n\n');
  write(dir, 'untracked-dir/a.txt', 'a\n');
  write(dir, 'src/new.c', 'c\n');
  write(dir, 'debug.log', 'l\n');
  git(dir, ['status', '--porcelain']);
  git(dir, ['status', '--porcelain']);
  return snapshotRepo(dir, 'sha1');
}

/** A query-fsmonitor hook (protocol v2) makes git write FSMN (as fixtures/make-fixtures.sh fx_fsmn). */
function fsmnRepo(): Repo {
  const dir = makeTempRepo();
  for (const f of ['a.txt', 'dir/b.txt', 'dir/c.txt', 'modified.txt', 'z.txt']) write(dir, f, `${f}\n`);
  git(dir, ['add', '.']);
  git(dir, ['commit', '-qm', 'base']);
  const hook = join(makeTempDir('scalpel-fsmn-hook-'), 'query-fsmonitor');
  writeFileSync(hook, "#!/bin/sh\nprintf 'lenient-token\\0'\nprintf 'modified.txt\\0'\n");
  chmodSync(hook, 0o755);
  git(dir, ['config', 'core.fsmonitor', hook]);
  git(dir, ['config', 'core.fsmonitorHookVersion', '2']);
  write(dir, 'modified.txt', 'changed in the worktree\n');
  git(dir, ['status', '--porcelain']);
  git(dir, ['status', '--porcelain']);
  return snapshotRepo(dir, 'sha1');
}

/** index.threads=4 with EOIE and IEOT recorded (as fixtures/make-fixtures.sh fx_eoie_ieot, smaller). */
function ieotRepo(): Repo {
  const dir = makeTempRepo();
  git(dir, ['config', 'index.threads', '4']);
  git(dir, ['config', 'index.recordEndOfIndexEntries', 'true']);
  git(dir, ['config', 'index.recordOffsetTable', 'true']);
  for (let d = 0; d < 4; d++) for (let f = 0; f < 10; f++) write(dir, `d${d}/f${f}`, `${d}${f}\n`);
  git(dir, ['add', '.']);
  git(dir, ['commit', '-qm', 'base']);
  return snapshotRepo(dir, 'sha1');
}

// ---- damage kinds: each changes one payload only

/** A node's entry count with a leading zero ("07" for 7), and a leaf's subtree count written "00": git's strtol reads both. */
function treeNonCanonicalNumbers(payload: Uint8Array, fmt: Format): Uint8Array {
  const nodes = parseTree(payload, fmt);
  const counted = nodes.findIndex((n, i) => i > 0 && !n.entryCount.startsWith('-'));
  const leaf = nodes.findIndex((n) => n.subtreeCount === '0');
  nodes[counted].entryCount = `0${nodes[counted].entryCount}`;
  nodes[leaf].subtreeCount = '00';
  return serializeTree(nodes);
}

/** "\r\n" ends every count line (git's reader skips to the "\n"); only line ends change, never id bytes. */
function treeCrlf(payload: Uint8Array, fmt: Format): Uint8Array {
  return serializeTree(parseTree(payload, fmt), '\r\n');
}

/** Cut inside a node: its name and the first digit of its entry count, then nothing. */
function treeTruncatedMidNode(payload: Uint8Array, fmt: Format): Uint8Array {
  const nodes = parseTree(payload, fmt);
  const k = Math.floor(nodes.length / 2);
  const at = treeNodeStarts(nodes, fmt)[k] + nodes[k].name.length + 2;
  return payload.slice(0, at);
}

/**
 * Bytes that are no untracked cache: its ident length (first varint, 0x7f) runs past the payload,
 * the first thing read_untracked_extension checks after the final NUL (which is kept).
 */
function untrGarbage(payload: Uint8Array): Uint8Array {
  const rnd = prng(0x5eed);
  const b = Uint8Array.from({ length: Math.min(64, payload.length) }, () => Math.floor(rnd() * 256));
  b[0] = 0x7f;
  b[b.length - 1] = 0;
  return b;
}

/** ewah_size larger than what is left of the payload: the bitmap would run past the extension. */
function fsmnEwahSizePastExtension(payload: Uint8Array): Uint8Array {
  const f = parseFsmonitor(payload);
  return setU32(payload, f.ewahSizeAt, f.ewahSize + 16);
}

/** The bitmap's own word count runs past ewah_size (and the extension): ewah_read_mmap fails. */
function fsmnWordsPastExtension(payload: Uint8Array): Uint8Array {
  const f = parseFsmonitor(payload);
  return setU32(payload, f.bitmapAt + 4, getU32(payload, f.bitmapAt + 4) + 4);
}

/** The bitmap's bit_size claims more entries than the index has. */
function fsmnCoversMoreEntries(payload: Uint8Array, count: number): Uint8Array {
  const f = parseFsmonitor(payload);
  return setU32(payload, f.bitmapAt, count + 3);
}

/** IEOT version 2 (git knows only 1: "invalid IEOT version", then a load without threads). */
function ieotBadVersion(payload: Uint8Array): Uint8Array {
  return setU32(payload, 0, 2);
}

/** EOIE four bytes longer than its fixed size (read_eoie_extension ignores such an EOIE). */
function eoieBadSize(payload: Uint8Array): Uint8Array {
  return new Uint8Array([...payload, 0, 0, 0, 0]);
}

// ---- checks

function decodeStrict(bytes: Uint8Array, fmt: Format): GitIndex {
  return decodeIndex(bytes, { objectFormat: fmt, hash: nodeHash });
}

function decodeLenient(bytes: Uint8Array, fmt: Format): GitIndex {
  return decodeIndex(bytes, { objectFormat: fmt, hash: nodeHash, lenient: true });
}

function strictError(bytes: Uint8Array, fmt: Format): ScalpelError {
  try {
    decodeStrict(bytes, fmt);
  } catch (e) {
    if (e instanceof ScalpelError) return e;
    throw e;
  }
  throw new Error('strict decode accepted a damaged index');
}

const entriesJson = (idx: GitIndex) => idx.entries.map((e) => e.toJSON());
const signatures = (idx: GitIndex) => idx.extensions.map((x) => x.signature);

/** Run the read-only git commands on `bytes` as the index: each must exit 0 (git() throws otherwise). */
function gitReads(repo: Repo, bytes: Uint8Array): { stage: string; status: string } {
  writeFileSync(indexFile(repo.dir), bytes);
  const stage = git(repo.dir, ['ls-files', '-s']);
  git(repo.dir, ['ls-files', '-s', '--debug']);
  git(repo.dir, ['diff', '--cached', '--exit-code']);
  const status = git(repo.dir, ['status', '--porcelain=v2']);
  return { stage, status };
}

/** EOIE as git checks it (read_eoie_extension): offset of the first extension, hash of every header before the EOIE. */
function checkEoie(bytes: Uint8Array, fmt: Format): void {
  const { entriesEnd, spans } = extensionSpans(bytes, fmt);
  const eoie = spans.find((s) => s.signature === 'EOIE');
  if (!eoie) return;
  expect(getU32(eoie.payload, 0)).toBe(entriesEnd);
  const h = createHash(fmt);
  for (const s of spans) {
    if (s === eoie) break;
    const head = Buffer.alloc(8);
    head.write(s.signature, 'latin1');
    head.writeUInt32BE(s.payload.length, 4);
    h.update(head);
  }
  expect(Buffer.from(eoie.payload.subarray(4)).toString('hex')).toBe(h.digest('hex'));
}

interface Damage {
  name: string;
  signature: string;
  /** The code strict decoding gives. */
  code: string;
  damage(payload: Uint8Array, repo: Repo): Uint8Array;
  /** git itself stops on the damaged index (this message on stderr) instead of reading it. */
  gitStops?: RegExp;
}

function checkDamage(repo: Repo, d: Damage): void {
  const { fmt, original } = repo;
  const bytes = withPayload(original, fmt, d.signature, (p) => d.damage(p, repo));
  const at = extensionOffset(bytes, fmt, d.signature);

  // strict: the typed error, naming the extension
  const err = strictError(bytes, fmt);
  expect(err.code).toBe(d.code);
  expect(err.data.signature).toBe(d.signature);

  // lenient: decodes, leaves exactly that extension out, and says so
  const idx = decodeLenient(bytes, fmt);
  expect(idx.dropped).toEqual([{ signature: d.signature, offset: at, code: d.code, reason: err.message }]);
  const clean = decodeStrict(original, fmt);
  expect(signatures(idx)).toEqual(signatures(clean).filter((s) => s !== d.signature));
  expect(entriesJson(idx)).toEqual(entriesJson(clean));

  // git reads the damaged index too: same entries, same status
  if (d.gitStops) {
    writeFileSync(indexFile(repo.dir), bytes);
    expect(() => git(repo.dir, ['ls-files', '-s'])).toThrow(d.gitStops);
  } else {
    const seen = gitReads(repo, bytes);
    expect(seen.stage).toBe(repo.stage);
    expect(seen.status).toBe(repo.status);
  }

  // written from the lenient read: git accepts it, and the extension is gone
  const out = encodeIndex(idx, { hash: nodeHash });
  const again = decodeStrict(out, fmt);
  expect(again.dropped).toBeUndefined();
  expect(signatures(again)).toEqual(signatures(idx));
  expect(entriesJson(again)).toEqual(entriesJson(clean));
  expect(extensionSpans(out, fmt).spans.map((s) => s.signature)).not.toContain(d.signature);
  checkEoie(out, fmt);
  const back = gitReads(repo, out);
  expect(back.stage).toBe(repo.stage);
  expect(back.status).toBe(repo.status);
  // fsck checks the trailer, the entries and the cache tree git may have written meanwhile
  writeFileSync(indexFile(repo.dir), out);
  git(repo.dir, ['fsck', '--no-progress']);
  writeFileSync(indexFile(repo.dir), repo.original);
}

const treeDamages: Damage[] = [
  {
    name: 'TREE counts written "0<n>" and "00"',
    signature: 'TREE',
    code: 'BAD_EXTENSION',
    damage: (p, r) => treeNonCanonicalNumbers(p, r.fmt),
  },
  { name: 'TREE with CRLF line ends', signature: 'TREE', code: 'BAD_EXTENSION', damage: (p, r) => treeCrlf(p, r.fmt) },
  { name: 'TREE truncated mid-node', signature: 'TREE', code: 'TRUNCATED', damage: (p, r) => treeTruncatedMidNode(p, r.fmt) },
];

describe('lenient decode of indexes git reads', () => {
  let v2: Repo;
  let v4: Repo;
  let sha256: Repo;
  let sha256v4: Repo;
  let untr: Repo;
  let fsmn: Repo;
  let ieot: Repo;
  beforeAll(() => {
    v2 = treeRepo('sha1', 2);
    v4 = treeRepo('sha1', 4);
    sha256 = treeRepo('sha256', 2);
    sha256v4 = treeRepo('sha256', 4);
    untr = untrRepo();
    fsmn = fsmnRepo();
    ieot = ieotRepo();
  });

  it('the repositories have what the damage needs', () => {
    expect(signatures(decodeStrict(v2.original, 'sha1'))).toContain('TREE');
    expect(decodeStrict(v4.original, 'sha1').version).toBe(4);
    expect(signatures(decodeStrict(v4.original, 'sha1'))).toContain('TREE');
    expect(signatures(decodeStrict(sha256.original, 'sha256'))).toContain('TREE');
    expect(decodeStrict(sha256v4.original, 'sha256').version).toBe(4);
    expect(signatures(decodeStrict(untr.original, 'sha1'))).toContain('UNTR');
    expect(signatures(decodeStrict(fsmn.original, 'sha1'))).toContain('FSMN');
    expect(signatures(decodeStrict(ieot.original, 'sha1'))).toEqual(expect.arrayContaining(['IEOT', 'EOIE', 'TREE']));
    // the CRLF damage must really change bytes (every node has a line end)
    const tree = extensionSpans(v2.original, 'sha1').spans.find((s) => s.signature === 'TREE')!;
    expect(treeCrlf(tree.payload, 'sha1').length).toBe(tree.payload.length + parseTree(tree.payload, 'sha1').length);
  });

  for (const d of treeDamages) {
    it(`${d.name} (v2, SHA-1)`, () => checkDamage(v2, d));
    it(`${d.name} (v4, SHA-1)`, () => checkDamage(v4, d));
    it(`${d.name} (v2, SHA-256)`, () => checkDamage(sha256, d));
  }
  it('TREE with CRLF line ends (v4, SHA-256)', () => checkDamage(sha256v4, treeDamages[1]));

  it('UNTR garbage payload', () =>
    checkDamage(untr, { name: 'UNTR garbage', signature: 'UNTR', code: 'BAD_EXTENSION', damage: untrGarbage }));

  it('FSMN whose ewah_size runs past the extension', () => {
    checkDamage(fsmn, { name: 'FSMN ewah_size', signature: 'FSMN', code: 'BAD_EXTENSION', damage: fsmnEwahSizePastExtension });
  });

  it('FSMN whose EWAH bitmap runs past its extension', () => {
    checkDamage(fsmn, { name: 'FSMN words', signature: 'FSMN', code: 'BAD_EWAH', damage: fsmnWordsPastExtension });
  });

  it('FSMN bitmap covering more entries than the index has: git stops on it, the lenient read repairs it', () => {
    const count = getU32(fsmn.original, 8);
    checkDamage(fsmn, {
      name: 'FSMN bit_size',
      signature: 'FSMN',
      code: 'BAD_EXTENSION',
      damage: (p) => fsmnCoversMoreEntries(p, count),
      // read_fsmonitor_extension's assert_index_minimum, whatever core.fsmonitor says
      gitStops: /BUG: .*fsmonitor_dirty has more entries than the index/,
    });
  });

  it('IEOT with an unknown version (EOIE recomputed without it)', () => {
    checkDamage(ieot, { name: 'IEOT version', signature: 'IEOT', code: 'BAD_EXTENSION', damage: ieotBadVersion });
  });

  it('EOIE of the wrong size (IEOT kept, its offsets recomputed)', () => {
    checkDamage(ieot, { name: 'EOIE size', signature: 'EOIE', code: 'BAD_EXTENSION', damage: eoieBadSize });
    const bytes = withPayload(ieot.original, 'sha1', 'EOIE', eoieBadSize);
    const out = encodeIndex(decodeLenient(bytes, 'sha1'), { hash: nodeHash });
    const ieotExt = decodeStrict(out, 'sha1').extensions.find((x) => x.signature === 'IEOT');
    expect(ieotExt && 'blocks' in ieotExt ? ieotExt.blocks.length : 0).toBe(4);
    // each block starts where an entry starts, as git's threaded reader needs
    const clean = decodeStrict(ieot.original, 'sha1').extensions.find((x) => x.signature === 'IEOT');
    expect(ieotExt).toEqual(clean);
  });

  it('two damaged extensions are both left out, in file order', () => {
    const count = getU32(fsmn.original, 8);
    let bytes = withPayload(fsmn.original, 'sha1', 'TREE', (p) => treeCrlf(p, 'sha1'));
    bytes = withPayload(bytes, 'sha1', 'FSMN', (p) => fsmnCoversMoreEntries(p, count));
    const idx = decodeLenient(bytes, 'sha1');
    expect(idx.dropped!.map((d) => [d.signature, d.offset])).toEqual([
      ['TREE', extensionOffset(bytes, 'sha1', 'TREE')],
      ['FSMN', extensionOffset(bytes, 'sha1', 'FSMN')],
    ]);
    expect(idx.extensions).toEqual([]);
  });

  it('an index with nothing to drop decodes as a strict decode does, with no `dropped` field', () => {
    for (const r of [v2, v4, sha256, untr, fsmn, ieot]) {
      const a = decodeLenient(r.original, r.fmt);
      const b = decodeStrict(r.original, r.fmt);
      expect('dropped' in a).toBe(false);
      expect(Object.keys(a)).toEqual(Object.keys(b));
      expect(signatures(a)).toEqual(signatures(b));
      // untouched: still re-encodes byte for byte by copying
      expect(Buffer.from(encodeIndex(a, { hash: nodeHash })).equals(Buffer.from(r.original))).toBe(true);
    }
  });

  it('a bad TREE is found at decode time, not when its nodes are first used', () => {
    const bytes = withPayload(v2.original, 'sha1', 'TREE', (p) => treeTruncatedMidNode(p, 'sha1'));
    const idx = decodeLenient(bytes, 'sha1');
    expect(idx.dropped?.[0].signature).toBe('TREE');
    expect(idx.extensions.some((x) => x.signature === 'TREE')).toBe(false);
  });
});

describe('what lenient mode still refuses', () => {
  let v2: Repo;
  beforeAll(() => {
    v2 = treeRepo('sha1', 2);
  });

  function lenientError(bytes: Uint8Array): ScalpelError {
    try {
      decodeLenient(bytes, 'sha1');
    } catch (e) {
      if (e instanceof ScalpelError) return e;
      throw e;
    }
    throw new Error('lenient decode accepted it');
  }

  it('a bad REUC (state, not a cache)', () => {
    const { entriesEnd, spans } = extensionSpans(v2.original, 'sha1');
    // a mode written with a leading zero
    const reuc = new Uint8Array(Buffer.from('a.txt\x000100644\x000\x000\x00', 'latin1'));
    const e = lenientError(rebuild(v2.original, 'sha1', entriesEnd, [...spans, { signature: 'REUC', payload: reuc }]));
    expect(e.code).toBe('BAD_EXTENSION');
    expect(e.data.signature).toBe('REUC');
  });

  it('an unknown mandatory extension, a bad link and a bad sdir', () => {
    const { entriesEnd, spans } = extensionSpans(v2.original, 'sha1');
    expect(lenientError(rebuild(v2.original, 'sha1', entriesEnd, [...spans, { signature: 'abcd', payload: new Uint8Array(3) }])).code).toBe(
      'UNKNOWN_MANDATORY_EXTENSION',
    );
    expect(
      lenientError(rebuild(v2.original, 'sha1', entriesEnd, [...spans, { signature: 'link', payload: new Uint8Array(5) }])).data.signature,
    ).toBe('link');
    expect(
      lenientError(rebuild(v2.original, 'sha1', entriesEnd, [...spans, { signature: 'sdir', payload: new Uint8Array(1) }])).data.signature,
    ).toBe('sdir');
  });

  it('an extension size running past the body, and stray bytes after the last extension', () => {
    const at = extensionOffset(v2.original, 'sha1', 'TREE');
    const body = v2.original.subarray(0, v2.original.length - 20);
    const past = setU32(body, at + 4, getU32(body, at + 4) + 100);
    expect(lenientError(seal(past)).code).toBe('TRUNCATED');
    const stray = new Uint8Array([...body, 1, 2, 3]);
    expect(lenientError(seal(stray)).code).toBe('TRUNCATED');
  });

  it('a bad entry, and a bad trailer when it is checked', () => {
    const body = v2.original.slice(0, v2.original.length - 20);
    // the extended bit on the first entry: its "extended word" is then two name bytes, unknown flags
    body[12 + 40 + 20] |= 0x40;
    expect(lenientError(seal(body)).code).toBe('BAD_ENTRY');
    const flipped = v2.original.slice();
    flipped[20] ^= 1;
    expect(lenientError(flipped).code).toBe('CHECKSUM_MISMATCH');
  });

  it('strict stays the default', () => {
    const bytes = withPayload(v2.original, 'sha1', 'TREE', (p) => treeCrlf(p, 'sha1'));
    expect(() => decodeIndex(bytes)).toThrow(expect.objectContaining({ code: 'BAD_EXTENSION' }));
    expect(() => decodeIndex(bytes, { lenient: false })).toThrow(expect.objectContaining({ code: 'BAD_EXTENSION' }));
  });
});

/** A SHA-1 index body with its trailer. */
function seal(body: Uint8Array): Uint8Array {
  return new Uint8Array([...body, ...createHash('sha1').update(body).digest()]);
}
