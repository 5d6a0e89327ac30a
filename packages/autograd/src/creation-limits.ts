import { DType, ValueError, checkElements, checkInt32 } from '@surf/core';
import { getBackend } from './context';

/**
 * Checks of creation ops that run before any host array or device buffer is made: a size no
 * backend can hold (or the current one's buffer limit) and integer values int32 cannot hold
 * are refused, instead of a raw RangeError, a saturated value, or gigabytes built first.
 */

/** Refuses `n` elements of `dtype` past the general limit or the current backend's. */
export function checkSize(op: string, n: number, dtype: DType, backend = getBackend()): void {
  checkElements(op, n, dtype);
  backend.checkOutput?.(op, dtype, n);
}

/** Refuses int32 data that would saturate (3e9 became 2147483647). */
export function checkInt32Values(op: string, values: ArrayLike<number | boolean>): void {
  for (let i = 0; i < values.length; i++) {
    const v = values[i];
    if (typeof v === 'number') checkInt32(op, v, `element ${i}`);
  }
}

/** randint's [low, high) must be integers inside int32 (high up to 2^31, exclusive). */
export function checkRandintRange(low: number, high: number): void {
  if (!Number.isInteger(low) || !Number.isInteger(high) || low < -(2 ** 31) || high > 2 ** 31 || high <= low)
    throw new ValueError(
      `randint: got low ${low} and high ${high}; expected integers with low < high, low >= -2^31 and high <= 2^31 (int32 results)`,
    );
}
