/**
 * The install commands' edits of the harnesses' configuration files, on random files: any
 * layout a person keeps (comments, odd indentation, CRLF, one line or many, trailing commas
 * where the reader takes them, TOML with multi-line strings and arrays that hold lines looking
 * like tables) → the result parses as the harness reads it, holds our entries, keeps every byte
 * of the original (the edit only inserts, or only appends), and an uninstall gives back the
 * original bytes.
 *
 * The one layout whose bytes an uninstall cannot give back, so the files here do not have it: an
 * empty `hooks`, event array or `mcpServers` that held nothing before the install is removed with
 * our entries, as one the install created would be (nothing outside the file records which it
 * was); the harness reads the same either way.
 */
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { findNodeAtLocation, getNodePath, parse as parseJsonc, type ParseError } from 'jsonc-parser';
import { parse as parseTomlText } from 'smol-toml';
import { HARNESS_SPECS, hookCommand, planInstall, type InstallableHarness } from '../src/hooks/install.js';
import { MCP_SPECS, planMcpInstall, type McpServerCommand } from '../src/hooks/install-mcp.js';
import { applyEdits, detectLayout, insertEdit, parseJsonTree, removeEdits, valueOf, type JsonNode } from '../src/hooks/config-files.js';
import { prng } from '../test/helpers/prng.js';

type R = () => number;
const pick = <T>(r: R, xs: readonly T[]): T => xs[Math.floor(r() * xs.length)];
const some = <T>(r: R, xs: readonly T[], max: number): T[] => xs.filter(() => r() < max / xs.length);

/** Whether `a` is `b` with characters taken out (every byte of `a` is in `b`, in order). */
function isSubsequence(a: string, b: string): boolean {
  let i = 0;
  for (let j = 0; j < b.length && i < a.length; j++) if (a[i] === b[j]) i++;
  return i === a.length;
}
const bareLf = (s: string) => s.replace(/\r\n/g, '').split('\n').length - 1;

// ---------------------------------------------------------------------------------------------
// JSON(C) text in random layouts

type J = null | boolean | number | string | J[] | { [k: string]: J };

interface Style {
  nl: string;
  unit: string;
  comments: boolean;
  trailingCommas: boolean;
}

const KEYS = ['a', 'b', 'model', 'env', 'x y', 'ünï', 'q"uote', 'back\\slash', 'theme', 'permissions', 'n1'];

function randomValue(r: R, depth: number): J {
  switch (Math.floor(r() * (depth > 0 ? 7 : 5))) {
    case 0:
      return pick(r, [null, true, false]);
    case 1:
      return pick(r, [0, -1, 42, 3.5, 1e21, -0.25]);
    case 2:
    case 3:
      return pick(r, ['', 'x', 'a "q" b', 'tab\tnl\n', '{ [ , ] }', '// not a comment', '/* nor this */', 'é😀']);
    case 4:
      return [];
    case 5:
      return Array.from({ length: Math.floor(r() * 4) }, () => randomValue(r, depth - 1));
    default:
      return Object.fromEntries(some(r, KEYS, 3).map((k) => [k, randomValue(r, depth - 1)]));
  }
}

/** `v` as text: each container on one line or one item per line, with comments and trailing commas when the style has them. */
function show(v: J, r: R, s: Style, indent: string): string {
  if (v === null || typeof v !== 'object') return JSON.stringify(v);
  const entries: Array<[string | undefined, J]> = Array.isArray(v) ? v.map((x) => [undefined, x]) : Object.entries(v);
  const [open, close] = Array.isArray(v) ? ['[', ']'] : ['{', '}'];
  const child = indent + s.unit;
  const chance = (p: number) => s.comments && r() < p;
  if (entries.length === 0) {
    if (!s.comments || r() < 0.5) return open + close;
    return pick(r, [
      `${open} /* empty */ ${close}`,
      `${open}/**/${close}`,
      `${open} // empty${s.nl}${indent}${close}`,
      `${open}${s.nl}${child}// inside${s.nl}${indent}${close}`,
    ]);
  }
  const multi = r() < 0.6;
  let out = open;
  entries.forEach(([k, x], i) => {
    if (multi) {
      if (chance(0.2)) out += ` // line ${i}`;
      out += s.nl + child;
    } else out += i === 0 ? pick(r, ['', ' ']) : pick(r, [' ', '']);
    if (chance(0.15)) out += '/* before */ ';
    if (k !== undefined) out += JSON.stringify(k) + pick(r, [':', ': ', ' : ', ':\t']);
    out += show(x, r, s, child);
    if (chance(0.15)) out += ' /* after */';
    if (i < entries.length - 1) out += ',';
  });
  if (s.trailingCommas && r() < 0.4) out += ',';
  if (multi) {
    if (chance(0.2)) out += ' // last';
    out += s.nl + indent;
  } else out += pick(r, ['', ' ']);
  return out + close;
}

function randomStyle(r: R, comments: boolean, trailingCommas = false): Style {
  return { nl: pick(r, ['\n', '\r\n']), unit: pick(r, ['  ', '    ', '\t', '   ', ' ', '\t\t']), comments, trailingCommas };
}

function document(root: J, r: R, s: Style): string {
  const lead = pick(r, ['', ' ', s.nl, ...(s.comments ? [`// settings${s.nl}`, '/* head */ '] : [])]);
  const tail = pick(r, ['', s.nl, `  ${s.nl}`, ...(s.comments ? [`${s.nl}// tail`, ` /* end */${s.nl}`] : [])]);
  return lead + show(root, r, s, '') + tail;
}

function parseAs(text: string, comments: boolean, trailingCommas = false): unknown {
  const errors: ParseError[] = [];
  const v = parseJsonc(text, errors, { disallowComments: !comments, allowTrailingComma: trailingCommas, allowEmptyContent: false });
  expect(errors).toEqual([]);
  return v;
}

const OTHER_EVENTS = ['Notification', 'PreCompact', 'Other'];

/** A settings file a person keeps: other keys, maybe `hooks` with other tools' groups in our events and others. */
function randomSettings(r: R, harness: InstallableHarness): J {
  const doc = Object.fromEntries(some(r, KEYS, 3).map((k) => [k, randomValue(r, 2)])) as { [k: string]: J };
  const ourEvents = HARNESS_SPECS[harness].events.map((e) => e.event);
  if (r() < 0.75) {
    const events = some(r, [...ourEvents, ...OTHER_EVENTS], 4);
    if (events.length === 0) events.push(pick(r, OTHER_EVENTS));
    const hooks: { [k: string]: J } = {};
    for (const e of events) {
      // an empty array of ours would be removed with our group (see above)
      const min = ourEvents.includes(e) ? 1 : 0;
      hooks[e] = Array.from({ length: min + Math.floor(r() * (3 - min)) }, (_, g) => ({
        ...(r() < 0.5 ? { matcher: pick(r, ['Bash', 'read_file', 'Edit|Write']) } : {}),
        hooks: Array.from({ length: 1 + Math.floor(r() * 2) }, (_, h) => ({ type: 'command', command: `other-tool ${e} ${g} ${h}` })),
      }));
    }
    if (harness === 'gemini' && r() < 0.3) hooks.disabled = ['secret-scanner'];
    doc.hooks = hooks;
  }
  return doc;
}

const withoutKey = (v: unknown, key: string) => Object.fromEntries(Object.entries(v as Record<string, unknown>).filter(([k]) => k !== key));

describe('install on random settings files', () => {
  it('hooks: the result parses and holds our hooks; the original bytes are all there, and come back on uninstall', () => {
    fc.assert(
      fc.property(fc.integer(), fc.constantFrom<InstallableHarness>('claude-code', 'codex', 'gemini'), (seed, harness) => {
        const r = prng(seed);
        const spec = HARNESS_SPECS[harness];
        const style = randomStyle(r, spec.comments);
        const text = document(randomSettings(r, harness), r, style);
        const command = hookCommand(harness, 'git-scalpel');
        const plan = planInstall(text, { harness, command, file: 'settings.json' });
        expect(plan.action).toBe('installed');
        const out = plan.text!;
        // as the harness reads it
        const before = parseAs(text, spec.comments) as Record<string, unknown>;
        const after = parseAs(out, spec.comments) as Record<string, unknown>;
        if (!spec.comments) JSON.parse(out);
        // our group appended to each event, everything else as it was
        const hooksBefore = (before.hooks ?? {}) as Record<string, unknown[]>;
        const hooksAfter = after.hooks as Record<string, unknown[]>;
        for (const e of spec.events) {
          const groups = hooksAfter[e.event];
          expect(groups.slice(0, -1)).toEqual(hooksBefore[e.event] ?? []);
          expect(groups[groups.length - 1]).toEqual({
            ...(e.matcher !== undefined ? { matcher: e.matcher } : {}),
            hooks: [spec.handler(command)],
          });
        }
        const ourEvents = spec.events.map((e) => e.event);
        expect(Object.fromEntries(Object.entries(hooksAfter).filter(([k]) => !ourEvents.includes(k)))).toEqual(
          Object.fromEntries(Object.entries(hooksBefore).filter(([k]) => !ourEvents.includes(k))),
        );
        expect(withoutKey(after, 'hooks')).toEqual(withoutKey(before, 'hooks'));
        // only inserted, in the file's line endings
        expect(isSubsequence(text, out)).toBe(true);
        if (text.includes('\r\n')) expect(bareLf(out)).toBe(bareLf(text));
        // again: nothing to do
        expect(planInstall(out, { harness, command })).toMatchObject({ action: 'already-installed', text: out });
        // uninstall: the original bytes (no file when it held only an empty object)
        const original = /^\s*\{\s*\}\s*$/.test(text) ? null : text;
        expect(planInstall(out, { harness, command, uninstall: true }).text).toBe(original);
        // the binary moved: replaced, and still removed to the original
        const moved = planInstall(out, { harness, command: hookCommand(harness, "node '/old place/git-scalpel.cjs'") });
        expect(moved.action).toBe('installed');
        expect(planInstall(moved.text, { harness, command, uninstall: true }).text).toBe(original);
      }),
      { numRuns: Number(process.env.CFG_RUNS ?? 300) },
    );
  });

  it('MCP in JSON: the same for mcpServers', () => {
    const server: McpServerCommand = { command: 'git-scalpel', args: ['mcp'] };
    fc.assert(
      fc.property(fc.integer(), fc.constantFrom<InstallableHarness>('claude-code', 'gemini'), (seed, harness) => {
        const r = prng(seed);
        const comments = HARNESS_SPECS[harness].comments;
        const doc = Object.fromEntries(some(r, KEYS, 3).map((k) => [k, randomValue(r, 2)])) as { [k: string]: J };
        if (r() < 0.7)
          doc.mcpServers = Object.fromEntries(
            some(r, ['files', 'db'], 1)
              .concat('github')
              .map((k) => [k, { command: k, args: ['-y'] }]),
          );
        const text = document(doc, r, randomStyle(r, comments));
        const plan = planMcpInstall(text, { harness, server });
        expect(plan.action).toBe('installed');
        const before = parseAs(text, comments) as Record<string, unknown>;
        const after = parseAs(plan.text!, comments) as Record<string, Record<string, unknown>>;
        expect(after.mcpServers['git-scalpel']).toEqual(MCP_SPECS[harness].entry(server));
        expect(withoutKey(after.mcpServers, 'git-scalpel')).toEqual(before.mcpServers ?? {});
        expect(withoutKey(after, 'mcpServers')).toEqual(withoutKey(before, 'mcpServers'));
        expect(isSubsequence(text, plan.text!)).toBe(true);
        expect(planMcpInstall(plan.text, { harness, server })).toMatchObject({ action: 'already-installed', text: plan.text });
        expect(planMcpInstall(plan.text, { harness, server, uninstall: true }).text).toBe(/^\s*\{\s*\}\s*$/.test(text) ? null : text);
      }),
      { numRuns: Number(process.env.CFG_RUNS ?? 200) },
    );
  });

  it('the editor on JSONC with trailing commas: an item appended to any container, then removed, gives the bytes back', () => {
    fc.assert(
      fc.property(fc.integer(), fc.integer({ min: 1, max: 2 }), (seed, count) => {
        const r = prng(seed);
        const style = randomStyle(r, true, true);
        const root =
          r() < 0.5
            ? Array.from({ length: Math.floor(r() * 4) }, () => randomValue(r, 3))
            : Object.fromEntries(some(r, KEYS, 4).map((k) => [k, randomValue(r, 3)]));
        const text = document(root, r, style);
        const dialect = { comments: true, trailingCommas: true };
        const tree = parseJsonTree(text, dialect);
        if (!tree.root) throw new Error(`the generator wrote no JSONC: ${tree.problem.message}`);
        const containers: JsonNode[] = [];
        const walk = (n: JsonNode) => {
          if (n.type === 'object' || n.type === 'array') containers.push(n);
          for (const c of n.children ?? []) walk(c);
        };
        walk(tree.root);
        const target = pick(r, containers);
        const path = getNodePath(target);
        const before = valueOf(target);
        const added = Array.from({ length: count }, (_, k) => ({
          ...(target.type === 'object' ? { key: `new key ${k}` } : {}),
          value: k === 0 ? { nested: [1, { deep: true }] } : 'added',
        }));
        const out = applyEdits(text, [insertEdit(text, target, added, detectLayout(text, tree.root))]);
        const after = parseJsonTree(out, dialect);
        if (!after.root) throw new Error(`${after.problem.message}: ${JSON.stringify(out)}`);
        const grown = findNodeAtLocation(after.root, path)!;
        const n = (target.children ?? []).length;
        if (target.type === 'array') expect(valueOf(grown)).toEqual([...(before as unknown[]), ...added.map((a) => a.value)]);
        else expect(valueOf(grown)).toEqual({ ...(before as object), ...Object.fromEntries(added.map((a) => [a.key, a.value])) });
        expect(isSubsequence(text, out)).toBe(true);
        const drop = new Set(added.map((_, k) => n + k));
        expect(applyEdits(out, removeEdits(out, grown, drop))).toBe(text);
      }),
      { numRuns: Number(process.env.CFG_RUNS ?? 400) },
    );
  });
});

// ---------------------------------------------------------------------------------------------
// config.toml

const TOML_VALUES = [
  '"x"',
  "'literal \\ path'",
  '42',
  'true',
  '1979-05-27T07:32:00Z',
  '[1, 2, 3]',
  '{ a = 1, b = "two" }',
  '[\n  "a",   # first\n  "b",\n]',
  '"""\n[mcp_servers.git-scalpel]\ncommand = "not ours"\n"""',
  "'''\n[[x]]\n# looks like a comment'''",
  '"""\nmulti\n# last line"""',
  '[\n  ["nested"],\n  [ "arrays" ],\n]',
];
const TABLES = [
  'profiles.fast',
  'model_providers.local',
  'mcp_servers.docs',
  'mcp_servers."other one"',
  'features',
  'projects."/home/u/p"',
  'tui',
];

/** A config.toml as people keep it (null when the pieces drawn do not make valid TOML). */
function randomToml(r: R, withOurs: boolean): string | null {
  const nl = pick(r, ['\n', '\r\n']);
  const keyvals = (n: number, prefix = '') =>
    Array.from({ length: n }, (_, k) => `${prefix}k${k} = ${pick(r, TOML_VALUES)}${pick(r, ['', '  # note'])}`.replace(/\n/g, nl));
  const blocks: string[] = [];
  if (r() < 0.5) blocks.push(pick(r, ['# Codex config', '# a comment\n# two lines']).replace(/\n/g, nl));
  blocks.push(...keyvals(Math.floor(r() * 3)));
  if (r() < 0.2) blocks.push('mcp_servers.dotted.command = "d"');
  const tables = some(r, TABLES, 3);
  const oursAt = withOurs ? Math.floor(r() * (tables.length + 1)) : -1;
  tables.forEach((t, i) => {
    if (i === oursAt) blocks.push(ours(r, nl));
    blocks.push(
      [
        `[${t}]${pick(r, ['', ' # table'])}`,
        ...keyvals(Math.floor(r() * 3)),
        ...(r() < 0.3 ? ['# trailing comment'] : []),
        ...(r() < 0.3 ? [''] : []),
      ].join(nl),
    );
  });
  if (oursAt === tables.length) blocks.push(ours(r, nl));
  if (r() < 0.2) blocks.push(`[[array.tables]]${nl}name = "one"${nl}${nl}[[array.tables]]${nl}name = "two"`);
  const text = blocks.join(pick(r, [nl, nl + nl])) + pick(r, ['', nl, nl + nl]);
  try {
    parseTomlText(text);
    return text;
  } catch {
    return null;
  }
}

/** Our table as a person may have edited it: other keys, a comment, a sub-table. */
function ours(r: R, nl: string): string {
  const lines = [
    pick(r, ['[mcp_servers.git-scalpel]', '[mcp_servers."git-scalpel"]', "[ mcp_servers . 'git-scalpel' ]"]),
    "command = 'git-scalpel'",
    'args = [ "mcp" ]  # ours',
  ];
  if (r() < 0.5) lines.push('tool_timeout_sec = 300');
  if (r() < 0.3) lines.push('', '[mcp_servers.git-scalpel.env]', 'X = "1"');
  return lines.join(nl);
}

const withoutOurs = (doc: Record<string, unknown>) => {
  const servers = { ...((doc.mcp_servers ?? {}) as Record<string, unknown>) };
  delete servers['git-scalpel'];
  const rest = withoutKey(doc, 'mcp_servers');
  return Object.keys(servers).length ? { ...rest, mcp_servers: servers } : rest;
};

describe('install --mcp on random config.toml files', () => {
  const server: McpServerCommand = { command: 'node', args: ["/it's here/git-scalpel.cjs", 'mcp'] };

  it('appended: parses, holds our server, everything else as it was; uninstall gives the bytes back', () => {
    fc.assert(
      fc.property(fc.integer(), (seed) => {
        const text = randomToml(prng(seed), false);
        fc.pre(text !== null);
        const plan = planMcpInstall(text, { harness: 'codex', server });
        expect(plan.action).toBe('installed');
        const out = plan.text!;
        expect(out.startsWith(text!)).toBe(true);
        if (text!.includes('\r\n')) expect(bareLf(out)).toBe(bareLf(text!));
        const doc = parseTomlText(out) as Record<string, Record<string, unknown>>;
        expect(doc.mcp_servers['git-scalpel']).toEqual(server);
        expect(withoutOurs(doc)).toEqual(withoutOurs(parseTomlText(text!)));
        expect(planMcpInstall(out, { harness: 'codex', server })).toMatchObject({ action: 'already-installed', text: out });
        expect(planMcpInstall(out, { harness: 'codex', server, uninstall: true }).text).toBe(text === '' ? null : text);
      }),
      { numRuns: Number(process.env.CFG_RUNS ?? 300) },
    );
  });

  it('a table of ours anywhere (other keys, a sub-table): recognised, and removed alone', () => {
    fc.assert(
      fc.property(fc.integer(), (seed) => {
        const text = randomToml(prng(seed), true);
        fc.pre(text !== null);
        const before = parseTomlText(text!);
        expect(planMcpInstall(text, { harness: 'codex', server: { command: 'git-scalpel', args: ['mcp'] } }).action).toBe(
          'already-installed',
        );
        const back = planMcpInstall(text, { harness: 'codex', server, uninstall: true });
        expect(back.action).toBe('uninstalled');
        const rest = back.text ?? '';
        // only taken out: every other byte in order
        expect(isSubsequence(rest, text!)).toBe(true);
        expect(withoutOurs(parseTomlText(rest))).toEqual(withoutOurs(before));
        expect((parseTomlText(rest).mcp_servers as Record<string, unknown> | undefined)?.['git-scalpel']).toBeUndefined();
        // replaced by another command: one table, the rest as it was
        const moved = planMcpInstall(text, { harness: 'codex', server });
        expect(moved).toMatchObject({ action: 'installed', replaced: true });
        const doc = parseTomlText(moved.text!) as Record<string, Record<string, unknown>>;
        expect(doc.mcp_servers['git-scalpel']).toEqual(server);
        expect(withoutOurs(doc)).toEqual(withoutOurs(before));
      }),
      { numRuns: Number(process.env.CFG_RUNS ?? 300) },
    );
  });
});
