/**
 * Files as sequences of lines, and lines as small integers: two lines get the same class number
 * exactly when their bytes are equal (newline included), so the algorithms compare numbers.
 */

const NL = 0x0a;

/** A file cut into lines as git cuts it: each line keeps its newline, the last one may lack it. */
export interface Lines {
  readonly bytes: Uint8Array;
  /** `starts[i]` is where line `i` begins; `starts[count]` is the length of `bytes`. */
  readonly starts: Int32Array;
  readonly count: number;
}

/** Cuts `bytes` into lines. An empty file has no lines; a last line without newline is still a line. */
export function splitLines(bytes: Uint8Array): Lines {
  const ends: number[] = [];
  let pos = 0;
  while (pos < bytes.length) {
    const nl = bytes.indexOf(NL, pos);
    pos = nl < 0 ? bytes.length : nl + 1;
    ends.push(pos);
  }
  const starts = new Int32Array(ends.length + 1);
  for (let i = 0; i < ends.length; i++) starts[i + 1] = ends[i];
  return { bytes, starts, count: ends.length };
}

/** Line `i` with its newline, as a view into the file's bytes. */
export function lineAt(lines: Lines, i: number): Uint8Array {
  return lines.bytes.subarray(lines.starts[i], lines.starts[i + 1]);
}

/** True when line `i` ends with a newline. */
export function hasNewline(lines: Lines, i: number): boolean {
  const end = lines.starts[i + 1];
  return end > lines.starts[i] && lines.bytes[end - 1] === NL;
}

/** Both files' lines as class numbers, with how often each class occurs in each file. */
export interface Classes {
  readonly ids1: Int32Array;
  readonly ids2: Int32Array;
  /** Occurrences of each class in the first file. */
  readonly count1: Int32Array;
  /** Occurrences of each class in the second file. */
  readonly count2: Int32Array;
}

function hashLine(bytes: Uint8Array, from: number, to: number): number {
  let h = 5381;
  for (let i = from; i < to; i++) h = (Math.imul(h, 33) ^ bytes[i]) | 0;
  return h;
}

function sameLine(x: Lines, i: number, y: Lines, j: number): boolean {
  const xs = x.starts[i];
  const ys = y.starts[j];
  const n = x.starts[i + 1] - xs;
  if (y.starts[j + 1] - ys !== n) return false;
  for (let k = 0; k < n; k++) if (x.bytes[xs + k] !== y.bytes[ys + k]) return false;
  return true;
}

/** Numbers the distinct lines of both files, first come first numbered. */
export function classify(a: Lines, b: Lines): Classes {
  // hash -> newest class with that hash; classes with equal hashes chain through `older`
  const byHash = new Map<number, number>();
  const older: number[] = [];
  const repFile: Lines[] = [];
  const repLine: number[] = [];
  const n1: number[] = [];
  const n2: number[] = [];

  const number = (file: Lines, ids: Int32Array, counts: number[]): void => {
    for (let i = 0; i < file.count; i++) {
      const h = hashLine(file.bytes, file.starts[i], file.starts[i + 1]);
      const head = byHash.get(h);
      let id = head ?? -1;
      while (id >= 0 && !sameLine(repFile[id], repLine[id], file, i)) id = older[id];
      if (id < 0) {
        id = repFile.length;
        repFile.push(file);
        repLine.push(i);
        older.push(head ?? -1);
        n1.push(0);
        n2.push(0);
        byHash.set(h, id);
      }
      counts[id]++;
      ids[i] = id;
    }
  };

  const ids1 = new Int32Array(a.count);
  const ids2 = new Int32Array(b.count);
  number(a, ids1, n1);
  number(b, ids2, n2);
  return { ids1, ids2, count1: Int32Array.from(n1), count2: Int32Array.from(n2) };
}
