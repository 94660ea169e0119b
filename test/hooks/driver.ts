/**
 * An agent's turns driven in-process through handleHookEvent, with git-scalpel's generic events
 * (what every harness adapter turns its payloads into): the test performs each tool's effect
 * itself, between the before-event and the after-event, as the harness would run the tool.
 *
 *   const a = agent(dir, 'agent-a');
 *   await a.prompt('fix it');
 *   await a.write(['src/x.ts'], () => w(dir, 'src/x.ts', 'new\n'));
 *   await a.shell('git add -A');
 *   await a.stop();
 *
 * `id: false` sends no tool-use id (Gemini CLI, the generic form without one): calls are then
 * paired by tool, input and order.
 */
import { execSync } from 'node:child_process';
import { expect } from 'vitest';
import { handleHookEvent, type HookOutcome } from '../../src/hooks/handle.js';
import type { HookEvent } from '../../src/hooks/events.js';
import { nodeFs } from '../../src/node.js';
import { gitEnv } from '../helpers/git.js';

export interface CallOptions {
  /** Send a tool-use id (default true). */
  id?: boolean;
  /** The after-event's outcome (default 'ok'). */
  outcome?: 'ok' | 'failed';
}

export function agent(dir: string, session = 'agent', env?: { HOME?: string; XDG_CONFIG_HOME?: string }) {
  let n = 0;
  const send = (e: HookEvent): Promise<HookOutcome> => handleHookEvent(e, { fs: nodeFs(), env });
  const ok = async (e: HookEvent) => {
    const r = await send(e);
    expect(r, JSON.stringify(e)).toMatchObject({ ok: true });
    return r;
  };
  const ids = (o: CallOptions) => (o.id === false ? {} : { toolUseId: `${session}-call-${++n}` });
  const sh = (command: string) => execSync(command, { cwd: dir, env: gitEnv(), stdio: 'pipe', shell: '/bin/sh' });
  return {
    send,
    prompt: (label: string) => ok({ kind: 'turn-start', session, cwd: dir, label }),
    stop: () => ok({ kind: 'turn-end', session, cwd: dir, final: true }),
    /** Before-write, then `run` (the tool's effect), then after-tool. */
    async write(paths: string[], run: () => void, o: CallOptions = {}) {
      const id = ids(o);
      await ok({ kind: 'before-write', session, cwd: dir, paths, tool: 'write', ...id });
      run();
      return ok({ kind: 'after-tool', session, cwd: dir, tool: 'write', outcome: o.outcome ?? 'ok', paths, ...id });
    },
    /** A write the person denied (or that never ran): its before-event only, nothing written. */
    async deniedWrite(paths: string[], o: CallOptions = {}) {
      return ok({ kind: 'before-write', session, cwd: dir, paths, tool: 'write', ...ids(o) });
    },
    /** Before-shell, the real command through /bin/sh, after-tool. */
    async shell(command: string, o: CallOptions = {}) {
      const id = ids(o);
      await ok({ kind: 'before-shell', session, cwd: dir, command, tool: 'bash', ...id });
      let outcome: 'ok' | 'failed' = 'ok';
      try {
        sh(command);
      } catch {
        outcome = 'failed';
      }
      return ok({ kind: 'after-tool', session, cwd: dir, tool: 'bash', outcome, command, ...id });
    },
    /** Several shell commands in parallel, as Gemini CLI runs them: every before-event, the commands, then the after-events (in `afterOrder`). */
    async parallelShells(commands: string[], o: CallOptions & { afterOrder?: number[] } = {}) {
      const calls = commands.map((command) => ({ command, id: ids(o) }));
      for (const c of calls) await ok({ kind: 'before-shell', session, cwd: dir, command: c.command, tool: 'bash', ...c.id });
      for (const c of calls) sh(c.command);
      for (const k of o.afterOrder ?? calls.map((_, i) => i)) {
        const c = calls[k];
        await ok({ kind: 'after-tool', session, cwd: dir, tool: 'bash', outcome: 'ok', command: c.command, ...c.id });
      }
    },
    sh,
  };
}
