import type { TypedArray } from '../dtype';
import type { View } from '../view';

/**
 * Scaled-dot-product attention on the CPU, one query row at a time: the row's S scores live
 * in a float64 scratch row and never as an L x S matrix, the same recompute-from-logsumexp
 * scheme as the GPU kernel (so both honour one contract), with float64 accumulation.
 */
export interface CpuOperand {
  data: TypedArray;
  view: View;
}

export interface CpuAttentionOptions {
  scale: number;
  causal: boolean;
  mask?: CpuOperand & { bool: boolean };
}

/** Calls fn(b, offsetOf) for every batch index; offsetOf(x) is x's element offset there. */
function forEachBatch(batch: readonly number[], fn: (b: number, offsetOf: (v: View) => number) => void): void {
  const n = batch.reduce((a, c) => a * c, 1);
  const idx = new Array<number>(batch.length).fill(0);
  for (let b = 0; b < n; b++) {
    fn(b, (v) => {
      let o = v.offset;
      for (let d = 0; d < batch.length; d++) o += idx[d] * v.strides[d];
      return o;
    });
    for (let d = batch.length - 1; d >= 0; d--) { if (++idx[d] < batch[d]) break; idx[d] = 0; }
  }
}

interface Dims { batch: number[]; L: number; S: number; E: number; Ev: number; nd: number }

function dims(q: View, v: View): Dims {
  const nd = q.ndim;
  return { batch: q.shape.slice(0, -2), L: q.shape[nd - 2], S: v.shape[nd - 2], E: q.shape[nd - 1], Ev: v.shape[nd - 1], nd };
}

/** Fills s[0..S) with row i's scores; hidden keys get -Infinity. */
function scoreRow(s: Float64Array, i: number, d: Dims, q: CpuOperand, qo: number, k: CpuOperand, ko: number, opts: CpuAttentionOptions, mo: number): void {
  const { S, E, nd } = d;
  const qs = q.view.strides, ks = k.view.strides;
  const qr = qo + i * qs[nd - 2];
  const m = opts.mask;
  for (let j = 0; j < S; j++) {
    if (opts.causal && j > i) { s[j] = -Infinity; continue; }
    let acc = 0;
    const kr = ko + j * ks[nd - 2];
    for (let e = 0; e < E; e++) acc += q.data[qr + e * qs[nd - 1]] * k.data[kr + e * ks[nd - 1]];
    acc *= opts.scale;
    if (m) {
      const mv = m.data[mo + i * m.view.strides[nd - 2] + j * m.view.strides[nd - 1]];
      if (m.bool) { if (!mv) acc = -Infinity; } else acc += mv;
    }
    s[j] = acc;
  }
}

export function attentionCpu(q: CpuOperand, k: CpuOperand, v: CpuOperand, opts: CpuAttentionOptions, out: Float32Array, lse: Float32Array): void {
  const d = dims(q.view, v.view);
  const { L, S, Ev, nd } = d;
  const s = new Float64Array(S);
  const acc = new Float64Array(Ev);
  const vs = v.view.strides;
  forEachBatch(d.batch, (b, off) => {
    const qo = off(q.view), ko = off(k.view), vo = off(v.view), mo = opts.mask ? off(opts.mask.view) : 0;
    for (let i = 0; i < L; i++) {
      scoreRow(s, i, d, q, qo, k, ko, opts, mo);
      let m = -Infinity;
      for (let j = 0; j < S; j++) if (s[j] > m) m = s[j];
      const o = (b * L + i) * Ev;
      if (m === -Infinity) {
        // Every key hidden: PyTorch's safe softmax gives 0, not NaN.
        out.fill(0, o, o + Ev);
        lse[b * L + i] = -Infinity;
        continue;
      }
      acc.fill(0);
      let l = 0;
      for (let j = 0; j < S; j++) {
        const p = Math.exp(s[j] - m);
        if (p === 0) continue;
        l += p;
        const vr = vo + j * vs[nd - 2];
        for (let e = 0; e < Ev; e++) acc[e] += p * v.data[vr + e * vs[nd - 1]];
      }
      for (let e = 0; e < Ev; e++) out[o + e] = acc[e] / l;
      lse[b * L + i] = m + Math.log(l);
    }
  });
}

export function attentionBackwardCpu(
  q: CpuOperand, k: CpuOperand, v: CpuOperand, out: CpuOperand, lse: CpuOperand, gOut: CpuOperand, opts: CpuAttentionOptions,
  dq: Float32Array, dk: Float32Array, dv: Float32Array,
): void {
  const d = dims(q.view, v.view);
  const { L, S, E, Ev, nd } = d;
  const s = new Float64Array(S);
  const dkAcc = new Float64Array(S * E);
  const dvAcc = new Float64Array(S * Ev);
  const dqRow = new Float64Array(E);
  const qs = q.view.strides, ks = k.view.strides, vs = v.view.strides, os = out.view.strides, gs = gOut.view.strides;
  forEachBatch(d.batch, (b, off) => {
    const qo = off(q.view), ko = off(k.view), vo = off(v.view), oo = off(out.view), lo = off(lse.view), go = off(gOut.view);
    const mo = opts.mask ? off(opts.mask.view) : 0;
    dkAcc.fill(0);
    dvAcc.fill(0);
    for (let i = 0; i < L; i++) {
      const li = lse.data[lo + i * lse.view.strides[nd - 2]];
      const gr = go + i * gs[nd - 2];
      const qr = qo + i * qs[nd - 2];
      dqRow.fill(0);
      if (li !== -Infinity) {
        scoreRow(s, i, d, q, qo, k, ko, opts, mo);
        let D = 0;
        const orow = oo + i * os[nd - 2];
        for (let e = 0; e < Ev; e++) D += gOut.data[gr + e * gs[nd - 1]] * out.data[orow + e * os[nd - 1]];
        for (let j = 0; j < S; j++) {
          const p = Math.exp(s[j] - li);
          if (p === 0) continue;
          const vr = vo + j * vs[nd - 2];
          let dp = 0;
          for (let e = 0; e < Ev; e++) {
            const g = gOut.data[gr + e * gs[nd - 1]];
            dp += g * v.data[vr + e * vs[nd - 1]];
            dvAcc[j * Ev + e] += p * g;
          }
          const ds = p * (dp - D) * opts.scale;
          const kr = ko + j * ks[nd - 2];
          for (let e = 0; e < E; e++) {
            dqRow[e] += ds * k.data[kr + e * ks[nd - 1]];
            dkAcc[j * E + e] += ds * q.data[qr + e * qs[nd - 1]];
          }
        }
      }
      dq.set(dqRow, (b * L + i) * E);
    }
    dk.set(dkAcc, b * S * E);
    dv.set(dvAcc, b * S * Ev);
  });
}
