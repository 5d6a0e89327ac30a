import type { ConvParams } from '../conv';
import { View } from '../view';
import { matmulInto } from './matmul';

/**
 * Convolution on the CPU as GEMMs over packed windows: for each batch item and group, the
 * input windows are packed into a [Cg·kH·kW, oH·oW] matrix (zeros where a window reads
 * padding or an inserted lhs-dilation hole), and the group's weights [Og, Cg·kH·kW] multiply
 * it on the wasm GEMM straight into the output. 1-d convs run as 2-d with H = 1.
 */

/** A strided 2- to 4-d view read into a dense row-major Float32Array. */
function dense(src: Float32Array, v: View): Float32Array {
  const sh = [1, 1, 1, 1].slice(v.ndim).concat(v.shape as number[]);
  const st = [0, 0, 0, 0].slice(v.ndim).concat(v.strides as number[]);
  const out = new Float32Array(v.size);
  let i = 0;
  for (let a = 0; a < sh[0]; a++) {
    for (let b = 0; b < sh[1]; b++) {
      for (let c = 0; c < sh[2]; c++) {
        let o = v.offset + a * st[0] + b * st[1] + c * st[2];
        for (let d = 0; d < sh[3]; d++, o += st[3]) out[i++] = src[o];
      }
    }
  }
  return out;
}

/** Writes conv(x, w) into out ([N, O, ...outSpatial], contiguous). */
export function convInto(x: Float32Array, xv: View, w: Float32Array, wv: View, p: ConvParams, outShape: readonly number[], out: Float32Array): void {
  const one = xv.ndim === 3;
  // Lift 1-d to 2-d with a unit H dimension.
  const sp = (arr: readonly number[], d: number, unit: number) => (one ? [unit, arr[d]] : [arr[d], arr[d + 1]]);
  const [N, C] = xv.shape;
  const [O, Cg] = wv.shape;
  const [H, W] = sp(xv.shape, 2, 1);
  const [kH, kW] = sp(wv.shape, 2, 1);
  const [oH, oW] = sp(outShape, 2, 1);
  const [sH, sW] = sp(p.stride, 0, 1);
  const [dH, dW] = sp(p.dilation, 0, 1);
  const [lH, lW] = sp(p.lhsDilation, 0, 1);
  const [pH, pW] = one ? [0, p.padding[0][0]] : [p.padding[0][0], p.padding[1][0]];
  const G = p.groups, Og = O / G;
  const K = Cg * kH * kW, P = oH * oW;
  if (N * O * P === 0) return;
  const xd = dense(x, xv);
  const wd = dense(w, wv);
  const dinH = (H - 1) * lH + 1, dinW = (W - 1) * lW + 1;
  const col = new Float32Array(K * P);
  // Per output column, the dilated-input coordinate of kernel tap 0, reused for every channel.
  for (let n = 0; n < N; n++) {
    for (let g = 0; g < G; g++) {
      let r = 0;
      for (let c = 0; c < Cg; c++) {
        const xBase = (n * C + g * Cg + c) * H * W;
        for (let i = 0; i < kH; i++) {
          for (let j = 0; j < kW; j++, r++) {
            let q = r * P;
            for (let oy = 0; oy < oH; oy++) {
              const yy = oy * sH + i * dH - pH;
              const rowOk = yy >= 0 && yy < dinH && yy % lH === 0;
              const rowBase = xBase + (yy / lH) * W;
              for (let ox = 0; ox < oW; ox++, q++) {
                const xx = ox * sW + j * dW - pW;
                col[q] = rowOk && xx >= 0 && xx < dinW && xx % lW === 0 ? xd[rowBase + xx / lW] : 0;
              }
            }
          }
        }
      }
      const at = (n * O + g * Og) * P;
      matmulInto(wd, new View([Og, K], [K, 1], g * Og * K), col, View.contiguous([K, P]), out.subarray(at, at + Og * P));
    }
  }
}
