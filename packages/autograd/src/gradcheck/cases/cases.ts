import { Tensor } from '../../tensor';
import { where } from '../../ops/arith';
import { cat, stack } from '../../ops/join';
import { linear } from '../../ops/linear';
import { softmaxCrossEntropy } from '../../ops/cross-entropy';
import { Host, build, at, map, zip, reduceAxis, matmul2d, sumAll, logSumExp } from '../host';
import { InputSpec } from '../inputs';
import { type GradcheckCase, unaryCase } from '../case';
import { attentionGradcheckCases } from './attention';
import { mathCases } from './math';
import { indexSortScanCases } from './index-sort-scan';
import { fusionCases } from './fusion';
// conv, pool and batch-norm cases
import { convPoolNormCases } from './conv-pool-norm';
import { randomCases } from './random';
import { binaryCrossEntropyTerms } from '../../ops/bce';
import { tensorOpsCases } from './tensor-ops';

export type { GradcheckCase } from '../case';

const sig = (v: number) => 1 / (1 + Math.exp(-v));
function erf(x: number): number {
  // Taylor series: plenty accurate in float64 for |x| < 4, independent of the kernel's A&S form.
  let sum = 0,
    term = x;
  for (let n = 0; n < 80; n++) {
    sum += term / (2 * n + 1);
    term *= (-x * x) / (n + 1);
  }
  return (2 / Math.sqrt(Math.PI)) * sum;
}
const softmaxRow = (v: number[]) => {
  const m = Math.max(...v);
  const e = v.map((x) => Math.exp(x - m));
  const s = sumAll(e);
  return e.map((x) => x / s);
};
const alongAxis = (x: Host, axis: number, f: (v: number[]) => number[]): Host =>
  build(
    x.shape,
    (idx) =>
      f(
        Array.from({ length: x.shape[axis] }, (_, k) =>
          at(
            x,
            idx.map((v, i) => (i === axis ? k : v)),
          ),
        ),
      )[idx[axis]],
  );
const reduceAll = (x: Host, f: (v: number[]) => number): Host => ({ data: [f(x.data)], shape: [] });
const mean = (v: number[]) => sumAll(v) / v.length;
const variance = (v: number[], c = 1) => {
  const m = mean(v);
  return sumAll(v.map((x) => (x - m) ** 2)) / (v.length - c);
};
const sp = (s: number[], layout?: InputSpec['layout']): InputSpec => ({ shape: s, layout });

function unaryCases(): GradcheckCase[] {
  const u = unaryCase;
  return [
    u(
      'neg',
      (x) => x.neg(),
      (v) => -v,
      sp([2, 3], 'transposed'),
    ),
    u('exp', (x) => x.exp(), Math.exp, sp([2, 3], 'flipped')),
    u('log', (x) => x.log(), Math.log, { shape: [2, 3], values: 'positive', layout: 'sliced' }),
    u('log', (x) => x.log(), Math.log, { shape: [4], values: [1e-3, 1e-2, 0.1, 1] }, { name: 'log near 0', eps: 2e-5 }),
    u('sqrt', (x) => x.sqrt(), Math.sqrt, { shape: [2, 3], values: 'positive', layout: 'transposed' }),
    u('sqrt', (x) => x.sqrt(), Math.sqrt, { shape: [3], values: [1e-4, 1e-2, 1] }, { name: 'sqrt near 0', eps: 1e-6 }),
    u(
      'rsqrt',
      (x) => x.rsqrt(),
      (v) => 1 / Math.sqrt(v),
      { shape: [2, 3], values: 'positive' },
    ),
    u('abs', (x) => x.abs(), Math.abs, sp([2, 3], 'sliced')),
    u('sin', (x) => x.sin(), Math.sin, sp([2, 3], 'transposed'), { refAtol: 2e-3 }),
    u('cos', (x) => x.cos(), Math.cos, sp([2, 3], 'flipped'), { refAtol: 2e-3 }),
    u('tanh', (x) => x.tanh(), Math.tanh, { shape: [2, 4], values: [-30, -2, -0.5, 0, 0.3, 1.5, 4, 30] }),
    u('sigmoid', (x) => x.sigmoid(), sig, {
      shape: [2, 4],
      values: [-40, -3, -0.5, 0, 0.2, 1, 3, 40],
      layout: 'transposed',
    }),
    u(
      'relu',
      (x) => x.relu(),
      (v) => Math.max(v, 0),
      sp([2, 3], 'flipped'),
    ),
    u(
      'leakyRelu',
      (x) => x.leakyRelu(0.1),
      (v) => (v > 0 ? v : 0.1 * v),
      sp([2, 3], 'sliced'),
    ),
    u(
      'gelu',
      (x) => x.gelu(),
      (v) => 0.5 * v * (1 + erf(v / Math.SQRT2)),
      { shape: [2, 4], values: [-6, -2, -0.7, -0.1, 0.1, 0.5, 1.7, 3], layout: 'transposed' },
    ),
    u(
      'gelu',
      (x) => x.gelu('tanh'),
      (v) => 0.5 * v * (1 + Math.tanh(Math.sqrt(2 / Math.PI) * (v + 0.044715 * v ** 3))),
      sp([2, 3]),
      { name: 'gelu tanh' },
    ),
    u(
      'softplus',
      (x) => x.softplus(),
      (v) => Math.max(v, 0) + Math.log1p(Math.exp(-Math.abs(v))),
      { shape: [6], values: [-40, -2, -0.1, 0.4, 3, 40] },
    ),
    u(
      'softplus',
      (x) => x.softplus(2),
      (v) => Math.log1p(Math.exp(2 * v)) / 2,
      sp([2, 3], 'transposed'),
      { name: 'softplus beta=2' },
    ),
    u(
      'clamp',
      (x) => x.clamp(-0.5, 0.6),
      (v) => Math.min(Math.max(v, -0.5), 0.6),
      sp([3, 4], 'transposed'),
    ),
    u(
      'pow',
      (x) => x.pow(2),
      (v) => v ** 2,
      { shape: [5], values: [0, -3, -0.5, 0.7, 2] },
      { name: 'pow x^2 at 0 and negative bases' },
    ),
    u(
      'pow',
      (x) => x.pow(3),
      (v) => v ** 3,
      { shape: [4], values: [-2, -1, 0, 1.5] },
      { name: 'pow x^3 negative bases' },
    ),
    u(
      'pow',
      (x) => x.pow(0),
      () => 1,
      { shape: [3], values: [0, -2, 3] },
      { name: 'pow x^0 (gradient 0 at 0)' },
    ),
    u(
      'pow',
      (x) => x.pow(-1.5),
      (v) => v ** -1.5,
      { shape: [2, 3], values: 'positive', layout: 'flipped' },
      { name: 'pow negative exponent' },
    ),
  ];
}

function binaryCases(): GradcheckCase[] {
  const b = (
    op: string,
    fn: (x: Tensor, y: Tensor) => Tensor,
    f: (a: number, b: number) => number,
    a: InputSpec,
    c: InputSpec,
    extra: Partial<GradcheckCase> = {},
  ): GradcheckCase => ({
    name: `${op} [${a.shape}]${a.layout ? ' ' + a.layout : ''} with [${c.shape}]${c.layout ? ' ' + c.layout : ''}`,
    op,
    inputs: [a, c],
    fn,
    forward: (x, y) => zip([x, y], f),
    ...extra,
  });
  return [
    b(
      'add',
      (x, y) => x.add(y),
      (p, q) => p + q,
      sp([2, 3], 'transposed'),
      sp([3]),
    ),
    b(
      'add',
      (x, y) => x.add(y),
      (p, q) => p + q,
      sp([3, 1]),
      sp([2, 1, 4], 'flipped'),
    ),
    b(
      'sub',
      (x, y) => x.sub(y),
      (p, q) => p - q,
      sp([2, 3], 'sliced'),
      sp([2, 1]),
    ),
    b(
      'mul',
      (x, y) => x.mul(y),
      (p, q) => p * q,
      sp([2, 3], 'flipped'),
      sp([1, 3], 'transposed'),
    ),
    b(
      'div',
      (x, y) => x.div(y),
      (p, q) => p / q,
      sp([2, 3], 'transposed'),
      { shape: [3], values: 'positive' },
    ),
    b(
      'pow',
      (x, y) => x.pow(y),
      (p, q) => p ** q,
      { shape: [2, 3], values: 'positive', layout: 'sliced' },
      { shape: [3], values: 'unit' },
    ),
    b(
      'maximum',
      (x, y) => x.maximum(y),
      Math.max,
      { shape: [2, 3], values: [1, 2, 3, -1, 0.5, 4] },
      { shape: [3], values: [2, 2, 0] },
      { name: 'maximum with ties (split equally)' },
    ),
    b('maximum', (x, y) => x.maximum(y), Math.max, sp([2, 3], 'transposed'), sp([2, 1])),
    b(
      'minimum',
      (x, y) => x.minimum(y),
      Math.min,
      { shape: [2, 3], values: [1, 2, 3, -1, 0.5, 4], layout: 'flipped' },
      { shape: [3], values: [2, 2, 0] },
      { name: 'minimum with ties (split equally)' },
    ),
    {
      name: 'where(c, a, b) broadcast',
      op: 'where',
      inputs: [{ shape: [2, 3], requiresGrad: false }, sp([2, 3], 'transposed'), sp([3])],
      fn: (c, x, y) => where(c.gt(0), x, y),
      forward: (c, x, y) => zip([c, x, y], (k, p, q) => (k > 0 ? p : q)),
    },
    {
      name: 'clamp with tensor bounds',
      op: 'clamp',
      inputs: [sp([2, 3]), { shape: [3], values: [-0.5, -2, 0.1] }, { shape: [2, 1], values: [0.3, 2] }],
      fn: (x, lo, hi) => x.clamp(lo, hi),
      forward: (x, lo, hi) => zip([x, lo, hi], (v, l, h) => Math.min(Math.max(v, l), h)),
    },
  ];
}

function reductionCases(): GradcheckCase[] {
  return [
    {
      name: 'sum all (transposed)',
      op: 'sum',
      inputs: [sp([3, 4], 'transposed')],
      fn: (x) => x.sum(),
      forward: (x) => reduceAll(x, sumAll),
    },
    {
      name: 'sum dim 1',
      op: 'sum',
      inputs: [sp([2, 3], 'flipped')],
      fn: (x) => x.sum(1),
      forward: (x) => reduceAxis(x, 1, sumAll),
    },
    {
      name: 'sum dims [0,2] keepdim',
      op: 'sum',
      inputs: [sp([2, 3, 2], 'sliced')],
      fn: (x) => x.sum([0, 2], true),
      forward: (x) => reduceAxis(reduceAxis(x, 0, sumAll, true), 2, sumAll, true),
    },
    {
      name: 'mean dim -1',
      op: 'mean',
      inputs: [sp([3, 4], 'transposed')],
      fn: (x) => x.mean(-1),
      forward: (x) => reduceAxis(x, 1, mean),
    },
    { name: 'mean all', op: 'mean', inputs: [sp([2, 3])], fn: (x) => x.mean(), forward: (x) => reduceAll(x, mean) },
    {
      name: 'max dim 1',
      op: 'max',
      inputs: [sp([3, 4], 'flipped')],
      fn: (x) => x.amax(1),
      forward: (x) => reduceAxis(x, 1, (v) => Math.max(...v)),
    },
    {
      // Two-way ties only: a central difference at a k-way tie sees 1/2, the split rule 1/k.
      name: 'max with ties (split equally)',
      op: 'max',
      inputs: [{ shape: [2, 3], values: [1, 3, 3, 2, 2, 0] }],
      fn: (x) => x.amax(1).sum(),
      forward: (x) => reduceAll(x, (v) => Math.max(...v.slice(0, 3)) + Math.max(...v.slice(3))),
      expected: { output: [5], grads: [[0, 0.5, 0.5, 0.5, 0.5, 0]] },
    },
    {
      name: 'max all',
      op: 'max',
      inputs: [sp([2, 3], 'transposed')],
      fn: (x) => x.max(),
      forward: (x) => reduceAll(x, (v) => Math.max(...v)),
    },
    {
      name: 'min dim 0 keepdim',
      op: 'min',
      inputs: [sp([3, 2], 'sliced')],
      fn: (x) => x.amin(0, true),
      forward: (x) => reduceAxis(x, 0, (v) => Math.min(...v), true),
    },
    {
      name: 'var dim 1',
      op: 'var',
      inputs: [sp([2, 4], 'transposed')],
      fn: (x) => x.var(1),
      forward: (x) => reduceAxis(x, 1, (v) => variance(v)),
    },
    {
      name: 'var all (correction 0)',
      op: 'var',
      inputs: [sp([2, 3])],
      fn: (x) => x.var(undefined, false, 0),
      forward: (x) => reduceAll(x, (v) => variance(v, 0)),
    },
    {
      name: 'std dim 0 keepdim',
      op: 'std',
      inputs: [sp([3, 2], 'flipped')],
      fn: (x) => x.std(0, true),
      forward: (x) => reduceAxis(x, 0, (v) => Math.sqrt(variance(v)), true),
    },
    {
      name: 'logsumexp dim 1',
      op: 'logsumexp',
      inputs: [sp([2, 4], 'transposed')],
      fn: (x) => x.logsumexp(1),
      forward: (x) => reduceAxis(x, 1, logSumExp),
    },
    {
      name: 'logsumexp large values',
      op: 'logsumexp',
      inputs: [{ shape: [2, 3], values: [100, 101, 99, -100, -102, -101] }],
      fn: (x) => x.logsumexp(1),
      forward: (x) => reduceAxis(x, 1, logSumExp),
    },
    {
      name: 'softmax dim 1',
      op: 'softmax',
      inputs: [sp([3, 4], 'flipped')],
      fn: (x) => x.softmax(1),
      forward: (x) => alongAxis(x, 1, softmaxRow),
    },
    {
      name: 'softmax dim 0 (transposed)',
      op: 'softmax',
      inputs: [sp([3, 2], 'transposed')],
      fn: (x) => x.softmax(0),
      forward: (x) => alongAxis(x, 0, softmaxRow),
    },
    {
      name: 'logSoftmax dim -1',
      op: 'logSoftmax',
      inputs: [{ shape: [2, 3], values: [50, 51, 49, -3, 0.5, 2], layout: 'sliced' }],
      fn: (x) => x.logSoftmax(-1),
      forward: (x) =>
        alongAxis(x, 1, (v) => {
          const l = logSumExp(v);
          return v.map((y) => y - l);
        }),
    },
  ];
}

function shapeCases(): GradcheckCase[] {
  const perm = (x: Host, order: number[]) =>
    build(
      order.map((o) => x.shape[o]),
      (idx) => {
        const j = new Array<number>(order.length);
        order.forEach((o, i) => {
          j[o] = idx[i];
        });
        return at(x, j);
      },
    );
  // Multiplying by a fixed ramp after a movement op makes every output position distinguishable.
  return [
    {
      name: 'reshape (transposed: copies)',
      op: 'reshape',
      inputs: [sp([2, 3], 'transposed')],
      fn: (x) => x.reshape([3, 2]),
      forward: (x) => ({ data: x.data, shape: [3, 2] }),
    },
    {
      name: 'view -1 and flatten',
      op: 'view',
      inputs: [sp([2, 3, 2], 'sliced')],
      fn: (x) => x.view(-1, 2).flatten(),
      forward: (x) => ({ data: x.data, shape: [12] }),
    },
    {
      name: 'permute 3-d',
      op: 'permute',
      inputs: [sp([2, 3, 2], 'flipped')],
      fn: (x) => x.permute(2, 0, 1),
      forward: (x) => perm(x, [2, 0, 1]),
    },
    {
      name: 'transpose',
      op: 'transpose',
      inputs: [sp([2, 3, 2])],
      fn: (x) => x.transpose(0, 2),
      forward: (x) => perm(x, [2, 1, 0]),
    },
    { name: 'T', op: 'T', inputs: [sp([2, 3], 'transposed')], fn: (x) => x.T, forward: (x) => perm(x, [1, 0]) },
    {
      name: 'expand',
      op: 'expand',
      inputs: [sp([3, 1], 'flipped')],
      fn: (x) => x.expand(2, 3, 4),
      forward: (x) => build([2, 3, 4], (i) => at(x, i)),
    },
    {
      name: 'broadcastTo',
      op: 'broadcastTo',
      inputs: [sp([1, 3])],
      fn: (x) => x.broadcastTo([2, 3]),
      forward: (x) => build([2, 3], (i) => at(x, i)),
    },
    {
      name: 'pad',
      op: 'pad',
      inputs: [sp([2, 3], 'transposed')],
      fn: (x) => x.pad([2, 1, 1, 0]),
      forward: (x) => build([3, 6], ([i, j]) => (i >= 1 && j >= 2 && j < 5 ? at(x, [i - 1, j - 2]) : 0)),
    },
    {
      name: 'narrow',
      op: 'narrow',
      inputs: [sp([3, 4], 'flipped')],
      fn: (x) => x.narrow(1, 1, 2),
      forward: (x) => build([3, 2], ([i, j]) => at(x, [i, j + 1])),
    },
    {
      name: 'flip',
      op: 'flip',
      inputs: [sp([2, 3], 'sliced')],
      fn: (x) => x.flip([0, 1]),
      forward: (x) => build([2, 3], ([i, j]) => at(x, [1 - i, 2 - j])),
    },
    {
      name: 'squeeze/unsqueeze',
      op: 'squeeze',
      inputs: [sp([3, 1])],
      fn: (x) => x.squeeze().unsqueeze(0),
      forward: (x) => ({ data: x.data, shape: [1, 3] }),
    },
    {
      name: 'cat dim 1 (mixed layouts)',
      op: 'cat',
      inputs: [sp([2, 2], 'transposed'), sp([2, 3], 'flipped'), sp([2, 1])],
      fn: (a, b, c) => cat([a, b, c], 1),
      forward: (a, b, c) =>
        build([2, 6], ([i, j]) => (j < 2 ? at(a, [i, j]) : j < 5 ? at(b, [i, j - 2]) : at(c, [i, 0]))),
    },
    {
      name: 'cat of 8 (grouped kernels)',
      op: 'cat',
      inputs: Array.from({ length: 8 }, () => sp([1, 2])),
      fn: (...xs) => cat(xs, 0),
      forward: (...xs) => ({ data: xs.flatMap((x) => x.data), shape: [8, 2] }),
    },
    {
      name: 'stack dim 1',
      op: 'stack',
      inputs: [sp([2, 3]), sp([2, 3], 'transposed')],
      fn: (a, b) => stack([a, b], 1),
      forward: (a, b) => build([2, 2, 3], ([i, k, j]) => at(k === 0 ? a : b, [i, j])),
    },
    {
      name: 'indexSelect dim 0 (repeated rows)',
      op: 'indexSelect',
      inputs: [sp([4, 3], 'transposed'), { shape: [5], values: [2, 0, 2, 3, 2], dtype: 'int32' }],
      fn: (x, i) => x.indexSelect(0, i),
      forward: (x, i) => build([5, 3], ([r, c]) => at(x, [i.data[r], c])),
    },
    {
      name: 'indexSelect dim 1',
      op: 'indexSelect',
      inputs: [sp([2, 3, 2], 'flipped'), { shape: [2], values: [2, 2], dtype: 'int32' }],
      fn: (x, i) => x.indexSelect(1, i),
      forward: (x, i) => build([2, 2, 2], ([a, r, c]) => at(x, [a, i.data[r], c])),
    },
  ];
}

function matmulCases(): GradcheckCase[] {
  return [
    {
      name: 'matmul 2-d (transposed a)',
      op: 'matmul',
      inputs: [sp([2, 3], 'transposed'), sp([3, 4], 'sliced')],
      fn: (a, b) => a.matmul(b),
      forward: matmul2d,
    },
    {
      name: 'matmul batched broadcast',
      op: 'matmul',
      inputs: [sp([2, 2, 3], 'flipped'), sp([3, 2], 'transposed')],
      fn: (a, b) => a.matmul(b),
      forward: (a, b) =>
        build([2, 2, 2], ([z, i, j]) => sumAll([0, 1, 2].map((p) => at(a, [z, i, p]) * at(b, [p, j])))),
    },
    {
      name: 'matmul 1-d @ 2-d',
      op: 'matmul',
      inputs: [sp([3]), sp([3, 2])],
      fn: (a, b) => a.matmul(b),
      forward: (a, b) => build([2], ([j]) => sumAll([0, 1, 2].map((p) => a.data[p] * at(b, [p, j])))),
    },
    {
      name: 'matmul 2-d @ 1-d',
      op: 'matmul',
      inputs: [sp([2, 3], 'transposed'), sp([3])],
      fn: (a, b) => a.matmul(b),
      forward: (a, b) => build([2], ([i]) => sumAll([0, 1, 2].map((p) => at(a, [i, p]) * b.data[p]))),
    },
    {
      name: 'dot',
      op: 'dot',
      inputs: [sp([4], 'flipped'), sp([4])],
      fn: (a, b) => a.dot(b),
      forward: (a, b) => ({ data: [sumAll(a.data.map((v, i) => v * b.data[i]))], shape: [] }),
    },
  ];
}

/** y[..., o] = act(Σ_i x[..., i]·w[o, i] + b[o]) on the host. */
function linearRef(x: Host, w: Host, b: Host | null, relu: boolean): Host {
  const [o, n] = w.shape;
  const rows = x.data.length / n;
  const shape = [...x.shape.slice(0, -1), o];
  return {
    shape,
    data: Array.from({ length: rows * o }, (_, k) => {
      const r = Math.floor(k / o),
        j = k % o;
      let v = b ? b.data[j] : 0;
      for (let i = 0; i < n; i++) v += x.data[r * n + i] * w.data[j * n + i];
      return relu ? Math.max(v, 0) : v;
    }),
  };
}

/** Σ_j w_ij·(lse_i − z_ij) per row, w the ε-smoothed one-hot. */
function crossEntropyRef(z: Host, y: Host, eps: number): number[] {
  const [n, c] = z.shape;
  return Array.from({ length: n }, (_, i) => {
    const row = z.data.slice(i * c, i * c + c);
    const lse = logSumExp(row);
    return sumAll(row.map((v, j) => ((j === y.data[i] ? 1 - eps : 0) + eps / c) * (lse - v)));
  });
}

// Finite differences across a ReLU kink would disagree with any analytic gradient; these
// seeded inputs keep every pre-activation clear of 0 by more than the step.
function linearCases(): GradcheckCase[] {
  const idx = (values: number[]): InputSpec => ({ shape: [values.length], values, dtype: 'int32' });
  return [
    {
      name: 'linear x·Wᵀ + b (transposed x)',
      op: 'linear',
      inputs: [sp([3, 4], 'transposed'), sp([2, 4], 'sliced'), sp([2])],
      fn: (x, w, b) => linear(x, w, b),
      forward: (x, w, b) => linearRef(x, w, b, false),
    },
    {
      name: 'linear relu, 3-d input, no bias',
      op: 'linear',
      inputs: [sp([2, 2, 3], 'flipped'), sp([4, 3], 'transposed')],
      fn: (x, w) => linear(x, w, null, 'relu'),
      forward: (x, w) => linearRef(x, w, null, true),
    },
    {
      name: 'linear 1-d input',
      op: 'linear',
      inputs: [sp([3]), sp([2, 3]), sp([2])],
      fn: (x, w, b) => linear(x, w, b),
      forward: (x, w, b) => linearRef(x, w, b, false),
    },
    {
      // The second layer applies the first one's ReLU mask in its input-gradient epilogue.
      name: 'linear relu -> linear relu (mask fused across layers)',
      op: 'linear',
      inputs: [sp([3, 4]), sp([5, 4]), sp([5]), sp([2, 5], 'transposed'), sp([2])],
      fn: (x, w1, b1, w2, b2) => linear(linear(x, w1, b1, 'relu'), w2, b2, 'relu'),
      forward: (x, w1, b1, w2, b2) => linearRef(linearRef(x, w1, b1, true), w2, b2, true),
    },
    {
      // A hidden ReLU output used twice: its gradient is a sum, masked by its own layer.
      name: 'linear relu used twice',
      op: 'linear',
      inputs: [sp([3, 4]), sp([5, 4]), sp([5]), sp([2, 5]), sp([2, 5])],
      fn: (x, w1, b1, w2, w3) => {
        const h = linear(x, w1, b1, 'relu');
        return linear(h, w2).add(linear(h, w3, null, 'relu'));
      },
      forward: (x, w1, b1, w2, w3) => {
        const h = linearRef(x, w1, b1, true);
        return zip([linearRef(h, w2, null, false), linearRef(h, w3, null, true)], (a, b) => a + b);
      },
    },
    {
      name: 'softmaxCrossEntropy mean',
      op: 'softmaxCrossEntropy',
      inputs: [sp([3, 4], 'transposed'), idx([2, 0, 3])],
      fn: (z, y) => softmaxCrossEntropy(z, y),
      forward: (z, y) => ({ data: [mean(crossEntropyRef(z, y, 0))], shape: [] }),
    },
    {
      name: 'softmaxCrossEntropy smoothed, none',
      op: 'softmaxCrossEntropy',
      inputs: [sp([3, 4], 'flipped'), idx([1, 1, 0])],
      fn: (z, y) => softmaxCrossEntropy(z, y, { labelSmoothing: 0.2, reduction: 'none' }),
      forward: (z, y) => ({ data: crossEntropyRef(z, y, 0.2), shape: [3] }),
    },
    {
      name: 'softmaxCrossEntropy smoothed, sum',
      op: 'softmaxCrossEntropy',
      inputs: [sp([3, 4], 'sliced'), idx([3, 1, 0])],
      fn: (z, y) => softmaxCrossEntropy(z, y, { labelSmoothing: 0.1, reduction: 'sum' }),
      forward: (z, y) => ({ data: [sumAll(crossEntropyRef(z, y, 0.1))], shape: [] }),
    },
    {
      // Inside (0, 1), where finite differences of the logs are defined (the ends are tested
      // against PyTorch's numbers in nn's values tests).
      name: 'binaryCrossEntropyTerms',
      op: 'binaryCrossEntropyTerms',
      inputs: [
        { shape: [2, 3], values: [0.1, 0.35, 0.5, 0.62, 0.8, 0.93] },
        { shape: [2, 3], values: [1, 0, 0.25, 0.5, 0.9, 0] },
      ],
      fn: (x, y) => binaryCrossEntropyTerms(x, y),
      forward: (x, y) => zip([x, y], (p, t) => -(t * Math.log(p) + (1 - t) * Math.log(1 - p))),
    },
  ];
}

function compositeCases(): GradcheckCase[] {
  return [
    {
      // micrograd's test_sanity_check: y = -20, dy/dx = 46 (worked by hand: z = 3x + 2 = -10, ...).
      name: 'micrograd sanity expression',
      op: 'composite',
      inputs: [{ shape: [], values: [-4] }],
      fn: (x) => {
        const z = x.mul(2).add(2).add(x);
        const q = z.relu().add(z.mul(x));
        const h = z.mul(z).relu();
        return h.add(q).add(q.mul(x));
      },
      expected: { output: [-20], grads: [[46]] },
    },
    {
      // micrograd's test_more_ops: g = 24.70408163265306, dg/da = 138.83381924198252, dg/db = 645.5772594752186.
      name: 'micrograd more ops expression',
      op: 'composite',
      inputs: [
        { shape: [], values: [-4] },
        { shape: [], values: [2] },
      ],
      fn: (a, b) => {
        let c = a.add(b);
        let d = a.mul(b).add(b.pow(3));
        c = c.add(c.add(1));
        c = c.add(c.add(1).add(a.neg()));
        d = d.add(d.mul(2).add(b.add(a).relu()));
        d = d.add(d.mul(3).add(b.sub(a).relu()));
        const e = c.sub(d);
        const f = e.pow(2);
        let g = f.div(2);
        g = g.add(f.pow(-1).mul(10));
        return g;
      },
      expected: { output: [24.70408163265306], grads: [[138.83381924198252], [645.5772594752186]] },
      rtol: 1e-3,
    },
    {
      name: 'softmax cross-entropy',
      op: 'composite',
      inputs: [
        sp([3, 4], 'transposed'),
        { shape: [3, 4], values: [0, 1, 0, 0, 1, 0, 0, 0, 0, 0, 0, 1], requiresGrad: false },
      ],
      fn: (logits, onehot) => onehot.mul(logits.logSoftmax(1)).sum(1).mean().neg(),
      forward: (l, t) => ({
        data: [
          -mean(
            [0, 1, 2].map((r) => {
              const row = l.data.slice(r * 4, r * 4 + 4);
              const lse = logSumExp(row);
              return sumAll(row.map((v, j) => t.data[r * 4 + j] * (v - lse)));
            }),
          ),
        ],
        shape: [],
      }),
    },
    {
      name: 'MLP layer tanh(relu(xW + b) W2)',
      op: 'composite',
      inputs: [
        sp([3, 4]),
        { shape: [4, 5], values: 'unit', layout: 'transposed' },
        sp([5]),
        { shape: [5, 2], values: 'unit' },
      ],
      fn: (x, w, b, w2) => x.matmul(w).add(b).relu().matmul(w2).tanh(),
    },
    {
      name: 'layer norm (mean, var, rsqrt)',
      op: 'composite',
      inputs: [sp([2, 4], 'flipped')],
      fn: (x) => {
        const m = x.mean(-1, true);
        return x.sub(m).mul(x.var(-1, true, 0).add(1e-5).rsqrt());
      },
    },
    {
      name: 'shared subexpression (gradients accumulate)',
      op: 'composite',
      inputs: [sp([3])],
      fn: (x) => {
        const s = x.sigmoid();
        return s.mul(s).add(s.mul(x)).sum();
      },
      forward: (x) => ({ data: [sumAll(x.data.map((v) => sig(v) ** 2 + sig(v) * v))], shape: [] }),
    },
  ];
}

/** Every case, in table order. */
export function gradcheckCases(): GradcheckCase[] {
  return [
    ...unaryCases(),
    ...binaryCases(),
    ...reductionCases(),
    ...shapeCases(),
    ...matmulCases(),
    ...linearCases(),
    ...compositeCases(),
    ...indexSortScanCases(),
    ...fusionCases(),
    ...attentionGradcheckCases(),
    ...mathCases(),
    ...convPoolNormCases(),
    ...randomCases(),
    ...tensorOpsCases(),
  ];
}
