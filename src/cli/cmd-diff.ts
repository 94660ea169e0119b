/**
 * `git-scalpel diff [TURN] [--session S] [--stat|--numstat] [--cached] [-U N] [--color|--no-color]
 * [--json] [-- PATH...]`: what a turn changed, in git's diff format.
 */
import { formatNumstat, formatStat, formatUnified, type Hunk, type StatFile } from '../diff/index.js';
import { openRepository } from '../entry/root-node.js';
import { quotePath } from '../index/format.js';
import type { FileDiff, TurnDiff } from '../snapshot/types.js';
import { parseArgs, UsageError } from './args.js';
import type { CliIo } from './io.js';
import { ok, printWarnings } from './output.js';

const enc = new TextEncoder();
const dec = new TextDecoder();

/** git's default colours (color.diff.*): meta bold, frag cyan, old red, new green, whitespace errors on red. */
const C = { meta: '\x1b[1m', frag: '\x1b[36m', old: '\x1b[31m', new: '\x1b[32m', ws: '\x1b[41m', reset: '\x1b[m' };

export async function cmdDiff(argv: string[], io: CliIo): Promise<number> {
  // git's -U N and -UN, as --unified N
  const args: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '--') {
      args.push(...argv.slice(i));
      break;
    }
    if (a === '-U') args.push('--unified', argv[++i] ?? '');
    else if (/^-U\d+$/.test(a)) args.push(`--unified=${a.slice(2)}`);
    else args.push(a);
  }
  const dash = args.indexOf('--');
  const paths = dash < 0 ? [] : args.slice(dash + 1);
  const { flags, positionals } = parseArgs(dash < 0 ? args : args.slice(0, dash), {
    switches: ['json', 'stat', 'numstat', 'cached', 'staged', 'color', 'no-color', 'undo'],
    options: ['session', 'unified'],
  });
  if (positionals.length > 1)
    throw new UsageError('diff takes at most one turn (its number in `turns`, or a snapshot id); paths go after --');
  const u = flags.get('unified');
  const context = u === undefined ? 3 : Number(u);
  if (!Number.isSafeInteger(context) || context < 0) throw new UsageError('--unified takes a number of lines (0 or more)');
  const session = flags.get('session');
  if (session === true) throw new UsageError('option --session needs a value');
  if (flags.has('undo') && (positionals.length || session !== undefined))
    throw new UsageError('diff --undo takes no turn and no session: it shows what rewind --undo would bring back');
  const repo = await openRepository({ fs: io.fs, dir: io.cwd });
  const common = { ...(paths.length ? { paths, cwd: io.cwd } : {}), cached: flags.has('cached') || flags.has('staged'), context };
  // --undo: what `rewind --undo` would bring back, from now to what the newest rewind replaced
  const d = flags.has('undo')
    ? await repo.undoDiff(common)
    : await repo.diff({
        ...(session !== undefined ? { session } : {}),
        ...(positionals[0] !== undefined ? { turn: positionals[0] } : {}),
        ...common,
      });
  printWarnings(io, d.warnings);
  if (flags.has('json'))
    return ok(
      io,
      flags.has('undo')
        ? `${d.files.length} file(s) an undo would bring back`
        : `${d.files.length} file(s) changed by turn ${d.turn ?? d.id} of ${d.session}`,
      diffJson(d),
    );
  const stats: StatFile[] = d.files.map((f) => ({
    path: f.path,
    ...(f.oldPath !== undefined ? { oldPath: f.oldPath } : {}),
    counts: f.binary
      ? { binary: true, oldSize: f.oldSize ?? 0, newSize: f.newSize ?? 0 }
      : { binary: false, added: f.added, deleted: f.deleted },
  }));
  if (flags.has('numstat')) {
    io.out(formatNumstat(stats));
    return 0;
  }
  const colour =
    !flags.has('no-color') && (flags.has('color') || wantsColour(repo.configValue('color.diff') ?? repo.configValue('color.ui'), io));
  if (flags.has('stat')) {
    const text = formatStat(stats, { width: io.terminal?.columns ?? 80 });
    // the bar as git colours it: its + green, its - red
    io.out(
      colour
        ? text.replace(
            /^( .* \| +\d+ )(\+*)(-*)$/gm,
            (_m, head: string, p: string, m: string) => `${head}${p ? `${C.new}${p}${C.reset}` : ''}${m ? `${C.old}${m}${C.reset}` : ''}`,
          )
        : text,
    );
    return 0;
  }
  let out = '';
  for (const p of d.unmerged) out += `* Unmerged path ${p}\n`;
  for (const f of d.files) out += formatFile(f, colour);
  io.out(out);
  return 0;
}

/** git's colour setting (color.diff, else color.ui): always, never, or auto (a terminal that takes colour). */
function wantsColour(setting: string | undefined, io: CliIo): boolean {
  const v = setting?.toLowerCase();
  if (v === 'always') return true;
  if (v === 'never' || v === 'false' || v === 'no' || v === 'off') return false;
  return io.terminal?.colour === true;
}

/** The path with its `a/` or `b/` prefix, quoted as git quotes it (core.quotePath). */
function side(prefix: string, path: string): string {
  const q = quotePath(enc.encode(path));
  return q.startsWith('"') ? `"${prefix}${q.slice(1)}` : `${prefix}${q}`;
}

const abbrev = (oid: string | undefined) => (oid ?? '0'.repeat(40)).slice(0, 7);

/** One file as `git diff` prints it: the extended header lines, then its hunks or the binary line. */
export function formatFile(f: FileDiff, colour: boolean): string {
  const meta = (line: string) => (colour ? `${C.meta}${line}${C.reset}\n` : `${line}\n`);
  const from = f.oldPath ?? f.path;
  let out = meta(`diff --git ${side('a/', from)} ${side('b/', f.path)}`);
  if (!f.old && f.new) out += meta(`new file mode ${f.new.mode}`);
  else if (f.old && !f.new) out += meta(`deleted file mode ${f.old.mode}`);
  else if (f.old && f.new) {
    if (f.similarity !== undefined) {
      out += meta(`similarity index ${f.similarity}%`);
      out += meta(`rename from ${quotePath(enc.encode(from))}`);
      out += meta(`rename to ${quotePath(enc.encode(f.path))}`);
    }
    if (f.old.mode !== f.new.mode) out += meta(`old mode ${f.old.mode}`) + meta(`new mode ${f.new.mode}`);
  }
  const sameContent = f.old && f.new && f.old.oid === f.new.oid;
  if (!sameContent) {
    const mode = f.old && f.new && f.old.mode === f.new.mode ? ` ${f.new.mode}` : '';
    out += meta(`index ${abbrev(f.old?.oid)}..${abbrev(f.new?.oid)}${mode}`);
  }
  const a = f.old ? side('a/', from) : '/dev/null';
  const b = f.new ? side('b/', f.path) : '/dev/null';
  if (f.binary) return out + `Binary files ${a} and ${b} differ\n`;
  if (f.hunks.length === 0) return out;
  out += meta(`--- ${a}`) + meta(`+++ ${b}`);
  return out + (colour ? colourHunks(f.hunks) : dec.decode(formatUnified(f.hunks)));
}

/**
 * Hunks coloured byte for byte as git 2.39 colours them: the `@@` range cyan, removed lines red,
 * added lines green with their trailing whitespace on red (whitespace errors: blank-at-eol only).
 */
function colourHunks(hunks: readonly Hunk[]): string {
  let out = '';
  for (const h of hunks) {
    const text = dec.decode(formatUnified([{ ...h, lines: [] }])).slice(0, -1);
    const end = text.indexOf('@@', 2) + 2;
    out += `${C.frag}${text.slice(0, end)}${C.reset}${h.header ? ` ${C.reset}${text.slice(end + 1)}${C.reset}` : ''}\n`;
    for (const l of h.lines) {
      const line = dec.decode(l.text);
      if (l.kind === ' ') out += ` ${line}${C.reset}\n`;
      else if (l.kind === '-') out += `${C.old}-${line}${C.reset}\n`;
      else {
        const body = line.replace(/[ \t]+$/, '');
        const tail = line.slice(body.length);
        out += `${C.new}+${C.reset}${body ? `${C.new}${body}${C.reset}` : ''}${tail ? `${C.ws}${tail}${C.reset}` : ''}\n`;
      }
      if (l.noNewline) out += `\\ No newline at end of file${C.reset}\n`;
    }
  }
  return out;
}

/** The diff for --json: hunk lines as text (UTF-8, invalid bytes replaced). */
function diffJson(d: TurnDiff): unknown {
  return {
    ...d,
    files: d.files.map((f) => ({
      ...f,
      hunks: f.hunks.map((h) => ({
        ...h,
        lines: h.lines.map((l) => ({ kind: l.kind, text: dec.decode(l.text), ...(l.noNewline ? { noNewline: true } : {}) })),
      })),
    })),
  };
}
