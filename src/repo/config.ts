import { ScalpelError } from '../errors/index.js';
import { utf8Decode } from '../bytes/text.js';

/**
 * A git config file (config.c syntax): `[section]`, `[section "subsection"]`, legacy
 * `[section.subsection]`, `key = value`, bare `key` (boolean true), quotes, backslash escapes,
 * line continuations, `#`/`;` comments. Section and key names compare case-insensitively,
 * subsections case-sensitively. The last value wins, as in git. `include` is not followed.
 */
export class GitConfig {
  private readonly values: Array<{ section: string; subsection: string | null; key: string; value: string | null }>;

  constructor(values: Array<{ section: string; subsection: string | null; key: string; value: string | null }> = []) {
    this.values = values;
  }

  static parse(text: string | Uint8Array, source = 'config'): GitConfig {
    return new GitConfig(parseConfig(typeof text === 'string' ? text : utf8Decode(text), source));
  }

  /** Every value with its name, in file order, as one string: equal for configs that say the same. */
  fingerprint(): string {
    return JSON.stringify(this.values);
  }

  /** All values of a key, in file order (null for a bare key). */
  getAll(name: string): Array<string | null> {
    const { section, subsection, key } = splitName(name);
    return this.values.filter((v) => v.section === section && v.subsection === subsection && v.key === key).map((v) => v.value);
  }

  get(name: string): string | null | undefined {
    const all = this.getAll(name);
    return all.length ? all[all.length - 1] : undefined;
  }

  getString(name: string): string | undefined {
    const v = this.get(name);
    return v === null ? '' : v;
  }

  /** git's boolean rules: bare key, true/yes/on/1 or any non-zero number → true; false/no/off/0/"" → false. */
  getBool(name: string, fallback: boolean): boolean {
    const v = this.get(name);
    if (v === undefined) return fallback;
    if (v === null) return true;
    const s = v.toLowerCase();
    if (s === 'true' || s === 'yes' || s === 'on') return true;
    if (s === 'false' || s === 'no' || s === 'off' || s === '') return false;
    const n = parseIntValue(s);
    if (n !== undefined) return n !== 0;
    throw new ScalpelError('BAD_ARGUMENT', `bad boolean config value '${v}' for '${name}'`, { name, value: v });
  }

  getInt(name: string, fallback: number): number {
    const v = this.get(name);
    if (v === undefined) return fallback;
    const n = v === null ? undefined : parseIntValue(v.toLowerCase());
    if (n === undefined)
      throw new ScalpelError('BAD_ARGUMENT', `bad numeric config value '${String(v)}' for '${name}'`, { name, value: v });
    return n;
  }
}

function parseIntValue(s: string): number | undefined {
  const m = /^([-+]?\d+)([kmg]?)$/.exec(s.trim());
  if (!m) return undefined;
  const mult = m[2] === 'k' ? 1024 : m[2] === 'm' ? 1024 ** 2 : m[2] === 'g' ? 1024 ** 3 : 1;
  return parseInt(m[1], 10) * mult;
}

function splitName(name: string): { section: string; subsection: string | null; key: string } {
  const first = name.indexOf('.');
  const last = name.lastIndexOf('.');
  if (first < 0 || (first === last && first === name.length - 1)) {
    throw new ScalpelError('BAD_ARGUMENT', `config key needs a section: ${name}`, { name });
  }
  return {
    section: name.slice(0, first).toLowerCase(),
    subsection: first === last ? null : name.slice(first + 1, last),
    key: name.slice(last + 1).toLowerCase(),
  };
}

function parseConfig(text: string, source: string) {
  const out: Array<{ section: string; subsection: string | null; key: string; value: string | null }> = [];
  let i = 0;
  let line = 1;
  let section: string | null = null;
  let subsection: string | null = null;
  const n = text.length;
  const fail = (reason: string) =>
    new ScalpelError('BAD_ARGUMENT', `${source}: bad config line ${line}: ${reason}`, { name: source, line, reason });
  if (text.charCodeAt(0) === 0xfeff) i = 1;
  while (i < n) {
    const c = text[i];
    if (c === '\n') {
      line++;
      i++;
      continue;
    }
    if (c === ' ' || c === '\t' || c === '\r') {
      i++;
      continue;
    }
    if (c === '#' || c === ';') {
      while (i < n && text[i] !== '\n') i++;
      continue;
    }
    if (c === '[') {
      i++;
      let name = '';
      while (i < n && /[A-Za-z0-9.-]/.test(text[i])) name += text[i++];
      subsection = null;
      if (text[i] === ' ' || text[i] === '\t') {
        while (text[i] === ' ' || text[i] === '\t') i++;
        if (text[i] !== '"') throw fail('expected a quoted subsection');
        i++;
        let sub = '';
        while (i < n && text[i] !== '"') {
          if (text[i] === '\n') throw fail('newline in subsection');
          if (text[i] === '\\' && i + 1 < n) i++;
          sub += text[i++];
        }
        if (text[i] !== '"') throw fail('unterminated subsection');
        i++;
        subsection = sub;
      } else if (name.includes('.')) {
        // legacy [section.subsection]: subsection is lowercased
        const dot = name.indexOf('.');
        subsection = name.slice(dot + 1).toLowerCase();
        name = name.slice(0, dot);
      }
      if (text[i] !== ']') throw fail('expected ]');
      i++;
      if (!name) throw fail('empty section name');
      section = name.toLowerCase();
      continue;
    }
    if (/[A-Za-z]/.test(c)) {
      if (section === null) throw fail('key outside a section');
      let key = '';
      while (i < n && /[A-Za-z0-9-]/.test(text[i])) key += text[i++];
      while (text[i] === ' ' || text[i] === '\t') i++;
      if (i >= n || text[i] === '\n' || text[i] === '\r' || text[i] === '#' || text[i] === ';') {
        out.push({ section, subsection, key: key.toLowerCase(), value: null });
        continue;
      }
      if (text[i] !== '=') throw fail(`expected = after ${key}`);
      i++;
      // value: quotes toggle, escapes, continuation, comments end it; trailing space trimmed
      let value = '';
      let quoted = false;
      let pendingSpace = '';
      while (i < n) {
        const ch = text[i];
        if (ch === '\n') {
          if (quoted) throw fail('newline in quoted value');
          break;
        }
        if (!quoted && (ch === '#' || ch === ';')) {
          while (i < n && text[i] !== '\n') i++;
          break;
        }
        if (ch === '\\') {
          const nx = text[i + 1];
          if (nx === '\n') {
            i += 2;
            line++;
            continue;
          }
          if (nx === '\r' && text[i + 2] === '\n') {
            i += 3;
            line++;
            continue;
          }
          const map: Record<string, string> = { n: '\n', t: '\t', b: '\b', '\\': '\\', '"': '"' };
          if (nx === undefined || !(nx in map)) throw fail('bad escape in value');
          value += pendingSpace + map[nx];
          pendingSpace = '';
          i += 2;
          continue;
        }
        if (ch === '"') {
          quoted = !quoted;
          value += pendingSpace;
          pendingSpace = '';
          i++;
          continue;
        }
        if (!quoted && (ch === ' ' || ch === '\t' || ch === '\r')) {
          if (value.length > 0) pendingSpace += ch === '\r' ? '' : ch;
          i++;
          continue;
        }
        value += pendingSpace + ch;
        pendingSpace = '';
        i++;
      }
      if (quoted) throw fail('unterminated quote');
      out.push({ section, subsection, key: key.toLowerCase(), value });
      continue;
    }
    throw fail(`unexpected character ${JSON.stringify(c)}`);
  }
  return out;
}
