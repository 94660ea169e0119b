/**
 * git's attribute collection (attr.c `fill`, `fill_one`, `macroexpand_one`,
 * `determine_macros`, git 2.39), pure, in two forms:
 *
 * - `collectAll`: every attribute of a path, as `git check-attr -a` reports them (slow: one
 *   exact test per line; for explanations and tests);
 * - `View`: only what decides git's conversion, for the entries of one directory, fast (a walk
 *   asks it per file).
 *
 * git's algorithm: the attribute files form a stack, highest precedence first
 * ($GIT_DIR/info/attributes, the path's directory's .gitattributes, its parents' up to the
 * root's, core.attributesFile, the system file, the built-in `binary` macro). Each file's
 * lines are visited last to first, each matching line's states last to first, and an
 * attribute takes the FIRST value it is given (later visits cannot change it). Setting an
 * attribute that has a macro definition to true expands the macro right there, giving its
 * states (last to first) to the attributes that have no value yet. The macro definition used
 * is the highest-precedence one (determine_macros); macros can only be defined in the
 * top-level .gitattributes, info/attributes, the global and system files and the built-ins.
 *
 * The fast form keeps, of every line, only the states that can reach a conversion attribute
 * (`text`, `crlf`, `eol`, `filter`, `ident`, `working-tree-encoding`) directly or through a
 * macro (Plan): an attribute outside that closure never changes the answer (git's `rem` count
 * only stops the visit once every attribute has a value, when nothing can change any more).
 */
import { matchKey } from '../ignore/compile.js';
import { compileMatcher, matcherHere, matcherMatches, wildInstance, type EntryMatcher, type Matcher } from '../ignore/list.js';
import {
  CONVERSION_ATTRIBUTES,
  configConverts,
  conversionOf,
  mayDiffer,
  type Conversion,
  type ConversionConfig,
  type ConversionValues,
} from './conversion.js';
import type { AttrRule, AttrState, AttrValue } from './parse.js';

/** Where an attribute file comes from. */
export type AttrSourceKind = 'gitattributes' | 'info/attributes' | 'attributesFile' | 'system' | 'builtin';

/** The macro definitions in force: name → states of its highest-precedence definition. */
export type MacroTable = ReadonlyMap<string, readonly AttrState[]>;

/** determine_macros: `files` in precedence order (highest first); within a file the last definition wins. */
export function macroTable(files: ReadonlyArray<readonly AttrRule[]>): Map<string, readonly AttrState[]> {
  const t = new Map<string, readonly AttrState[]>();
  for (const rules of files) {
    for (let i = rules.length - 1; i >= 0; i--) {
      const r = rules[i];
      if (r.macro !== null && !t.has(r.macro)) t.set(r.macro, r.states);
    }
  }
  return t;
}

/** `fill_one` with `macroexpand_one`, over every attribute: `values` holds the attributes given a value so far (null: unspecified). */
export function fillAll(values: Map<string, AttrValue | null>, states: readonly AttrState[], macros: MacroTable): void {
  for (let i = states.length - 1; i >= 0; i--) {
    const s = states[i];
    if (values.has(s.name)) continue;
    values.set(s.name, s.value);
    if (s.value === true) {
      const def = macros.get(s.name);
      if (def) fillAll(values, def, macros);
    }
  }
}

/** One state of a line, kept for the conversion question: the slot it fills. */
export interface Op {
  readonly slot: number;
  readonly value: AttrValue | null;
}

/**
 * The slots of the conversion question: 0..5 the conversion attributes (CONVERSION_ATTRIBUTES
 * order), then every macro whose expansion can reach one of them.
 */
export class Plan {
  readonly slots = new Map<string, number>();
  /** Per slot: the ops of its macro definition (null: no macro, or one that reaches nothing). */
  readonly macroOps: Array<readonly Op[] | null> = [];
  readonly macros: MacroTable;
  readonly config: ConversionConfig;
  /** core.autocrlf converts a file no attribute speaks of. */
  readonly baseConverts: boolean;

  constructor(macros: MacroTable, config: ConversionConfig) {
    this.macros = macros;
    this.config = config;
    this.baseConverts = configConverts(config);
    for (const a of CONVERSION_ATTRIBUTES) this.slots.set(a, this.slots.size);
    // the closure: a macro is relevant when its definition names a relevant attribute
    for (let changed = true; changed;) {
      changed = false;
      for (const [name, states] of macros) {
        if (this.slots.has(name)) continue;
        if (states.some((s) => this.slots.has(s.name))) {
          this.slots.set(name, this.slots.size);
          changed = true;
        }
      }
    }
    for (let i = 0; i < this.slots.size; i++) this.macroOps.push(null);
    for (const [name, slot] of this.slots) {
      const def = macros.get(name);
      if (def) this.macroOps[slot] = this.opsOf(def);
    }
  }

  /** The states of a line that matter here, as ops (null: none). */
  opsOf(states: readonly AttrState[]): Op[] | null {
    let ops: Op[] | null = null;
    for (const s of states) {
      const slot = this.slots.get(s.name);
      if (slot !== undefined) (ops ??= []).push({ slot, value: s.value });
    }
    return ops;
  }

  /** fill_one over the slots (undefined: no value yet). */
  fill(slots: Array<AttrValue | null | undefined>, ops: readonly Op[]): void {
    for (let i = ops.length - 1; i >= 0; i--) {
      const op = ops[i];
      if (slots[op.slot] !== undefined) continue;
      slots[op.slot] = op.value;
      if (op.value === true) {
        const m = this.macroOps[op.slot];
        if (m !== null) this.fill(slots, m);
      }
    }
  }

  /** The answer for filled slots. */
  answer(slots: ReadonlyArray<AttrValue | null | undefined>): boolean {
    return mayDiffer(slots[0], slots[1], slots[2], slots[3], slots[4], slots[5], this.config);
  }

  conversion(slots: ReadonlyArray<AttrValue | null | undefined>): Conversion {
    const v: ConversionValues = {};
    CONVERSION_ATTRIBUTES.forEach((a, i) => (v[a] = slots[i]));
    return conversionOf(v, this.config);
  }
}

/** A pattern line of an attribute file, compiled. */
export interface CompiledRule {
  readonly rule: AttrRule;
  /** How its pattern matches a file; undefined: it never matches one (a directory-only pattern, or one git can never match). */
  readonly m: Matcher | undefined;
  /** Its states that matter for the conversion question (null: none). */
  readonly ops: readonly Op[] | null;
}

/** One attribute file, compiled. */
export class AttrFile {
  /** Where it comes from: an absolute path, `index:<path>` for an index blob, or `[builtin]`. */
  readonly source: string;
  readonly kind: AttrSourceKind;
  /** The worktree-relative directory its patterns are relative to ('' for the root and the files outside the worktree). */
  readonly base: string;
  /** Its pattern lines, in file order. */
  readonly rules: readonly CompiledRule[];
  /** Its macro definitions, in file order. */
  readonly macros: readonly AttrRule[];
  /** Number of rules with ops. */
  readonly relevant: number;
  /**
   * The conversion question cannot be answered from this file: it could not be read (and the
   * caller chose to go on), or a pattern that sets a conversion attribute could not be
   * compiled. Every file it applies to answers "may differ".
   */
  readonly poisoned: boolean;

  constructor(
    source: string,
    kind: AttrSourceKind,
    base: string,
    parsed: readonly AttrRule[],
    plan: Plan,
    ignoreCase: boolean,
    warn: (m: string) => void,
    poisoned = false,
  ) {
    this.source = source;
    this.kind = kind;
    this.base = base;
    const rules: CompiledRule[] = [];
    const macros: AttrRule[] = [];
    let relevant = 0;
    for (const r of parsed) {
      if (r.macro !== null) {
        macros.push(r);
        continue;
      }
      const p = r.pattern!;
      const ops = plan.opsOf(r.states);
      // a pattern ending in '/' matches only a path given with a trailing slash: never a file
      let m: Matcher | null | undefined = p.mustBeDir ? undefined : compileMatcher(p, ignoreCase);
      if (m === null) {
        warn(`${source}:${r.line}: pattern needs too many globstar expansions; it is not used`);
        if (ops) poisoned = true;
        m = undefined;
      }
      if (m === undefined) continue;
      if (ops) relevant++;
      rules.push({ rule: r, m, ops });
    }
    this.rules = rules;
    this.macros = macros;
    this.relevant = relevant;
    this.poisoned = poisoned;
  }
}

/** An attribute file as it applies to one directory: `prefix` is that directory below file.base, a matchKey with a trailing '/' ('' at the base). */
export interface ChainEntry {
  readonly file: AttrFile;
  readonly prefix: string;
}

/**
 * Every attribute of the entry `name` (a matchKey) of a directory whose files, in precedence
 * order, are `chain`: git check-attr's answer. null values are `!name` (unspecified).
 */
export function collectAll(
  chain: readonly ChainEntry[],
  name: string,
  macros: MacroTable,
  ignoreCase: boolean,
): Map<string, AttrValue | null> {
  const values = new Map<string, AttrValue | null>();
  for (const { file, prefix } of chain) {
    const rules = file.rules;
    for (let i = rules.length - 1; i >= 0; i--) {
      const r = rules[i];
      if (r.m !== undefined && matcherMatches(r.m, name, prefix + name, false, ignoreCase)) fillAll(values, r.rule.states, macros);
    }
  }
  return values;
}

/** A line of a view: its ops and how it matches an entry of the view's directory. */
interface ViewRule {
  readonly ops: readonly Op[];
  readonly test: EntryMatcher;
  /** For a path pattern: the directory below its file's base (what the package is given before the name). */
  readonly prefix: string;
}

const NO_HITS = new Int32Array(0);
const CACHE_MAX = 4096;

/**
 * The conversion question for the entries of one directory: the lines (of every file in force
 * there) that can set a conversion attribute and can match an entry here, in git's visiting
 * order. `uniform` is the answer for every entry when it does not depend on the name.
 */
export class View {
  readonly plan: Plan;
  readonly ignoreCase: boolean;
  /** Every entry gets this answer (undefined: ask per name). */
  readonly uniform: boolean | undefined;
  /** Nothing in it depends on the directory (only basename patterns): the same view serves every directory with the same files. */
  readonly independent: boolean;
  /** A file in force here could not be read or compiled: every entry may differ. */
  readonly poisoned: boolean;
  private readonly rules: readonly ViewRule[];
  /** Lines matching every name (`*`). */
  private readonly always: Int32Array;
  /** Lines by the exact (folded) name they match. */
  private readonly names: Map<string, number[]> | null;
  /** `*.ext` lines by extension (folded). */
  private readonly exts: Map<string, number[]> | null;
  /** Lines needing a test per name. */
  private readonly others: Int32Array;
  /**
   * With no line needing a test per name, the lines a name matches follow from its extension,
   * or from the name itself when a line names it: answers are cached by that key (up to
   * CACHE_MAX of them).
   */
  private readonly cache: Map<string, boolean> | null;
  private readonly hits: Int32Array;
  private readonly slots: Array<AttrValue | null | undefined>;

  constructor(plan: Plan, chain: readonly ChainEntry[], ignoreCase: boolean) {
    this.plan = plan;
    this.ignoreCase = ignoreCase;
    const rules: ViewRule[] = [];
    let poisoned = false;
    let independent = true;
    for (const { file, prefix } of chain) {
      if (file.poisoned) poisoned = true;
      if (file.relevant === 0) continue;
      const pf = ignoreCase ? prefix.toLowerCase() : prefix;
      for (let i = file.rules.length - 1; i >= 0; i--) {
        const r = file.rules[i];
        if (r.ops === null || r.m === undefined) continue;
        if (r.m.kind === 'path' || (r.m.kind === 'wild' && !r.m.basename)) independent = false;
        const test = matcherHere(r.m, pf);
        if (test !== null) rules.push({ ops: r.ops, test, prefix });
      }
    }
    this.rules = rules;
    this.independent = independent;
    this.poisoned = poisoned;
    const always: number[] = [];
    const others: number[] = [];
    let names: Map<string, number[]> | null = null;
    let exts: Map<string, number[]> | null = null;
    rules.forEach((r, i) => {
      const t = r.test;
      if (t.kind === 'name') push((names ??= new Map()), t.key, i);
      else if (isAlways(t)) always.push(i);
      else if (t.kind === 'suffix' && t.key.length > 1 && t.key[0] === '.' && t.key.indexOf('.', 1) < 0 && t.key.indexOf('/') < 0)
        push((exts ??= new Map()), t.key.slice(1), i);
      else others.push(i);
    });
    this.always = Int32Array.from(always);
    this.others = Int32Array.from(others);
    this.names = names;
    this.exts = exts;
    this.hits = new Int32Array(rules.length);
    this.slots = new Array(plan.slots.size).fill(undefined);
    if (poisoned) this.uniform = true;
    else if (rules.length === 0) this.uniform = plan.baseConverts;
    else this.uniform = this.constantAnswer();
    this.cache = this.uniform === undefined && others.length === 0 ? new Map() : null;
  }

  /**
   * The answer when it cannot depend on the name, else undefined. The lines matching every
   * name (`*`) that come first in visiting order give their values for sure; every other line
   * may or may not match, so each conversion attribute still without a value ends up with one
   * of the values those lines (or the macros they set) can give it, or none. When every such
   * combination gives the same answer, that is the answer (`* -text` over `*.png binary`: no).
   */
  private constantAnswer(): boolean | undefined {
    const plan = this.plan;
    const slots = this.slots;
    slots.fill(undefined);
    let k = 0;
    while (k < this.rules.length && isAlways(this.rules[k].test)) plan.fill(slots, this.rules[k++].ops);
    if (k === this.rules.length) return plan.answer(slots);
    const n = CONVERSION_ATTRIBUTES.length;
    const choices: Array<Array<AttrValue | null | undefined>> = [];
    for (let i = 0; i < n; i++) choices.push(slots[i] !== undefined ? [slots[i]] : [undefined]);
    const seen = new Set<number>();
    const collect = (ops: readonly Op[]): void => {
      for (const op of ops) {
        if (op.slot < n) {
          const c = choices[op.slot];
          if (slots[op.slot] === undefined && !c.includes(op.value)) c.push(op.value);
        }
        const m = plan.macroOps[op.slot];
        if (op.value === true && m !== null && !seen.has(op.slot)) {
          seen.add(op.slot);
          collect(m);
        }
      }
    };
    for (; k < this.rules.length; k++) collect(this.rules[k].ops);
    let combos = 1;
    for (const c of choices) combos *= c.length;
    if (combos > 512) return undefined;
    const pick: Array<AttrValue | null | undefined> = new Array(n);
    let first: boolean | undefined;
    const go = (i: number): boolean => {
      if (i === n) {
        const a = plan.answer(pick);
        if (first === undefined) first = a;
        return a === first;
      }
      for (const v of choices[i]) {
        pick[i] = v;
        if (!go(i + 1)) return false;
      }
      return true;
    };
    return go(0) ? first : undefined;
  }

  /** May the entry `name` (a path string, not a key) be converted? */
  mayConvert(name: string): boolean {
    if (this.uniform !== undefined) return this.uniform;
    return this.evaluateName(name, false) as boolean;
  }

  /** The conversion of the entry `name`, in full. */
  conversion(name: string): Conversion {
    const c = this.evaluateName(name, true) as Conversion;
    if (this.poisoned) {
      c.reasons.push('unknown');
      c.mayDiffer = true;
    }
    return c;
  }

  private evaluateName(name: string, full: boolean): boolean | Conversion {
    const key = matchKey(name);
    const f = this.ignoreCase ? key.toLowerCase() : key;
    let ext: string | null = null;
    if (this.exts !== null) {
      const dot = f.lastIndexOf('.');
      ext = dot < 0 ? null : f.slice(dot + 1);
    }
    const cache = full ? null : this.cache;
    let cacheKey = '';
    if (cache !== null) {
      cacheKey = this.names !== null && this.names.has(f) ? '\u0000' + f : (ext ?? '/');
      const known = cache.get(cacheKey);
      if (known !== undefined) return known;
    }
    const hits = this.hits;
    let n = 0;
    let sources = 0;
    const always = this.always;
    for (let i = 0; i < always.length; i++) hits[n++] = always[i];
    if (always.length) sources++;
    if (this.names !== null) {
      const l = this.names.get(f);
      if (l !== undefined) {
        for (let i = 0; i < l.length; i++) hits[n++] = l[i];
        sources++;
      }
    }
    if (ext !== null) {
      const l = (this.exts as Map<string, number[]>).get(ext);
      if (l !== undefined) {
        for (let i = 0; i < l.length; i++) hits[n++] = l[i];
        sources++;
      }
    }
    const others = this.others;
    if (others.length) {
      let any = false;
      for (let i = 0; i < others.length; i++) {
        const r = this.rules[others[i]];
        if (this.test(r, key, f)) {
          hits[n++] = others[i];
          any = true;
        }
      }
      if (any) sources++;
    }
    if (sources > 1) {
      // insertion sort: a handful of line numbers
      for (let i = 1; i < n; i++) {
        const v = hits[i];
        let j = i - 1;
        while (j >= 0 && hits[j] > v) {
          hits[j + 1] = hits[j];
          j--;
        }
        hits[j + 1] = v;
      }
    }
    if (full) {
      this.fillHits(n === 0 ? NO_HITS : hits, n);
      return this.plan.conversion(this.slots);
    }
    const answer = this.evaluate(hits, n);
    if (cache !== null && cache.size < CACHE_MAX) cache.set(cacheKey, answer);
    return answer;
  }

  private test(r: ViewRule, key: string, folded: string): boolean {
    const t = r.test;
    if (t.kind === 'name') return folded === t.key;
    if (t.kind === 'suffix') return folded.endsWith(t.key);
    if (!folded.startsWith(t.head) || !folded.endsWith(t.tail)) return false;
    return wildInstance(t.m, this.ignoreCase).test(t.basename ? key : r.prefix + key).unignored;
  }

  private fillHits(hits: Int32Array, n: number): void {
    const slots = this.slots;
    slots.fill(undefined);
    for (let k = 0; k < n; k++) this.plan.fill(slots, this.rules[hits[k]].ops);
  }

  private evaluate(hits: Int32Array, n: number): boolean {
    this.fillHits(hits, n);
    return this.plan.answer(this.slots);
  }
}

/** `*`: matches every name. */
function isAlways(t: EntryMatcher): boolean {
  return t.kind === 'suffix' && t.key === '';
}

function push(m: Map<string, number[]>, k: string, v: number): void {
  const l = m.get(k);
  if (l) l.push(v);
  else m.set(k, [v]);
}
