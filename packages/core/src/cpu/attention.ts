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
export function forEachBatch(batch: readonly number[], fn: (b: number, offsetOf: (v: View) => number) => void): void {
  const n = batch.reduce((a, c) => a * c, 1);
  const idx = new Array<number>(batch.length).fill(0);
  for (let b = 0; b < n; b++) {
    fn(b, (v) => {
      let o = v.offset;
      for (let d = 0; d < batch.length; d++) o += idx[d] * v.strides[d];
      return o;
    });
    for (let d = batch.length - 1; d >= 0; d--) {
      if (++idx[d] < batch[d]) break;
      idx[d] = 0;
    }
  }
}

export interface Dims {
  batch: number[];
  L: number;
  S: number;
  E: number;
  Ev: number;
  nd: number;
}

export function dims(q: View, v: View): Dims {
  const nd = q.ndim;
  return {
    batch: q.shape.slice(0, -2),
    L: q.shape[nd - 2],
    S: v.shape[nd - 2],
    E: q.shape[nd - 1],
    Ev: v.shape[nd - 1],
    nd,
  };
}

/** Copies `rows` rows of `cols` elements of x (batch offset o) into a dense float64 block. */
function pack(x: CpuOperand, o: number, rows: number, cols: number, rowAxis: number, into: Float64Array): Float64Array {
  const rs = x.view.strides[rowAxis],
    cs = cols > 0 ? x.view.strides[rowAxis + 1] : 0;
  const d = x.data;
  for (let r = 0, w = 0; r < rows; r++) {
    let src = o + r * rs;
    for (let c = 0; c < cols; c++, src += cs) into[w++] = d[src];
  }
  return into;
}

/**
 * Row i's scores into s[0..n), n the keys it may see (j <= i when causal); hidden keys get
 * -Infinity. q is row i of the packed q block, k the packed [S, E] keys.
 */
function scoreRow(
  s: Float64Array,
  i: number,
  n: number,
  qb: Float64Array,
  kb: Float64Array,
  E: number,
  opts: CpuAttentionOptions,
  mo: number,
  nd: number,
): void {
  const qo = i * E;
  for (let j = 0, ko = 0; j < n; j++, ko += E) {
    let acc = 0;
    for (let e = 0; e < E; e++) acc += qb[qo + e] * kb[ko + e];
    s[j] = acc * opts.scale;
  }
  const m = opts.mask;
  if (!m) return;
  const mr = mo + i * m.view.strides[nd - 2],
    mc = m.view.strides[nd - 1];
  for (let j = 0; j < n; j++) {
    const mv = m.data[mr + j * mc];
    if (m.bool) {
      if (!mv) s[j] = -Infinity;
    } else s[j] += mv;
  }
}

export function attentionCpu(
  q: CpuOperand,
  k: CpuOperand,
  v: CpuOperand,
  opts: CpuAttentionOptions,
  out: Float32Array,
  lse: Float32Array,
): void {
  const d = dims(q.view, v.view);
  const { L, S, E, Ev, nd } = d;
  const s = new Float64Array(S);
  const acc = new Float64Array(Ev);
  const qb = new Float64Array(L * E),
    kb = new Float64Array(S * E),
    vb = new Float64Array(S * Ev);
  forEachBatch(d.batch, (b, off) => {
    pack(q, off(q.view), L, E, nd - 2, qb);
    pack(k, off(k.view), S, E, nd - 2, kb);
    pack(v, off(v.view), S, Ev, nd - 2, vb);
    const mo = opts.mask ? off(opts.mask.view) : 0;
    for (let i = 0; i < L; i++) {
      const n = opts.causal ? Math.min(S, i + 1) : S;
      scoreRow(s, i, n, qb, kb, E, opts, mo, nd);
      let m = -Infinity;
      let nan = false;
      for (let j = 0; j < n; j++) {
        if (s[j] > m) m = s[j];
        else if (Number.isNaN(s[j])) nan = true;
      }
      const o = (b * L + i) * Ev;
      if (nan) {
        // A NaN score makes the row's softmax NaN, as in PyTorch (a max that skipped it would hide it).
        out.fill(NaN, o, o + Ev);
        lse[b * L + i] = NaN;
        continue;
      }
      if (m === -Infinity) {
        // Every key hidden: PyTorch's safe softmax gives 0, not NaN.
        out.fill(0, o, o + Ev);
        lse[b * L + i] = -Infinity;
        continue;
      }
      acc.fill(0);
      let l = 0;
      for (let j = 0; j < n; j++) {
        const p = Math.exp(s[j] - m);
        if (p === 0) continue;
        l += p;
        for (let e = 0, vo = j * Ev; e < Ev; e++) acc[e] += p * vb[vo + e];
      }
      for (let e = 0; e < Ev; e++) out[o + e] = acc[e] / l;
      lse[b * L + i] = m + Math.log(l);
    }
  });
}

export function attentionBackwardCpu(
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
  const d = dims(q.view, v.view);
  const { L, S, E, Ev, nd } = d;
  const s = new Float64Array(S);
  const dkAcc = new Float64Array(S * E);
  const dvAcc = new Float64Array(S * Ev);
  const dqRow = new Float64Array(E);
  const qb = new Float64Array(L * E),
    kb = new Float64Array(S * E),
    vb = new Float64Array(S * Ev);
  const gb = new Float64Array(L * Ev),
    ob = new Float64Array(L * Ev);
  const scale = opts.scale;
  forEachBatch(d.batch, (b, off) => {
    pack(q, off(q.view), L, E, nd - 2, qb);
    pack(k, off(k.view), S, E, nd - 2, kb);
    pack(v, off(v.view), S, Ev, nd - 2, vb);
    pack(gOut, off(gOut.view), L, Ev, nd - 2, gb);
    pack(out, off(out.view), L, Ev, nd - 2, ob);
    const lo = off(lse.view),
      ls = lse.view.strides[nd - 2];
    const mo = opts.mask ? off(opts.mask.view) : 0;
    dkAcc.fill(0);
    dvAcc.fill(0);
    for (let i = 0; i < L; i++) {
      const li = lse.data[lo + i * ls];
      dqRow.fill(0);
      if (li !== -Infinity) {
        const n = opts.causal ? Math.min(S, i + 1) : S;
        scoreRow(s, i, n, qb, kb, E, opts, mo, nd);
        const go = i * Ev,
          qo = i * E;
        let D = 0;
        for (let e = 0; e < Ev; e++) D += gb[go + e] * ob[go + e];
        for (let j = 0; j < n; j++) {
          const p = Math.exp(s[j] - li);
          if (p === 0) continue;
          const vo = j * Ev;
          let dp = 0;
          for (let e = 0; e < Ev; e++) {
            const g = gb[go + e];
            dp += g * vb[vo + e];
            dvAcc[vo + e] += p * g;
          }
          const ds = p * (dp - D) * scale;
          const ko = j * E;
          for (let e = 0; e < E; e++) {
            dqRow[e] += ds * kb[ko + e];
            dkAcc[ko + e] += ds * qb[qo + e];
          }
        }
      }
      dq.set(dqRow, (b * L + i) * E);
    }
    dk.set(dkAcc, b * S * E);
    dv.set(dvAcc, b * S * Ev);
  });
}
