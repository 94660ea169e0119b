/**
 * Sliding groups of changed lines. A run of added (or removed) lines that starts with the line
 * that follows it can move down by one, and up when it ends with the line before it; the diff
 * means the same either way. git first slides every group as far as it goes (merging groups it
 * meets), lines it up with a change on the other side where it can, and otherwise lets the indent
 * heuristic pick the position whose two cut points look most like block boundaries.
 */
import type { Side } from './prepare.js';
import type { Lines } from './records.js';

/** A (possibly empty) run of changed lines: `start` is its first line, `end` the unchanged line after it. */
interface Group {
  start: number;
  end: number;
}

function firstGroup(side: Side): Group {
  let end = 0;
  while (side.changed[end + 1]) end++;
  return { start: 0, end };
}

/** Moves to the next group; false when `g` is the last one. */
function nextGroup(side: Side, g: Group): boolean {
  if (g.end === side.count) return false;
  g.start = g.end + 1;
  g.end = g.start;
  while (side.changed[g.end + 1]) g.end++;
  return true;
}

/** Moves to the previous group; false when `g` is the first one. */
function previousGroup(side: Side, g: Group): boolean {
  if (g.start === 0) return false;
  g.end = g.start - 1;
  g.start = g.end;
  while (side.changed[g.start]) g.start--;
  return true;
}

/** Slides the group down one line, swallowing a group it then touches; false when it cannot move. */
function slideDown(side: Side, g: Group): boolean {
  if (g.end >= side.count || side.ids[g.start] !== side.ids[g.end]) return false;
  side.changed[g.start++ + 1] = 0;
  side.changed[g.end++ + 1] = 1;
  while (side.changed[g.end + 1]) g.end++;
  return true;
}

/** Slides the group up one line, swallowing a group it then touches; false when it cannot move. */
function slideUp(side: Side, g: Group): boolean {
  if (g.start === 0 || side.ids[g.start - 1] !== side.ids[g.end - 1]) return false;
  side.changed[--g.start + 1] = 1;
  side.changed[--g.end + 1] = 0;
  while (side.changed[g.start]) g.start--;
  return true;
}

/**
 * Slides the changed groups of `side` to their final places. `other` is the other file, whose
 * groups are walked in step (each unchanged line pairs with one on the other side).
 */
export function compact(side: Side, other: Side, lines: Lines, indentHeuristic: boolean): void {
  const g = firstGroup(side);
  const go = firstGroup(other);
  const indents = new Indents(lines);
  for (;;) {
    if (g.end !== g.start) place(side, other, g, go, indentHeuristic ? indents : null);
    if (!nextGroup(side, g)) break;
    nextGroup(other, go);
  }
}

function place(side: Side, other: Side, g: Group, go: Group, indents: Indents | null): void {
  let size: number;
  let earliestEnd: number;
  // the lowest end at which the group faces changed lines on the other side, -1 if none
  let endFacingChange: number;
  do {
    size = g.end - g.start;
    endFacingChange = -1;
    while (slideUp(side, g)) previousGroup(other, go);
    earliestEnd = g.end;
    if (go.end > go.start) endFacingChange = g.end;
    while (slideDown(side, g)) {
      nextGroup(other, go);
      if (go.end > go.start) endFacingChange = g.end;
    }
  } while (size !== g.end - g.start);

  if (g.end === earliestEnd) return;
  if (endFacingChange !== -1) {
    while (go.end === go.start) {
      slideUp(side, g);
      previousGroup(other, go);
    }
  } else if (indents) {
    const best = bestShift(indents, g.end, size, earliestEnd);
    while (g.end > best) {
      slideUp(side, g);
      previousGroup(other, go);
    }
  }
}

// --- the indent heuristic ---

const MAX_INDENT = 200;
const MAX_BLANKS = 20;
const MAX_SLIDING = 100;

const START_OF_FILE_PENALTY = 1;
const END_OF_FILE_PENALTY = 21;
const TOTAL_BLANK_WEIGHT = -30;
const POST_BLANK_WEIGHT = 6;
const RELATIVE_INDENT_PENALTY = -4;
const RELATIVE_INDENT_WITH_BLANK_PENALTY = 10;
const RELATIVE_OUTDENT_PENALTY = 24;
const RELATIVE_OUTDENT_WITH_BLANK_PENALTY = 17;
const RELATIVE_DEDENT_PENALTY = 23;
const RELATIVE_DEDENT_WITH_BLANK_PENALTY = 17;
const INDENT_WEIGHT = 60;

/** Each line's indentation (tabs to multiples of 8, capped), or -1 for a blank line; computed once. */
class Indents {
  private readonly cache: Int16Array;
  constructor(readonly lines: Lines) {
    this.cache = new Int16Array(lines.count).fill(-2);
  }

  get count(): number {
    return this.lines.count;
  }

  of(i: number): number {
    let v = this.cache[i];
    if (v === -2) v = this.cache[i] = measureIndent(this.lines, i);
    return v;
  }
}

function measureIndent(lines: Lines, i: number): number {
  const { bytes, starts } = lines;
  let indent = 0;
  for (let p = starts[i]; p < starts[i + 1]; p++) {
    const c = bytes[p];
    if (c === 0x20) indent += 1;
    else if (c === 0x09) indent += 8 - (indent % 8);
    else if (c !== 0x0a && c !== 0x0d) return indent; // other whitespace counts for nothing
    if (indent >= MAX_INDENT) return MAX_INDENT;
  }
  return -1;
}

interface Score {
  indent: number;
  penalty: number;
}

/** The end position, between the highest and the current one, whose two cut points score best. */
function bestShift(indents: Indents, end: number, size: number, earliestEnd: number): number {
  let best = -1;
  let bestScore: Score = { indent: 0, penalty: 0 };
  const from = Math.max(earliestEnd, end - size - 1, end - MAX_SLIDING);
  for (let shift = from; shift <= end; shift++) {
    const score: Score = { indent: 0, penalty: 0 };
    addCutScore(indents, shift, score);
    addCutScore(indents, shift - size, score);
    if (best === -1 || compareScores(score, bestScore) <= 0) {
      bestScore = score;
      best = shift;
    }
  }
  return best;
}

function compareScores(s1: Score, s2: Score): number {
  const byIndent = Math.sign(s1.indent - s2.indent);
  return INDENT_WEIGHT * byIndent + (s1.penalty - s2.penalty);
}

/** Adds the badness of cutting the file just above line `cut`. */
function addCutScore(indents: Indents, cut: number, score: Score): void {
  const atEnd = cut >= indents.count;
  const indent = atEnd ? -1 : indents.of(cut);
  const before = blanksThenIndent(indents, cut - 1, -1);
  const after = blanksThenIndent(indents, cut + 1, 1);

  if (before.indent === -1 && before.blanks === 0) score.penalty += START_OF_FILE_PENALTY;
  if (atEnd) score.penalty += END_OF_FILE_PENALTY;

  // blank lines just after the cut, counting the line right after it
  const postBlank = indent === -1 ? 1 + after.blanks : 0;
  const totalBlank = before.blanks + postBlank;
  score.penalty += TOTAL_BLANK_WEIGHT * totalBlank + POST_BLANK_WEIGHT * postBlank;

  const effective = indent !== -1 ? indent : after.indent;
  const blanks = totalBlank !== 0;
  score.indent += effective;

  if (effective === -1 || before.indent === -1 || effective === before.indent) return;
  if (effective > before.indent) {
    score.penalty += blanks ? RELATIVE_INDENT_WITH_BLANK_PENALTY : RELATIVE_INDENT_PENALTY;
  } else if (after.indent !== -1 && after.indent > effective) {
    // less indented than before, more after: probably a block's first line
    score.penalty += blanks ? RELATIVE_OUTDENT_WITH_BLANK_PENALTY : RELATIVE_OUTDENT_PENALTY;
  } else {
    // probably the end of a block
    score.penalty += blanks ? RELATIVE_DEDENT_WITH_BLANK_PENALTY : RELATIVE_DEDENT_PENALTY;
  }
}

/** From line `i` in direction `step`: how many blank lines, then the indent of the first non-blank (-1 if none). */
function blanksThenIndent(indents: Indents, i: number, step: 1 | -1): { blanks: number; indent: number } {
  let blanks = 0;
  for (; i >= 0 && i < indents.count; i += step) {
    const indent = indents.of(i);
    if (indent !== -1) return { blanks, indent };
    if (++blanks === MAX_BLANKS) return { blanks, indent: 0 };
  }
  return { blanks, indent: -1 };
}
