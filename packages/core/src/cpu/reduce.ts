import { ReduceOp } from '../backend';
import { TypedArray } from '../dtype';
import { View } from '../view';

/**
 * Reduces `view` of `src` over `axes` into `out` (kept dims in row-major order). Sums
 * accumulate in float64 (JS numbers), so the CPU result is the accurate reference the GPU's
 * tree reductions are checked against. Max propagates NaN, as PyTorch does.
 */
export function reduceInto(
  op: ReduceOp,
  src: TypedArray,
  view: View,
  axes: readonly number[],
  out: TypedArray,
  emptyMax: number,
): void {
  const nd = view.ndim;
  if (nd === 2 && axes.length === 1 && axes[0] === 0 && view.strides[1] === 1 && view.shape[0] > 0) {
    reduceRows(op, src, view.offset, view.strides[0], view.shape[0], view.shape[1], out);
    return;
  }
  const kept = [...Array(nd).keys()].filter((d) => !axes.includes(d));
  const red = axes.slice();
  const kShape = kept.map((d) => view.shape[d]);
  const kStr = kept.map((d) => view.strides[d]);
  const rShape = red.map((d) => view.shape[d]);
  const rStr = red.map((d) => view.strides[d]);
  const outN = out.length;
  const rN = rShape.reduce((a, b) => a * b, 1);
  // The innermost reduced dim runs as a plain strided loop; the rest step with an odometer.
  const rIn = rShape.length ? rShape[rShape.length - 1] : 1;
  const rInStride = rStr.length ? rStr[rStr.length - 1] : 0;
  const rOuterShape = rShape.slice(0, -1);
  const rOuterStr = rStr.slice(0, -1);
  const rOuterN = rIn === 0 ? 0 : rN / rIn;
  const kIdx = new Int32Array(kShape.length);
  const rIdx = new Int32Array(rOuterShape.length);
  for (let o = 0; o < outN; o++) {
    let base = view.offset;
    for (let d = 0; d < kShape.length; d++) base += kIdx[d] * kStr[d];
    let acc = op === 'sum' ? 0 : emptyMax;
    rIdx.fill(0);
    for (let r = 0; r < rOuterN; r++) {
      let b = base;
      for (let d = 0; d < rOuterShape.length; d++) b += rIdx[d] * rOuterStr[d];
      if (op === 'sum') {
        for (let j = 0; j < rIn; j++) acc += src[b + j * rInStride];
      } else {
        for (let j = 0; j < rIn; j++) {
          const v = src[b + j * rInStride];
          if (v > acc || v !== v) acc = v;
        }
      }
      for (let d = rOuterShape.length - 1; d >= 0; d--) {
        if (++rIdx[d] < rOuterShape[d]) break;
        rIdx[d] = 0;
      }
    }
    out[o] = acc;
    for (let d = kShape.length - 1; d >= 0; d--) {
      if (++kIdx[d] < kShape[d]) break;
      kIdx[d] = 0;
    }
  }
}

/**
 * Reduces the rows of an R × C view with contiguous rows (a bias gradient: a sum over the
 * batch) row by row into C accumulators, reading memory in order instead of striding down
 * each column. Each output still combines its column top to bottom, as the general loop
 * does, so the results are identical to it.
 */
function reduceRows(
  op: ReduceOp,
  src: TypedArray,
  off: number,
  rs: number,
  R: number,
  C: number,
  out: TypedArray,
): void {
  if (op === 'sum') {
    const acc = new Float64Array(C);
    for (let r = 0, b = off; r < R; r++, b += rs) for (let j = 0; j < C; j++) acc[j] += src[b + j];
    for (let j = 0; j < C; j++) out[j] = acc[j];
    return;
  }
  for (let j = 0; j < C; j++) out[j] = src[off + j];
  for (let r = 1, b = off + rs; r < R; r++, b += rs) {
    for (let j = 0; j < C; j++) {
      const v = src[b + j];
      if (v > out[j] || v !== v) out[j] = v;
    }
  }
}
