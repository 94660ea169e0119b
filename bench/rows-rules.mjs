/**
 * What each rule of issue 19 costs (group `rules`): the same operation with the rule's work and
 * without it, side by side, in the 100,000-entry repository. The ratio is the rule's price.
 *
 * - shell baseline after the index changed (the tree naming every object of the index is written,
 *   so a `git gc --prune=now` inside the command cannot take a person's staged blob), against the
 *   same baseline with the index unchanged since the last one (that tree's id is reused);
 * - snapshot of 3 files under `* text=auto` (a stat-clean file is read where an eol conversion may
 *   apply), against the same 3 files with no attribute file;
 * - shell baseline under `* text=auto` (every tracked file read: the rule's worst case), against
 *   the same baseline with no attribute file;
 * - a rewind (what it replaces saved first and sealed after, for `rewind --undo`), against a
 *   restore of the same turn (no save);
 * - a hook's PostToolUse of a Write (the call's capture joins the turn, its path is sealed), a
 *   process, against `node -e 0`.
 */
import fs from 'node:fs';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import { openRepository } from 'git-scalpel';
import { edit, git, privateCopy, spreadPaths } from './rows-engine.mjs';
import { checkHook, hook } from './rows-hooks.mjs';

const SESSION_ID = '00000000-bench-4000-8000-rules0000000';

const common = (dir, event) => ({
  session_id: SESSION_ID,
  transcript_path: `/tmp/${SESSION_ID}.jsonl`,
  cwd: dir,
  permission_mode: 'default',
  hook_event_name: event,
});

/** Two private copies of the 100k repository: one plain, one with a root `* text=auto` (untracked: it applies all the same). */
function groups(ctx, log) {
  let made = null;
  return () => {
    if (made) return made;
    const plain = privateCopy(ctx.repo, 'rules-plain-100k', log);
    const attr = privateCopy(ctx.repo, 'rules-attr-100k', log);
    fs.writeFileSync(path.join(attr.dir, '.gitattributes'), '* text=auto\n');
    log(`  rules: plain and text=auto copies ready (${((plain.ms + attr.ms) / 1000).toFixed(1)} s)`);
    made = (async () => {
      const mk = async (dir) => ({ dir, paths: spreadPaths(dir, [0.01, 0.5, 0.99]), repo: await openRepository({ fs, dir }) });
      return { plain: await mk(plain.dir), attr: await mk(attr.dir) };
    })();
    return made;
  };
}

export function ruleRows(ctx, { log = (s) => console.log(s) } = {}) {
  const get = groups(ctx, log);
  let g = null;
  const setup = async () => {
    g = await get();
  };
  let n = 0;
  const bashPre = (dir) => ({
    ...common(dir, 'PreToolUse'),
    tool_name: 'Bash',
    tool_input: { command: 'npm test' },
    tool_use_id: `toolu_rules_${++n}`,
  });
  const bashPost = (pre) => ({ ...pre, hook_event_name: 'PostToolUse', tool_response: { stdout: '', stderr: '', interrupted: false } });
  // the baseline just taken is finished untimed (its PostToolUse), so the next starts from a settled turn
  const pending = new Map();
  const shellPre = (dir) => {
    const e = bashPre(dir);
    pending.set(dir, e);
    return hook(dir, e);
  };
  const settle = (dir) => {
    const e = pending.get(dir);
    if (e) checkHook(hook(dir, bashPost(e)));
    pending.delete(dir);
  };
  const openTurn = (dir) => checkHook(hook(dir, { ...common(dir, 'UserPromptSubmit'), prompt: 'bench rules' }));
  const touchIndex = (dir) => {
    // a new index checksum: one entry's stat data refreshed after a touch
    const f = spreadPaths(dir, [0.3])[0];
    const t = new Date(Date.now() - 10_000 + (n % 1000));
    fs.utimesSync(path.join(dir, f), t, t);
    git(dir, ['update-index', '-q', '--refresh']);
  };
  const ratioNote = (what) => ({ group: 'rules', target: undefined, note: `info: ${what}` });
  /**
   * A row timing a shell pre-capture (a hook process) in group `ours` against one in group `peer`:
   * a turn opened in each group first, every baseline finished untimed after.
   */
  const shellPreRow = ({ note, ours, peer, ...rest }) => {
    const dirs = () => [...new Set([ours, peer])].map((k) => g[k].dir);
    return {
      ...ratioNote(note),
      setup: async () => {
        await setup();
        for (const dir of dirs()) openTurn(dir);
      },
      ours: () => shellPre(g[ours].dir),
      peer: () => shellPre(g[peer].dir),
      check: { ours: checkHook, peer: checkHook },
      after: () => {
        for (const dir of dirs()) settle(dir);
      },
      ...rest,
    };
  };

  return [
    shellPreRow({
      note: "the price of keeping a shell baseline gc-safe: the tree of the index's ~100,000 objects, written when the index changed",
      name: 'shell pre-capture after the index changed (writes the tree of its objects), 100,000 entries (process)',
      peerName: 'the same, index unchanged since the last one (that tree reused)',
      ours: 'plain',
      peer: 'plain',
      prepare: {
        ours: () => {
          settle(g.plain.dir);
          touchIndex(g.plain.dir);
        },
        peer: () => settle(g.plain.dir),
      },
      runs: 9,
      warmup: 2,
    }),
    {
      ...ratioNote('the price of reading a stat-clean file where an eol conversion may apply (3 files)'),
      name: 'snapshot 3 paths under `* text=auto` (read, not taken from the index)',
      peerName: 'snapshot of the same 3 paths, no attribute file',
      setup,
      prepare: {
        ours: async () => {
          await g.attr.repo.drop({ all: true, session: 'bench-rules' });
          git(g.attr.dir, ['update-index', '-q', '--refresh']);
        },
        peer: async () => {
          await g.plain.repo.drop({ all: true, session: 'bench-rules' });
          git(g.plain.dir, ['update-index', '-q', '--refresh']);
        },
      },
      ours: () => g.attr.repo.snapshot(g.attr.paths, { session: 'bench-rules' }),
      peer: () => g.plain.repo.snapshot(g.plain.paths, { session: 'bench-rules' }),
    },
    shellPreRow({
      note: "the rule's worst case: every tracked file of the tree read for a shell baseline",
      name: 'shell pre-capture under `* text=auto`, clean 100,000-file tree (process)',
      peerName: 'the same with no attribute file',
      ours: 'attr',
      peer: 'plain',
      prepare: { ours: () => settle(g.attr.dir), peer: () => settle(g.plain.dir) },
      runs: 5,
      warmup: 1,
    }),
    {
      ...ratioNote('the price of `rewind --undo`: what a rewind replaces, saved first and sealed after'),
      name: 'rewind a turn of 3 files, 100,000 entries',
      peerName: 'restore of the same turn (nothing saved)',
      setup,
      prepare: {
        ours: async () => prepareTurn(g.plain),
        peer: async () => prepareTurn(g.plain),
      },
      ours: () => g.plain.repo.rewind({ session: 'bench-turns' }),
      peer: () => g.plain.repo.restore({ session: 'bench-turns' }),
    },
    {
      group: 'rules',
      name: 'hook PostToolUse of a Write (its capture joins the turn, its path sealed), 100,000 entries (process)',
      peerName: '`node -e 0` (process)',
      setup: async () => {
        await setup();
      },
      prepare: {
        ours: () => {
          openTurn(g.plain.dir);
          const pre = {
            ...common(g.plain.dir, 'PreToolUse'),
            tool_name: 'Write',
            tool_input: { file_path: path.join(g.plain.dir, g.plain.paths[n++ % 3]), content: 'x' },
            tool_use_id: `toolu_rules_w${n}`,
          };
          checkHook(hook(g.plain.dir, pre));
          edit(g.plain.dir, [g.plain.paths[(n - 1) % 3]]);
          return pre;
        },
      },
      ours: (pre) => hook(g.plain.dir, { ...pre, hook_event_name: 'PostToolUse', tool_response: { type: 'update' } }),
      peer: () => spawnSync(process.execPath, ['-e', '0']),
      check: { ours: checkHook },
      target: 1.5,
      runs: 9,
      warmup: 2,
    },
  ];
}

/** Untimed: a turn of the group's 3 paths (opened, captured, edited, ended), for a rewind or a restore to undo. */
async function prepareTurn(g) {
  const repo = g.repo;
  await repo.drop({ all: true, session: 'bench-turns' }).catch(() => undefined);
  await repo.openTurn({ session: 'bench-turns', label: 'bench' });
  await repo.snapshot(g.paths, { session: 'bench-turns', turn: true });
  edit(g.dir, g.paths);
  await repo.closeTurn({ session: 'bench-turns', final: true });
}
