import { readFileSync, readdirSync, existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { ObjectFormat } from '../../src/hash/index.js';

export const FIXTURE_ROOT = fileURLToPath(new URL('../../fixtures/index/', import.meta.url));

export interface IndexFixture {
  name: string;
  dir: string;
  meta: { objectFormat: ObjectFormat; version: number; extensions: string[]; split: boolean; skipHash: boolean; description?: string };
  bytes: Uint8Array;
  /** sharedindex.<id> files beside the index, by file name */
  shared: Map<string, Uint8Array>;
  file(name: string): Uint8Array | undefined;
}

export function loadIndexFixtures(): IndexFixture[] {
  const out: IndexFixture[] = [];
  for (const name of readdirSync(FIXTURE_ROOT).sort()) {
    const dir = FIXTURE_ROOT + name;
    if (!existsSync(`${dir}/index`)) continue;
    const shared = new Map<string, Uint8Array>();
    for (const f of readdirSync(dir)) if (f.startsWith('sharedindex.')) shared.set(f, new Uint8Array(readFileSync(`${dir}/${f}`)));
    out.push({
      name,
      dir,
      meta: JSON.parse(readFileSync(`${dir}/meta.json`, 'utf8')),
      bytes: new Uint8Array(readFileSync(`${dir}/index`)),
      shared,
      file: (f) => (existsSync(`${dir}/${f}`) ? new Uint8Array(readFileSync(`${dir}/${f}`)) : undefined),
    });
  }
  return out;
}

/** Split NUL-terminated records. */
export function splitZ(b: Uint8Array): Uint8Array[] {
  const out: Uint8Array[] = [];
  let s = 0;
  for (let i = 0; i < b.length; i++) {
    if (b[i] === 0) {
      out.push(b.subarray(s, i));
      s = i + 1;
    }
  }
  return out;
}

export function latin1(b: Uint8Array): string {
  let s = '';
  for (let i = 0; i < b.length; i++) s += String.fromCharCode(b[i]);
  return s;
}
