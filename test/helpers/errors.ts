import { ScalpelError } from '../../src/errors/index.js';

/** The `data` of the ScalpelError with `code` that `fn` throws (anything else fails the test). */
export function errorData(code: string, fn: () => unknown): Record<string, unknown> {
  try {
    fn();
  } catch (e) {
    if (e instanceof ScalpelError && e.code === code) return e.data;
    throw e;
  }
  throw new Error(`expected ${code}`);
}

/** The ScalpelError `fn` throws (anything else, or nothing, fails the test). */
export function scalpelErrorOf(fn: () => unknown): ScalpelError {
  try {
    fn();
  } catch (e) {
    if (e instanceof ScalpelError) return e;
    throw e;
  }
  throw new Error('expected a ScalpelError');
}
