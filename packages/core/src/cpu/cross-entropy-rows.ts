import { ValueError } from '../errors';
import type { View } from '../view';

/**
 * The contract's crossEntropyRows on the CPU: one pass per row of the logits (any strides)
 * computes the row max m (NaN propagates), s = Σ exp(z − m̃) with m̃ = m where finite else 0,
 * and the row's loss scale·Σ_j w_j·(log s + m̃ − z_j), w the smoothed one-hot. Float32 steps as
 * the composite's kernels round them (each op through Math.fround), sums accumulated in float64
 * and rounded once, like the CPU reductions. Replaces five kernels (max, exp, sum, the terms,
 * their sum) with one loop: for the MLP's 64 × 10 logits the kernels' overhead was the cost.
 * An index outside [0, C) is an error at once (the CPU can check synchronously), unless it is
 * the ignoreIndex: that row's loss is 0.
 */
export function crossEntropyRowsInto(
  z: Float32Array,
  zv: View,
  y: Int32Array,
  yv: View,
  smoothing: number,
  scale: number,
  site: { op: string; name: string; range: string },
  m: Float32Array,
  s: Float32Array,
  rows: Float32Array,
  ignoreIndex?: number,
): void {
  const [n, c] = zv.shape;
  const [zr, zc] = zv.strides;
  const ys = yv.strides[0];
  const f = Math.fround;
  const wHit = f(1 - smoothing + smoothing / c),
    wMiss = f(smoothing / c);
  for (let i = 0; i < n; i++) {
    const t = y[yv.offset + i * ys];
    // A row left out (ignoreIndex) still gets m and s, which the backward reads; its loss is 0.
    const ignored = t === ignoreIndex;
    if (!ignored && !(t >= 0 && t < c))
      throw new ValueError(`${site.op}: ${site.name}[${i}] = ${t} is outside ${site.range}`);
    const base = zv.offset + i * zr;
    let mx = -Infinity;
    for (let j = 0, p = base; j < c; j++, p += zc) {
      const v = z[p];
      if (v !== v) {
        mx = v;
        break;
      }
      if (v > mx) mx = v;
    }
    const mt = mx - mx === 0 ? mx : 0;
    let sum = 0;
    for (let j = 0, p = base; j < c; j++, p += zc) sum += f(Math.exp(f(z[p] - mt)));
    const si = f(sum);
    m[i] = mx;
    s[i] = si;
    const shift = f(f(Math.log(si)) + mt);
    if (ignored) {
      rows[i] = 0;
    } else if (smoothing === 0) {
      rows[i] = f(f(shift - z[base + t * zc]) * scale);
    } else {
      let acc = 0;
      for (let j = 0, p = base; j < c; j++, p += zc) acc += f(f((j === t ? wHit : wMiss) * f(shift - z[p])) * scale);
      rows[i] = f(acc);
    }
  }
}
