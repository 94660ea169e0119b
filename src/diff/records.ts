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
  let count = 0;
  for (let pos = 0; pos < bytes.length; count++) {
    const nl = bytes.indexOf(NL, pos);
    pos = nl < 0 ? bytes.length : nl + 1;
  }
  const starts = new Int32Array(count + 1);
  for (let i = 1, pos = 0; i <= count; i++) {
    const nl = bytes.indexOf(NL, pos);
    pos = nl < 0 ? bytes.length : nl + 1;
    starts[i] = pos;
  }
  return { bytes, starts, count };
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

// kept within 30 bits so that V8 stores it as a small integer, not a boxed number
function hashLine(bytes: Uint8Array, from: number, to: number): number {
  let h = 5381;
  for (let i = from; i < to; i++) h = (Math.imul(h, 33) ^ bytes[i]) | 0;
  return h & 0x3fffffff;
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
  const most = a.count + b.count;
  // open addressing: slot -> class + 1 (0 is free), at most half full
  let size = 2;
  while (size < 2 * most) size <<= 1;
  const slots = new Int32Array(size);
  const mask = size - 1;
  const hashOf = new Int32Array(most);
  const repInB = new Uint8Array(most);
  const repLine = new Int32Array(most);
  const count1 = new Int32Array(most);
  const count2 = new Int32Array(most);
  let classes = 0;

  const number = (file: Lines, inB: number, ids: Int32Array, counts: Int32Array): void => {
    for (let i = 0; i < file.count; i++) {
      const h = hashLine(file.bytes, file.starts[i], file.starts[i + 1]);
      let slot = h & mask;
      let id = -1;
      for (; slots[slot] !== 0; slot = (slot + 1) & mask) {
        const c = slots[slot] - 1;
        if (hashOf[c] === h && sameLine(repInB[c] ? b : a, repLine[c], file, i)) {
          id = c;
          break;
        }
      }
      if (id < 0) {
        id = classes++;
        slots[slot] = id + 1;
        hashOf[id] = h;
        repInB[id] = inB;
        repLine[id] = i;
      }
      counts[id]++;
      ids[i] = id;
    }
  };

  const ids1 = new Int32Array(a.count);
  const ids2 = new Int32Array(b.count);
  number(a, 0, ids1, count1);
  number(b, 1, ids2, count2);
  return { ids1, ids2, count1: count1.subarray(0, classes), count2: count2.subarray(0, classes) };
}
