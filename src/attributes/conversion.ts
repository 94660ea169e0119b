/**
 * What git's conversion does to a path, from its six conversion attributes and the config
 * (convert.c `convert_attrs`, `output_eol`, `text_eol_is_crlf`, `git_path_check_*`, git 2.39).
 * Pure: no I/O, no state.
 *
 * The question answered is "may this file's worktree bytes differ from its blob?" — true when
 * either direction can change bytes:
 *
 * - checkin (`convert_to_git`): any crlf action but `binary` turns CRLF into LF
 *   (`crlf_to_git`), so a CRLF file added under `text`, `text=auto`, `eol=lf`,
 *   `core.autocrlf=input` or `true` is stored with LF and stays CRLF on disk, stat-clean;
 *   `ident` collapses `$Id: ...$`; a `clean` filter; `working-tree-encoding` re-encodes;
 * - checkout (`convert_to_working_tree`): LF becomes CRLF where `output_eol` is CRLF; `ident`
 *   expands `$Id$`; a `smudge` or `process` filter; `working-tree-encoding`.
 *
 * Whether a conversion really changes a given file depends on its content (a file without
 * CRLF is stored as is; `text=auto` leaves binary-looking files alone; a file whose index blob
 * has CR is not normalised). The answer here does not look at content: it is true whenever
 * some content would change, so a true costs only a read of the file, and a false is exact.
 */
import type { AttrValue } from './parse.js';

/** The attributes git's conversion reads, in the order of convert.c's check. */
export const CONVERSION_ATTRIBUTES = ['text', 'crlf', 'eol', 'filter', 'ident', 'working-tree-encoding'] as const;
export type ConversionAttribute = (typeof CONVERSION_ATTRIBUTES)[number];

/** The config git's conversion reads. */
export interface ConversionConfig {
  /** core.autocrlf: true, false (default) or 'input'. */
  autocrlf: boolean | 'input';
  /** core.eol: 'lf', 'crlf', 'native' (the platform's), or undefined (unset; also any other value). */
  eol: 'lf' | 'crlf' | 'native' | undefined;
  /** The platform's line ending (git's EOL_NATIVE): 'lf' except in Git for Windows. */
  nativeEol: 'lf' | 'crlf';
  /**
   * Does `filter.<name>` convert: is `filter.<name>.clean`, `.smudge` or `.process` configured?
   * git does nothing for a filter attribute naming no configured driver. The loader's default
   * answers true for every name (it cannot know the person's global config).
   */
  filterConverts(name: string): boolean;
}

/**
 * convert.c's crlf action after `convert_attrs`: `binary` (no eol conversion), `text-input` /
 * `text-crlf` (text, LF or CRLF in the worktree), `auto` / `auto-input` / `auto-crlf`
 * (`text=auto` or core.autocrlf: text when the content does not look binary).
 */
export type CrlfAction = 'binary' | 'text-input' | 'text-crlf' | 'auto' | 'auto-input' | 'auto-crlf';

/**
 * Why a file's bytes may differ from its blob. `unknown`: an attribute file that applies could
 * not be read (and the caller chose to go on) or holds a pattern that could not be compiled.
 */
export type ConversionReason = 'eol' | 'ident' | 'filter' | 'working-tree-encoding' | 'unknown';

export interface Conversion {
  crlfAction: CrlfAction;
  /** The line ending a checkout writes for text (`output_eol`): null for binary. */
  checkoutEol: 'lf' | 'crlf' | null;
  /** `ident` is set. */
  ident: boolean;
  /** The filter attribute's driver name when it converts (or is assumed to). */
  filter: string | null;
  /** The working-tree-encoding attribute when git re-encodes (or refuses: set/unset are not encodings). */
  encoding: AttrValue | null;
  /** Every reason the bytes may differ; empty when they cannot. */
  reasons: ConversionReason[];
  /** reasons.length > 0. */
  mayDiffer: boolean;
}

/** The values of the six attributes for a path (undefined or null: unspecified). */
export type ConversionValues = Partial<Record<ConversionAttribute, AttrValue | null | undefined>>;

type RawAction = CrlfAction | 'text' | 'undefined';

/** `git_path_check_crlf` (for `text` and the old `crlf`). */
function checkCrlf(v: AttrValue | null | undefined): RawAction {
  if (v === true) return 'text';
  if (v === false) return 'binary';
  if (v === 'input') return 'text-input';
  if (v === 'auto') return 'auto';
  return 'undefined';
}

/** `git_path_check_eol`. */
function checkEol(v: AttrValue | null | undefined): 'lf' | 'crlf' | null {
  return v === 'lf' ? 'lf' : v === 'crlf' ? 'crlf' : null;
}

/** `text_eol_is_crlf`. */
function textEolIsCrlf(cfg: ConversionConfig): boolean {
  if (cfg.autocrlf === true) return true;
  if (cfg.autocrlf === 'input') return false;
  if (cfg.eol === 'crlf') return true;
  if (cfg.eol === 'native') return cfg.nativeEol === 'crlf';
  if (cfg.eol === undefined) return cfg.nativeEol === 'crlf';
  return false;
}

/** `convert_attrs`' crlf action. */
export function crlfActionOf(
  text: AttrValue | null | undefined,
  crlf: AttrValue | null | undefined,
  eol: AttrValue | null | undefined,
  cfg: ConversionConfig,
): CrlfAction {
  let a = checkCrlf(text);
  if (a === 'undefined') a = checkCrlf(crlf);
  if (a !== 'binary') {
    const e = checkEol(eol);
    if (a === 'auto' && e === 'lf') a = 'auto-input';
    else if (a === 'auto' && e === 'crlf') a = 'auto-crlf';
    else if (e === 'lf') a = 'text-input';
    else if (e === 'crlf') a = 'text-crlf';
  }
  if (a === 'text') a = textEolIsCrlf(cfg) ? 'text-crlf' : 'text-input';
  if (a === 'undefined') a = cfg.autocrlf === true ? 'auto-crlf' : cfg.autocrlf === 'input' ? 'auto-input' : 'binary';
  return a;
}

/** `output_eol`. */
export function checkoutEolOf(action: CrlfAction, cfg: ConversionConfig): 'lf' | 'crlf' | null {
  switch (action) {
    case 'binary':
      return null;
    case 'text-crlf':
    case 'auto-crlf':
      return 'crlf';
    case 'text-input':
    case 'auto-input':
      return 'lf';
    case 'auto':
      return textEolIsCrlf(cfg) ? 'crlf' : 'lf';
  }
}

/** The filter driver that converts, by `git_path_check_convert` (set, unset, unspecified: none). */
function filterOf(v: AttrValue | null | undefined, cfg: ConversionConfig): string | null {
  return typeof v === 'string' && cfg.filterConverts(v) ? v : null;
}

/** `git_path_check_encoding`: the value when git re-encodes (or dies: set and unset are no encodings). */
function encodingOf(v: AttrValue | null | undefined): AttrValue | null {
  if (v === undefined || v === null || v === '') return null;
  if (v === true || v === false) return v;
  return sameEncodingAsUtf8(v) ? null : v;
}

/** utf8.c `same_encoding(value, "UTF-8")`: `utf8`, `UTF-8`, `utf-8`... are the default, no re-encoding. */
export function sameEncodingAsUtf8(name: string): boolean {
  const lower = name.toLowerCase();
  if (lower.startsWith('utf')) {
    const rest = lower[3] === '-' ? lower.slice(4) : lower.slice(3);
    return rest === '8';
  }
  return lower === 'utf-8';
}

/** What git's conversion does to a path with these attribute values under this config. */
export function conversionOf(values: ConversionValues, cfg: ConversionConfig): Conversion {
  const crlfAction = crlfActionOf(values.text, values.crlf, values.eol, cfg);
  const ident = values.ident === true;
  const filter = filterOf(values.filter, cfg);
  const encoding = encodingOf(values['working-tree-encoding']);
  const reasons: ConversionReason[] = [];
  if (crlfAction !== 'binary') reasons.push('eol');
  if (ident) reasons.push('ident');
  if (filter !== null) reasons.push('filter');
  if (encoding !== null) reasons.push('working-tree-encoding');
  return { crlfAction, checkoutEol: checkoutEolOf(crlfAction, cfg), ident, filter, encoding, reasons, mayDiffer: reasons.length > 0 };
}

/** conversionOf(...).mayDiffer without building the answer (the walk's per-file question). */
export function mayDiffer(
  text: AttrValue | null | undefined,
  crlf: AttrValue | null | undefined,
  eol: AttrValue | null | undefined,
  filter: AttrValue | null | undefined,
  ident: AttrValue | null | undefined,
  encoding: AttrValue | null | undefined,
  cfg: ConversionConfig,
): boolean {
  if (ident === true) return true;
  if (typeof filter === 'string' && cfg.filterConverts(filter)) return true;
  if (encoding !== undefined && encoding !== null && encodingOf(encoding) !== null) return true;
  return crlfActionOf(text, crlf, eol, cfg) !== 'binary';
}

/** Does the config alone convert a file no attribute speaks of (core.autocrlf true or input)? */
export function configConverts(cfg: ConversionConfig): boolean {
  return cfg.autocrlf !== false;
}
