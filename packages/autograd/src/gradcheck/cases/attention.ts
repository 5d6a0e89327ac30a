import { scaledDotProductAttention as sdpa } from '../../ops/attention';
import { manualSeed } from '../../seed';
import type { GradcheckCase } from '../case';
import { Host, at, broadcastShape, build } from '../host';

/**
 * scaledDotProductAttention: the fused path (plain, causal, bool mask with a fully hidden row,
 * broadcast batch) and the composite path (a float mask that needs a gradient, dropout with a
 * fixed seed so every finite-difference evaluation drops the same weights).
 */
function hostAttention(
  q: Host,
  k: Host,
  v: Host,
  scale: number,
  hidden: (i: number, j: number) => boolean,
  bias: (i: number, j: number) => number = () => 0,
): Host {
  const [L, E] = q.shape.slice(-2);
  const S = k.shape[k.shape.length - 2];
  const Ev = v.shape[v.shape.length - 1];
  const batch = broadcastShape(q.shape.slice(0, -2), k.shape.slice(0, -2), v.shape.slice(0, -2));
  return build([...batch, L, Ev], (idx) => {
    const b = idx.slice(0, -2),
      i = idx[idx.length - 2],
      e = idx[idx.length - 1];
    const s: number[] = [];
    for (let j = 0; j < S; j++) {
      let d = 0;
      for (let c = 0; c < E; c++) d += at(q, [...b, i, c]) * at(k, [...b, j, c]);
      s.push(hidden(i, j) ? -Infinity : d * scale + bias(i, j));
    }
    const m = Math.max(...s);
    if (m === -Infinity) return 0;
    const w = s.map((x) => Math.exp(x - m));
    const z = w.reduce((a, c) => a + c, 0);
    return w.reduce((acc, wj, j) => acc + (wj / z) * at(v, [...b, j, e]), 0);
  });
}

const none = () => false;

export function attentionGradcheckCases(): GradcheckCase[] {
  const op = 'scaledDotProductAttention';
  const maskVals = [1, -1, 1, 1, -1, /* row 1 hidden */ -1, -1, -1, -1, -1, 1, 1, -1, 1, 1];
  return [
    {
      name: 'sdpa [2,3,4]x[2,5,4]x[2,5,3] default scale, k transposed',
      op,
      inputs: [{ shape: [2, 3, 4] }, { shape: [2, 5, 4], layout: 'transposed' }, { shape: [2, 5, 3] }],
      fn: (q, k, v) => sdpa(q, k, v),
      forward: (q, k, v) => hostAttention(q, k, v, 0.5, none),
    },
    {
      name: 'sdpa causal L=4 S=4, scale 0.7',
      op,
      inputs: [{ shape: [4, 3] }, { shape: [4, 3], layout: 'flipped' }, { shape: [4, 2] }],
      fn: (q, k, v) => sdpa(q, k, v, { causal: true, scale: 0.7 }),
      forward: (q, k, v) => hostAttention(q, k, v, 0.7, (i, j) => j > i),
    },
    {
      name: 'sdpa bool mask with a fully hidden row',
      op,
      inputs: [
        { shape: [3, 4] },
        { shape: [5, 4] },
        { shape: [5, 2] },
        { shape: [3, 5], values: maskVals, requiresGrad: false },
      ],
      fn: (q, k, v, m) => sdpa(q, k, v, { attnMask: m.gt(0) }),
      forward: (q, k, v) => hostAttention(q, k, v, 0.5, (i, j) => maskVals[i * 5 + j] <= 0),
    },
    {
      name: 'sdpa broadcast k/v batch [2,2,3,4] with [1,2,5,4]',
      op,
      inputs: [{ shape: [2, 2, 3, 4] }, { shape: [1, 2, 5, 4] }, { shape: [2, 5, 3] }],
      fn: (q, k, v) => sdpa(q, k, v, { scale: 0.4 }),
      forward: (q, k, v) => hostAttention(q, k, v, 0.4, none),
    },
    {
      name: 'sdpa float mask that requires grad (composite path)',
      op,
      inputs: [{ shape: [2, 3, 4] }, { shape: [2, 5, 4] }, { shape: [2, 5, 3] }, { shape: [1, 5] }],
      fn: (q, k, v, m) => sdpa(q, k, v, { attnMask: m }),
      forward: (q, k, v, m) => hostAttention(q, k, v, 0.5, none, (_i, j) => m.data[j]),
    },
    {
      name: 'sdpa dropout 0.3 (seeded: the same weights dropped each evaluation)',
      op,
      // The float-mask case's shapes: the WebGPU run reuses its compiled kernels.
      inputs: [{ shape: [2, 3, 4] }, { shape: [2, 5, 4] }, { shape: [2, 5, 3] }],
      fn: (q, k, v) => {
        manualSeed('sdpa dropout');
        return sdpa(q, k, v, { dropoutP: 0.3 });
      },
    },
  ];
}
