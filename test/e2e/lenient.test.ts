import { describe, expect, it } from 'vitest';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { git } from '../helpers/git.js';
import { gitView, worktreeView } from '../helpers/view.js';
import { parseTree, serializeTree, withPayload, type Format } from '../helpers/index-damage.js';
import { personRepo, w } from './scenario.js';
import { decodeIndex } from '../../src/index.js';
import { cli } from '../helpers/cli.js';

/**
 * DESIGN "Read what git reads": an optional cache git would throw away (a TREE that does not
 * parse, a bad UNTR, an FSMN bitmap that runs past its extension) does not stop a snapshot or a
 * restore; it is named as a warning, and the index a restore writes leaves it out, as git would.
 */

/** A TREE whose counts are written with a leading zero ("00"), as a non-git writer may: git's strtol reads it. */
function treeLeadingZero(p: Uint8Array, fmt: Format): Uint8Array {
  return serializeTree(parseTree(p, fmt).map((n, i) => (i === 0 ? { ...n, subtreeCount: `0${n.subtreeCount}` } : n)));
}

/**
 * git's view less its complaint about the damaged cache: git reports a bad fsmonitor or untracked
 * cache bitmap on stderr and carries on without it; once the index is rewritten there is none.
 */
function withoutGitsComplaint<T>(view: T): T {
  const complaint = /\\n\[stderr\]\\nerror: (?:failed to parse ewah bitmap|corrupt ewah bitmap)[^"\\]*\\n/g;
  return JSON.parse(JSON.stringify(view).replace(complaint, '')) as T;
}

const damages: Array<{
  name: string;
  signature: string;
  setup: (dir: string) => void;
  damage: (p: Uint8Array, fmt: Format) => Uint8Array;
}> = [
  {
    name: 'a TREE with CRLF line ends',
    signature: 'TREE',
    setup: (d) => git(d, ['write-tree']),
    damage: (p, fmt) => serializeTree(parseTree(p, fmt), '\r\n'),
  },
  { name: 'a TREE count written "00"', signature: 'TREE', setup: (d) => git(d, ['write-tree']), damage: treeLeadingZero },
  {
    name: 'an UNTR that does not parse',
    signature: 'UNTR',
    setup: (d) => {
      git(d, ['config', 'core.untrackedCache', 'true']);
      git(d, ['update-index', '--untracked-cache']);
      git(d, ['status', '--porcelain']);
    },
    damage: (p) => p.subarray(0, Math.max(1, p.length >> 1)),
  },
  {
    name: 'an FSMN bitmap that runs past its extension',
    signature: 'FSMN',
    setup: (d) => {
      const hook = join(d, '.git', 'fsmonitor-hook');
      w(d, '.git/fsmonitor-hook', '#!/bin/sh\nprintf "token-%s\\0/\\0" "$(date +%s%N)"\n', 0o755);
      git(d, ['config', 'core.fsmonitor', hook]);
      git(d, ['config', 'core.fsmonitorHookVersion', '2']);
      git(d, ['status', '--porcelain']);
    },
    // the ewah_size field after the token claims more bytes than the extension holds
    damage: (p) => {
      const at = p.indexOf(0, 4) + 1;
      const out = p.slice();
      new DataView(out.buffer).setUint32(at, p.length * 4);
      return out;
    },
  },
];

describe('an optional index cache git would discard does not stop a snapshot or a restore', () => {
  for (const d of damages) {
    it(`${d.name}: a warning names it, git agrees after the restore, the rewritten index leaves it out`, async () => {
      const dir = personRepo();
      d.setup(dir);
      const indexPath = join(dir, '.git/index');
      const good = new Uint8Array(readFileSync(indexPath));
      expect(decodeIndex(good).extensions.map((x) => x.signature)).toContain(d.signature);
      writeFileSync(
        indexPath,
        withPayload(good, 'sha1', d.signature, (p) => d.damage(p, 'sha1')),
      );
      // git reads it (strict decoding does not)
      expect(() => decodeIndex(new Uint8Array(readFileSync(indexPath)))).toThrow(
        expect.objectContaining({ data: expect.objectContaining({ signature: d.signature }) }),
      );
      const before = { git: withoutGitsComplaint(gitView(dir)), tree: worktreeView(dir) };
      expect(before.git.fsck.startsWith('0\n')).toBe(true);

      const snap = await cli(dir, ['snapshot', '--json', 'src/app.ts', 'gen/new.ts']);
      expect(snap.code, snap.err).toBe(0);
      expect(snap.err).toContain(`git-scalpel: warning: index: dropped the ${d.signature} extension`);
      expect((JSON.parse(snap.out).data as { warnings: string[] }).warnings[0]).toContain(`dropped the ${d.signature} extension`);

      w(dir, 'src/app.ts', 'agent\n');
      w(dir, 'gen/new.ts', 'agent\n');
      git(dir, ['add', 'src/app.ts', 'gen/new.ts']);
      const r = await cli(dir, ['restore', '--json']);
      expect(r.code, r.err).toBe(0);
      const report = JSON.parse(r.out).data as { warnings: string[]; indexWritten: boolean };
      expect(report.indexWritten).toBe(true);
      // git's add rewrote the index (keeping or dropping what it could read); whatever it left, ours reads it
      const after = { git: gitView(dir), tree: worktreeView(dir) };
      expect(after).toEqual(before);
      const written = decodeIndex(new Uint8Array(readFileSync(indexPath)));
      expect(written.dropped).toBeUndefined();

      const log = JSON.parse((await cli(dir, ['log', '--json'])).out).data as Array<{ event: string; detail?: { warnings?: string[] } }>;
      expect(log.find((x) => x.event === 'snapshot')?.detail?.warnings?.[0]).toContain(d.signature);
    });
  }

  it('a restore that rewrites the index reads past a damaged TREE, names it, and writes the index without it', async () => {
    const dir = personRepo();
    const indexPath = join(dir, '.git/index');
    const before = gitView(dir);
    expect((await cli(dir, ['snapshot', 'README.md'])).code).toBe(0);
    w(dir, 'README.md', 'agent\n');
    git(dir, ['add', 'README.md']);
    // a valid cache tree, then damaged: git's own writes have already dropped the damaged one it read
    git(dir, ['write-tree']);
    const good = new Uint8Array(readFileSync(indexPath));
    writeFileSync(
      indexPath,
      withPayload(good, 'sha1', 'TREE', (p) => serializeTree(parseTree(p, 'sha1'), '\r\n')),
    );
    const r = await cli(dir, ['restore', '--json']);
    expect(r.code, r.err).toBe(0);
    const report = JSON.parse(r.out).data as { warnings: string[]; indexWritten: boolean };
    expect(report.indexWritten).toBe(true);
    expect(report.warnings).toHaveLength(1);
    expect(report.warnings[0]).toMatch(/^index: dropped the TREE extension at byte \d+ of .*\.git\/index, which does not parse/);
    expect(r.err).toContain('git-scalpel: warning: index: dropped the TREE extension');
    expect(gitView(dir)).toEqual(before);
    const written = decodeIndex(new Uint8Array(readFileSync(indexPath)));
    expect(written.extensions.map((x) => x.signature)).not.toContain('TREE');
    const log = JSON.parse((await cli(dir, ['log', '--json'])).out).data as Array<{ event: string; detail?: { warnings?: string[] } }>;
    expect(log.find((x) => x.event === 'restore')?.detail?.warnings).toEqual(report.warnings);
  });

  it('entry damage stays a hard error: nothing is written', async () => {
    const dir = personRepo();
    const indexPath = join(dir, '.git/index');
    git(dir, ['update-index', '--index-version=3']);
    const damaged = new Uint8Array(readFileSync(indexPath));
    // the first entry's flags word (after 40 bytes of stat data and the id) gets the extended bit:
    // the word that follows is then its extended flags, here with a bit git does not know
    const flagsAt = 12 + 40 + 20;
    damaged[flagsAt] |= 0x40;
    damaged[flagsAt + 2] = 0x01;
    const { createHash } = await import('node:crypto');
    damaged.set(
      createHash('sha1')
        .update(damaged.subarray(0, damaged.length - 20))
        .digest(),
      damaged.length - 20,
    );
    writeFileSync(indexPath, damaged);
    const r = await cli(dir, ['snapshot', 'README.md']);
    expect(r.code).toBe(1);
    expect(r.err).toMatch(/BAD_ENTRY|unknown extended flags/);
    expect(git(dir, ['for-each-ref', 'refs/scalpel'])).toBe('');
  });
});
