/**
 * The lazy list of a decoded value (DecodedIndex `entries`, DecodedCacheTree `nodes`): an own,
 * enumerable accessor, because a spread or structuredClone copies own properties only and must
 * still see the list; made once per class, because one descriptor shared by every instance lets
 * V8 give them one hidden class (a getter closure per instance gave each its own). Reading or
 * assigning the list goes through `touch`: the value is no longer what was decoded.
 */
export function lazyList<T, V>(touch: (self: T, set?: V) => V): PropertyDescriptor {
  return Object.freeze({
    enumerable: true,
    configurable: true,
    get(this: T): V {
      return touch(this);
    },
    set(this: T, v: V): void {
      touch(this, v);
    },
  });
}
