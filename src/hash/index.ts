import { sha1 as nobleSha1 } from '@noble/hashes/legacy.js';
import { sha256 as nobleSha256 } from '@noble/hashes/sha2.js';
import { ScalpelError } from '../errors/index.js';

/** The two object formats git knows (`extensions.objectFormat`). */
export type ObjectFormat = 'sha1' | 'sha256';

export interface HashState {
  update(data: Uint8Array): HashState;
  digest(): Uint8Array;
}

/** Injected hashing: pure JS by default, `node:crypto` from the Node entry. */
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
export const pureHash: HashProvider = {
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
};

let defaultProvider: HashProvider = pureHash;

/** The provider used when a call does not pass one. The Node entry installs node:crypto here. */
export function defaultHash(): HashProvider {
  return defaultProvider;
}

export function setDefaultHash(p: HashProvider): void {
  defaultProvider = p;
}

export function hashBytes(format: ObjectFormat, data: Uint8Array, provider: HashProvider = defaultProvider): Uint8Array {
  return provider.create(format).update(data).digest();
}
