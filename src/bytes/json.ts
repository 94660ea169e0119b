import { decodePath } from './text.js';

/** JSON for output (the CLI's --json, the MCP server's results): bytes become strings (paths, surrogate-escaped), bigints decimal strings. */
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
