import type { ScatterMode } from '../backend';
import { TypedArray } from '../dtype';
import { View } from '../view';

/**
 * out (already a contiguous copy of the base) gets src[i] set or added at flat position
 * idx[i]; positions outside out are skipped. Sequential, so duplicates under 'set' leave
 * the last one and 'add' sums in index order.
 */
export function scatterInto(
  mode: ScatterMode,
  out: TypedArray,
  idx: Int32Array,
  iv: View,
  src: TypedArray,
  sv: View,
): void {
  const n = iv.shape[0];
  const size = out.length;
  for (let i = 0; i < n; i++) {
    const p = idx[iv.offset + i * iv.strides[0]];
    if (p < 0 || p >= size) continue;
    const v = src[sv.offset + i * sv.strides[0]];
    out[p] = mode === 'add' ? out[p] + v : v;
  }
}
