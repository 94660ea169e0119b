/**
 * The conformance runner: every case of the corpus through one adapter, compared with the case's
 * answers. Pure: the corpus comes through `CorpusSource` (the command line reads it from disk), the
 * adapter is any object with the ConformanceAdapter shape.
 */
import { ScalpelError } from '../errors/index.js';
import {
  ERROR_CLASSES,
  type AdapterInput,
  type AnswerExtension,
  type AspectStatus,
  type CaseAnswers,
  type CaseResult,
  type ConformanceAdapter,
  type ConformanceReport,
  type DecodeOutcome,
  type ErrorClass,
  type Manifest,
  type ManifestCase,
} from './types.js';

/** Reads files of the corpus by their path relative to its root ('manifest.json', 'cases/x/index'). */
export interface CorpusSource {
  read(path: string): Promise<Uint8Array>;
}

const utf8 = new TextDecoder('utf-8');

async function readJson<T>(corpus: CorpusSource, path: string): Promise<T> {
  const bytes = await corpus.read(path);
  try {
    return JSON.parse(utf8.decode(bytes)) as T;
  } catch (e) {
    throw new ScalpelError('BAD_ARGUMENT', `conformance corpus: ${path} is not JSON (${(e as Error).message})`, {
      name: path,
      reason: 'not-json',
    });
  }
}

export async function loadManifest(corpus: CorpusSource): Promise<Manifest> {
  const m = await readJson<Manifest>(corpus, 'manifest.json');
  if (!m || m.formatVersion !== 1 || !Array.isArray(m.cases)) {
    throw new ScalpelError('BAD_ARGUMENT', 'conformance corpus: manifest.json is not a format 1 manifest', {
      name: 'manifest.json',
      reason: 'bad-manifest',
    });
  }
  return m;
}

/**
 * The cases named by `patterns` (exact names, or with `*` matching any run of characters), in
 * manifest order; every case when there is no pattern. A pattern that matches nothing is an error.
 */
export function selectCases(manifest: Manifest, patterns: readonly string[]): ManifestCase[] {
  if (patterns.length === 0) return manifest.cases;
  const res = patterns.map((p) => ({
    p,
    rx: new RegExp(
      `^${p
        .split('*')
        .map((s) => s.replace(/[.+?^${}()|[\]\\]/g, '\\$&'))
        .join('.*')}$`,
    ),
    hit: false,
  }));
  const out = manifest.cases.filter((c) => {
    let any = false;
    for (const r of res) {
      if (r.rx.test(c.name)) {
        r.hit = true;
        any = true;
      }
    }
    return any;
  });
  const missed = res.filter((r) => !r.hit).map((r) => r.p);
  if (missed.length) {
    throw new ScalpelError('BAD_ARGUMENT', `conformance: no case named ${missed.map((m) => JSON.stringify(m)).join(', ')}`, {
      name: 'CASE',
      reason: 'unknown-case',
      cases: missed,
    });
  }
  return out;
}

export interface RunOptions {
  corpus: CorpusSource;
  adapter: ConformanceAdapter;
  /** Case names or `*` patterns (selectCases); all cases when absent or empty. */
  cases?: readonly string[];
  /** Called after each case, in order. */
  onCase?: (result: CaseResult) => void;
}

export async function runConformance(opts: RunOptions): Promise<ConformanceReport> {
  const manifest = await loadManifest(opts.corpus);
  const chosen = selectCases(manifest, opts.cases ?? []);
  const results: CaseResult[] = [];
  for (const mc of chosen) {
    const r = await runCase(opts.corpus, opts.adapter, mc);
    results.push(r);
    opts.onCase?.(r);
  }
  const summary = { pass: 0, fail: 0, unsupported: 0 };
  for (const r of results) summary[r.status]++;
  const a = opts.adapter;
  return {
    adapter: { name: a.name, ...(a.description ? { description: a.description } : {}), capabilities: a.capabilities },
    corpus: { gitVersion: manifest.gitVersion, cases: results.length },
    summary,
    cases: results,
  };
}

/** One case through the adapter. Never throws for what the adapter does: that is the result. */
export async function runCase(corpus: CorpusSource, adapter: ConformanceAdapter, mc: ManifestCase): Promise<CaseResult> {
  const dir = `cases/${mc.name}`;
  const answers = await readJson<CaseAnswers>(corpus, `${dir}/answers.json`);
  const input: AdapterInput = {
    name: mc.name,
    bytes: await corpus.read(`${dir}/${answers.files.index}`),
    objectFormat: answers.objectFormat,
  };
  if (answers.files.sharedIndex) input.sharedIndex = await corpus.read(`${dir}/${answers.files.sharedIndex}`);
  const aspects: CaseResult['aspects'] = { error: 'n/a', entries: 'n/a', extensions: 'n/a', roundTrip: 'n/a' };
  const result = (status: CaseResult['status'], reason?: string, notes?: string[]): CaseResult => ({
    name: mc.name,
    kind: mc.kind,
    status,
    aspects,
    ...(reason !== undefined ? { reason } : {}),
    ...(notes && notes.length ? { notes } : {}),
  });

  // what the case needs of a reader before it can be asked at all
  const caps = adapter.capabilities;
  const need = mc.requires ?? { version: answers.index?.version, objectFormat: answers.objectFormat };
  const missing: string[] = [];
  if (need.version !== undefined && !caps.versions.includes(need.version)) missing.push(`index version ${need.version}`);
  if (!caps.objectFormats.includes(need.objectFormat)) missing.push(`${need.objectFormat} repositories`);
  if (missing.length) {
    for (const k of Object.keys(aspects) as Array<keyof CaseResult['aspects']>) aspects[k] = 'unsupported';
    if (answers.result === 'error') aspects.entries = aspects.extensions = aspects.roundTrip = 'n/a';
    else aspects.error = 'n/a';
    return result('unsupported', `not supported: ${missing.join(', ')}`);
  }

  const outcome = await decodeSafely(adapter, input);
  if ('unsupported' in outcome) {
    if (answers.result === 'error') aspects.error = 'unsupported';
    else aspects.entries = aspects.extensions = aspects.roundTrip = 'unsupported';
    return result('unsupported', `not supported: ${outcome.unsupported}`);
  }

  if (answers.result === 'error') {
    const want = answers.error!.class;
    if ('index' in outcome) {
      aspects.error = 'fail';
      return result('fail', `read without an error; a reader must report ${want} (${answers.error!.detail})`);
    }
    const got = outcome.error.class;
    if (got === want) {
      aspects.error = 'pass';
      return result('pass');
    }
    aspects.error = 'fail';
    const what = got === undefined ? 'an error without a class' : `class ${got}`;
    return result('fail', `expected class ${want} (${answers.error!.detail}), got ${what}: ${outcome.error.message}`);
  }

  const want = answers.index!;
  const parses = (sig: string) => caps.extensions === 'all' || caps.extensions.includes(sig);
  if ('error' in outcome) {
    aspects.entries = 'fail';
    if (want.extensions.some((x) => parses(x.signature))) aspects.extensions = 'fail';
    else if (want.extensions.length) aspects.extensions = 'unsupported';
    return result('fail', `refused a valid index${outcome.error.class ? ` (class ${outcome.error.class})` : ''}: ${outcome.error.message}`);
  }
  const got = outcome.index;
  const failures: string[] = [];
  const unsupported: string[] = [];
  const notes: string[] = [];

  // entries (and the version they were read as)
  let diff = got.version === want.version ? null : `version: expected ${want.version}, got ${show(got.version)}`;
  diff ??= firstDifference(want.entries, got.entries, 'entries');
  if (diff === null && want.fileEntries && got.fileEntries) diff = firstDifference(want.fileEntries, got.fileEntries, 'fileEntries');
  aspects.entries = diff === null ? 'pass' : 'fail';
  if (diff !== null) failures.push(diff);

  // extensions the adapter parses
  const wantExt = want.extensions.filter((x) => parses(x.signature)).map(normative);
  const gotExt = (got.extensions ?? []).filter((x) => parses(x.signature)).map(normative);
  const extDiff = firstDifference(wantExt, gotExt, 'extensions', (i) => wantExt[i]?.signature ?? gotExt[i]?.signature);
  const notParsed = [...new Set(want.extensions.map((x) => x.signature).filter((s) => !parses(s)))];
  if (extDiff !== null) {
    aspects.extensions = 'fail';
    failures.push(extDiff);
  } else if (notParsed.length) {
    aspects.extensions = 'unsupported';
    unsupported.push(`extension${notParsed.length > 1 ? 's' : ''} ${notParsed.join(', ')} not parsed`);
  } else if (want.extensions.length || gotExt.length) aspects.extensions = 'pass';

  // re-encoding
  if (!caps.encode || !adapter.encode) {
    aspects.roundTrip = 'unsupported';
    unsupported.push('no encoder');
  } else {
    let enc: Awaited<ReturnType<NonNullable<ConformanceAdapter['encode']>>> | undefined;
    let threw: string | null = null;
    try {
      enc = await adapter.encode(input);
    } catch (e) {
      threw = `re-encoding threw: ${errorMessage(e)}`;
    }
    if (threw !== null) {
      aspects.roundTrip = 'fail';
      failures.push(threw);
    } else if (enc && 'unsupported' in enc) {
      aspects.roundTrip = 'unsupported';
      unsupported.push(`re-encoding: ${enc.unsupported}`);
    } else {
      const d = byteDifference(input.bytes, enc!.bytes, want, answers.objectFormat);
      if (d === null) aspects.roundTrip = 'pass';
      else if (answers.roundTrip?.required === false) {
        aspects.roundTrip = 'pass';
        notes.push(`re-encoding differs, which is allowed here (${answers.roundTrip.reason ?? 'not required'}): ${d}`);
      } else {
        aspects.roundTrip = 'fail';
        failures.push(`re-encoding ${d}`);
      }
    }
  }

  if (failures.length) return result('fail', failures[0], notes);
  if (unsupported.length) return result('unsupported', `not supported: ${unsupported.join('; ')}`, notes);
  return result('pass', undefined, notes);
}

async function decodeSafely(adapter: ConformanceAdapter, input: AdapterInput): Promise<DecodeOutcome> {
  let out: DecodeOutcome;
  try {
    out = await adapter.decode(input);
  } catch (e) {
    return { error: { class: classOf(adapter, e), message: errorMessage(e) } };
  }
  if (!out || typeof out !== 'object' || !('index' in out || 'error' in out || 'unsupported' in out)) {
    return { error: { message: `the adapter's decode returned ${show(out)}, not { index } | { error } | { unsupported }` } };
  }
  if ('error' in out) {
    const c = out.error.class;
    return {
      error: {
        class: c !== undefined && (ERROR_CLASSES as readonly string[]).includes(c) ? c : undefined,
        message:
          String(out.error.message ?? '') +
          (c !== undefined && !(ERROR_CLASSES as readonly string[]).includes(c) ? ` (unknown class ${show(c)})` : ''),
      },
    };
  }
  return out;
}

function classOf(adapter: ConformanceAdapter, e: unknown): ErrorClass | undefined {
  let c: unknown;
  try {
    c = adapter.classify?.(e);
  } catch {
    c = undefined;
  }
  if (c === undefined && e && typeof e === 'object' && 'conformanceClass' in e) c = (e as { conformanceClass: unknown }).conformanceClass;
  return typeof c === 'string' && (ERROR_CLASSES as readonly string[]).includes(c) ? (c as ErrorClass) : undefined;
}

function errorMessage(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

/** An extension without its informative fields. */
function normative(x: AnswerExtension): AnswerExtension {
  const out: AnswerExtension = { signature: x.signature };
  for (const [k, v] of Object.entries(x)) if (k !== 'offset' && k !== 'size') out[k] = v;
  return out;
}

/**
 * The first place `got` differs from `want` (JSON values), as "path: expected X, got Y"; null when
 * equal. Objects are compared on `want`'s keys (an adapter may add fields of its own); arrays element
 * by element first, then by length, so the first differing element is named rather than the count.
 */
export function firstDifference(want: unknown, got: unknown, path: string, label?: (i: number) => string | undefined): string | null {
  if (Array.isArray(want)) {
    if (!Array.isArray(got)) return `${path}: expected an array, got ${show(got)}`;
    const n = Math.min(want.length, got.length);
    for (let i = 0; i < n; i++) {
      const l = label?.(i);
      const d = firstDifference(want[i], got[i], `${path}[${i}]${l ? ` (${l})` : ''}`);
      if (d !== null) return d;
    }
    if (want.length !== got.length) {
      const extra = want.length > got.length ? `first missing: ${show(want[n], 'path')}` : `first extra: ${show(got[n], 'path')}`;
      return `${path}: expected ${want.length} items, got ${got.length} (${extra})`;
    }
    return null;
  }
  if (want !== null && typeof want === 'object') {
    if (got === null || typeof got !== 'object' || Array.isArray(got)) return `${path}: expected an object, got ${show(got)}`;
    for (const [k, v] of Object.entries(want)) {
      const g = (got as Record<string, unknown>)[k];
      if (g === undefined && v !== undefined) return `${path}.${k}: expected ${show(v, k)}, got nothing`;
      const d = firstDifference(v, g, `${path}.${k}`);
      if (d !== null) return d;
    }
    return null;
  }
  if (want === got) return null;
  const key = path.slice(path.lastIndexOf('.') + 1);
  return `${path}: expected ${show(want, key)}, got ${show(got, key)}`;
}

const HEX_TEXT_KEYS = new Set(['path', 'name', 'token', 'excludePerDir', 'ident']);

function show(v: unknown, key?: string): string {
  if (typeof v === 'string' && key !== undefined && HEX_TEXT_KEYS.has(key) && /^([0-9a-f]{2})*$/.test(v)) {
    return `${clip(v, 48)} (${clip(JSON.stringify(hexText(v)), 48)})`;
  }
  if (v && typeof v === 'object' && !Array.isArray(v) && key === 'path' && typeof (v as { path?: unknown }).path === 'string') {
    return `path ${show((v as { path: string }).path, 'path')}`;
  }
  if (v === undefined) return 'nothing';
  return clip(JSON.stringify(v) ?? String(v), 80);
}

function clip(s: string, n: number): string {
  return s.length > n ? `${s.slice(0, n - 1)}…` : s;
}

function hexText(h: string): string {
  const b = new Uint8Array(h.length / 2);
  for (let i = 0; i < b.length; i++) b[i] = parseInt(h.slice(2 * i, 2 * i + 2), 16);
  return new TextDecoder('utf-8').decode(b);
}

/** Where re-encoded bytes first differ from the file, named by the part of the file it falls in. */
function byteDifference(
  want: Uint8Array,
  got: Uint8Array,
  index: { extensions: AnswerExtension[] },
  format: 'sha1' | 'sha256',
): string | null {
  const n = Math.min(want.length, got.length);
  let i = 0;
  while (i < n && want[i] === got[i]) i++;
  if (i === n && want.length === got.length) return null;
  const hashLen = format === 'sha256' ? 32 : 20;
  const region = (at: number): string => {
    if (at < 12) return 'header';
    if (at >= want.length - hashLen) return 'trailer';
    for (const x of index.extensions) {
      const start = x.offset ?? -1;
      if (start >= 0 && at >= start && at < start + 8 + (x.size ?? 0)) return `${x.signature} extension`;
    }
    const first = index.extensions.find((x) => x.offset !== undefined)?.offset ?? want.length - hashLen;
    return at < first ? 'entries' : 'extensions';
  };
  const hex = (b: Uint8Array, at: number) => (at < b.length ? `0x${b[at].toString(16).padStart(2, '0')}` : 'end of file');
  return `differs from the file at byte ${i} (${region(i)}: expected ${hex(want, i)}, got ${hex(got, i)}); ${want.length} bytes expected, ${got.length} written`;
}

export type { AspectStatus };
