/** How files cross the Playwright boundary: a listing of paths, file bytes as base64. */
export interface FileSpec {
  path: string;
  kind: 'file' | 'symlink' | 'dir';
  /** base64, for files */
  data?: string;
  mode?: number;
  /** for symlinks */
  target?: string;
}

/** What one entry of a page's filesystem holds, as dumpTree asks a page for it. */
export type DumpedEntry = { kind: 'dir' } | { kind: 'symlink'; target: string } | { kind: 'file'; data: Uint8Array; mode: number };

/** Every entry under `dir`, depth first in name order, as a page sends its repository back. */
export async function dumpTree(
  dir: string,
  readdir: (p: string) => Promise<string[]>,
  entry: (p: string) => Promise<DumpedEntry>,
  rel = '',
): Promise<FileSpec[]> {
  const out: FileSpec[] = [];
  for (const name of (await readdir(dir)).sort()) {
    const p = `${dir}/${name}`;
    const r = rel ? `${rel}/${name}` : name;
    const e = await entry(p);
    if (e.kind === 'dir') out.push({ path: r, kind: 'dir' }, ...(await dumpTree(p, readdir, entry, r)));
    else if (e.kind === 'symlink') out.push({ path: r, kind: 'symlink', target: e.target });
    else out.push({ path: r, kind: 'file', data: b64.encode(e.data), mode: e.mode & 0o777 });
  }
  return out;
}

export const b64 = {
  decode(s: string): Uint8Array {
    const bin = atob(s);
    const out = new Uint8Array(bin.length);
    for (let i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
    return out;
  },
  encode(b: Uint8Array): string {
    let s = '';
    for (let i = 0; i < b.length; i += 0x8000) s += String.fromCharCode(...b.subarray(i, i + 0x8000));
    return btoa(s);
  },
};

/** Bytes with structure (so deflate has work) and noise, the same for the same seed in Node and in a page. */
export function sample(n: number, seed = 1): Uint8Array {
  const out = new Uint8Array(n);
  let s = seed >>> 0 || 1;
  for (let i = 0; i < n; i++) {
    s = (s * 1103515245 + 12345) >>> 0;
    out[i] = s % 7 === 0 ? s >>> 24 : 0x61 + (i % 23);
  }
  return out;
}
