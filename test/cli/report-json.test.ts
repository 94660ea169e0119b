import { describe, expect, it } from 'vitest';
import { describeEntries, describeItem, type IndexRecord, type WorktreeItem } from '../../src/model/state.js';
import { conflictJson, errorDataJson, pathPlanJson, stateOf } from '../../src/cli/report-json.js';

const A = 'a'.repeat(40);
const B = 'b'.repeat(40);
const S256 = 'c'.repeat(64);
const flags = (o: Partial<IndexRecord['flags']> = {}) => ({ assumeValid: false, skipWorktree: false, intentToAdd: false, ...o });

describe('--json gives the states of a report as fields, read back from the words the library makes', () => {
  it('worktree items: every kind describeItem writes', () => {
    const cases: Array<[WorktreeItem | undefined, unknown]> = [
      [undefined, { kind: 'absent' }],
      [{ path: 'd', kind: 'dir' }, { kind: 'directory' }],
      [
        { path: 'f', kind: 'file', mode: 0o100644, oid: A, size: 3 },
        { kind: 'file', mode: '100644', oid: A },
      ],
      [
        { path: 'x', kind: 'file', mode: 0o100755, oid: S256, size: 3 },
        { kind: 'file', mode: '100755', oid: S256 },
      ],
      [
        { path: 'l', kind: 'symlink', target: '../a (b)', oid: B },
        { kind: 'symlink', target: '../a (b)' },
      ],
      [
        { path: 'l', kind: 'symlink', target: 'x -> y', oid: B },
        { kind: 'symlink', target: 'x -> y' },
      ],
    ];
    for (const [item, want] of cases) expect(stateOf('worktree', describeItem(item))).toEqual(want);
  });

  it('index entries: stages, modes, ids and flags, as describeEntries writes them', () => {
    const entries: IndexRecord[] = [
      { path: 'p', stage: 1, mode: 0o100644, oid: A, flags: flags() },
      { path: 'p', stage: 2, mode: 0o100755, oid: B, flags: flags({ skipWorktree: true, assumeValid: true }) },
      { path: 'p', stage: 3, mode: 0o120000, oid: A, flags: flags({ intentToAdd: true }) },
    ];
    expect(stateOf('index', describeEntries([]))).toEqual({ kind: 'absent' });
    expect(stateOf('index', describeEntries(entries))).toEqual({
      kind: 'entries',
      entries: [
        { stage: 1, mode: '100644', oid: A, flags: [] },
        { stage: 2, mode: '100755', oid: B, flags: ['assume-unchanged', 'skip-worktree'] },
        { stage: 3, mode: '120000', oid: A, flags: ['intent-to-add'] },
      ],
    });
  });

  it('resolve-undo records, in full or only their presence', () => {
    expect(stateOf('resolve-undo', 'no resolve-undo record')).toEqual({ kind: 'absent' });
    expect(stateOf('resolve-undo', 'a resolve-undo record')).toEqual({ kind: 'resolve-undo' });
    expect(stateOf('resolve-undo', `1:100644 ${A} 2:- 3:100755 ${B}`)).toEqual({
      kind: 'resolve-undo',
      stages: [
        { stage: 1, mode: '100644', oid: A },
        { stage: 3, mode: '100755', oid: B },
      ],
    });
  });

  it("a conflict's notes (whose write it was, which snapshot) become a note; words it does not know stay, as unknown", () => {
    expect(stateOf('worktree', `file 100644 ${A} (the agent's last write)`)).toEqual({
      kind: 'file',
      mode: '100644',
      oid: A,
      note: "the agent's last write",
    });
    expect(stateOf('worktree', 'symlink -> t (x) (as snapshot 1a2b3c4d left it)')).toEqual({
      kind: 'symlink',
      target: 't (x)',
      note: 'as snapshot 1a2b3c4d left it',
    });
    expect(stateOf('index', `100644 ${A} 0 (what snapshot 1a2b3c4d found)`)).toEqual({
      kind: 'entries',
      entries: [{ stage: 0, mode: '100644', oid: A, flags: [] }],
      note: 'what snapshot 1a2b3c4d found',
    });
    expect(stateOf('worktree', "absent (someone else's, then gone under a later call of the turn)")).toMatchObject({
      kind: 'absent',
      note: expect.stringContaining("someone else's"),
    });
    expect(stateOf('worktree', 'a fifo')).toEqual({ kind: 'unknown', text: 'a fifo' });
  });

  it('plans and conflicts carry no state as words', () => {
    const plan = pathPlanJson({
      path: 'p',
      worktree: { action: 'write', from: `file 100644 ${A}`, to: 'absent' },
      index: { from: 'no index entry', to: `100644 ${B} 0` },
      resolveUndo: null,
    });
    expect(plan).toEqual({
      path: 'p',
      worktree: { action: 'write', from: { kind: 'file', mode: '100644', oid: A }, to: { kind: 'absent' } },
      index: { from: { kind: 'absent' }, to: { kind: 'entries', entries: [{ stage: 0, mode: '100644', oid: B, flags: [] }] } },
      resolveUndo: null,
    });
    const c = conflictJson({
      path: 'p',
      part: 'worktree',
      expected: `file 100644 ${A}`,
      found: `file 100644 ${B}`,
      restoring: 'absent',
      snapshot: '1a2b3c4d',
    });
    expect(c).toEqual({
      path: 'p',
      part: 'worktree',
      snapshot: '1a2b3c4d',
      expected: { kind: 'file', mode: '100644', oid: A },
      found: { kind: 'file', mode: '100644', oid: B },
      restoring: { kind: 'absent' },
    });
    const data = {
      conflicts: [
        { path: 'p', part: 'index', expected: 'no index entry', found: `100644 ${A} 0`, restoring: 'no index entry', snapshot: 's' },
      ],
      session: 'x',
      overridable: true,
    };
    expect(errorDataJson(data)).toMatchObject({
      session: 'x',
      overridable: true,
      conflicts: [{ expected: { kind: 'absent' }, found: { kind: 'entries' } }],
    });
    // data without conflicts passes as it is
    const other = { path: 'x' };
    expect(errorDataJson(other)).toBe(other);
  });
});
