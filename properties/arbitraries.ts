import fc from 'fast-check';
import { IndexEntry } from '../src/index/entry.js';
import { ewahFromBits } from '../src/index/ewah.js';
import type { GitIndex } from '../src/index/decode.js';
import type { CacheTreeNode, IndexExtension, ResolveUndoRecord } from '../src/index/types.js';
import type { ObjectFormat } from '../src/hash/index.js';
import { compareBytes } from '../src/bytes/compare.js';
import { toHex } from '../src/bytes/hex.js';

/** Path bytes git could store: no NUL, not starting with '/', components non-empty. Includes non-UTF-8 and control bytes. */
export const pathComponent = fc.oneof(
  { weight: 6, arbitrary: fc.stringMatching(/^[a-z][a-z0-9_.-]{0,12}$/).map((s) => new TextEncoder().encode(s)) },
  { weight: 2, arbitrary: fc.uint8Array({ minLength: 1, maxLength: 8 }).map((b) => b.map((x) => (x === 0 || x === 0x2f ? 0x5f : x))) },
  { weight: 1, arbitrary: fc.constantFrom('\n', 'a b', 'é', '日本', '"q"', '\\', '💥').map((s) => new TextEncoder().encode(s)) },
);

export const pathBytes = fc.array(pathComponent, { minLength: 1, maxLength: 4 }).map((parts) => {
  const out: number[] = [];
  parts.forEach((p, i) => {
    if (i) out.push(0x2f);
    out.push(...p);
  });
  return Uint8Array.from(out);
});

/** Occasionally a path longer than 0xFFF bytes (name-length field capped). */
export const anyPath = fc.oneof(
  { weight: 30, arbitrary: pathBytes },
  { weight: 1, arbitrary: fc.integer({ min: 4090, max: 4200 }).map((n) => new Uint8Array(n).fill(0x61)) },
);

const u32 = fc.integer({ min: 0, max: 0xffffffff });
export const stat = fc.record({
  ctimeSeconds: u32,
  ctimeNanoseconds: u32,
  mtimeSeconds: u32,
  mtimeNanoseconds: u32,
  dev: u32,
  ino: u32,
  uid: u32,
  gid: u32,
  size: u32,
});

const oid = (format: ObjectFormat) => fc.uint8Array({ minLength: format === 'sha256' ? 32 : 20, maxLength: format === 'sha256' ? 32 : 20 });
const oidHex = (format: ObjectFormat) => oid(format).map((b) => toHex(b));
const mode = fc.constantFrom(0o100644, 0o100755, 0o120000, 0o160000, 0o040000);

function entriesArb(format: ObjectFormat, extended: boolean) {
  return fc
    .uniqueArray(fc.tuple(anyPath, fc.constantFrom(0, 0, 0, 1, 2, 3)), {
      maxLength: 40,
      selector: ([p, s]) => toHex(p) + ':' + s,
    })
    .chain((keys) =>
      fc.tuple(
        ...keys.map(([p, s]) =>
          fc.record({
            path: fc.constant(p),
            stage: fc.constant(s as 0 | 1 | 2 | 3),
            oid: oid(format),
            mode,
            stat,
            assumeValid: fc.boolean(),
            skipWorktree: extended ? fc.boolean() : fc.constant(false),
            intentToAdd: extended ? fc.boolean() : fc.constant(false),
          }),
        ),
      ),
    )
    .map((recs) =>
      recs
        .map(
          (r) =>
            new IndexEntry({
              path: r.path,
              oid: r.oid,
              mode: r.mode,
              stage: r.stage,
              stat: r.stat,
              flags: { assumeValid: r.assumeValid, skipWorktree: r.skipWorktree, intentToAdd: r.intentToAdd },
            }),
        )
        .sort((a, b) => compareBytes(a.pathBytes, b.pathBytes) || a.stage - b.stage),
    );
}

/** A random valid cache tree in pre-order: a random rooted tree (parent of node i is some j < i). */
export function cacheTreeArb(format: ObjectFormat): fc.Arbitrary<CacheTreeNode[]> {
  const nodeArb = fc.record({
    parentPick: fc.nat(),
    name: fc.stringMatching(/^[a-z]{1,6}$/),
    count: fc.oneof(fc.constant(-1), fc.integer({ min: 0, max: 5000 })),
    oid: oidHex(format),
  });
  return fc.array(nodeArb, { minLength: 1, maxLength: 12 }).map((raw) => {
    const children: number[][] = raw.map(() => []);
    for (let i = 1; i < raw.length; i++) children[raw[i].parentPick % i].push(i);
    const out: CacheTreeNode[] = [];
    const stack = [0];
    while (stack.length) {
      const i = stack.pop()!;
      const r = raw[i];
      out.push({
        name: i === 0 ? new Uint8Array(0) : new TextEncoder().encode(r.name),
        entryCount: r.count,
        subtreeCount: children[i].length,
        ...(r.count >= 0 ? { oid: r.oid } : {}),
      });
      for (let k = children[i].length - 1; k >= 0; k--) stack.push(children[i][k]);
    }
    return out;
  });
}

function reucArb(format: ObjectFormat): fc.Arbitrary<ResolveUndoRecord[]> {
  return fc.array(
    fc
      .tuple(
        pathBytes,
        fc.tuple(
          fc.constantFrom(0, 0o100644, 0o100755, 0o120000),
          fc.constantFrom(0, 0o100644, 0o100755),
          fc.constantFrom(0, 0o100644, 0o160000),
        ),
        fc.tuple(oidHex(format), oidHex(format), oidHex(format)),
      )
      .filter(([, m]) => m.some((x) => x !== 0))
      .map(([path, m, ids]) => ({
        path,
        modes: m as [number, number, number],
        oids: [m[0] ? ids[0] : undefined, m[1] ? ids[1] : undefined, m[2] ? ids[2] : undefined] as [
          string | undefined,
          string | undefined,
          string | undefined,
        ],
      })),
    { maxLength: 5 },
  );
}

const bitsArb = fc.uniqueArray(fc.integer({ min: 0, max: 300 }), { maxLength: 40 }).map((b) => b.sort((x, y) => x - y));

function extensionsArb(format: ObjectFormat, nEntries: number): fc.Arbitrary<IndexExtension[]> {
  const fsmnBits = fc
    .uniqueArray(fc.integer({ min: 0, max: Math.max(0, nEntries - 1) }), { maxLength: nEntries })
    .map((b) => b.sort((x, y) => x - y));
  return fc
    .record({
      ieot: fc.option(fc.integer({ min: 2, max: 6 }), { nil: undefined }),
      tree: fc.option(cacheTreeArb(format), { nil: undefined }),
      reuc: fc.option(reucArb(format), { nil: undefined }),
      fsmn: fc.option(
        fc.tuple(
          fc.boolean(),
          fc.bigInt({ min: 0n, max: (1n << 64n) - 1n }),
          fc.stringMatching(/^[a-z0-9:]{0,20}$/),
          nEntries ? fsmnBits : fc.constant([]),
        ),
        { nil: undefined },
      ),
      unknown: fc.option(fc.tuple(fc.stringMatching(/^[A-Z][A-Za-z]{3}$/), fc.uint8Array({ maxLength: 30 })), { nil: undefined }),
      eoie: fc.boolean(),
    })
    .map((r) => {
      const out: IndexExtension[] = [];
      if (r.ieot !== undefined && nEntries >= 2)
        out.push({ signature: 'IEOT', version: 1, blocks: Array.from({ length: r.ieot }, () => ({ offset: 0, count: 0 })) });
      if (r.tree) out.push({ signature: 'TREE', nodes: r.tree });
      if (r.reuc && r.reuc.length) out.push({ signature: 'REUC', records: r.reuc });
      if (r.fsmn) {
        const [v2, since, token, bits] = r.fsmn;
        const bitmap = ewahFromBits(bits.length ? bits[bits.length - 1] + 1 : 0, bits);
        out.push(
          v2
            ? { signature: 'FSMN', version: 2, token: new TextEncoder().encode(token), bitmap }
            : { signature: 'FSMN', version: 1, sinceNanoseconds: since, bitmap },
        );
      }
      if (r.unknown && !['TREE', 'REUC', 'UNTR', 'FSMN', 'EOIE', 'IEOT'].includes(r.unknown[0]))
        out.push({ signature: r.unknown[0], raw: r.unknown[1] });
      if (r.eoie) out.push({ signature: 'EOIE', offset: 0, hash: '' });
      return out;
    });
}

export const gitIndexArb: fc.Arbitrary<GitIndex> = fc
  .record({
    version: fc.constantFrom(2, 3, 4) as fc.Arbitrary<2 | 3 | 4>,
    objectFormat: fc.constantFrom('sha1', 'sha256') as fc.Arbitrary<ObjectFormat>,
  })
  .chain(({ version, objectFormat }) =>
    entriesArb(objectFormat, version !== 2).chain((entries) =>
      extensionsArb(objectFormat, entries.length).map(
        (extensions) => ({ version, objectFormat, entries, extensions, skipHash: false }) as GitIndex,
      ),
    ),
  );

export { bitsArb };
