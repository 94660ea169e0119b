import { decodePath } from '../bytes/text.js';

/** JSON for CLI output: bytes become strings (paths, surrogate-escaped), bigints decimal strings. */
export function toJsonText(value: unknown): string {
  return JSON.stringify(
    value,
    (_k, v: unknown) => {
      if (v instanceof Uint8Array) return decodePath(v);
      if (typeof v === 'bigint') return v.toString();
      return v;
    },
    2,
  );
}
