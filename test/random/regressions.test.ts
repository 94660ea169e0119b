/**
 * Fixed sequences, judged by the randomized tester's oracle (run.ts): every data-loss case of
 * issue 19's table it reaches, and every shrunk failure it found. A case the engine still gets
 * wrong is `it.fails` (its row or bug named beside it), so the suite stays green; flip it to `it`
 * when the fix lands, and delete its gate in known.ts so the random runs generate it again.
 *
 * Each sequence prints as the tester prints a shrunk failure (trace.ts's DSL), so a new failure is
 * pasted here as it came.
 */
import { describe, expect, it } from 'vitest';
import { assertBuilt } from './cli.js';
import { GITIGNORE } from './gen.js';
import { runTrace } from './run.js';
import { agent, edit, person, rewind, setup, shell, trace, undo, write, type Trace, type Step } from './trace.js';

/** RANDOM_EXPLAIN=1: print what each sequence's oracle found (the reason an `it.fails` fails). */
function explain(o: ReturnType<typeof runTrace>): void {
  if (process.env.RANDOM_EXPLAIN !== '1') return;
  console.log((o as unknown as { log: string[] }).log.join('\n'));
  console.log(
    o.failures.length ? o.failures.map((f) => `step ${f.step}: ${f.kind}${f.soft ? ' (soft)' : ''}\n${f.text}`).join('\n\n') : 'no failure',
  );
}

/** The trace runs with no hard failure (an unjustified refusal is reported, not failed). */
function check(t: Trace): void {
  assertBuilt();
  const o = runTrace(t, { stopAtFirst: false });
  explain(o);
  expect(o.hard.map((f) => `step ${f.step}: ${f.kind}\n${f.text}`)).toEqual([]);
}

/** The trace runs with no failure at all, an unjustified refusal included. */
function checkStrict(t: Trace): void {
  assertBuilt();
  const o = runTrace(t, { stopAtFirst: false });
  explain(o);
  expect(o.failures.map((f) => `step ${f.step}: ${f.kind}\n${f.text}`)).toEqual([]);
}

/** A small committed repository: .gitignore, a.txt, b.txt, src/app.ts, src/lib/util.ts. */
const base = (...more: Step[]): Step[] => [
  setup.file('.gitignore', GITIGNORE),
  setup.file('a.txt', 'one\ntwo\nthree\n'),
  setup.file('b.txt', 'bee\n'),
  setup.file('src/app.ts', 'export const a = 1;\n'),
  setup.file('src/lib/util.ts', 'export const u = 2;\n'),
  ...more,
  setup.sh('git add -A && git commit -qm base'),
];

const A = agent('A');
const B = agent('B');
const G = agent('A', 'gemini');
const C = agent('A', 'claude');
const N = agent('A', 'generic', false);

// Each title names the bug the sequence once showed; every one now passes the oracle.
describe("issue 19's table, as fixed sequences", () => {
  it("row 1: a person's unstaged deletion, then a read-only shell command: turns lists it, rewind writes the file back", () => {
    check(trace([A], [...base(), person.rm('b.txt'), A.start(), A.shell('ls'), A.write('a.txt', 'agent\n'), A.end(), rewind('A')]));
  });

  it("row 1: a person's unstaged deletion, then the agent's git add -A: rewind writes the deleted file back", () => {
    check(trace([A], [...base(), person.rm('b.txt'), A.start(), A.shell('git add -A'), A.end(), rewind('A')]));
  });

  it('row 2: rm -rf src, then a Write of src/new.txt in the same turn: turn-end fails, src never comes back', () => {
    check(trace([A], [...base(), A.start(), A.shell('rm -rf src'), A.write('src/new.txt', 'new\n'), A.end(), rewind('A')]));
  });

  it("row 3: one command deletes a person's untracked file and runs git gc --prune=now: the file is gone for good", () => {
    check(
      trace(
        [A],
        [...base(), person.file('notes.txt', 'mine\n'), A.start(), A.shell('rm notes.txt && git gc -q --prune=now'), A.end(), rewind('A')],
      ),
    );
  });

  it('row 4: the person replaced a tracked file by a directory, then a shell command: after-tool fails, its change stays', () => {
    check(
      trace(
        [A],
        [...base(), person.rm('b.txt'), person.file('b.txt/inner.txt', 'inner\n'), A.start(), A.shell('git add -A'), A.end(), rewind('A')],
      ),
    );
  });

  it("row 5: Gemini (no call id): the person fixes a.txt between the agent's calls; rewind destroys the fix", () => {
    check(
      trace(
        [G],
        [
          ...base(),
          G.start(),
          G.write('a.txt', 'agent\n'),
          person.file('a.txt', 'person fix\n'),
          G.write('c.txt', 'c\n'),
          G.end(),
          rewind('A'),
        ],
      ),
    );
  });

  it("row 5: the generic form without toolUseId: the person fixes a.txt between the agent's calls; rewind destroys the fix", () => {
    check(
      trace(
        [N],
        [
          ...base(),
          N.start(),
          N.write('a.txt', 'agent\n'),
          person.file('a.txt', 'person fix\n'),
          N.write('c.txt', 'c\n'),
          N.end(),
          rewind('A'),
        ],
      ),
    );
  });

  it('row 6: Claude Code: the person denies an Edit at the permission prompt and makes the change by hand; rewind replaces the hand edit', () => {
    check(
      trace(
        [C],
        [
          ...base(),
          C.start(),
          C.denied(edit('a.txt', 'two', 'TWO')),
          person.file('a.txt', 'one\nTWO by hand\nthree\n'),
          C.write('c.txt', 'c\n'),
          C.end(),
          rewind('A'),
        ],
      ),
    );
  });

  it('row 7: turn 1 writes a, the person edits a, turn 2 writes a: rewind 1 exits 0 and destroys the edit', () => {
    check(
      trace(
        [A],
        [
          ...base(),
          A.start(),
          A.write('a.txt', 'turn 1\n'),
          A.end(),
          person.file('a.txt', 'person\n'),
          A.start(),
          A.write('a.txt', 'turn 2\n'),
          A.end(),
          rewind('A', 1),
        ],
      ),
    );
  });

  it('row 7: rewind, then rewind again: the second refuses at turn 1 (the person edited its path)', () => {
    check(
      trace(
        [A],
        [
          ...base(),
          A.start(),
          A.write('a.txt', 'turn 1\n'),
          A.end(),
          person.file('a.txt', 'person\n'),
          A.start(),
          A.write('a.txt', 'turn 2\n'),
          A.end(),
          rewind('A'),
          rewind('A'),
        ],
      ),
    );
  });

  it('row 8: eol=crlf files edited by a command: rewind writes LF where the person had CRLF', () => {
    check(
      trace(
        [A],
        [
          setup.file('.gitattributes', '*.txt eol=crlf\n'),
          setup.file('a.txt', 'one\r\ntwo\r\n'),
          setup.sh('git add -A && git commit -qm base'),
          A.start(),
          A.shell("sed -i 's/one/ONE/' a.txt"),
          A.end(),
          rewind('A'),
        ],
      ),
    );
  });

  it('row 8: core.autocrlf=true files edited by a command: rewind writes LF where the person had CRLF', () => {
    check(
      trace(
        [A],
        [
          setup.sh('git config core.autocrlf true'),
          setup.file('a.txt', 'one\r\ntwo\r\n'),
          setup.sh('git add -A && git commit -qm base'),
          A.start(),
          A.shell("sed -i 's/one/ONE/' a.txt"),
          A.end(),
          rewind('A'),
        ],
      ),
    );
  });

  it('row 9: a Write whose path is a symlink to a tracked file: the target changes, rewind leaves it changed', () => {
    check(trace([C], [...base(setup.link('link', 'a.txt')), C.start(), C.write('link', 'through the link\n'), C.end(), rewind('A')]));
  });

  it('row 10: the agent creates src/deep/, the person saves a note there, the agent runs git add -A: rewind deletes the note', () => {
    check(
      trace(
        [A],
        [
          ...base(),
          A.start(),
          A.write('src/deep/gen.ts', 'gen\n'),
          person.file('src/deep/note.md', 'mine\n'),
          A.shell('git add -A'),
          A.end(),
          rewind('A'),
        ],
      ),
    );
  });

  // row 11's window (between creating index.lock and writing its marker) is one writeFile call:
  // a kill from outside lands after the marker every time here, so this checks the recovery only
  it('row 11: a rewind killed (-9) the moment index.lock appears: running it again completes it', () => {
    check(
      trace(
        [A],
        [
          ...base(),
          person.append('b.txt', 'staged\n'),
          person.sh('git add b.txt'),
          A.start(),
          A.shell('git add -A'),
          A.write('a.txt', 'agent\n'),
          A.end(),
          rewind('A', 1, { kill: true }),
        ],
      ),
    );
  });

  it('row 12: rm -rf over a nested repository with uncommitted work: rewind exits 0 and does not name the loss', () => {
    check(
      trace(
        [A],
        [
          ...base(
            setup.sh(
              "mkdir -p vendor/lib && cd vendor/lib && git init -q && printf 'v1\\n' > v.txt && git add v.txt && git commit -qm v && printf 'wip\\n' >> v.txt",
            ),
          ),
          A.start(),
          A.shell('rm -rf vendor'),
          A.end(),
          rewind('A'),
        ],
      ),
    );
  });

  const remote = [
    setup.sh('git init -q --bare ../origin.git && git remote add origin ../origin.git && git push -q -u origin main 2>/dev/null'),
    setup.sh(
      "git clone -q ../origin.git ../other && cd ../other && printf 'o\\n' > other.txt && git add other.txt && git commit -qm other && git push -q origin main && cd ../repo && git fetch -q",
    ),
  ];

  it("row 13: the agent only pulled (a fast-forward to someone else's pushed commit): the rewind is refused as a push", () => {
    checkStrict(trace([A], [...base(), ...remote, A.start(), A.shell('git pull -q --ff-only'), A.end(), rewind('A')]));
  });

  it('row 13: the agent pushed a commit whose clock is behind the turn: the rewind is not refused', () => {
    check(
      trace(
        [A],
        [
          ...base(),
          remote[0],
          A.start(),
          A.shell("echo agent >> a.txt && GIT_COMMITTER_DATE='1500000000 +0000' git commit -qam old && git push -q origin HEAD"),
          A.end(),
          rewind('A'),
        ],
      ),
    );
  });

  it('row 13: the agent pushed a commit (a true clock): the rewind refuses', () => {
    check(
      trace(
        [A],
        [
          ...base(),
          remote[0],
          A.start(),
          A.shell('echo agent >> a.txt && git commit -qam pushed && git push -q origin HEAD'),
          A.end(),
          rewind('A'),
        ],
      ),
    );
  });

  it("row 14: two sessions write one file; B is rewound, then A: A refuses with a stale contest though the file holds A's last write", () => {
    checkStrict(
      trace(
        [A, B],
        [
          ...base(),
          A.start(),
          A.write('a.txt', 'by A\n'),
          B.start(),
          B.write('a.txt', 'by B\n'),
          A.end(),
          B.end(),
          rewind('B'),
          rewind('A'),
        ],
      ),
    );
  });

  it('row 15: a later call of a turn declares a path that sorts before the first one: directories the turn created stay behind', () => {
    check(trace([A], [...base(), A.start(), A.write('gen/x/y.ts', 'y\n'), A.write('gen/a.ts', 'a\n'), A.end(), rewind('A')]));
  });

  it('files a command created in an ignored directory it created from nothing (dist/) stay after the rewind, unnamed', () => {
    check(trace([A], [...base(), A.start(), A.shell('mkdir -p dist && echo bundle > dist/bundle.js'), A.end(), rewind('A')]));
  });

  it('files a command created in an ignored directory that existed (build/) stay after the rewind and are not named', () => {
    check(
      trace(
        [A],
        [
          ...base(),
          person.file('build/old.js', 'old\n'),
          A.start(),
          A.shell('mkdir -p build/out && echo app > build/out/app.js'),
          A.end(),
          rewind('A'),
        ],
      ),
    );
  });

  // seed 4011: a file the person keeps in an ignored directory that existed, changed by a command
  // (here replaced by a symlink; sed -i too): the rewind leaves it changed and does not name it
  it('a command changes a file inside an ignored directory that existed: left changed, not named in uncovered (seed 4011)', () => {
    check(
      trace(
        [A],
        [
          setup.file('.gitignore', '.env\n*.log\ndist/\nbuild/\nnode_modules/\n'),
          setup.file('README.md', 'x\n'),
          person.file('dist/bundle.js', 'x\n'),
          A.start(),
          A.shell('ln -sf .env dist/bundle.js'),
          A.shell("sed -i '$a appended by agent' README.md"),
          A.end(),
          rewind(),
        ],
      ),
    );
  });

  it('a command removed an ignored directory that existed (build/): the rewind names what it cannot bring back', () => {
    check(trace([A], [...base(), person.file('build/old.js', 'old\n'), A.start(), A.shell('rm -rf build'), A.end(), rewind('A')]));
  });
});

describe('shrunk failures of the random runs', () => {
  // seed 1006: `rewind --force` leaves the state it saved on top of the session's stack, and the
  // next `rewind N` of the session restores it along with turn N: the agent's edit the forced
  // rewind took back comes back, over the person's bytes.
  it('a rewind after a forced rewind brings back what the forced one undid (seed 1006)', () => {
    check(
      trace(
        [C],
        [
          person.append('run.sh', 'on top line\n'),
          C.start('prompt 21'),
          C.start('prompt 33'),
          C.edit('run.sh', 'on top line', 'x\n'),
          C.end(),
          rewind('A', 2, { force: true }),
          rewind('A', 1),
        ],
      ),
    );
  });
});

describe('shrunk failures of the random runs (2)', () => {
  // seed 1005: the command makes .gitignore a (dangling) symlink, so dist/ is no longer ignored:
  // after the command the person's dist/bundle.js looks like a file the command created, joins
  // the turn as absent before, and the rewind deletes it.
  it("a command that un-ignores the person's ignored files: the rewind deletes them (seed 1005)", () => {
    check(
      trace(
        [G],
        [
          setup.file('.gitignore', '.env\n*.log\ndist/\nbuild/\nnode_modules/\n'),
          person.file('.env', 'x\n'),
          person.file('dist/bundle.js', 'x\n'),
          G.start('prompt 21'),
          G.shell('ln -sf src/untracked5.ts .gitignore'),
          G.end(),
          rewind('A', 1),
        ],
      ),
    );
  });

  it("the same with a tracked .gitignore edited by sed: the person's build output is deleted", () => {
    check(
      trace(
        [A],
        [...base(), person.file('dist/bundle.js', 'built\n'), A.start(), A.shell("sed -i '/dist/d' .gitignore"), A.end(), rewind('A')],
      ),
    );
  });
});

describe('shrunk failures of the random runs (3)', () => {
  // seed 5008: B writes into new directories, A stages it (git add -A), B's git reset --hard
  // removes it: the command's capture of pkg took the directories B's write had made as the
  // pre-image, and the rewind made them again
  it('a write into new directories, staged by another session, removed by reset --hard: no directory of the write in the pre-image, and the rewind refuses (the staging went under the agent’s command) (seed 5008)', () => {
    const A = agent('A');
    const B = agent('B', 'gemini');
    check(
      trace(
        [A, B],
        [
          B.start(),
          A.start(),
          B.write('pkg/x/y/z3.txt', 'x\n'),
          A.shell('git add -A'),
          B.shell('git reset -q --hard'),
          B.end(),
          rewind('B', 1),
        ],
      ),
    );
  });
});

describe('oracle corrections the random runs showed', () => {
  // seed 5053: a command changes the person's dist/bundle.js while dist/ is ignored (named in
  // `left`); the person then deletes .gitignore. What was ignored is judged as the command saw it.
  it('a file a command changed in an ignored directory stays named after the person un-ignores it (seed 5053)', () => {
    const A = agent('A');
    const B = agent('B', 'claude');
    check(
      trace(
        [A, B],
        [
          setup.file('.gitignore', '.env\n*.log\ndist/\nbuild/\nnode_modules/\n'),
          setup.file('.gitattributes', '*.txt eol=crlf\n'),
          setup.file('README.md', 'fix name 48\nline return 63\n'),
          person.file('dist/bundle.js', 'value name 10\n'),
          A.start('prompt 25'),
          B.start('prompt 39'),
          B.parallel([
            shell("sed -i '$a appended by agent' dist/bundle.js"),
            shell("git diff -U0 -- .gitattributes | awk '/^@@/{n++} n<2' | git apply --cached --unidiff-zero -"),
          ]),
          person.rm('.gitignore'),
          B.write('src/new5.ts', 'return todo 55\n'),
          B.end(),
          rewind('B', 1, { force: true }),
        ],
      ),
    );
  });
  // seed 6001: Gemini CLI sends nothing when the person denies a call; the person then writes the
  // same path by hand. The tool cannot tell the call did not run: a forced rewind takes the path
  // back, saving it for --undo (the oracle allows that, and the undo must bring it back)
  it('a forced rewind over a denied call whose path the person wrote by hand: allowed, and undone exactly (seed 6001)', () => {
    const G1 = agent('A', 'gemini');
    check(
      trace(
        [G1],
        [
          G1.start(),
          G1.denied(write('src/lib/extra6.ts', 'x\n')),
          person.file('src/lib/extra6.ts', 'x\n'),
          G1.end(),
          rewind('A', 1, { force: true, kill: true }),
          undo(),
        ],
      ),
    );
  });
  // seed 131015153: the agent makes tools/, the person saves a note there, the agent's rm -rf
  // tools takes it; the forced rewind brings the note back, in the directory it needs
  it('a forced rewind brings back a note the agent removed with the directory it created, and that directory (seed 131015153)', () => {
    const B1 = agent('B');
    check(
      trace(
        [B1],
        [
          ...base(),
          B1.start(),
          B1.write('tools/gen1.sh', 'g\n'),
          person.file('tools/person-note.md', 'note\n'),
          B1.parallel([shell('cp tools/person-note.md copy2.txt'), shell('rm -rf tools')]),
          B1.end(),
          rewind('B', 1, { force: true }),
        ],
      ),
    );
  });

  // seed 131015163: the person's new .gitattributes drops `*.txt eol=crlf`; git still calls
  // a.txt (CRLF in the worktree, LF in the index) clean on stat, as it does until
  // `git add --renormalize`. Not the rewind's doing: the oracle no longer counts it
  it("a stat-clean file that an attribute change left differing from its blob is git's own, not the rewind's (seed 131015163)", () => {
    const B1 = agent('B');
    check(
      trace(
        [B1],
        [
          setup.file('.gitattributes', '*.txt eol=crlf\n'),
          setup.file('a.txt', 'one\r\ntwo\r\n'),
          setup.sh('git add -A && git commit -qm base && touch -d "1 hour ago" a.txt && git update-index -q --refresh'),
          B1.start(),
          B1.shell('echo agent >> debug.log'),
          person.file('.gitattributes', 'nothing\n'),
          B1.end(),
          rewind('B', 1, { force: true, kill: true }),
        ],
      ),
    );
  });

  // seed 226063955: the same, with another session's edit of .gitattributes (shrunk as found)
  it("another session's edit of .gitattributes leaves a stat-clean file differing from its blob: not the rewind's (seed 226063955)", () => {
    const A1 = agent('A');
    const B1 = agent('B');
    check(
      trace(
        [A1, B1],
        [
          setup.file('.gitattributes', '*.txt eol=crlf\n'),
          setup.file('b.txt', 'x\r\n'),
          A1.start(),
          B1.start('prompt 29'),
          A1.shell('git add -A'),
          A1.edit('.gitattributes', '*.t', '*.t edited'),
          B1.end(),
          rewind('B', 1),
        ],
      ),
    );
  });

  // seed 131809478: B's chmod +x, A's edit, A's forced rewind puts back B's state: B's rewind
  // may take the path back (it holds B's last change), as it did
  it("another session's forced rewind puts back what this session's agent left: its rewind takes it back (seed 131809478)", () => {
    const A1 = agent('A');
    const B1 = agent('B');
    check(
      trace(
        [A1, B1],
        [
          ...base(),
          B1.start(),
          A1.start(),
          B1.shell('chmod +x b.txt'),
          A1.edit('b.txt', 'bee', 'bee edited'),
          A1.end(),
          B1.end(),
          rewind('A', 1, { force: true }),
          rewind('B', 1),
        ],
      ),
    );
  });
  // seed 131809548: the agent's `rm -rf notes`, then a person's new file in a new notes/. The
  // unforced rewind refuses naming notes/todo6.md; the forced one brings notes back as it was
  // (without the new file, saved for --undo), and the undo brings the file back
  it('a forced rewind of a deleted directory takes what was made in it since, and its undo brings that back (seed 131809548)', () => {
    check(
      trace(
        [A, B],
        [
          person.file('notes/todo1.md', 'name value 77\n'),
          A.start('prompt 39'),
          A.shell("git diff -U0 -- b.txt | awk '/^@@/{n++} n<2' | git apply --cached --unidiff-zero -"),
          A.shell('rm -rf notes'),
          person.append('.env', 'person name\n'),
          A.end(),
          person.file('notes/todo6.md', 'return name 41\nconst port 86'),
          B.start('prompt 53'),
          rewind('A', 1),
          rewind('A', 1, { force: true, kill: true }),
          undo(),
        ],
      ),
    );
  });
});

describe('unjustified refusals the random runs found (soft findings)', () => {
  // seed 1005: without call ids (Gemini CLI, the generic form without toolUseId), a file a shell
  // command created and a later replace of the same turn edited is sealed absent: the rewind
  // refuses it as changed by someone else, though only the agent touched it (with ids: exact)
  it('id-less calls: a command creates a file, a later edit of the turn changes it: the rewind refuses, sealed absent (seed 1005)', () => {
    checkStrict(
      trace(
        [G],
        [
          setup.file('a.txt', 'one\n'),
          setup.sh('git add -A && git commit -qm base'),
          G.start('p'),
          G.shell('mkdir -p pkg/sub && echo name > pkg/sub/f4.txt'),
          G.edit('pkg/sub/f4.txt', 'name', 'name edited'),
          G.end(),
          rewind('A', 1),
        ],
      ),
    );
  });

  // seed 3019: a file the agent wrote in the turn, then a command that only touches its metadata
  // (chmod to the mode it has, touch): the command is recorded as changing it (I10: nothing of
  // its state changed). Harmless for this rewind (the path is the turn's already), noise in turns.
  it('a command that only touches a file the turn wrote (chmod -x of a plain file) is listed as changing it (seed 3019)', () => {
    checkStrict(
      trace(
        [B],
        [setup.file('empty.txt', ''), B.start(), B.edit('empty.txt', '', ' edited'), B.shell('chmod -x empty.txt'), B.end(), rewind()],
      ),
    );
  });

  it('the same with call ids: the rewind is exact', () => {
    checkStrict(
      trace(
        [A],
        [
          setup.file('a.txt', 'one\n'),
          setup.sh('git add -A && git commit -qm base'),
          A.start('p'),
          A.shell('mkdir -p pkg/sub && echo name > pkg/sub/f4.txt'),
          A.edit('pkg/sub/f4.txt', 'name', 'name edited'),
          A.end(),
          rewind('A', 1),
        ],
      ),
    );
  });
});

describe('what held in the outside tester: fixed sequences that pass', () => {
  it("a person's work in progress, one turn with a write into new directories, an edit, sed -i, rm and git add -A: rewind is exact", () => {
    check(
      trace(
        [A],
        [
          ...base(),
          person.append('a.txt', 'unstaged\n'),
          person.append('b.txt', 'staged\n'),
          person.sh('git add b.txt'),
          person.append('b.txt', 'on top\n'),
          person.file('notes.txt', 'untracked\n'),
          person.file('.env', 'SECRET=1\n'),
          A.start(),
          A.write('gen/api/client.ts', 'client\n'),
          A.edit('src/app.ts', '1', '10'),
          A.shell("sed -i '1s/^/agent: /' a.txt"),
          A.shell('rm src/lib/util.ts'),
          A.shell('git add -A'),
          A.end(),
          rewind('A'),
        ],
      ),
    );
  });

  it('git gc --prune=now between turns, two turns rewound at once', () => {
    check(
      trace(
        [A],
        [
          ...base(),
          A.start(),
          A.write('a.txt', '1\n'),
          A.end(),
          person.sh('git gc -q --prune=now'),
          A.start(),
          A.shell('echo x >> b.txt && git add b.txt'),
          A.end(),
          person.sh('git gc -q --prune=now'),
          rewind('A', 1),
        ],
      ),
    );
  });

  it('parallel calls with ids (generic form): both land in the turn, rewind is exact', () => {
    check(
      trace(
        [A],
        [...base(), A.start(), A.parallel([shell("sed -i 's/bee/BEE/' b.txt"), write('c.txt', 'c\n')], [1, 0]), A.end(), rewind('A')],
      ),
    );
  });

  it('a forced rewind over the person edit, then its undo (restore of what it saved, or rewind --undo)', () => {
    check(
      trace(
        [A],
        [
          ...base(),
          A.start(),
          A.write('a.txt', 'agent\n'),
          A.end(),
          person.file('a.txt', 'person\n'),
          rewind('A', 1, { force: true }),
          undo(),
        ],
      ),
    );
  });
});

describe("the long random run of d09de07's CI (seeds 218750473, 218750496, 218750545), shrunk", () => {
  const IGNORING_BUILD = setup.file('.gitignore', '.env\n*.log\ndist/\nbuild/\nnode_modules/\n');

  it('an ignored directory the turn made by a write, then filled by a command: the rewind removes it all (I11)', () => {
    check(
      trace(
        [A],
        [
          IGNORING_BUILD,
          A.start(),
          A.write('build/gen.js', 'x\n'),
          A.shell('mkdir -p build/out && echo app > build/out/app.js'),
          A.end(),
          rewind('A', 1),
        ],
      ),
    );
  });

  it('the same over two turns: the second turn carries what the first made, and a rewind of both removes it all', () => {
    checkStrict(
      trace(
        [A],
        [
          IGNORING_BUILD,
          A.start(),
          A.write('build/gen.js', 'x\n'),
          A.end(),
          A.start(),
          A.shell("mkdir -p build/out && echo app > build/out/app.js && sed -i 's/x/y/' build/gen.js"),
          A.end(),
          rewind('A', 1),
        ],
      ),
    );
  });

  it("the second turn alone: its command's change of the first turn's ignored file is put back, what it made goes", () => {
    checkStrict(
      trace(
        [A],
        [
          IGNORING_BUILD,
          A.start(),
          A.write('build/gen.js', 'x\n'),
          A.end(),
          person.file('build/mine.txt', 'mine\n'),
          A.start(),
          A.shell("mkdir -p build/out && echo app > build/out/app.js && sed -i 's/x/y/' build/gen.js && echo more >> build/mine.txt"),
          A.end(),
          rewind('A', 2),
        ],
      ),
    );
  });

  it("a command's edit inside another repository's checkout is named as not brought back", () => {
    check(
      trace(
        [N],
        [
          setup.sh(
            "mkdir -p vendor/lib && cd vendor/lib && git init -q && printf 'v1\\n' > v.txt && git add v.txt && git commit -qm v && printf 'wip\\n' >> v.txt",
          ),
          N.start(),
          N.shell('echo agent >> vendor/lib/v.txt'),
          N.end(),
          rewind('A', 1),
        ],
      ),
    );
  });

  it('a rewind that removes the directories the turn made, emptied by a command: its undo makes them again', () => {
    check(
      trace([N], [N.start(), N.write('pkg/x/y/z5.txt', 'x\n'), N.shell('mv pkg/x/y/z5.txt moved7.txt'), N.end(), rewind('A', 1), undo()]),
    );
  });
});

describe('the long random run of 38cc819 (seeds 59557947, 59557949), shrunk', () => {
  it("an ignored directory holding a person's file, replaced by a file: the rewind makes the directory again and names what it held", () => {
    check(
      trace(
        [A],
        [
          setup.file('.gitignore', '.env\n*.log\ndist/\nbuild/\nnode_modules/\n'),
          person.file('build/out/app.js', 'gamma beta 99\n'),
          A.start('prompt 16'),
          A.shell('d=build; rm -rf $d && echo x > $d'),
          A.end(),
          rewind(),
        ],
      ),
    );
  });

  it('a directory turn 1 made for its write, removed by turn 2 beside a write: a forced rewind of both removes it', () => {
    const B = agent('B', 'claude');
    check(
      trace(
        [A, B],
        [
          B.start('prompt 26'),
          B.write('docs/new/page3.md', 'alpha alpha 4\nbeta value 56\ntodo port 23'),
          B.start('prompt 40'),
          B.parallel([shell('rm -rf docs/new'), write('src/new.ts', 'beta fix 46\nconst fix 94\n')]),
          B.end(),
          rewind('B', 1, { force: true }),
        ],
      ),
    );
  });
});

describe('the long random run of d8d68e9 (seed 227371299), shrunk', () => {
  it("a person's edit between two id-less turns, then removed by the second turn's command: a rewind of both refuses instead of exiting 0 without it", () => {
    const G2 = agent('A', 'gemini');
    check(
      trace(
        [G2],
        [
          G2.start('prompt 24'),
          G2.parallel(
            [write('out/report.txt', 'line value 48\ngamma beta 36\ngamma line 82\n'), shell('mkdir -p tmp/work2 && mv .env tmp/work2/')],
            [1, 0],
          ),
          person.file('out/report.txt', 'alpha fix 78\ndelta gamma 72\nfix alpha 36\n'),
          G2.start('prompt 33'),
          G2.write('pkg/x/y/z.txt', 'delta todo 55\n'),
          G2.parallel(
            [edit('out/report.txt', 'alp', 'alp edited'), shell('rm -f notes.txt out/report.txt && git gc -q --prune=now')],
            [1, 0],
          ),
          G2.end(),
          rewind('A', 1),
        ],
      ),
    );
  });
});

describe('the long random run of 5cc2fff (seeds 97267752, 97267788), shrunk', () => {
  it("a directory the agent made for a write, replaced by a person's file: a forced rewind leaves the file (an ancestor outside the turn's paths)", () => {
    const C2 = agent('A', 'claude');
    check(
      trace(
        [C2],
        [
          C2.start(),
          C2.write('gen/api/client.ts', 'x\n'),
          person.sh('d=gen/api; rm -rf $d && echo x > $d'),
          C2.end(),
          rewind('A', 1, { force: true }),
        ],
      ),
    );
  });

  it("a command's file overwritten by the person, then a Write beneath it that fails: the rewind must refuse or keep the person's file", () => {
    const B2 = agent('B');
    check(
      trace(
        [B2],
        [
          B2.start(),
          B2.shell('d=src; rm -rf $d && echo x > $d'),
          person.file('src', 'mine\n'),
          B2.write('src/deep/x/w.txt', 'x\n'),
          B2.end(),
          rewind('B', 1),
        ],
      ),
    );
  });

  it("the same rewound with --force: the person's file is saved first, and the undo brings it back", () => {
    const B2 = agent('B');
    check(
      trace(
        [B2],
        [
          B2.start(),
          B2.shell('d=src; rm -rf $d && echo x > $d'),
          person.file('src', 'mine\n'),
          B2.write('src/deep/x/w.txt', 'x\n'),
          B2.end(),
          rewind('B', 1, { force: true }),
          undo(),
        ],
      ),
    );
  });
});

describe('the long random run of ec96b53 (seed 97267801), shrunk', () => {
  it("a command replaces the directory of another session's write with a file, then an Edit of that file: the hook captures it (no duplicate tree entry)", () => {
    const A2 = agent('A');
    const B2 = agent('B', 'gemini');
    check(
      trace(
        [A2, B2],
        [
          setup.file('src/deep/x/y.txt', 'return return 61\r\nfix const 69\r\n'),
          B2.start('prompt 28'),
          B2.write('src/deep/x/y.txt', 'alpha return 0\nalpha value 44\n'),
          A2.start('prompt 37'),
          A2.shell('d=src/deep/x; rm -rf $d && echo x > $d'),
          B2.edit('src/deep/x', 'x', 'x edited'),
        ],
      ),
    );
  });

  it('the same, then both turns end and are rewound, newest first', () => {
    const A2 = agent('A');
    const B2 = agent('B', 'gemini');
    check(
      trace(
        [A2, B2],
        [
          setup.file('src/deep/x/y.txt', 'return return 61\r\nfix const 69\r\n'),
          B2.start('prompt 28'),
          B2.write('src/deep/x/y.txt', 'alpha return 0\nalpha value 44\n'),
          A2.start('prompt 37'),
          A2.shell('d=src/deep/x; rm -rf $d && echo x > $d'),
          B2.edit('src/deep/x', 'x', 'x edited'),
          B2.end(),
          A2.end(),
          rewind('B', 1),
          rewind('A', 1),
        ],
      ),
    );
  });
});

describe('rewinds of some paths of a turn (rewind -- PATH), judged by the oracle', () => {
  it('one file of a turn, then the rest: each exact', () => {
    check(
      trace(
        [A],
        [
          ...base(),
          A.start(),
          A.write('a.txt', 'agent\n'),
          A.write('src/new/x.ts', 'x\n'),
          A.shell('sed -i s/2/20/ src/lib/util.ts && git add -A src'),
          A.end(),
          rewind('A', 1, { paths: ['a.txt'] }),
          rewind('A', 1),
        ],
      ),
    );
  });

  it("a person's edit of another path of the turn stays; the picked path comes back", () => {
    check(
      trace(
        [A],
        [
          ...base(),
          A.start(),
          A.write('a.txt', 'agent\n'),
          A.write('b.txt', 'agent b\n'),
          A.end(),
          person.file('b.txt', 'the person\n'),
          rewind('A', 1, { paths: ['a.txt'] }),
          rewind('A', 1, { force: true }),
          undo(),
        ],
      ),
    );
  });

  it('a file inside a directory a command removed, then the rest after the person edits the file', () => {
    check(
      trace(
        [A],
        [
          ...base(),
          A.start(),
          A.shell('rm -rf src/lib'),
          A.end(),
          rewind('A', 1, { paths: ['src/lib/util.ts'] }),
          person.file('src/lib/util.ts', 'mine\n'),
          rewind('A', 1),
          rewind('A', 1, { force: true }),
        ],
      ),
    );
  });

  it('a directory of the turn over two turns and two sessions', () => {
    check(
      trace(
        [A, B],
        [
          ...base(),
          A.start(),
          A.write('src/new/x.ts', 'x\n'),
          A.end(),
          B.start(),
          B.write('src/app.ts', 'b\n'),
          B.end(),
          A.start(),
          A.write('src/new/y.ts', 'y\n'),
          A.end(),
          rewind('A', 1, { paths: ['src/new'] }),
          rewind('B', 1),
        ],
      ),
    );
  });
});

describe('the long random run of 548b1d1 (seeds 88650214, 88650216), shrunk', () => {
  // the oracle's own mistake: the loss was the later turn's, named by its rewind
  it("a person's edit of a file a command changed in an ignored directory, then a later turn's rm -rf of it, rewound: the older turn's rewind is not asked for the person's version", () => {
    const A2 = agent('A');
    check(
      trace(
        [A2],
        [
          setup.file('.gitignore', '.env\n*.log\ndist/\nbuild/\nnode_modules/\n'),
          setup.file('a.txt', 'alpha fix 5\n'),
          person.file('dist/bundle.js', 'alpha line 48\n'),
          A2.start('prompt 21'),
          A2.shell('echo return >> dist/bundle.js'),
          person.append('dist/bundle.js', 'person todo\n'),
          A2.end(),
          A2.start('prompt 42'),
          A2.shell('d=dist; rm -rf $d && echo x > $d'),
          A2.end(),
          rewind(),
          rewind('A', 1),
        ],
      ),
    );
  });

  it("an id-less delete of another session's file, then that session's command removes the whole directory: the rewind must not make the directories again", () => {
    const A2 = agent('A', 'generic', false);
    const B2 = agent('B');
    check(
      trace(
        [A2, B2],
        [
          B2.start(),
          B2.write('src/deep/x/y.txt', 'x\n'),
          A2.start(),
          A2.del('src/deep/x/y.txt'),
          B2.shell('rm -rf src'),
          A2.end(),
          rewind('A', 1),
        ],
      ),
    );
  });
});

describe('the long random run of b67900d (seeds 191336461, 191336491, 191336489), shrunk', () => {
  // the oracle's own mistake: git fsck warns about the person's commit of a symlinked .gitignore
  it("a person commits .gitignore as a symbolic link: git fsck's warning on their tree is not ours", () => {
    const C2 = agent('A', 'claude');
    check(trace([C2], [person.sh('rm -f .gitignore && ln -s README.md .gitignore'), person.sh('git add -A && git commit -qm agent')]));
  });

  it('a rewind of a path inside an ignored directory a command replaced by a file: nothing to write, and the report names the loss', () => {
    const G2 = agent('A', 'gemini');
    check(
      trace(
        [G2],
        [
          setup.file('.gitignore', '.env\n*.log\ndist/\nbuild/\nnode_modules/\n'),
          person.file('dist/bundle.js', 'x\n'),
          G2.start(),
          G2.shell('d=dist; rm -rf $d && echo x > $d'),
          G2.end(),
          rewind('A', 1, { paths: ['dist/bundle.js'] }),
        ],
      ),
    );
  });

  it('two sessions, forced rewinds over each other: the older turn of B, whose state a forced rewind put back, takes back its git add', () => {
    const C2 = agent('A', 'claude');
    const B2 = agent('B');
    check(
      trace(
        [C2, B2],
        [
          setup.file('.gitignore', '.env\n*.log\ndist/\nbuild/\nnode_modules/\n'),
          setup.file('a.txt', 'port gamma 56\ndelta todo 99\nalpha gamma 94\nvalue todo 61\n'),
          setup.file('b.txt', 'value beta 14\nvalue const 59\nvalue delta 86\n'),
          person.file('dist/bundle.js', 'return delta 39\n'),
          C2.start('prompt 13'),
          person.file('notes/todo1.md', 'alpha beta 18\nname const 65\nname port 50'),
          person.sh('git add a.txt'),
          C2.shell('mkdir -p src/feature2 && mv dist/bundle.js src/feature2/'),
          C2.denied(write('debug.log', 'value delta 90\n')),
          person.file('debug.log', 'value delta 90\n'),
          person.sh('rm -f notes/todo.md && ln -s b.txt notes/todo.md'),
          C2.parallel([shell('mkdir -p newdir4 && mv src/feature2/bundle.js newdir4/'), shell('git stash pop -q')]),
          C2.end(),
          B2.start('prompt 22'),
          B2.shell('git add -A && git commit -qm agent'),
          B2.end(),
          B2.start('prompt 25'),
          B2.shell('mkdir -p newdir && echo return > newdir/f6.txt'),
          B2.edit('newdir4/bundle.js', 'ret', 'ret edited'),
          B2.denied(write('docs/new/page9.md', 'todo const 47\nbeta fix 24\nbeta alpha 66\nname gamma 68\n')),
          person.file('docs/new/page9.md', 'todo const 47\nbeta fix 24\nbeta alpha 66\nname gamma 68\n'),
          B2.shell("sed -i 's/line/LINE/g' .gitignore"),
          B2.end(),
          rewind('A', 1, { force: true }),
          C2.start('prompt 36'),
          C2.write('src/lib/f10.txt', 'beta line 49\ntodo value 77\nbeta const 31\nname gamma 37\n', { fail: true }),
          C2.end(),
          rewind('B', 2),
          rewind(),
          rewind('B', 2, { force: true, kill: true }),
          rewind('B', 1),
        ],
      ),
    );
  });
});

describe('the long random run of 8f54beb (seeds 150293486, 150293509, 150293517, 150293529), shrunk', () => {
  // seed 150293517: the command's change lies in an ignored directory that existed, named in the
  // turn's `uncovered`, which no snapshot holds: not "a wrong argument" but a loss the rewind names
  it('a rewind of a file a command changed inside an ignored directory: exit 0, and the report names it as not brought back', () => {
    check(
      trace(
        [N],
        base(
          person.file('build/out/app.js', 'gamma value 81'),
          N.start(),
          N.shell('echo beta >> build/out/app.js'),
          N.end(),
          rewind('A', 1, { paths: ['build/out/app.js'] }),
          N.start(),
          N.shell("printf 'line\\n' > out3.txt"),
          N.end(),
          rewind('A', 1),
        ),
      ),
    );
  });

  // seed 150293486: a path the turn never changed is a wrong argument (exit 2), and nothing is written
  it('a rewind of a path the turn never changed: a wrong argument, named', () => {
    check(trace([A, B], [B.start(), B.end(), rewind('B', 1, { paths: ['dist'] })]));
  });

  // seed 150293509: the first call's before-event came and its end never did; the second call's
  // end was paired with the first call's baseline, which took the other session's file in
  it("Gemini CLI: a denied command, another session's new file, the same command run: the rewind leaves the other session's file", () => {
    const G2 = agent('A', 'gemini');
    check(
      trace(
        [G2, B],
        [
          B.start(),
          G2.start(),
          G2.denied(shell('sed -i s/a/b/ missing-file.txt')),
          B.shell("printf 'line\\n' > out4.txt"),
          G2.shell('sed -i s/a/b/ missing-file.txt'),
          G2.end(),
          rewind('A', 1),
        ],
      ),
    );
  });

  // seed 150293529: the turn's command made docs/new2 (captured absent); the person's note in it
  // was not in the turn's pre-image, so a forced rewind removed it with the directory
  for (const [what, cmd] of [
    ['replaces it by a directory', 'f=docs/new2/person-note.md; rm -f $f && mkdir $f && echo x > $f/inner.txt'],
    ['edits it', 'sed -i s/gamma/GAMMA/ docs/new2/person-note.md'],
    ['removes the directory', 'rm -rf docs/new2'],
  ] as const)
    it(`a person's note in a directory the turn's command made, which a later command ${what}: a forced rewind puts the note back`, () => {
      const A2 = agent('A', 'generic', false);
      const B2 = agent('B', 'claude');
      check(
        trace(
          [A2, B2],
          [
            B2.start('prompt 17'),
            B2.parallel([write('src/new1.ts', 'fix return 73\nvalue const 61'), shell('mkdir -p docs/new2 && mv run.sh docs/new2/')]),
            person.file('docs/new2/person-note.md', 'gamma alpha 94\n'),
            B2.shell(cmd),
            B2.end(),
            rewind('B', 1, { force: true }),
          ],
        ),
      );
    });
});

describe('the long random run of 011f01c (seeds 1175599, 1175613), shrunk', () => {
  // seed 1175599: the file's CRLF bytes followed the index's .gitattributes; the agent's edit of
  // .gitattributes took the rule away, and the capture took the stat-clean file for its LF blob
  for (const [what, step] of [
    ['edits', A.edit('src/deep/x/y.txt', 'por', 'por edited')],
    ['runs sed on', A.shell('sed -i s/por/POR/ src/deep/x/y.txt')],
  ] as const)
    it(`the agent edits .gitattributes (eol=crlf gone), then ${what} a CRLF file: the rewind writes its CRLF bytes back`, () => {
      check(
        trace(
          [A],
          [
            setup.file('.gitattributes', '*.txt eol=crlf\n'),
            setup.file('src/deep/x/y.txt', 'port alpha 42\r\ngamma value 2\r\ntodo fix 2\r\n'),
            setup.sh('git add -A && git commit -qm base'),
            A.start(),
            A.write('.gitattributes', 'x\n'),
            step,
            A.end(),
            rewind('A', 1),
          ],
        ),
      );
    });

  // seed 1175613: B's turn only removed an ignored directory (named, nothing captured); a plain
  // rewind takes the newest turn that captured something, as turns --json tells the oracle
  it("a plain rewind after another session's turn that only changed an ignored directory: the newest turn that captured something", () => {
    const B2 = agent('B', 'generic', false);
    check(
      trace(
        [A, B2],
        [
          setup.file('.gitignore', GITIGNORE),
          person.file('build/out/app.js', 'x\n'),
          A.start(),
          B2.start(),
          B2.shell('d=build/out; rm -rf $d && echo x > $d'),
          A.write('dist/bundle.js', 'x\n'),
          A.end(),
          rewind(),
        ],
      ),
    );
  });
});

describe('the long random run of 88f4d8a (seeds 143609237, 143609279), shrunk: the oracle was wrong', () => {
  // seed 143609237: a rewind of the turn's only path leaves it with nothing: a plain rewind then
  // has no turn to take, and that is not a turn gone unrecorded
  it('a rewind of the only path of a turn, then a plain rewind: nothing is left to rewind', () => {
    check(
      trace(
        [C],
        [
          person.file('notes.txt', 'port value 53\n'),
          C.start(),
          C.edit('notes.txt', 'port value 53', 'port value 53 edited'),
          C.end(),
          rewind('A', 1, { paths: ['notes.txt'] }),
          rewind(),
        ],
      ),
    );
  });

  // seed 143609279: a command replaced the ignored dist/ (a person's bundle in it) by a file, which
  // the agent then edited: the edit's hook captured the file dist, not the bundle that was gone,
  // so the bundle cannot come back, and the report names it
  it("a command replaces an ignored directory holding a person's file by a file, the agent edits that file: a forced rewind names the loss", () => {
    check(
      trace(
        [G],
        [
          setup.file('.gitignore', GITIGNORE),
          setup.file('README.md', 'return return 18\ntodo port 6\ndelta delta 99\n'),
          person.file('dist/bundle.js', 'gamma delta 69\n'),
          G.start('prompt 28'),
          G.shell('d=dist; rm -rf $d && echo x > $d'),
          G.edit('dist', 'x', 'x edited'),
          G.end(),
          rewind('A', 1, { force: true }),
        ],
      ),
    );
  });
});

describe('the long random run of 88f4d8a (seed 143609310), shrunk: the oracle was wrong', () => {
  // a command changed a person's file in an existing ignored directory (never captured, named);
  // the agent's later write captured the command's version: the rewind may put that back, named
  it('a command changes a file in an ignored directory, then the agent writes it: the rewind names it, and may put back what the write found', () => {
    check(
      trace(
        [A],
        [
          setup.file('.gitignore', GITIGNORE),
          person.file('build/out/app.js', 'x\n'),
          A.start(),
          A.shell('mkdir -p build/out && echo app > build/out/app.js'),
          A.write('build/out/app.js', 'x\n'),
          A.end(),
          rewind('A', 1),
        ],
      ),
    );
  });
});

describe('the long random run of 88f4d8a (seed 612000039), shrunk: the oracle was wrong', () => {
  // a denied Write through a dangling symlink: its hook captured the link's target, absent; the
  // person then wrote through the link, making the target. At the turn's end the call is
  // unfinished and its path changed: contested. A forced rewind may put back what the denied call
  // found (the person's file is saved, and the undo brings it back)
  it('a denied write through a dangling link, then the person writes through it: a forced rewind may put back what the call found, and the undo restores the person', () => {
    check(
      trace(
        [A],
        [
          person.link('a.txt', 'README.md'),
          A.start(),
          A.denied(write('a.txt', 'x\n')),
          person.file('a.txt', 'x\n'),
          A.end(),
          rewind('A', 1, { force: true }),
          undo(),
        ],
      ),
    );
  });
});

describe('the long random run of 88f4d8a (seed 613000024), shrunk: the oracle was wrong', () => {
  // a rewind of a path beneath a file the turn made takes back what is at that path (nothing):
  // the file above it is not among the paths taken back, and stays
  it('a rewind of a path beneath a file the turn made leaves the file', () => {
    check(
      trace([A, B], [B.start(), B.write('scratch/idea1.txt', 'x\n'), B.end(), rewind('B', 1, { paths: ['scratch/idea1.txt/inner.txt'] })]),
    );
  });
});

describe('the long random run of 88f4d8a (seed 613000133, through the server), shrunk: the oracle was wrong', () => {
  // git stash's own commit holds the person's symlinked .gitignore: git fsck's warning is about
  // git's object, not ours
  it("the agent's git stash of a symlinked .gitignore: fsck's warning is about the stash's tree", () => {
    check(
      trace(
        [A],
        [
          setup.file('.gitignore', 'x\n'),
          setup.sh('git add -A && git commit -qm base'),
          person.sh('rm -f .gitignore && ln -s README.md .gitignore'),
          A.start(),
          A.shell('git stash -q'),
        ],
      ),
    );
  });
});

describe('the long random run of 751f122 (seeds 122810702 and 122810707), shrunk', () => {
  // the agent's write made a file in new directories (a parallel command joined them); the
  // person appended to it; the agent's later edit went over it. The person's change of the
  // agent's file is a contest, not something that was there before the turn: a forced rewind
  // takes the file away (the person's version is saved for --undo), it does not put it back as
  // the turn's pre-image
  it("a person's change of a file the agent made in new directories, then the agent's edit: a forced rewind takes the file away", () => {
    check(
      trace(
        [A],
        [
          A.start(),
          A.parallel([
            shell("git diff -U0 -- scratch/idea2.txt | awk '/^@@/{n++} n<2' | git apply --cached --unidiff-zero -"),
            write('pkg/x/y/z3.txt', 'fix gamma 15\n'),
          ]),
          person.append('pkg/x/y/z3.txt', 'x\n'),
          A.edit('pkg/x/y/z3.txt', 'fix gamma 15', 'fix gamma 15 edited'),
          A.end(),
          rewind('A', 1, { force: true }),
          undo(),
        ],
      ),
    );
  });

  // the agent's command made src/feature, the person saved a note in it, the agent's next
  // command removed the whole directory: the note joins the pre-image as found (also when the
  // later change's root is the directory itself), and a forced rewind puts it back
  it("a person's note in a directory the agent's command made, which its next command removes whole: a forced rewind puts it back", () => {
    check(
      trace(
        [A, B],
        [
          person.append('src/new1.ts', 'x\n'),
          A.start(),
          A.shell('mkdir -p src/feature && echo alpha > src/feature/f2.txt'),
          person.file('src/feature/person-note.md', 'x\n'),
          A.shell('rm -rf src/feature'),
          A.end(),
          rewind('A', 1, { force: true }),
        ],
      ),
    );
  });
});

describe('the long random run of 751f122 (seeds 122810711 and 122810719), shrunk', () => {
  // the agent's command made .gitignore a directory with a file in it; the person appended to
  // that file; the agent's write went over it: the person's change of the agent's file is a
  // contest, and a forced rewind takes the file away (saved for --undo)
  it("a person's change of a file the agent's command made, then the agent's write: a forced rewind takes it away", () => {
    check(
      trace(
        [A, B],
        [
          B.start(),
          B.shell('f=.gitignore; rm -f $f && mkdir $f && echo x > $f/inner.txt'),
          person.append('.gitignore/inner.txt', 'x\n'),
          B.write('.gitignore/inner.txt', 'x\n'),
          B.end(),
          rewind('B', 1, { force: true }),
          undo(),
        ],
      ),
    );
  });

  // Gemini CLI runs a model answer's calls in parallel: a command's baseline taken before the
  // other command of the batch ended holds what that command was still changing (the agent's
  // own), not a person's files: the rewind takes the new directories away
  it('two batches of parallel calls (a write into new directories, then a command replacing one of them by a file): the rewind removes them all', () => {
    check(
      trace(
        [G],
        [
          G.start(),
          G.parallel([write('pkg/x/y/z2.txt', 'alpha delta 28\nconst beta 31\nreturn return 83\n'), shell('echo TOKEN=agent >> .env')]),
          G.parallel([shell('rm -f src/deep/x/y.txt'), shell('d=pkg/x; rm -rf $d && echo x > $d')]),
          G.end(),
          rewind('A', 1),
        ],
      ),
    );
  });
});

describe('the long random run of 327fefc (seed 52952836), shrunk: the oracle was wrong', () => {
  // a rewind of a path beneath the directories the agent's write made leaves those directories
  // (empty): a later rewind of one of them names it as not a path of the turn, and writes nothing
  it('a rewind of the directories left after a partial rewind took back the file they were made for: a wrong argument, nothing written', () => {
    check(
      trace(
        [G],
        [
          G.start(),
          G.write('pkg/x/y/z2.txt', 'x\n'),
          G.end(),
          rewind('A', 1, { paths: ['pkg/x/y'] }),
          rewind('A', 1, { paths: ['pkg/x'] }),
        ],
      ),
    );
  });
});

describe('the long random run of 51a9bf4 (seed 614000084), shrunk: the oracle was wrong', () => {
  // B's write over A's file, then a partial rewind of B that put A's bytes back: together B's
  // calls and that rewind changed nothing there, so A's rewind takes its own file away (as after
  // a rewind of B's whole turn)
  it("another session's write over the agent's file, taken back by a partial rewind of that session: the agent's rewind removes its file", () => {
    const A = agent('A', 'claude');
    const B = agent('B', 'claude');
    check(
      trace(
        [A, B],
        [
          A.start(),
          A.shell('mkdir -p gen && echo todo > gen/f7.txt'),
          B.start(),
          B.write('gen/f7.txt', 'x\n'),
          A.end(),
          B.end(),
          rewind('B', 1, { paths: ['gen'] }),
          rewind('A', 1),
        ],
      ),
    );
  });
});

describe('the long random run of 6a10963 (seed 615000038), shrunk: the oracle was wrong', () => {
  // another session replaced the directory holding the agent's files by a file: a forced rewind
  // of the agent's turn would have to remove that file, which is not the agent's; no force
  // overrides that, and the refusal names the path and writes nothing
  it('a forced rewind of files whose directory another session replaced by a file: refused, named, nothing written', () => {
    check(
      trace(
        [A, B],
        [
          setup.file('src/lib/util.ts', 'line name 72\ngamma const 25\ntodo value 37\nname value 50\n'),
          B.start('prompt 14'),
          A.start('prompt 15'),
          A.parallel([write('src/lib/extra3.ts', 'port value 4\n'), edit('src/lib/util.ts', 'name value 50', 'name value 50 edited')]),
          B.shell('d=src; rm -rf $d && echo x > $d'),
          A.end(),
          rewind('A', 1, { force: true }),
        ],
      ),
    );
  });
});

describe('the long random run of 6a10963 (seed 615000102), shrunk', () => {
  // a commit made with a clock set back, pushed, then `git gc`: gc expires HEAD's reflog entry of
  // that commit by its date, so the reflog cannot tell what was made since the turn began, and by
  // dates the commit was older than the turn's: the rewind went ahead over a pushed commit. When
  // the reflog cannot tell, every commit new since counts, whatever its date (I5)
  it('a commit with a clock set back, pushed, then git gc expiring its reflog entry: the rewind refuses', () => {
    check(
      trace(
        [A, B],
        [
          setup.link('srclink', 'src'),
          setup.sh('git add -A && git commit -qm base'),
          setup.sh('git init -q --bare ../origin.git && git remote add origin ../origin.git && git push -q -u origin main 2>/dev/null'),
          person.file('added.txt', 'x\n'),
          person.sh('git add added.txt'),
          A.start(),
          person.sh("GIT_COMMITTER_DATE='1500000000 +0000' git commit -qam old && git push -q origin HEAD"),
          person.sh('git gc -q --prune=now'),
          A.end(),
          rewind('A', 1, { kill: true }),
        ],
      ),
    );
  });
});

describe('the long random run of f1f4b2d (seed 617000058), shrunk: the oracle was wrong', () => {
  // the person replaced `.gitattributes` (eol=crlf) by a symlink, which git ignores: git still
  // calls a.txt (CRLF bytes, an LF blob) clean on its stat alone, though under today's rules its
  // bytes hash otherwise. The agent removes it; the rewind brings back the bytes and the index
  // entry git reported clean when the call began (I3), so git calls it clean again: not the
  // rewind's doing (the oracle now records git's answer when each call begins)
  it("a file git calls clean under rules a person changed since: the rewind brings back git's answer", () => {
    check(
      trace(
        [A],
        [
          setup.file('.gitattributes', '*.txt eol=crlf\n'),
          setup.file('a.txt', 'x\r\n'),
          setup.sh('git add -A && git commit -qm base'),
          A.start(),
          person.sh('rm -f .gitattributes && ln -s scratch/idea1.txt .gitattributes'),
          A.shell('rm -f a.txt'),
          A.end(),
          rewind('A', 1),
        ],
      ),
    );
  });
});

describe('the long random run of fd5dc80 (seed 265673978), shrunk by hand: the oracle was wrong', () => {
  // another session removed `.gitattributes` (eol=crlf); the agent's command brought it back; the
  // rewind takes that back, so `.gitattributes` is gone again and git calls a.txt (CRLF bytes, an
  // LF blob, untouched by anyone) clean on its stat alone, as it did when the agent's call began.
  // The rewind did not change a.txt and may not (it is not the turn's): git's answer is the one
  // of then (the shrunk sequence had 33 steps; this is its core)
  it('a rule file the rewind takes back to what it was: an untouched file git called clean then is clean again', () => {
    check(
      trace(
        [A],
        [
          setup.file('.gitattributes', '*.txt eol=crlf\n'),
          setup.file('a.txt', 'x\r\n'),
          setup.sh('git add -A && git commit -qm base'),
          A.start(),
          person.sh('rm .gitattributes'),
          A.shell('git checkout -- .gitattributes'),
          A.end(),
          rewind('A', 1),
        ],
      ),
    );
  });
});

describe('the long random run of fd5dc80 (seed 265673980), shrunk by hand: the oracle was wrong', () => {
  // turn 1 removes README.md (`git rm`); turn 2's `git reset --hard` brings it back, in the
  // worktree and the index; the person then deletes the file. Rewinding turn 2 takes back the
  // index entry, the agent's, and writes nothing in the worktree, which already holds what it held
  // before turn 2 (absent): a rewind goes part by part, and nothing of the person's is overwritten
  it("a path someone else changed after the agent, each part now the agent's or what it was before: taken back, exit 0", () => {
    check(
      trace(
        [A],
        [
          setup.file('README.md', 'readme\n'),
          setup.sh('git add -A && git commit -qm base'),
          A.start(),
          A.shell('git rm -q README.md'),
          A.end(),
          A.start(),
          A.shell('git reset -q --hard'),
          A.end(),
          person.rm('README.md'),
          rewind(),
        ],
      ),
    );
  });
});

describe('the long random run of 7804c08 (seed 125848668), shrunk by hand: the oracle was wrong', () => {
  // the person made src/app.ts a directory holding a note; the agent appends to the note, another
  // session stages it (taking src/app.ts's file entry out), the agent's `git stash` puts the file
  // entry and the file back and its `rm -rf src` removes them. A forced rewind of the note alone
  // brings the note back and makes src/app.ts the directory that holds it; src/app.ts's file
  // entry, the stash's, is not among the paths taken back and stays in the index
  it('a forced rewind of one path beneath a tracked file the agent put back: the directory again, the file entry left', () => {
    check(
      trace(
        [A, B],
        [
          setup.file('src/app.ts', 'app\n'),
          setup.sh('git add -A && git commit -qm base'),
          person.rm('src/app.ts'),
          person.file('src/app.ts/inner.txt', 'note\n'),
          A.start(),
          A.shell('echo fix >> src/app.ts/inner.txt'),
          B.start(),
          B.shell('git add src/app.ts/inner.txt'),
          B.end(),
          A.shell('git stash -q'),
          A.shell('rm -rf src'),
          A.end(),
          rewind('A', 1, { force: true, paths: ['src/app.ts/inner.txt'] }),
        ],
      ),
    );
  });
});

describe('the long random run of 7804c08 (seed 125848682), shrunk by hand: the oracle was wrong', () => {
  // the person made run.sh a directory holding a note; the agent's `git stash` put the tracked
  // file run.sh back in its place. A forced rewind of the note alone would have to remove the
  // file run.sh, which is not among the paths taken back: refused (exit 3), named, nothing written
  // (rewinding run.sh too, or moving it away, lets it through)
  it('a forced rewind of a path whose parent the agent made a file, the parent not among the paths: refused, nothing written', () => {
    check(
      trace(
        [A],
        [
          setup.file('run.sh', '#!/bin/sh\necho run\n', true),
          setup.sh('git add -A && git commit -qm base'),
          person.rm('run.sh'),
          person.file('run.sh/inner.txt', 'note\n'),
          A.start(),
          A.shell('git stash -q'),
          A.end(),
          rewind('A', 1, { force: true, paths: ['run.sh/inner.txt'] }),
        ],
      ),
    );
  });
});

describe('the long random run of 7804c08 (seed 619000072), shrunk by hand: the oracle was wrong', () => {
  // A's command makes node_modules/pkg/index.js (an ignored directory from nothing); B's command
  // moves the file out; A's rewind removes what is left of node_modules (A's own). B's rewind
  // cannot bring the file back (a command's change inside an ignored directory that was there
  // when it ran is never captured) and names it: the oracle judged the directory by what it holds
  // now (nothing, since A's rewind), not by what it held when B's command ran
  it("a file another session's command moved out of an ignored directory a rewind removed since: named, not brought back", () => {
    check(
      trace(
        [A, B],
        [
          setup.file('.gitignore', 'node_modules/\n'),
          setup.sh('git add -A && git commit -qm base'),
          A.start(),
          A.shell('mkdir -p node_modules/pkg && echo m > node_modules/pkg/index.js'),
          B.start(),
          A.end(),
          B.shell('mv node_modules/pkg/index.js moved.txt'),
          B.end(),
          rewind('A', 1),
          rewind('B', 1),
        ],
      ),
    );
  });
});
