import { TypedArray } from '../dtype';
import { View } from '../view';

/**
 * Stable sort of every row along the last axis of x (read through its view) into contiguous
 * values and int32 indices. NaN compares as the largest value, as in PyTorch; ties keep their
 * order in both directions, so the result is one exact answer every backend can match.
 */
export function sortRows(x: TypedArray, xv: View, descending: boolean, values: TypedArray, indices: Int32Array): void {
  const shape = xv.shape;
  const nd = shape.length;
  const n = shape[nd - 1];
  const rows = n === 0 ? 0 : values.length / n;
  const outer = shape.slice(0, -1);
  const digit = new Array<number>(outer.length).fill(0);
  const row = new Float64Array(n);
  const order = Array.from({ length: n }, (_, i) => i);
  const sign = descending ? -1 : 1;
  const cmp = (a: number, b: number): number => {
    const va = row[a],
      vb = row[b];
    const na = va !== va,
      nb = vb !== vb;
    let c: number;
    if (na || nb) c = na && nb ? 0 : na ? 1 : -1;
    else c = va < vb ? -1 : va > vb ? 1 : 0;
    return c !== 0 ? sign * c : a - b;
  };
  for (let r = 0; r < rows; r++) {
    let base = xv.offset;
    for (let d = 0; d < outer.length; d++) base += digit[d] * xv.strides[d];
    const st = xv.strides[nd - 1];
    for (let j = 0; j < n; j++) {
      row[j] = x[base + j * st];
      order[j] = j;
    }
    order.sort(cmp);
    for (let j = 0; j < n; j++) {
      values[r * n + j] = row[order[j]];
      indices[r * n + j] = order[j];
    }
    for (let d = outer.length - 1; d >= 0; d--) {
      if (++digit[d] < outer[d]) break;
      digit[d] = 0;
    }
  }
}
