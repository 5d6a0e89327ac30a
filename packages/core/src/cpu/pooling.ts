import type { PoolParams } from '../pool';
import { avgPoolDivisors } from '../pool';
import { View } from '../view';

/**
 * The contract's pool on the CPU: one pass over the output, each cell reading its window's
 * in-range taps through x's strides (see PoolParams for the rule). Max keeps the first
 * largest value (NaN counts as largest) and its tap index.
 */
export function poolInto(x: Float32Array, xv: View, p: PoolParams, out: Float32Array, arg: Int32Array | null): void {
  const [n, c, h, w] = xv.shape;
  const [sn, sc, sh, sw] = xv.strides;
  const [kH, kW] = p.kernel, [oH, oW] = p.out;
  const div = p.kind === 'avg' ? avgPoolDivisors(p, h, w) : null;
  let o = 0;
  for (let b = 0; b < n; b++) {
    for (let ch = 0; ch < c; ch++) {
      const plane = xv.offset + b * sn + ch * sc;
      for (let oh = 0; oh < oH; oh++) {
        const h0 = oh * p.stride[0] - p.padding[0];
        for (let ow = 0; ow < oW; ow++, o++) {
          const w0 = ow * p.stride[1] - p.padding[1];
          let acc = p.kind === 'max' ? -Infinity : 0;
          let best = -1;
          for (let i = 0; i < kH; i++) {
            const y = h0 + i * p.dilation[0];
            if (y < 0 || y >= h) continue;
            for (let j = 0; j < kW; j++) {
              const xx = w0 + j * p.dilation[1];
              if (xx < 0 || xx >= w) continue;
              const v = x[plane + y * sh + xx * sw];
              if (p.kind === 'avg') acc += v;
              else if (best < 0 || v > acc || (v !== v && acc === acc)) { acc = v; best = i * kW + j; }
            }
          }
          out[o] = div ? acc / div[oh * oW + ow] : acc;
          if (arg) arg[o] = best;
        }
      }
    }
  }
}

/**
 * The pool's gradient as a gather: each input element sums, over the taps (i, j) whose
 * window (oh, ow) lands on it, gy (max: only where that window's chosen tap is (i, j); avg:
 * divided by the window's count). No output cell is written twice, so no atomics are needed
 * on a GPU, and the sum's order is fixed.
 */
export function poolBackwardInto(gy: Float32Array, gv: View, arg: Int32Array | null, av: View | null, p: PoolParams, inShape: readonly number[], out: Float32Array): void {
  const [n, c, h, w] = inShape;
  const [kH, kW] = p.kernel, [oH, oW] = p.out;
  const [gn, gc, gh, gw] = gv.strides;
  const div = arg ? null : avgPoolDivisors(p, h, w);
  let o = 0;
  for (let b = 0; b < n; b++) {
    for (let ch = 0; ch < c; ch++) {
      const gp = gv.offset + b * gn + ch * gc;
      const ap = av ? av.offset + b * av.strides[0] + ch * av.strides[1] : 0;
      for (let y = 0; y < h; y++) {
        for (let xx = 0; xx < w; xx++, o++) {
          let acc = 0;
          for (let i = 0; i < kH; i++) {
            const ty = y + p.padding[0] - i * p.dilation[0];
            if (ty < 0 || ty % p.stride[0] !== 0) continue;
            const oh = ty / p.stride[0];
            if (oh >= oH) continue;
            for (let j = 0; j < kW; j++) {
              const tx = xx + p.padding[1] - j * p.dilation[1];
              if (tx < 0 || tx % p.stride[1] !== 0) continue;
              const ow = tx / p.stride[1];
              if (ow >= oW) continue;
              const g = gy[gp + oh * gh + ow * gw];
              if (arg) {
                if (arg[ap + oh * av!.strides[2] + ow * av!.strides[3]] === i * kW + j) acc += g;
              } else {
                acc += g / div![oh * oW + ow];
              }
            }
          }
          out[o] = acc;
        }
      }
    }
  }
}
