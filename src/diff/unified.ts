/** The bytes `git diff` prints for a file's hunks, after its `---` / `+++` lines. */
import { rangesText, type Hunk } from './hunks.js';

const KIND = { ' ': Uint8Array.of(0x20), '-': Uint8Array.of(0x2d), '+': Uint8Array.of(0x2b) } as const;
const NEWLINE = Uint8Array.of(0x0a);
const NO_NEWLINE = new TextEncoder().encode('\\ No newline at end of file\n');

/** `@@ -a,b +c,d @@ header` lines followed by their `' '`, `-` and `+` lines, with git's `\ No newline at end of file`. */
export function formatUnified(hunks: readonly Hunk[]): Uint8Array {
  const enc = new TextEncoder();
  const parts: Uint8Array[] = [];
  for (const h of hunks) {
    const ranges = rangesText(h.oldStart, h.oldLines, h.newStart, h.newLines);
    parts.push(enc.encode(h.header ? `${ranges} ${h.header}\n` : `${ranges}\n`));
    for (const line of h.lines) {
      parts.push(KIND[line.kind], line.text, NEWLINE);
      if (line.noNewline) parts.push(NO_NEWLINE);
    }
  }
  return concat(parts);
}

function concat(parts: readonly Uint8Array[]): Uint8Array {
  let n = 0;
  for (const p of parts) n += p.length;
  const out = new Uint8Array(n);
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}
