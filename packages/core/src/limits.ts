import type { DType } from './dtype';
import { ValueError } from './errors';

/**
 * Value and size limits checked at the boundary, before anything is computed or allocated:
 * a value an int32 cannot hold is refused (a cast would saturate or wrap it silently), and a
 * tensor larger than a backend can address is refused before its host array is built.
 */

export const INT32_MIN = -2147483648;
export const INT32_MAX = 2147483647;

/** Whether `v` stored as int32 keeps its integer part (finite and inside the int32 range). */
export function fitsInt32(v: number): boolean {
  return Number.isFinite(v) && Math.trunc(v) >= INT32_MIN && Math.trunc(v) <= INT32_MAX;
}

/** Throws a ValueError naming `op` and `what` when `v` does not fit int32. */
export function checkInt32(op: string, v: number, what = 'value'): number {
  if (!fitsInt32(v))
    throw new ValueError(
      `${op}: ${what} ${v} does not fit int32 (range ${INT32_MIN} to ${INT32_MAX}); use float32, or values inside the range`,
    );
  return v;
}

/**
 * The most elements one tensor may have: 2^31 - 1 (element counts and offsets are int32 in
 * kernels, and JS typed arrays stop near there), and at most `maxBytes` bytes when the
 * backend has a smaller limit.
 */
export const MAX_ELEMENTS = INT32_MAX;

/** Refuses a tensor of `n` elements of `dtype` that no backend (or this one's `maxBytes`) can hold. */
export function checkElements(op: string, n: number, dtype: DType, maxBytes = Infinity): number {
  const bytes = n * (dtype === 'bool' ? 1 : 4);
  if (!Number.isSafeInteger(n) || n < 0 || n > MAX_ELEMENTS || n * 4 > maxBytes)
    throw new ValueError(
      `${op}: a ${dtype} tensor of ${n} elements (${bytes} bytes) is larger than the limit of ${Math.min(MAX_ELEMENTS, Math.floor(maxBytes / 4))} elements${Number.isFinite(maxBytes) ? ` (${maxBytes} bytes on this backend)` : ''}; use smaller tensors`,
    );
  return n;
}
