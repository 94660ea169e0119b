/**
 * A trial of the randomized differential tester is a trace: which agent sessions there are (and
 * which harness form each speaks), then a list of concrete steps. Every step is plain data, so a
 * trace prints as a few lines of TypeScript (the DSL below), replays exactly, and shrinks by
 * dropping steps: each step tolerates the absence of what earlier steps would have made (a
 * command on a missing file fails, a call outside a turn is skipped, a rewind of a turn that is
 * not there is skipped).
 *
 *   const t = trace([A], [
 *     setup.file('a.txt', 'one\n'), setup.sh('git add -A && git commit -qm base'),
 *     A.start(), A.shell('sed -i "1s/^/agent /" a.txt'), A.end(),
 *     person.append('a.txt', 'mine\n'),
 *     rewind('A'),
 *   ]);
 */

export type Form = 'generic' | 'claude' | 'gemini';

export interface SessionSpec {
  /** the tester's name for the agent: 'A', 'B' */
  name: string;
  form: Form;
  /** generic form only: send toolUseId (Claude Code always does, Gemini CLI never) */
  ids?: boolean;
}

export type Who = 'setup' | 'person';

export interface WriteCall {
  tool: 'write';
  path: string;
  /** create/overwrite: the file's new text; edit: replace `old` by `text`; delete: remove the file */
  op: 'write' | 'edit' | 'delete';
  text?: string;
  old?: string;
  /** the harness reports the call failed (whatever the write did) */
  fail?: boolean;
}

export interface ShellCall {
  tool: 'shell';
  cmd: string;
}

export type Call = WriteCall | ShellCall;

export type Step =
  | { k: 'file'; who: Who; path: string; text: string; exec?: boolean }
  | { k: 'bin'; who: Who; path: string; hex: string }
  | { k: 'append'; who: Who; path: string; text: string }
  | { k: 'rm'; who: Who; path: string }
  | { k: 'link'; who: Who; path: string; target: string }
  | { k: 'chmod'; who: Who; path: string; exec: boolean }
  | { k: 'sh'; who: Who; cmd: string }
  | { k: 'start'; s: string; label?: string }
  | { k: 'end'; s: string }
  /** one tool call, or several in parallel (every before event, every tool, every after event in `afterOrder`) */
  | { k: 'call'; s: string; calls: Call[]; afterOrder?: number[]; denied?: boolean }
  /**
   * `rewind` (no session: the worktree's newest turn), or `rewind --session S N`, N the tester's
   * count of the session's live turns. `kill`: the first run is killed (-9) the moment
   * `.git/index.lock` appears, then the same rewind runs again and is judged. `paths`: only
   * those paths are taken back (`rewind --session S N -- PATH...`), the turns keep the rest.
   */
  | { k: 'rewind'; s?: string; turn?: number; force?: boolean; kill?: boolean; paths?: string[] }
  /** `rewind --undo`: restores what the newest rewind replaced */
  | { k: 'undo' };

export interface Trace {
  sessions: SessionSpec[];
  steps: Step[];
}

// ---------------------------------------------------------------- the DSL regression tests use

function ops(who: Who) {
  return {
    file: (path: string, text: string, exec?: boolean): Step => ({ k: 'file', who, path, text, ...(exec ? { exec } : {}) }),
    bin: (path: string, hex: string): Step => ({ k: 'bin', who, path, hex }),
    append: (path: string, text: string): Step => ({ k: 'append', who, path, text }),
    rm: (path: string): Step => ({ k: 'rm', who, path }),
    link: (path: string, target: string): Step => ({ k: 'link', who, path, target }),
    chmod: (path: string, exec: boolean): Step => ({ k: 'chmod', who, path, exec }),
    sh: (cmd: string): Step => ({ k: 'sh', who, cmd }),
  };
}

export const setup = ops('setup');
export const person = ops('person');

export const write = (path: string, text: string, opts: { fail?: boolean } = {}): WriteCall => ({
  tool: 'write',
  path,
  op: 'write',
  text,
  ...opts,
});
export const edit = (path: string, old: string, text: string, opts: { fail?: boolean } = {}): WriteCall => ({
  tool: 'write',
  path,
  op: 'edit',
  old,
  text,
  ...opts,
});
export const del = (path: string, opts: { fail?: boolean } = {}): WriteCall => ({ tool: 'write', path, op: 'delete', ...opts });
export const shell = (cmd: string): ShellCall => ({ tool: 'shell', cmd });

export function agent(name: string, form: Form = 'generic', ids = true) {
  const spec: SessionSpec = form === 'generic' ? { name, form, ids } : { name, form };
  return {
    spec,
    start: (label?: string): Step => ({ k: 'start', s: name, ...(label ? { label } : {}) }),
    end: (): Step => ({ k: 'end', s: name }),
    write: (path: string, text: string, opts: { fail?: boolean } = {}): Step => ({ k: 'call', s: name, calls: [write(path, text, opts)] }),
    edit: (path: string, old: string, text: string, opts: { fail?: boolean } = {}): Step => ({
      k: 'call',
      s: name,
      calls: [edit(path, old, text, opts)],
    }),
    del: (path: string, opts: { fail?: boolean } = {}): Step => ({ k: 'call', s: name, calls: [del(path, opts)] }),
    shell: (cmd: string): Step => ({ k: 'call', s: name, calls: [shell(cmd)] }),
    /** a call the person denied at the permission prompt: its before event only */
    denied: (call: Call): Step => ({ k: 'call', s: name, calls: [call], denied: true }),
    parallel: (calls: Call[], afterOrder?: number[]): Step => ({ k: 'call', s: name, calls, ...(afterOrder ? { afterOrder } : {}) }),
  };
}

export function rewind(s?: string, turn?: number, opts: { force?: boolean; kill?: boolean; paths?: string[] } = {}): Step {
  return {
    k: 'rewind',
    ...(s !== undefined ? { s } : {}),
    ...(turn !== undefined ? { turn } : {}),
    ...(opts.force ? { force: true } : {}),
    ...(opts.kill ? { kill: true } : {}),
    ...(opts.paths?.length ? { paths: opts.paths } : {}),
  };
}

export const undo = (): Step => ({ k: 'undo' });

export function trace(agents: Array<{ spec: SessionSpec }>, steps: Step[]): Trace {
  return { sessions: agents.map((a) => a.spec), steps };
}

// ---------------------------------------------------------------- printing a trace as that DSL

const q = (s: string) => JSON.stringify(s).replace(/\\u0000/g, '\\0');

function callText(c: Call): string {
  if (c.tool === 'shell') return `shell(${q(c.cmd)})`;
  const f = c.fail ? ', { fail: true }' : '';
  if (c.op === 'write') return `write(${q(c.path)}, ${q(c.text ?? '')}${f})`;
  if (c.op === 'edit') return `edit(${q(c.path)}, ${q(c.old ?? '')}, ${q(c.text ?? '')}${f})`;
  return `del(${q(c.path)}${f})`;
}

export function stepText(s: Step): string {
  switch (s.k) {
    case 'file':
      return `${s.who}.file(${q(s.path)}, ${q(s.text)}${s.exec ? ', true' : ''})`;
    case 'bin':
      return `${s.who}.bin(${q(s.path)}, ${q(s.hex)})`;
    case 'append':
      return `${s.who}.append(${q(s.path)}, ${q(s.text)})`;
    case 'rm':
      return `${s.who}.rm(${q(s.path)})`;
    case 'link':
      return `${s.who}.link(${q(s.path)}, ${q(s.target)})`;
    case 'chmod':
      return `${s.who}.chmod(${q(s.path)}, ${s.exec})`;
    case 'sh':
      return `${s.who}.sh(${q(s.cmd)})`;
    case 'start':
      return `${s.s}.start(${s.label ? q(s.label) : ''})`;
    case 'end':
      return `${s.s}.end()`;
    case 'call': {
      if (s.denied) return `${s.s}.denied(${callText(s.calls[0])})`;
      if (s.calls.length === 1) {
        const c = s.calls[0];
        const t = callText(c);
        return `${s.s}.${t}`;
      }
      return `${s.s}.parallel([${s.calls.map(callText).join(', ')}]${s.afterOrder ? `, [${s.afterOrder.join(', ')}]` : ''})`;
    }
    case 'rewind': {
      const args: string[] = [];
      const flags = [
        s.force ? 'force: true' : '',
        s.kill ? 'kill: true' : '',
        s.paths ? `paths: [${s.paths.map(q).join(', ')}]` : '',
      ].filter(Boolean);
      if (s.s !== undefined || s.turn !== undefined || flags.length) args.push(s.s !== undefined ? q(s.s) : 'undefined');
      if (s.turn !== undefined || flags.length) args.push(s.turn !== undefined ? String(s.turn) : 'undefined');
      if (flags.length) args.push(`{ ${flags.join(', ')} }`);
      while (args.length && args[args.length - 1] === 'undefined') args.pop();
      return `rewind(${args.join(', ')})`;
    }
    case 'undo':
      return 'undo()';
  }
}

export function sessionText(s: SessionSpec): string {
  const extra = s.form === 'generic' ? (s.ids === false ? `, 'generic', false` : '') : `, '${s.form}'`;
  return `const ${s.name} = agent('${s.name}'${extra});`;
}

/** The trace as code: paste it into regressions.test.ts. */
export function traceText(t: Trace): string {
  return [
    ...t.sessions.map(sessionText),
    `check(trace([${t.sessions.map((s) => s.name).join(', ')}], [`,
    ...t.steps.map((s) => `  ${stepText(s)},`),
    ']));',
  ].join('\n');
}

/**
 * A trace from text: the JSON a failing run saves, or the DSL a failure prints (the lines from
 * `const A = agent(...)` to `]));`), evaluated with this module's functions in scope.
 */
export function parseTrace(text: string): Trace {
  const t = text.trim();
  if (t.startsWith('{')) return JSON.parse(t) as Trace;
  const body = t.replace(/^check(Strict)?\(/m, 'return (');
  const dsl = { agent, setup, person, write, edit, del, shell, rewind, undo, trace };
  const fn = new Function(...Object.keys(dsl), body) as (...a: unknown[]) => Trace;
  return fn(...Object.values(dsl));
}
