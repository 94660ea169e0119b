import type { CliIo } from './io.js';
import { discoverRepository, objectFormatOf, readRepoConfig } from '../repo/discover.js';
import { readIndexFile } from '../entry/root-node.js';
import { encodeIndex } from '../index/encode.js';
import { checkEntryOrder } from '../index/verify.js';
import { equalBytes } from '../bytes/compare.js';
import { formatStageDebug, inMemoryFlags } from '../index/format.js';
import { parseArgs, UsageError } from './args.js';
import { ok as okOutcome, printOutcome } from './output.js';
import type { GitIndex } from '../index/decode.js';
import type { IndexExtension } from '../index/types.js';

/**
 * `git-scalpel index [--json] [--verify]`: print the index as `git ls-files --stage --debug`
 * does (merged with the shared index when split). `--verify`: the entries' order is checked as git's read checks it, the trailer on read,
 * and re-encoding every file (index, shared index) must give back its exact bytes.
 */
export async function cmdIndex(args: string[], io: CliIo): Promise<number> {
  const { flags, positionals } = parseArgs(args, { switches: ['json', 'verify'] });
  if (positionals.length) throw new UsageError(`index takes no paths (got ${positionals[0]})`);
  const loc = await discoverRepository(io.fs, io.cwd);
  const cfg = await readRepoConfig(io.fs, loc);
  const objectFormat = objectFormatOf(cfg);
  const read = await readIndexFile(io.fs, loc.gitDir, objectFormat);
  const verify = flags.has('verify');
  const checks: Array<{ file: string; bytes: number; identical: boolean }> = [];
  if (read && verify) {
    // the order git's read checks (read-cache.c check_ce_order): a reader must refuse what breaks it (BAD_ENTRY)
    checkEntryOrder(read.index);
    checks.push({ file: `${loc.gitDir}/index`, bytes: read.bytes.length, identical: equalBytes(encodeIndex(read.file), read.bytes) });
    if (read.shared) {
      checks.push({
        file: read.shared.path,
        bytes: read.shared.bytes.length,
        identical: equalBytes(encodeIndex(read.shared.index), read.shared.bytes),
      });
    }
  }
  const ok = checks.every((c) => c.identical);
  if (flags.has('json')) {
    const idx = read?.index;
    const data = {
      gitDir: loc.gitDir,
      objectFormat,
      version: read?.file.version ?? null,
      split: read?.shared ? { sharedIndex: read.shared.path, sharedEntries: read.shared.index.entries.length } : null,
      skipHash: read?.file.skipHash ?? false,
      checksum: read?.file.checksum ?? null,
      entries: idx ? idx.entries.map((e) => e.toJSON()) : [],
      extensions: idx ? (read?.file.extensions ?? []).map(summarizeExtension) : [],
      ...(verify ? { verify: { ok, checks } } : {}),
    };
    const message = read ? `${idx?.entries.length ?? 0} entries, index version ${read.file.version}` : 'no index file';
    if (ok) return okOutcome(io, message, data);
    const differs = checks.filter((c) => !c.identical).map((c) => c.file);
    printOutcome(io, { code: 'VERIFY_FAILED', exit: 1, message: `re-encoding differs from the file: ${differs.join(', ')}`, data });
    return 1;
  } else {
    if (read) {
      const parts: string[] = [];
      const mem = inMemoryFlags(read.index, {
        fsmonitor: cfg.get('core.fsmonitor') !== undefined && cfg.getString('core.fsmonitor') !== 'false',
      });
      read.index.entries.forEach((e, i) => parts.push(formatStageDebug(e, mem[i])));
      io.out(parts.join(''));
    }
    if (verify) {
      if (!read) io.err('verify: no index file\n');
      for (const c of checks) {
        io.err(`verify: ${c.file}: checksum ok, re-encoding ${c.identical ? 'byte-identical' : 'DIFFERS'} (${c.bytes} bytes)\n`);
      }
    }
  }
  return ok ? 0 : 1;
}

function summarizeExtension(x: IndexExtension): Record<string, unknown> {
  switch (x.signature) {
    case 'TREE':
    case 'REUC':
    case 'UNTR':
    case 'FSMN':
    case 'EOIE':
    case 'IEOT':
    case 'link':
    case 'sdir':
      return { ...x, ...rawless(x) };
    default:
      return { signature: x.signature, size: (x as { raw: Uint8Array }).raw.length };
  }
}

function rawless(x: object): Record<string, unknown> {
  // EWAH bitmaps carry their serialised bytes; print only the bits
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(x)) {
    if (v && typeof v === 'object' && 'bits' in v && 'bitSize' in v)
      out[k] = { bitSize: (v as { bitSize: number }).bitSize, bits: (v as { bits: number[] }).bits };
  }
  return out;
}

export type { GitIndex };
