// git-scalpel demo: an agent's failed edit undone exactly, in a repository where a person has
// uncommitted work. The repository is built by git-scalpel itself (objects, commit, index) in a
// scratch directory: no git binary is needed. When git is on PATH, its own view is shown too.
// Run with `npm run demo`.
import { mkdtempSync, mkdirSync, writeFileSync, readFileSync, rmSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawnSync } from 'node:child_process';
import { nodeFs, encodeTree, encodeCommit, formatIdentity, encodeIndex, IndexEntry, compareEntries } from '../dist/node.js';
import { Repository } from '../dist/internal.js';
import { runCli } from '../dist/cli/main.js';
import { commandText } from '../dist/cli/hints.js';
import { bold, useColour } from '../dist/cli/colour.js';

const enc = new TextEncoder();
const dir = mkdtempSync(join(tmpdir(), 'scalpel-demo-'));
// bold headings on a terminal only, and never with NO_COLOR set (the command line's rule, src/cli/colour.ts)
const colour = useColour({ isTTY: process.stdout.isTTY, env: process.env });
const say = (t) => console.log(`\n${bold(t, colour)}`);
const haveGit = spawnSync('git', ['--version']).status === 0;

/** Run the command line in-process as the binary runs it, and show it as a command a shell takes back (arguments quoted). */
async function cli(args) {
  let out = '';
  let err = '';
  const code = await runCli(args, { fs: nodeFs(), cwd: dir, out: (t) => (out += t), err: (t) => (err += t) });
  console.log(`$ ${commandText('git-scalpel', args)}`);
  const indent = (t) => (t ? t.replace(/\n$/, '').replace(/^/gm, '  ') + '\n' : '');
  process.stdout.write(indent(out));
  process.stderr.write(indent(err));
  console.log(`  (exit ${code})`);
  return code;
}

function status(title) {
  if (!haveGit) return;
  const p = spawnSync('git', ['-c', 'core.quotePath=false', 'status', '--short', '--untracked-files=all', '--ignored'], {
    cwd: dir,
    encoding: 'utf8',
    env: { ...process.env, GIT_OPTIONAL_LOCKS: '0' },
  });
  console.log(`  git status --short (${title}):`);
  process.stdout.write(p.stdout.replace(/\n$/, '').replace(/^/gm, '    ') + '\n');
}

function snapshotOfFiles(paths) {
  return Object.fromEntries(paths.map((p) => [p, existsSync(join(dir, p)) ? readFileSync(join(dir, p), 'utf8') : null]));
}

try {
  // ── a small project, committed, built without git ───────────────────────────────────────────
  const files = {
    '.gitignore': '.env\n',
    'README.md': '# demo\n\nA tiny project.\n',
    'src/app.ts': 'export function greet(name: string) {\n  return `hello ${name}`;\n}\n',
    'src/util.ts': 'export const twice = (n: number) => n * 2;\n',
  };
  mkdirSync(join(dir, '.git/objects'), { recursive: true });
  mkdirSync(join(dir, '.git/refs/heads'), { recursive: true });
  writeFileSync(join(dir, '.git/HEAD'), 'ref: refs/heads/main\n');
  writeFileSync(join(dir, '.git/config'), '[core]\n\trepositoryformatversion = 0\n\tfilemode = true\n\tbare = false\n');
  for (const [p, c] of Object.entries(files)) {
    mkdirSync(join(dir, p, '..'), { recursive: true });
    writeFileSync(join(dir, p), c);
  }
  const repo = await Repository.open({ fs: nodeFs(), dir });
  const blobs = {};
  for (const [p, c] of Object.entries(files)) blobs[p] = await repo.odb.write('blob', enc.encode(c));
  const srcTree = await repo.odb.write(
    'tree',
    encodeTree([
      { mode: 0o100644, name: enc.encode('app.ts'), oid: blobs['src/app.ts'] },
      { mode: 0o100644, name: enc.encode('util.ts'), oid: blobs['src/util.ts'] },
    ]),
  );
  const root = await repo.odb.write(
    'tree',
    encodeTree([
      { mode: 0o100644, name: enc.encode('.gitignore'), oid: blobs['.gitignore'] },
      { mode: 0o100644, name: enc.encode('README.md'), oid: blobs['README.md'] },
      { mode: 0o040000, name: enc.encode('src'), oid: srcTree },
    ]),
  );
  const who = formatIdentity({ name: 'Demo', email: 'demo@example.com', timestamp: 1700000000 });
  const commit = await repo.odb.write('commit', encodeCommit({ tree: root, author: who, committer: who, message: 'initial\n' }));
  await repo.refs.update('refs/heads/main', commit, null);
  const entries = [];
  for (const p of Object.keys(files)) {
    const st = await repo.fs.lstat(join(dir, p));
    entries.push(new IndexEntry({ path: p, oid: blobs[p], mode: 0o100644, stat: { ...st, mode: undefined } }));
  }
  writeFileSync(
    join(dir, '.git/index'),
    encodeIndex({ version: 2, objectFormat: 'sha1', entries: entries.sort(compareEntries), extensions: [], skipHash: false }),
  );

  // ── the person's work in progress ──────────────────────────────────────────────────────────
  say('1. A person is in the middle of work: an unstaged edit, a staged change, an untracked note, an ignored .env');
  writeFileSync(join(dir, 'README.md'), '# demo\n\nA tiny project, being documented.\n');
  writeFileSync(join(dir, 'notes.txt'), 'todo: ask about greet()\n');
  writeFileSync(join(dir, '.env'), 'API_KEY=person-secret\n');
  const staged = 'export function greet(name: string) {\n  return `hello, ${name}!`;\n}\n';
  const stagedOid = await repo.odb.write('blob', enc.encode(staged));
  writeFileSync(join(dir, 'src/app.ts'), staged + '// unstaged thought of the person\n');
  const idx = (await repo.readIndex()).index;
  idx.entries = idx.entries.map((e) => (e.path === 'src/app.ts' ? e.with({ oid: stagedOid, stat: { size: 0 } }) : e));
  writeFileSync(join(dir, '.git/index'), encodeIndex(idx));
  status("the person's state");
  const personState = snapshotOfFiles(['src/app.ts', 'README.md', 'notes.txt', '.env']);

  // ── an agent turn ──────────────────────────────────────────────────────────────────────────
  say('2. An agent declares what it will edit, and git-scalpel captures exactly that');
  // as an agent's file tools declare them: the files, not the directories a new one needs
  await cli(['snapshot', '--label', 'agent turn 1', 'src/app.ts', 'src/generated/api/client.ts', '.env']);

  say('3. The agent rewrites src/app.ts, stages it, writes src/generated/api/client.ts (mkdir -p), overwrites .env — and the tests fail');
  writeFileSync(join(dir, 'src/app.ts'), 'export const greet = undefined; // broken\n');
  mkdirSync(join(dir, 'src/generated/api'), { recursive: true });
  writeFileSync(join(dir, 'src/generated/api/client.ts'), 'export {};\n');
  writeFileSync(join(dir, '.env'), 'API_KEY=agent-overwrote-this\n');
  const blob = await repo.odb.write('blob', enc.encode('export const greet = undefined; // broken\n'));
  const idx2 = (await repo.readIndex()).index;
  idx2.entries = idx2.entries.map((e) => (e.path === 'src/app.ts' ? e.with({ oid: blob, stat: { size: 0 } }) : e));
  writeFileSync(join(dir, '.git/index'), encodeIndex(idx2));
  status('after the agent');

  say(
    "4. Undo exactly the declared paths: worktree bytes and index entries, the directories the edit made removed; the person's other work is untouched",
  );
  await cli(['restore']);
  status('restored');
  const after = snapshotOfFiles(['src/app.ts', 'README.md', 'notes.txt', '.env']);
  const same = JSON.stringify(after) === JSON.stringify(personState) && !existsSync(join(dir, 'src/generated'));
  const staged2 = (await repo.readIndex()).index.entries.find((e) => e.path === 'src/app.ts').oid === stagedOid;
  console.log(`  person's files identical: ${same}; staged src/app.ts still staged: ${staged2}`);

  // ── a third party writes while an edit is sealed ───────────────────────────────────────────
  say('5. Another turn, sealed when the agent finishes; then the person edits README.md in the same scope');
  await cli(['snapshot', '--label', 'agent turn 2', 'README.md']);
  writeFileSync(join(dir, 'README.md'), '# demo\n\nagent text\n');
  await cli(['seal']);
  writeFileSync(join(dir, 'README.md'), '# demo\n\nthe person typed this after the agent finished\n');
  say("6. A restore now would destroy the person's new text: git-scalpel refuses and writes nothing");
  const refused = await cli(['restore']);
  say("7. Forced anyway, then undone: the forced restore saved the person's text, and a plain restore brings it back");
  await cli(['restore', '--force']);
  await cli(['restore']);
  const back = readFileSync(join(dir, 'README.md'), 'utf8').includes('the person typed this');
  console.log(`  the person's text is back: ${back}`);
  await cli(['log']);
  process.exitCode = same && staged2 && refused === 3 && back ? 0 : 1;
  console.log(process.exitCode === 0 ? '\ndemo: every check passed' : '\ndemo: A CHECK FAILED');
} finally {
  rmSync(dir, { recursive: true, force: true });
}
