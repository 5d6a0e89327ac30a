import { E } from '../expr';
import { View } from '../view';
import { CpuAttentionOptions, CpuOperand, dims, forEachBatch } from './attention';
import { runElementwise } from './elementwise';
import { matmulInto } from './matmul';

/**
 * Scaled-dot-product attention on the CPU's SIMD GEMM, per batch index: the L × S scores come
 * from one Q·Kᵀ product; one JS pass scales and masks them and takes each row's max; the
 * exponentials are one elementwise kernel (the SIMD exp over rows × keys, the row max as a
 * per-row operand); the output is one P·V product of the unnormalised P, its rows divided by
 * their sums after (L × Ev divisions instead of L × S). Same masking and logsumexp contract as
 * the row-at-a-time path in attention.ts. The backward recomputes P from the saved logsumexp
 * the same way, forms dS = P ∘ (dP − D)·scale in one more elementwise kernel and runs five
 * products (Q·Kᵀ, dO·Vᵀ, Pᵀ·dO, dS·K, dSᵀ·Q). Products accumulate in float32, as the plain
 * `softmax(q·kᵀ)·v` does on this backend; the row-at-a-time path (float64 dot products, a JS
 * loop per element) stays for engines without WebAssembly SIMD.
 */

/**
 * Where the L × S blocks come from and go back to: the backend's pool, whose float32 arrays
 * live in wasm memory, so the GEMM writes and the SIMD kernels read them in place (no copies
 * in and out) and no block is allocated (zero-filled) per call. Contents are unspecified:
 * every block is written whole before it is read.
 */
export interface Scratch {
  take(size: number): Float32Array;
  give(a: Float32Array): void;
}

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
 * Row i of the product `prod` (n keys visible) scaled and masked in place; hidden keys become
 * -Infinity. Returns the row's max (NaN when a score is NaN).
 */
function scoreRow(
  prod: Float32Array,
  i: number,
  S: number,
  n: number,
  opts: CpuAttentionOptions,
  mo: number,
  nd: number,
): number {
  const base = i * S;
  const m = opts.mask;
  const mr = m ? mo + i * m.view.strides[nd - 2] : 0,
    mc = m ? m.view.strides[nd - 1] : 0;
  let mx = -Infinity;
  for (let j = 0; j < n; j++) {
    let x = prod[base + j] * opts.scale;
    if (m) {
      const mv = m.data[mr + j * mc];
      if (m.bool) {
        if (!mv) x = -Infinity;
      } else x += mv;
    }
    prod[base + j] = x;
    // A NaN score makes the row NaN (PyTorch's softmax), never a row of hidden keys.
    if (x > mx) mx = x;
    else if (x !== x) mx = NaN;
  }
  prod.fill(-Infinity, base + n, base + S);
  return mx;
}

const X = E.in(0);
/** exp(s − row value): the row's max (forward) or logsumexp (backward). */
const EXP_ROW = [E.exp(E.sub(X, E.in(1)))];
/** dS = P ∘ (dP − D)·scale, D one value per row. */
const dsOf = (scale: number) => [E.mul(E.mul(X, E.sub(E.in(1), E.in(2))), E.f(scale))];
const f32 = (data: Float32Array, view: View) => ({ data, dtype: 'float32' as const, view });
/** One value per row of an L × S grid. */
const perRow = (L: number, S: number) => new View([L, S], [1, 0], 0);

export function attentionGemm(
  q: CpuOperand,
  k: CpuOperand,
  v: CpuOperand,
  opts: CpuAttentionOptions,
  out: Float32Array,
  lse: Float32Array,
  scratch: Scratch,
): void {
  const { L, S, Ev, nd, batch } = dims(q.view, v.view);
  const blocks = [scratch.take(L * S), scratch.take(L * S), scratch.take(L)];
  try {
    forwardBlocks(q, k, v, opts, out, lse, blocks);
  } finally {
    blocks.forEach((a) => scratch.give(a));
  }
}

function forwardBlocks(
  q: CpuOperand,
  k: CpuOperand,
  v: CpuOperand,
  opts: CpuAttentionOptions,
  out: Float32Array,
  lse: Float32Array,
  [prod, p, rowMax]: Float32Array[],
): void {
  const { L, S, Ev, nd, batch } = dims(q.view, v.view);
  const [qd, kd, vd] = [q.data, k.data, v.data] as Float32Array[];
  forEachBatch(batch, (b, off) => {
    matmulInto(qd, slice2d(q, off(q.view), nd), kd, slice2d(k, off(k.view), nd, true), prod);
    const mo = opts.mask ? off(opts.mask.view) : 0;
    for (let i = 0; i < L; i++) {
      const mx = scoreRow(prod, i, S, opts.causal ? Math.min(S, i + 1) : S, opts, mo, nd);
      // A row with every key hidden (max -Inf) gets NaN exponentials; its output is zeroed below.
      rowMax[i] = mx;
      lse[b * L + i] = mx;
    }
    runElementwise(EXP_ROW, [p], [f32(prod, dense(L, S)), f32(rowMax, perRow(L, S))], [L, S]);
    const o = out.subarray(b * L * Ev, (b + 1) * L * Ev);
    matmulInto(p, dense(L, S), vd, slice2d(v, off(v.view), nd), o);
    for (let i = 0; i < L; i++) {
      if (lse[b * L + i] === -Infinity) {
        // Every key hidden: PyTorch's safe softmax gives 0, not NaN.
        o.fill(0, i * Ev, (i + 1) * Ev);
        continue;
      }
      let l = 0;
      for (let j = i * S, e = j + S; j < e; j++) l += p[j];
      for (let e = i * Ev; e < (i + 1) * Ev; e++) o[e] /= l;
      lse[b * L + i] = rowMax[i] + Math.log(l);
    }
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
  scratch: Scratch,
): void {
  const { L, S } = dims(q.view, v.view);
  const blocks = [0, 1, 2, 3].map(() => scratch.take(L * S)).concat([scratch.take(L), scratch.take(L)]);
  try {
    backwardBlocks(q, k, v, out, lse, gOut, opts, [dq, dk, dv], blocks);
  } finally {
    blocks.forEach((a) => scratch.give(a));
  }
}

function backwardBlocks(
  q: CpuOperand,
  k: CpuOperand,
  v: CpuOperand,
  out: CpuOperand,
  lse: CpuOperand,
  gOut: CpuOperand,
  opts: CpuAttentionOptions,
  [dq, dk, dv]: Float32Array[],
  [prod, p, dp, ds, rowLse, rowD]: Float32Array[],
): void {
  const { L, S, E, Ev, nd, batch } = dims(q.view, v.view);
  const [qd, kd, vd, od, gd] = [q.data, k.data, v.data, out.data, gOut.data] as Float32Array[];
  const dsExpr = dsOf(opts.scale);
  forEachBatch(batch, (b, off) => {
    const [qv, kv, gv] = [q, k, gOut].map((x) => slice2d(x, off(x.view), nd));
    matmulInto(qd, qv, kd, slice2d(k, off(k.view), nd, true), prod);
    matmulInto(gd, gv, vd, slice2d(v, off(v.view), nd, true), dp); // dP = dO·Vᵀ
    const lo = off(lse.view),
      ls = lse.view.strides[nd - 2];
    const oo = off(out.view),
      [ors, ocs] = [out.view.strides[nd - 2], out.view.strides[nd - 1]];
    const go = off(gOut.view),
      [grs, gcs] = [gOut.view.strides[nd - 2], gOut.view.strides[nd - 1]];
    const mo = opts.mask ? off(opts.mask.view) : 0;
    for (let i = 0; i < L; i++) {
      const li = lse.data[lo + i * ls];
      scoreRow(prod, i, S, opts.causal ? Math.min(S, i + 1) : S, opts, mo, nd);
      // A row with every key hidden: exp(s − Inf) = 0 for every key, so it adds nothing.
      rowLse[i] = li === -Infinity ? Infinity : li;
      let D = 0;
      for (let e = 0; e < Ev; e++) D += gd[go + i * grs + e * gcs] * od[oo + i * ors + e * ocs];
      rowD[i] = D;
    }
    runElementwise(EXP_ROW, [p], [f32(prod, dense(L, S)), f32(rowLse, perRow(L, S))], [L, S]);
    runElementwise(dsExpr, [ds], [f32(p, dense(L, S)), f32(dp, dense(L, S)), f32(rowD, perRow(L, S))], [L, S]);
    matmulInto(p, dense(L, S, true), gd, gv, dv.subarray(b * S * Ev, (b + 1) * S * Ev)); // Pᵀ·dO
    matmulInto(ds, dense(L, S), kd, kv, dq.subarray(b * L * E, (b + 1) * L * E)); // dS·K
    matmulInto(ds, dense(L, S, true), qd, qv, dk.subarray(b * S * E, (b + 1) * S * E)); // dSᵀ·Q
  });
}
