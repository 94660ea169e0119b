import { sha1 as nobleSha1 } from '@noble/hashes/legacy.js';
import { sha256 as nobleSha256 } from '@noble/hashes/sha2.js';
import { ScalpelError } from '../errors/index.js';

/** The two object formats git knows (`extensions.objectFormat`). */
export type ObjectFormat = 'sha1' | 'sha256';

export interface HashState {
  update(data: Uint8Array): HashState;
  digest(): Uint8Array;
}

/** Injected hashing: `pureHash` when a call passes none; the platform brings `node:crypto` in Node. */
export interface HashProvider {
  readonly name: string;
  create(format: ObjectFormat): HashState;
}

export function oidLength(format: ObjectFormat): 20 | 32 {
  return format === 'sha256' ? 32 : 20;
}

export function checkObjectFormat(format: unknown): ObjectFormat {
  if (format === undefined || format === 'sha1') return 'sha1';
  if (format === 'sha256') return 'sha256';
  throw new ScalpelError('BAD_ARGUMENT', `unknown object format ${JSON.stringify(format)} (expected sha1 or sha256)`, {
    name: 'objectFormat',
    value: format,
  });
}

/** Pure-JS hashing (@noble/hashes); works in every JavaScript runtime. */
export const pureHash: HashProvider = Object.freeze({
  name: 'noble',
  create(format: ObjectFormat): HashState {
    const h = format === 'sha256' ? nobleSha256.create() : nobleSha1.create();
    const state: HashState = {
      update(data: Uint8Array) {
        h.update(data);
        return state;
      },
      digest() {
        return h.digest();
      },
    };
    return state;
  },
});

/**
 * @deprecated Pass a provider (`hash` or `platform` options) instead; a call that passes none uses
 * `pureHash`. Kept so that callers written against the old module default compile; it returns the
 * pure constant and nothing can change it.
 */
export function defaultHash(): HashProvider {
  return pureHash;
}

export function hashBytes(format: ObjectFormat, data: Uint8Array, provider: HashProvider = pureHash): Uint8Array {
  return provider.create(format).update(data).digest();
}
