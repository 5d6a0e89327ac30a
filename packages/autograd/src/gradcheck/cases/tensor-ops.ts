import { Tensor } from '../../tensor';
import { nanToNum } from '../../ops/nonfinite';
import { cumprod } from '../../ops/cumprod';
import { roll } from '../../ops/roll';
import { diag, diagonal } from '../../ops/diagonal';
import { outer } from '../../ops/outer';
import { meshgrid } from '../../ops/meshgrid';
import { square } from '../../ops/square';
import { lerp } from '../../ops/lerp';
import { maxDim, minDim } from '../../ops/extremum-dim';
import { einsum } from '../../ops/einsum';
import { softmaxCrossEntropy } from '../../ops/cross-entropy';
import { tensor } from '../../creation';
import { Host, at, build } from '../host';
import type { GradcheckCase } from '../case';
import type { InputSpec } from '../inputs';

/**
 * Gradient-check cases for the tensor ops ported from PyTorch (scans, diagonals, einsum,
 * lerp, ...). Forward references are host loops written here, independent of the ops.
 */
const sp = (s: number[], layout?: InputSpec['layout']): InputSpec => ({ shape: s, layout });
const vals = (shape: number[], values: number[], layout?: InputSpec['layout']): InputSpec => ({
  shape,
  values,
  layout,
});
const mod = (a: number, n: number) => ((a % n) + n) % n;
const ints = (shape: number[], values: number[]): InputSpec => ({ shape, values, dtype: 'int32' });

/**
 * PyTorch's cross entropy of row i (logits z, class weights w, smoothing eps), or null for an
 * ignored target: (1 − ε)·w_t·(lse − z_t) + (ε/C)·Σ_j w_j·(lse − z_j).
 */
function ceRow(z: number[], t: number, w: number[], eps: number, ignore: number): number | null {
  if (t === ignore) return null;
  const m = Math.max(...z);
  const lse = m + Math.log(z.reduce((a, v) => a + Math.exp(v - m), 0));
  let smooth = 0;
  z.forEach((v, j) => (smooth += w[j] * (lse - v)));
  return (1 - eps) * w[t] * (lse - z[t]) + (eps / z.length) * smooth;
}

/** The mean over kept rows as PyTorch: Σ loss / Σ w_t over targets not ignored. */
function ceMean(rows: number[][], ts: number[], w: number[], eps: number, ignore: number): number {
  let num = 0,
    den = 0;
  rows.forEach((z, i) => {
    const l = ceRow(z, ts[i], w, eps, ignore);
    if (l === null) return;
    num += l;
    den += w[ts[i]];
  });
  return num / den;
}

const rowsOf = (x: Host): number[][] => {
  const c = x.shape[1];
  return Array.from({ length: x.shape[0] }, (_, i) => x.data.slice(i * c, i * c + c));
};

/** Σ_k a[i,k]·b[k,j] over host arrays. */
const mm = (a: Host, b: Host): Host =>
  build([a.shape[0], b.shape[1]], ([i, j]) => {
    let s = 0;
    for (let k = 0; k < a.shape[1]; k++) s += at(a, [i, k]) * at(b, [k, j]);
    return s;
  });

export function tensorOpsCases(): GradcheckCase[] {
  return [
    {
      name: 'nanToNum on finite values is the identity',
      op: 'nanToNum',
      inputs: [sp([2, 3], 'transposed')],
      fn: (x) => nanToNum(x, { nan: 1 }),
      forward: (x) => x,
    },
    {
      name: 'cumprod with zeros (exact gradient)',
      op: 'cumprod',
      inputs: [vals([2, 4], [1.5, 0, 2, -0.5, 0, 0, 3, 1.25])],
      fn: (x) => cumprod(x, 1),
      forward: (x) =>
        build([2, 4], ([i, j]) => {
          let p = 1;
          for (let k = 0; k <= j; k++) p *= at(x, [i, k]);
          return p;
        }),
    },
    {
      name: 'cumprod dim 0, non-contiguous',
      op: 'cumprod',
      inputs: [sp([5, 2], 'flipped')],
      fn: (x) => x.cumprod(0),
      forward: (x) =>
        build([5, 2], ([i, j]) => {
          let p = 1;
          for (let k = 0; k <= i; k++) p *= at(x, [k, j]);
          return p;
        }),
    },
    {
      name: 'roll two dims',
      op: 'roll',
      inputs: [sp([3, 4], 'sliced')],
      fn: (x) => roll(x, [1, -3], [0, 1]),
      forward: (x) => build([3, 4], ([i, j]) => at(x, [mod(i - 1, 3), mod(j + 3, 4)])),
    },
    {
      name: 'roll flattened',
      op: 'roll',
      inputs: [sp([2, 3])],
      fn: (x) => x.roll(2),
      forward: (x) => build([2, 3], ([i, j]) => x.data[mod(i * 3 + j - 2, 6)]),
    },
    {
      name: 'diag of a vector, offset -1',
      op: 'diag',
      inputs: [sp([3])],
      fn: (x) => diag(x, -1),
      forward: (x) => build([4, 4], ([i, j]) => (i - j === 1 ? at(x, [j]) : 0)),
    },
    {
      name: 'diag of a matrix, offset 1',
      op: 'diag',
      inputs: [sp([3, 4], 'transposed')],
      fn: (x) => x.diag(1),
      forward: (x) => build([3], ([i]) => at(x, [i, i + 1])),
    },
    {
      name: 'diagonal of dims 2 and 0',
      op: 'diagonal',
      inputs: [sp([3, 2, 4])],
      fn: (x) => diagonal(x, 1, 2, 0),
      forward: (x) => build([2, 2], ([j, i]) => at(x, [i + 1, j, i])),
    },
    {
      name: 'outer',
      op: 'outer',
      inputs: [sp([3]), sp([2])],
      fn: (a, b) => outer(a, b),
      forward: (a, b) => build([3, 2], ([i, j]) => at(a, [i]) * at(b, [j])),
    },
    {
      name: "meshgrid 'xy' (gradients sum over the broadcast)",
      op: 'meshgrid',
      inputs: [sp([2]), sp([3])],
      fn: (a, b) => {
        const [x, y] = meshgrid([a, b], { indexing: 'xy' });
        return x.mul(y.add(2));
      },
      forward: (a, b) => build([3, 2], ([i, j]) => at(a, [j]) * (at(b, [i]) + 2)),
    },
    {
      name: 'square',
      op: 'square',
      inputs: [sp([2, 3], 'flipped')],
      fn: (x) => square(x),
      forward: (x) => build([2, 3], ([i, j]) => at(x, [i, j]) ** 2),
    },
    {
      name: 'lerp with a broadcast tensor weight',
      op: 'lerp',
      inputs: [sp([2, 3]), sp([3]), sp([2, 1])],
      fn: (s, e, w) => lerp(s, e, w),
      forward: (s, e, w) => build([2, 3], ([i, j]) => at(s, [i, j]) + at(w, [i, 0]) * (at(e, [j]) - at(s, [i, j]))),
    },
    {
      // Ties (where the gradient goes to the first index) are checked against PyTorch in ops-torch.test.ts: finite
      // differences cannot see a one-sided rule.
      name: 'max(dim) values',
      op: 'maxDim',
      inputs: [vals([2, 3], [1, 3, 2.5, -1, 2, 0.5])],
      fn: (x) => maxDim(x, 1).values,
      forward: (x) => build([2], ([i]) => Math.max(at(x, [i, 0]), at(x, [i, 1]), at(x, [i, 2]))),
    },
    {
      name: 'min(dim) keepdim',
      op: 'minDim',
      inputs: [sp([3, 4], 'transposed')],
      fn: (x) => minDim(x, 0, true).values,
      forward: (x) => build([1, 4], ([, j]) => Math.min(at(x, [0, j]), at(x, [1, j]), at(x, [2, j]))),
    },
    {
      name: 'Tensor.max(dim) values',
      op: 'max',
      inputs: [sp([2, 3], 'sliced')],
      fn: (x: Tensor) => x.max(-1).values,
      forward: (x) => build([2], ([i]) => Math.max(at(x, [i, 0]), at(x, [i, 1]), at(x, [i, 2]))),
    },
    {
      name: 'amax over two dims',
      op: 'amax',
      inputs: [sp([2, 3, 2])],
      fn: (x) => x.amax([0, 2]),
      forward: (x) =>
        build([3], ([j]) => Math.max(at(x, [0, j, 0]), at(x, [0, j, 1]), at(x, [1, j, 0]), at(x, [1, j, 1]))),
    },
    {
      name: 'amin keepdim',
      op: 'amin',
      inputs: [sp([3, 2], 'flipped')],
      fn: (x) => x.amin(0, true),
      forward: (x) => build([1, 2], ([, j]) => Math.min(at(x, [0, j]), at(x, [1, j]), at(x, [2, j]))),
    },
    {
      name: 'crossEntropy ignoreIndex -100, mean over the kept rows (fused rows op)',
      op: 'softmaxCrossEntropy',
      inputs: [sp([4, 3], 'transposed'), ints([4], [2, -100, 0, 1])],
      fn: (z, y) => softmaxCrossEntropy(z, y),
      forward: (z, y) => ({ data: [ceMean(rowsOf(z), y.data, [1, 1, 1], 0, -100)], shape: [] }),
    },
    {
      name: 'crossEntropy ignoreIndex inside the classes, smoothed, none',
      op: 'softmaxCrossEntropy',
      inputs: [sp([3, 4], 'flipped'), ints([3], [1, 3, 0])],
      fn: (z, y) => softmaxCrossEntropy(z, y, { ignoreIndex: 3, labelSmoothing: 0.2, reduction: 'none' }),
      forward: (z, y) => ({
        data: rowsOf(z).map((r, i) => ceRow(r, y.data[i], [1, 1, 1, 1], 0.2, 3) ?? 0),
        shape: [3],
      }),
    },
    {
      name: 'crossEntropy class weights, smoothing and an ignored row (composed)',
      op: 'softmaxCrossEntropy',
      inputs: [sp([4, 3], 'sliced'), ints([4], [2, 0, -100, 1])],
      fn: (z, y) => softmaxCrossEntropy(z, y, { weight: tensor([0.5, 2, 1.25]), labelSmoothing: 0.1 }),
      forward: (z, y) => ({ data: [ceMean(rowsOf(z), y.data, [0.5, 2, 1.25], 0.1, -100)], shape: [] }),
    },
    {
      name: 'crossEntropy [N, C, d] input',
      op: 'softmaxCrossEntropy',
      inputs: [sp([2, 3, 2]), ints([2, 2], [0, 2, -100, 1])],
      fn: (z, y) => softmaxCrossEntropy(z, y, { reduction: 'sum' }),
      forward: (z, y) => {
        let total = 0;
        for (let n = 0; n < 2; n++)
          for (let d = 0; d < 2; d++) {
            const row = [0, 1, 2].map((c) => at(z, [n, c, d]));
            total += ceRow(row, at(y, [n, d]), [1, 1, 1], 0, -100) ?? 0;
          }
        return { data: [total], shape: [] };
      },
    },
    {
      name: 'einsum matmul',
      op: 'einsum',
      inputs: [sp([2, 3], 'transposed'), sp([3, 2])],
      fn: (a, b) => einsum('ij,jk->ik', a, b),
      forward: (a, b) => mm(a, b),
    },
    {
      name: 'einsum trace times a vector sum (diagonal and reduction)',
      op: 'einsum',
      inputs: [sp([3, 3]), sp([2])],
      fn: (a, b) => einsum('ii,j->j', a, b),
      forward: (a, b) => build([2], ([j]) => (at(a, [0, 0]) + at(a, [1, 1]) + at(a, [2, 2])) * at(b, [j])),
    },
    {
      name: 'einsum batched with ellipsis broadcast',
      op: 'einsum',
      inputs: [sp([2, 1, 2]), sp([2, 3])],
      fn: (a, b) => einsum('...ij,jk->...ik', a, b),
      forward: (a, b) =>
        build([2, 1, 3], ([n, i, k]) => at(a, [n, i, 0]) * at(b, [0, k]) + at(a, [n, i, 1]) * at(b, [1, k])),
    },
  ];
}
