/** POSIX-style path helpers for the absolute '/'-separated paths the Fs contract uses. */

export function joinPath(...parts: string[]): string {
  return normalizePath(parts.filter((p) => p.length > 0).join('/'));
}

/** Collapse '.', '..' and repeated slashes; keeps a leading '/'. */
export function normalizePath(p: string): string {
  const abs = p.startsWith('/');
  const out: string[] = [];
  for (const seg of p.split('/')) {
    if (seg === '' || seg === '.') continue;
    if (seg === '..') {
      if (out.length > 0 && out[out.length - 1] !== '..') out.pop();
      else if (!abs) out.push('..');
      continue;
    }
    out.push(seg);
  }
  const s = out.join('/');
  return abs ? '/' + s : s || '.';
}

export function dirname(p: string): string {
  const n = normalizePath(p);
  const i = n.lastIndexOf('/');
  if (i < 0) return '.';
  if (i === 0) return '/';
  return n.slice(0, i);
}

export function basename(p: string): string {
  const n = normalizePath(p);
  return n.slice(n.lastIndexOf('/') + 1);
}

export function isAbsolute(p: string): boolean {
  return p.startsWith('/');
}

export function resolvePath(base: string, p: string): string {
  return isAbsolute(p) ? normalizePath(p) : joinPath(base, p);
}
