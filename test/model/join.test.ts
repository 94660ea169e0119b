import { describe, expect, it } from 'vitest';
import { joinCaptured, markOverwritten, mergeStates, othersBeneath, type Contest, type PathState } from '../../src/model/state.js';

const oid = 'a'.repeat(40);
const file = (path: string) => ({ path, kind: 'file' as const, mode: 0o100644 as const, oid, size: 1 });
const dir = (path: string) => ({ path, kind: 'dir' as const });

describe('joinCaptured in a turn', () => {
  // the agent's write of pkg/x/y/z.txt captured it absent with pkg absent; a later command's
  // capture of pkg finds the directories that write made
  const first: PathState = {
    roots: ['pkg/x/y/z.txt'],
    items: [],
    index: [],
    reuc: [],
    absentParents: [{ root: 'pkg/x/y/z.txt', existing: '' }],
  };

  it('leaves out the directories made to hold an earlier root: pkg was absent, so it stays absent', () => {
    const later: PathState = {
      roots: ['pkg'],
      items: [dir('pkg'), dir('pkg/x'), dir('pkg/x/y'), file('pkg/x/y/z.txt')],
      index: [],
      reuc: [],
    };
    expect(joinCaptured(first, later, { dropUnderAbsent: false }).items).toEqual([]);
  });

  it("keeps someone else's note there, with the directories it needs to sit in", () => {
    const later: PathState = {
      roots: ['pkg'],
      items: [dir('pkg'), dir('pkg/x'), file('pkg/x/note.md'), dir('pkg/x/y'), file('pkg/x/y/z.txt')],
      index: [],
      reuc: [],
    };
    expect(joinCaptured(first, later, { dropUnderAbsent: false }).items.map((i) => i.path)).toEqual(['pkg', 'pkg/x', 'pkg/x/note.md']);
  });
});

describe('joinCaptured over an earlier root whose directory is something else now', () => {
  // the turn's write captured src/deep/x/y.txt; another session's command then replaced
  // src/deep/x with a file, and the turn's edit of that file captures it
  const first: PathState = {
    roots: ['src/deep/x/y.txt'],
    items: [file('src/deep/x/y.txt')],
    index: [
      { path: 'src/deep/x/y.txt', mode: 0o100644, oid, stage: 0, flags: { assumeValid: false, skipWorktree: false, intentToAdd: false } },
    ],
    reuc: [],
  };
  it('shows the directories above what the first capture found as directories (one name, one kind)', () => {
    const later: PathState = {
      roots: ['src/deep/x'],
      items: [file('src/deep/x')],
      index: [
        { path: 'src/deep/x', mode: 0o100644, oid, stage: 0, flags: { assumeValid: false, skipWorktree: false, intentToAdd: false } },
      ],
      reuc: [],
    };
    const joined = joinCaptured(first, later, { dropUnderAbsent: false });
    expect(joined.roots).toEqual(['src/deep/x']);
    expect(joined.items).toEqual([dir('src/deep/x'), file('src/deep/x/y.txt')]);
    // an index entry at the directory's path could not sit beside the one beneath it
    expect(joined.index.map((e) => e.path)).toEqual(['src/deep/x/y.txt']);
  });
});

describe('markOverwritten', () => {
  const c: Contest = { path: 'a.txt', part: 'worktree', expected: 'file 100644 ' + 'b'.repeat(40), found: 'file 100644 ' + oid };
  it('marks a contest whose found version is gone from what a call left; not one that still holds it, nor one outside the capture', () => {
    const gone: PathState = { roots: ['a.txt'], items: [], index: [], reuc: [] };
    const still: PathState = { roots: ['a.txt'], items: [file('a.txt')], index: [], reuc: [] };
    const other: PathState = { roots: ['b.txt'], items: [], index: [], reuc: [] };
    expect(markOverwritten([c], gone)).toEqual([{ ...c, overwritten: true }]);
    expect(markOverwritten([c], still)).toEqual([c]);
    expect(markOverwritten([c], other)).toEqual([c]);
    expect(markOverwritten([{ ...c, why: 'unfinished' }], gone)).toEqual([{ ...c, why: 'unfinished' }]);
  });
});

describe('othersBeneath: what someone else put beneath an earlier capture, before a later call goes over it', () => {
  // the turn's command made docs/new2 (docs captured absent) and its seal holds what it left there
  const old: PathState = { roots: ['docs'], items: [], index: [], reuc: [] };
  const seal: PathState = { roots: ['docs'], items: [dir('docs'), dir('docs/new2'), file('docs/new2/run.sh')], index: [], reuc: [] };
  const note = { ...file('docs/new2/note.md'), oid: 'b'.repeat(40) };

  it("takes a person's note in, with the directories it sits in, and leaves out what the agent left there", () => {
    const later: PathState = { roots: ['docs/new2'], items: [dir('docs/new2'), note, file('docs/new2/run.sh')], index: [], reuc: [] };
    const others = othersBeneath(old, seal, later);
    expect(others).toEqual({ roots: ['docs/new2/note.md'], items: [note], index: [], reuc: [] });
    const pre = mergeStates(old, others as PathState);
    expect(pre.roots).toEqual(['docs']);
    expect(pre.items.map((i) => i.path)).toEqual(['docs', 'docs/new2', 'docs/new2/note.md']);
  });

  it('nothing when the later capture is what the seal holds, is not beneath an earlier root, or there is no seal', () => {
    const same: PathState = { roots: ['docs/new2'], items: [dir('docs/new2'), file('docs/new2/run.sh')], index: [], reuc: [] };
    expect(othersBeneath(old, seal, same)).toBeNull();
    const elsewhere: PathState = { roots: ['src/x.ts'], items: [file('src/x.ts')], index: [], reuc: [] };
    expect(othersBeneath(old, seal, elsewhere)).toBeNull();
    expect(othersBeneath(old, null, { ...same, items: [...same.items, note] })).toBeNull();
    // what the seal holds, changed by someone else since (the agent's file, appended to): a
    // contest of the turn's own path, not something that was there before the turn
    const appended = { ...file('docs/new2/run.sh'), oid: 'c'.repeat(40) };
    expect(othersBeneath(old, seal, { roots: ['docs/new2'], items: [dir('docs/new2'), appended], index: [], reuc: [] })).toBeNull();
  });

  it('the same root as the earlier capture (a command that removes the whole directory it made): the note is taken in all the same', () => {
    const whole: PathState = {
      roots: ['docs'],
      items: [dir('docs'), dir('docs/new2'), note, file('docs/new2/run.sh')],
      index: [],
      reuc: [],
    };
    expect(othersBeneath(old, seal, whole)).toEqual({ roots: ['docs/new2/note.md'], items: [note], index: [], reuc: [] });
  });

  it('what the earlier capture holds stays its first capture (the agent removed the file, someone put another there)', () => {
    const first: PathState = { roots: ['docs'], items: [dir('docs'), file('docs/keep.md')], index: [], reuc: [] };
    const sealedGone: PathState = { roots: ['docs'], items: [dir('docs')], index: [], reuc: [] };
    const again = { ...file('docs/keep.md'), oid: 'd'.repeat(40) };
    expect(othersBeneath(first, sealedGone, { roots: ['docs'], items: [dir('docs'), again], index: [], reuc: [] })).toBeNull();
  });

  it('a path someone else removed is not taken in (the earlier capture says it was absent already)', () => {
    const later: PathState = { roots: ['docs/new2'], items: [dir('docs/new2')], index: [], reuc: [] };
    expect(othersBeneath(old, seal, later)).toBeNull();
  });
});
