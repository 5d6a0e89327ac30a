import type { ConvParams } from '../conv-params';
import { View } from '../view';
import { matmulInto } from './matmul';

/**
 * Convolution on the CPU as GEMMs over packed windows: for each batch item and group, the
 * input windows are packed into a [Cg·kH·kW, oH·oW] matrix (zeros where a window reads
 * padding or an inserted lhs-dilation hole), and the group's weights [Og, Cg·kH·kW] multiply
 * it on the wasm GEMM straight into the output. 1-d convs run as 2-d with H = 1.
 */

/** A strided 2- to 4-d view as a dense row-major array: the buffer itself when already so. */
function dense(src: Float32Array, v: View): { data: Float32Array; off: number } {
  if (v.isContiguous) return { data: src, off: v.offset };
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
  return { data: out, off: 0 };
}

/**
 * Copies a short run (a window row: tens of floats). A plain loop: subarray() + set() would
 * allocate a view object per run, thousands per conv, and the garbage collector's time
 * showed up in profiles.
 */
function copyRun(dst: Float32Array, at: number, src: Float32Array, from: number, len: number): void {
  for (let t = 0; t < len; t++) dst[at + t] = src[from + t];
}

/**
 * For each kernel tap t and output position o along one dim, the input index it reads, or
 * -1 for padding and lhs-dilation holes: computed once per call, so the packing loop does no
 * division.
 */
function taps(
  k: number,
  out: number,
  inSize: number,
  stride: number,
  dil: number,
  lhs: number,
  pad: number,
): Int32Array {
  const idx = new Int32Array(k * out);
  const din = (inSize - 1) * lhs + 1;
  for (let t = 0; t < k; t++) {
    for (let o = 0; o < out; o++) {
      const q = o * stride + t * dil - pad;
      idx[t * out + o] = q >= 0 && q < din && q % lhs === 0 ? q / lhs : -1;
    }
  }
  return idx;
}

/** Scratch for the packed windows and the product, reused across calls (grown as needed). */
let scratch = new Float32Array(0);
let prod = new Float32Array(0);
/** Floats of packed windows per GEMM (4 MiB): wide GEMMs, and the block stays in L2/L3. */
const CHUNK = Number(globalThis.process?.env?.SURF_CONV_CHUNK ?? 1 << 17);

/** Writes conv(x, w) into out ([N, O, ...outSpatial], contiguous). */
export function convInto(
  x: Float32Array,
  xv: View,
  w: Float32Array,
  wv: View,
  p: ConvParams,
  outShape: readonly number[],
  out: Float32Array,
): void {
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
  const G = p.groups,
    Og = O / G;
  const K = Cg * kH * kW,
    P = oH * oW;
  if (N * O * P === 0) return;
  const { data: xd, off: xo } = dense(x, xv);
  const { data: wd, off: wo } = dense(w, wv);
  const rows = taps(kH, oH, H, sH, dH, lH, pH);
  const cols = taps(kW, oW, W, sW, dW, lW, pW);
  // With unit stride and no holes, a window row is a contiguous run of the input row, copied
  // with set(); short rows (a weight gradient's few output columns) are cheaper element-wise.
  const runs = sW === 1 && lW === 1 && oW >= 8;
  // A weight gradient is the other way round: a few output columns, long kernel rows (the
  // forward's output maps). Then the windows are packed transposed, [P, K], where each
  // kernel row is a contiguous run of the input row, and the GEMM reads them as a [K, P] view.
  const kernelRuns = !runs && dW === 1 && lW === 1 && kW >= 8;
  // Batch items are packed side by side, nb at a time, so each GEMM is [Og, K] x [K, nb·P]:
  // wide enough for the wasm kernel even when one item's P is tiny (a weight gradient's k²
  // outputs, a pool's small maps).
  const nb = Math.max(1, Math.min(N, Math.floor(CHUNK / (K * P))));
  const width = nb * P;
  if (scratch.length < K * width) scratch = new Float32Array(K * width);
  const direct = Og === O && O === 1; // [1, nb·P] is already the output's layout
  if (!direct && prod.length < Og * width) prod = new Float32Array(Og * width);
  for (let n0 = 0; n0 < N; n0 += nb) {
    const cnt = Math.min(nb, N - n0);
    const wdt = cnt * P;
    const col = scratch.subarray(0, K * wdt);
    for (let g = 0; g < G; g++) {
      if (kernelRuns) packTransposed(col, xd, xo, n0, cnt, g, { C, Cg, H, W, kH, kW, oH, oW, sW, pW, K, P }, rows);
      for (let b = 0; b < (kernelRuns ? 0 : cnt); b++) {
        const n = n0 + b;
        let r = 0;
        for (let c = 0; c < Cg; c++) {
          const xBase = xo + (n * C + g * Cg + c) * H * W;
          for (let i = 0; i < kH; i++) {
            for (let j = 0; j < kW; j++, r++) {
              let q = r * wdt + b * P;
              const cj = j * oW;
              // The first and last output column whose tap j lands inside the row.
              let lo = 0,
                hi = oW;
              if (runs) {
                while (lo < oW && cols[cj + lo] < 0) lo++;
                while (hi > lo && cols[cj + hi - 1] < 0) hi--;
              }
              for (let oy = 0; oy < oH; oy++, q += oW) {
                const iy = rows[i * oH + oy];
                if (iy < 0) {
                  col.fill(0, q, q + oW);
                  continue;
                }
                const rowBase = xBase + iy * W;
                if (runs) {
                  if (lo > 0) col.fill(0, q, q + lo);
                  if (hi > lo) copyRun(col, q + lo, xd, rowBase + cols[cj + lo], hi - lo);
                  if (hi < oW) col.fill(0, q + Math.max(hi, lo), q + oW);
                } else {
                  for (let ox = 0; ox < oW; ox++) {
                    const ix = cols[cj + ox];
                    col[q + ox] = ix >= 0 ? xd[rowBase + ix] : 0;
                  }
                }
              }
            }
          }
        }
      }
      const wv2 = new View([Og, K], [K, 1], wo + g * Og * K);
      const cv = kernelRuns ? new View([K, wdt], [1, K], 0) : View.contiguous([K, wdt]);
      if (direct) {
        matmulInto(wd, wv2, col, cv, out.subarray(n0 * P, n0 * P + wdt));
        continue;
      }
      const tmp = prod.subarray(0, Og * wdt);
      matmulInto(wd, wv2, col, cv, tmp);
      for (let b = 0; b < cnt; b++) {
        for (let o = 0; o < Og; o++) {
          const at = ((n0 + b) * O + g * Og + o) * P;
          out.set(tmp.subarray(o * wdt + b * P, o * wdt + b * P + P), at);
        }
      }
    }
  }
}

interface Geom {
  C: number;
  Cg: number;
  H: number;
  W: number;
  kH: number;
  kW: number;
  oH: number;
  oW: number;
  sW: number;
  pW: number;
  K: number;
  P: number;
}

/**
 * Packs the windows of batch items n0 .. n0+cnt of group g as rows: row b·P + p holds output
 * position p's window (c, i, j) at column (c·kH + i)·kW + j. With unit dilation and no holes
 * along W, the kW taps of one kernel row are one contiguous run of an input row (zeros where
 * it hangs over the padding).
 */
function packTransposed(
  col: Float32Array,
  xd: Float32Array,
  xo: number,
  n0: number,
  cnt: number,
  g: number,
  q: Geom,
  rows: Int32Array,
): void {
  const { C, Cg, H, W, kH, kW, oH, oW, sW, pW, K, P } = q;
  for (let b = 0; b < cnt; b++) {
    for (let c = 0; c < Cg; c++) {
      const xBase = xo + ((n0 + b) * C + g * Cg + c) * H * W;
      for (let i = 0; i < kH; i++) {
        const r0 = (c * kH + i) * kW;
        for (let oy = 0; oy < oH; oy++) {
          const iy = rows[i * oH + oy];
          let dst = (b * P + oy * oW) * K + r0;
          for (let ox = 0; ox < oW; ox++, dst += K) {
            if (iy < 0) {
              col.fill(0, dst, dst + kW);
              continue;
            }
            const x0 = ox * sW - pW; // input column of tap j = 0
            const lo = Math.max(0, -x0),
              hi = Math.min(kW, W - x0);
            if (lo > 0) col.fill(0, dst, dst + Math.min(lo, kW));
            if (hi > lo) {
              const at = xBase + iy * W + x0;
              copyRun(col, dst + lo, xd, at + lo, hi - lo);
            }
            if (hi < kW) col.fill(0, dst + Math.max(hi, lo, 0), dst + kW);
          }
        }
      }
    }
  }
}
