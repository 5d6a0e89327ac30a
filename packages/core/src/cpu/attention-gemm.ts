import { View } from '../view';
import { CpuAttentionOptions, CpuOperand, dims, forEachBatch } from './attention';
import { matmulInto } from './matmul';

/**
 * Scaled-dot-product attention on the CPU's SIMD GEMM, per batch index: the L × S scores come
 * from one Q·Kᵀ product, each row's softmax is taken in float64 in JS (max, exp, sum, the same
 * masking and logsumexp contract as the row-at-a-time path in attention.ts), and the output is
 * one P·V product. The backward recomputes P from the saved logsumexp and runs five products
 * (Q·Kᵀ, dO·Vᵀ, Pᵀ·dO, dS·K, dSᵀ·Q). The products accumulate in float32, as the plain
 * `softmax(q·kᵀ)·v` does on this backend; the row-at-a-time path (float64 dot products, a
 * JS loop per element) stays for engines without WebAssembly SIMD.
 */

/** x's [rows, cols] slice at element offset o (last two dims), or its transpose. */
function slice2d(x: CpuOperand, o: number, nd: number, transpose = false): View {
  const [r, c] = [x.view.shape[nd - 2], x.view.shape[nd - 1]];
  const [rs, cs] = [x.view.strides[nd - 2], x.view.strides[nd - 1]];
  return transpose ? new View([c, r], [cs, rs], o) : new View([r, c], [rs, cs], o);
}

/** A dense [rows, cols] block, or its transpose. */
const dense = (rows: number, cols: number, transpose = false) =>
  transpose ? new View([cols, rows], [1, cols], 0) : new View([rows, cols], [cols, 1], 0);

/**
 * Row i of the scaled, masked scores (the product row `prod`, n keys visible) into the float64
 * row s; hidden keys are -Infinity. Returns the row's max.
 */
function scoreRow(
  s: Float64Array,
  prod: Float32Array,
  i: number,
  S: number,
  n: number,
  opts: CpuAttentionOptions,
  mo: number,
  nd: number,
): number {
  const base = i * S;
  for (let j = 0; j < n; j++) s[j] = prod[base + j] * opts.scale;
  const m = opts.mask;
  if (m) {
    const mr = mo + i * m.view.strides[nd - 2],
      mc = m.view.strides[nd - 1];
    for (let j = 0; j < n; j++) {
      const mv = m.data[mr + j * mc];
      if (m.bool) {
        if (!mv) s[j] = -Infinity;
      } else s[j] += mv;
    }
  }
  let mx = -Infinity;
  for (let j = 0; j < n; j++) if (s[j] > mx) mx = s[j];
  return mx;
}

export function attentionGemm(
  q: CpuOperand,
  k: CpuOperand,
  v: CpuOperand,
  opts: CpuAttentionOptions,
  out: Float32Array,
  lse: Float32Array,
): void {
  const { L, S, Ev, nd, batch } = dims(q.view, v.view);
  const prod = new Float32Array(L * S);
  const p = new Float32Array(L * S);
  const s = new Float64Array(S);
  const [qd, kd, vd] = [q.data, k.data, v.data] as Float32Array[];
  forEachBatch(batch, (b, off) => {
    matmulInto(qd, slice2d(q, off(q.view), nd), kd, slice2d(k, off(k.view), nd, true), prod);
    const mo = opts.mask ? off(opts.mask.view) : 0;
    for (let i = 0; i < L; i++) {
      const n = opts.causal ? Math.min(S, i + 1) : S;
      const mx = scoreRow(s, prod, i, S, n, opts, mo, nd);
      const row = i * S;
      p.fill(0, row + n, row + S);
      if (mx === -Infinity) {
        // Every key hidden: PyTorch's safe softmax gives 0, not NaN.
        p.fill(0, row, row + n);
        lse[b * L + i] = -Infinity;
        continue;
      }
      let l = 0;
      for (let j = 0; j < n; j++) l += s[j] = Math.exp(s[j] - mx);
      for (let j = 0; j < n; j++) p[row + j] = s[j] / l;
      lse[b * L + i] = mx + Math.log(l);
    }
    matmulInto(p, dense(L, S), vd, slice2d(v, off(v.view), nd), out.subarray(b * L * Ev, (b + 1) * L * Ev));
  });
}

export function attentionBackwardGemm(
  q: CpuOperand,
  k: CpuOperand,
  v: CpuOperand,
  out: CpuOperand,
  lse: CpuOperand,
  gOut: CpuOperand,
  opts: CpuAttentionOptions,
  dq: Float32Array,
  dk: Float32Array,
  dv: Float32Array,
): void {
  const { L, S, E, Ev, nd, batch } = dims(q.view, v.view);
  const prod = new Float32Array(L * S);
  const p = new Float32Array(L * S);
  const ds = new Float32Array(L * S);
  const s = new Float64Array(S);
  const [qd, kd, vd, od, gd] = [q.data, k.data, v.data, out.data, gOut.data] as Float32Array[];
  const scale = opts.scale;
  forEachBatch(batch, (b, off) => {
    const [qv, kv, vv, gv] = [q, k, v, gOut].map((x) => slice2d(x, off(x.view), nd));
    matmulInto(qd, qv, kd, slice2d(k, off(k.view), nd, true), prod);
    matmulInto(gd, gv, vd, slice2d(v, off(v.view), nd, true), ds); // dP = dO·Vᵀ
    const lo = off(lse.view),
      ls = lse.view.strides[nd - 2];
    const oo = off(out.view),
      [ors, ocs] = [out.view.strides[nd - 2], out.view.strides[nd - 1]];
    const go = off(gOut.view),
      [grs, gcs] = [gOut.view.strides[nd - 2], gOut.view.strides[nd - 1]];
    const mo = opts.mask ? off(opts.mask.view) : 0;
    for (let i = 0; i < L; i++) {
      const row = i * S;
      const li = lse.data[lo + i * ls];
      const n = li === -Infinity ? 0 : opts.causal ? Math.min(S, i + 1) : S;
      p.fill(0, row + n, row + S);
      ds.fill(0, row + n, row + S);
      if (n === 0) continue;
      scoreRow(s, prod, i, S, n, opts, mo, nd);
      // D_i = dO_i · O_i; dS = P ∘ (dP − D)·scale.
      let D = 0;
      for (let e = 0; e < Ev; e++) D += gd[go + i * grs + e * gcs] * od[oo + i * ors + e * ocs];
      for (let j = 0; j < n; j++) {
        const pj = Math.exp(s[j] - li);
        p[row + j] = pj;
        ds[row + j] = pj * (ds[row + j] - D) * scale;
      }
    }
    matmulInto(p, dense(L, S, true), gd, gv, dv.subarray(b * S * Ev, (b + 1) * S * Ev)); // Pᵀ·dO
    matmulInto(ds, dense(L, S), kd, kv, dq.subarray(b * L * E, (b + 1) * L * E)); // dS·K
    matmulInto(ds, dense(L, S, true), qd, qv, dk.subarray(b * S * E, (b + 1) * S * E)); // dSᵀ·Q
  });
}
