import { TypedArray } from '../dtype';
import { View } from '../view';

/** out = x with dim `axis` replaced by x's rows at idx (out-of-range rows read as 0). */
export function gatherInto(x: TypedArray, xv: View, axis: number, idx: Int32Array, iv: View, out: TypedArray): void {
  const outer = xv.shape.slice(0, axis);
  const inner = xv.shape.slice(axis + 1);
  const L = iv.shape[0];
  const rows = xv.shape[axis];
  const outerN = outer.reduce((a, b) => a * b, 1);
  const innerN = inner.reduce((a, b) => a * b, 1);
  const oIdx = new Int32Array(outer.length);
  const inIdx = new Int32Array(inner.length);
  let o = 0;
  for (let p = 0; p < outerN; p++) {
    let base = xv.offset;
    for (let d = 0; d < outer.length; d++) base += oIdx[d] * xv.strides[d];
    for (let l = 0; l < L; l++) {
      const r = idx[iv.offset + l * iv.strides[0]];
      const ok = r >= 0 && r < rows;
      const rb = base + r * xv.strides[axis];
      inIdx.fill(0);
      for (let q = 0; q < innerN; q++, o++) {
        let s = rb;
        for (let d = 0; d < inner.length; d++) s += inIdx[d] * xv.strides[axis + 1 + d];
        out[o] = ok ? x[s] : 0;
        for (let d = inner.length - 1; d >= 0; d--) {
          if (++inIdx[d] < inner[d]) break;
          inIdx[d] = 0;
        }
      }
    }
    for (let d = outer.length - 1; d >= 0; d--) {
      if (++oIdx[d] < outer[d]) break;
      oIdx[d] = 0;
    }
  }
}
