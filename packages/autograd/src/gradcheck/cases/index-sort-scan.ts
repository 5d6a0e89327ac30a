import { Tensor } from '../../tensor';
import { tensor } from '../../creation';
import { gather } from '../../ops/gather';
import { Host, at, build, reduceAxis, sumAll } from '../host';
import type { GradcheckCase } from '../case';
import type { InputSpec } from '../inputs';

/**
 * Gradient-check cases for the issue-17 ops (indexing, gather/scatter, sort, scans, norms,
 * tiling, triangles, in-place). Forward references are host loops written here.
 */
// Index tensors are int32: JS numbers alone make float32.
const I32 = { dtype: 'int32' } as const;
const sp = (s: number[], layout?: InputSpec['layout']): InputSpec => ({ shape: s, layout });
const ints = (shape: number[], values: number[]): InputSpec => ({ shape, values, dtype: 'int32' });
const vals = (shape: number[], values: number[], layout?: InputSpec['layout']): InputSpec => ({
  shape,
  values,
  layout,
});

/** Stable sort of one row's values (host reference). */
const sortedRow = (v: number[], desc: boolean) =>
  v
    .map((x, i) => [x, i])
    .sort((a, b) => (desc ? b[0] - a[0] : a[0] - b[0]) || a[1] - b[1])
    .map((p) => p[0]);
const alongLast = (x: Host, f: (row: number[]) => number[], outLen = x.shape[x.shape.length - 1]): Host => {
  const n = x.shape[x.shape.length - 1];
  const rows = x.data.length / n;
  const data: number[] = [];
  for (let r = 0; r < rows; r++) data.push(...f(x.data.slice(r * n, r * n + n)));
  return { data, shape: [...x.shape.slice(0, -1), outLen] };
};

export function indexSortScanCases(): GradcheckCase[] {
  return [
    {
      name: 'index int, slice with step, newaxis',
      op: 'index',
      inputs: [sp([3, 5, 2], 'transposed')],
      fn: (x) => x.index(1, '::2', null),
      forward: (x) => build([3, 1, 2], ([j, , k]) => at(x, [1, 2 * j, k])),
    },
    {
      name: 'index with repeated integer arrays (gradients add up)',
      op: 'index',
      inputs: [sp([4, 3], 'flipped')],
      fn: (x) => x.index([2, 0, 2, -1], ':'),
      forward: (x) => build([4, 3], ([i, j]) => at(x, [[2, 0, 2, 3][i], j])),
    },
    {
      name: 'index two broadcast integer tensors',
      op: 'index',
      inputs: [sp([3, 4])],
      fn: (x) => x.index(tensor([[0], [2]], I32), tensor([1, 3, 3], I32)),
      forward: (x) => build([2, 3], ([i, j]) => at(x, [[0, 2][i], [1, 3, 3][j]])),
    },
    {
      name: 'slice dim 1 step 3',
      op: 'slice',
      inputs: [sp([2, 7], 'sliced')],
      fn: (x) => x.slice(1, 1, null, 3),
      forward: (x) => build([2, 2], ([i, j]) => at(x, [i, 1 + 3 * j])),
    },
    {
      name: 'gather dim 1 with repeats',
      op: 'gather',
      inputs: [sp([3, 4], 'transposed'), ints([3, 2], [0, 0, 3, 1, 2, 2])],
      fn: (x, i) => gather(x, 1, i),
      forward: (x, i) => build([3, 2], ([r, c]) => at(x, [r, at(i, [r, c])])),
    },
    {
      name: 'gather dim 0, smaller index',
      op: 'gather',
      inputs: [sp([3, 4]), ints([2, 3], [2, 0, 1, 1, 1, 0])],
      fn: (x, i) => x.gather(0, i),
      forward: (x, i) => build([2, 3], ([r, c]) => at(x, [at(i, [r, c]), c])),
    },
    {
      name: 'scatter set: overwritten positions get no gradient',
      op: 'scatter',
      inputs: [sp([3, 4]), ints([2, 2], [1, 3, 0, 2]), sp([2, 3], 'flipped')],
      fn: (x, i, s) => x.scatter(1, i, s),
      forward: (x, i, s) =>
        build([3, 4], ([r, c]) => {
          for (let j = 0; j < 2; j++) if (r < 2 && at(i, [r, j]) === c) return at(s, [r, j]);
          return at(x, [r, c]);
        }),
    },
    {
      name: 'scatterAdd with duplicates',
      op: 'scatterAdd',
      inputs: [sp([2, 3], 'transposed'), ints([2, 3], [0, 0, 2, 1, 1, 1]), sp([2, 3])],
      fn: (x, i, s) => x.scatterAdd(1, i, s),
      forward: (x, i, s) =>
        build(
          [2, 3],
          ([r, c]) => at(x, [r, c]) + sumAll([0, 1, 2].map((j) => (at(i, [r, j]) === c ? at(s, [r, j]) : 0))),
        ),
    },
    {
      name: 'maskedFill',
      op: 'maskedFill',
      inputs: [sp([2, 3], 'flipped')],
      fn: (x) => x.maskedFill(tensor([true, false, true]), -2),
      forward: (x) => build([2, 3], ([r, c]) => (c !== 1 ? -2 : at(x, [r, c]))),
    },
    {
      name: 'sort descending along dim 1',
      op: 'sort',
      inputs: [sp([3, 5], 'transposed')],
      fn: (x) => x.sort(1, { descending: true }).values,
      forward: (x) => alongLast(x, (r) => sortedRow(r, true)),
    },
    {
      name: 'sort dim 0',
      op: 'sort',
      inputs: [sp([4, 2])],
      fn: (x) => x.sort(0).values,
      forward: (x) =>
        build(
          [4, 2],
          ([i, j]) =>
            sortedRow(
              [0, 1, 2, 3].map((k) => at(x, [k, j])),
              false,
            )[i],
        ),
    },
    {
      name: 'topk 2 of 5',
      op: 'topk',
      inputs: [sp([2, 5], 'sliced')],
      fn: (x) => x.topk(2).values,
      forward: (x) => alongLast(x, (r) => sortedRow(r, true).slice(0, 2), 2),
    },
    {
      name: 'cumsum dim 1 (7 = not a power of two)',
      op: 'cumsum',
      inputs: [sp([2, 7], 'transposed')],
      fn: (x) => x.cumsum(1),
      forward: (x) => alongLast(x, (r) => r.map((_, i) => sumAll(r.slice(0, i + 1)))),
    },
    {
      name: 'cumsum dim 0',
      op: 'cumsum',
      inputs: [sp([5, 2], 'flipped')],
      fn: (x) => x.cumsum(0),
      forward: (x) => build([5, 2], ([i, j]) => sumAll(Array.from({ length: i + 1 }, (_, k) => at(x, [k, j])))),
    },
    {
      name: 'prod dim 1 with a zero and a repeated value',
      op: 'prod',
      inputs: [vals([2, 5], [0.5, -1.5, 2, 0.8, 1.2, 0, 1.3, -0.7, 1.3, 2.1])],
      fn: (x) => x.prod(1),
      forward: (x) => reduceAxis(x, 1, (v) => v.reduce((a, b) => a * b, 1)),
    },
    {
      name: 'prod of all, keepdim',
      op: 'prod',
      inputs: [vals([2, 3], [1.1, -0.9, 1.5, 0.7, 1.3, -1.2], 'transposed')],
      fn: (x) => x.prod(undefined, true),
      forward: (x) => ({ data: [x.data.reduce((a, b) => a * b, 1)], shape: [1, 1] }),
    },
    {
      name: 'norm 2 over dim 1 (one row all zeros: gradient 0)',
      op: 'norm',
      inputs: [vals([2, 3], [0, 0, 0, 1, -2, 0.5])],
      fn: (x) => x.norm(2, 1), // a NaN gradient at the zero row would fail the finite differences (0 there)
      forward: (x) => reduceAxis(x, 1, (v) => Math.sqrt(sumAll(v.map((a) => a * a)))),
    },
    {
      name: 'norm 3 of all',
      op: 'norm',
      inputs: [sp([2, 3], 'transposed')],
      fn: (x) => x.norm(3),
      forward: (x) => ({ data: [Math.cbrt(sumAll(x.data.map((a) => Math.abs(a) ** 3)))], shape: [] }),
    },
    {
      name: 'norm 1 and inf keepdim',
      op: 'norm',
      inputs: [sp([3, 2], 'flipped')],
      fn: (x) => x.norm(1, 0, true).add(x.norm(Infinity, 0, true)),
      forward: (x) =>
        build([1, 2], ([, j]) => {
          const c = [0, 1, 2].map((i) => Math.abs(at(x, [i, j])));
          return sumAll(c) + Math.max(...c);
        }),
    },
    {
      name: 'repeat with a new leading dim',
      op: 'repeat',
      inputs: [sp([2, 3], 'transposed')],
      fn: (x) => x.repeat(2, 1, 2),
      forward: (x) => build([2, 2, 6], ([, i, j]) => at(x, [i, j % 3])),
    },
    {
      name: 'split sizes, pieces recombined',
      op: 'split',
      inputs: [sp([5, 2])],
      fn: (x) => {
        const [a, b] = x.split([2, 3]);
        return a.sum(0).mul(b.sum(0));
      },
      forward: (x) =>
        build([2], ([j]) => sumAll([0, 1].map((i) => at(x, [i, j]))) * sumAll([2, 3, 4].map((i) => at(x, [i, j])))),
    },
    {
      name: 'chunk 3 of 7',
      op: 'chunk',
      inputs: [sp([2, 7], 'sliced')],
      fn: (x) => {
        const c = x.chunk(3, 1);
        return c[0].mul(2).sum(1).add(c[2].sum(1));
      },
      forward: (x) => build([2], ([i]) => 2 * sumAll([0, 1, 2].map((j) => at(x, [i, j]))) + at(x, [i, 6])),
    },
    {
      name: 'triu 1 of a batch',
      op: 'triu',
      inputs: [sp([2, 3, 4], 'transposed')],
      fn: (x) => x.triu(1),
      forward: (x) => build([2, 3, 4], ([b, i, j]) => (j - i >= 1 ? at(x, [b, i, j]) : 0)),
    },
    {
      name: 'tril -1',
      op: 'tril',
      inputs: [sp([4, 3], 'flipped')],
      fn: (x) => x.tril(-1),
      forward: (x) => build([4, 3], ([i, j]) => (j - i <= -1 ? at(x, [i, j]) : 0)),
    },
    ...inplaceCases(),
  ];
}

/** One case per in-place method (the op column names the method), each on a graph tensor. */
function inplaceCases(): GradcheckCase[] {
  const on = (x: Tensor) => x.mul(1.5);
  const ip = (op: string, fn: (h: Tensor, y: Tensor) => void, f: (x: number, y: number) => number): GradcheckCase => ({
    name: `${op} on a graph tensor`,
    op,
    inputs: [sp([2, 3], 'transposed'), sp([3])],
    fn: (x, y) => {
      const h = on(x);
      fn(h, y);
      return h.mul(x);
    },
    forward: (x, y) => build([2, 3], ([i, j]) => f(1.5 * at(x, [i, j]), at(y, [j])) * at(x, [i, j])),
  });
  return [
    ip(
      'add_',
      (h, y) => h.add_(y),
      (a, b) => a + b,
    ),
    ip(
      'sub_',
      (h, y) => h.sub_(y),
      (a, b) => a - b,
    ),
    ip(
      'mul_',
      (h, y) => h.mul_(y),
      (a, b) => a * b,
    ),
    ip(
      'div_',
      (h, y) => h.div_(y.abs().add(0.5)),
      (a, b) => a / (Math.abs(b) + 0.5),
    ),
    // Bounds well inside the data range; the suite's values keep clear of them by more than eps.
    {
      ...ip(
        'clamp_',
        (h) => h.clamp_(-0.9, 1.1),
        (a) => Math.min(Math.max(a, -0.9), 1.1),
      ),
      inputs: [vals([2, 3], [0.1, -1.2, 0.4, 1.3, -0.2, 0.5]), sp([3])],
    },
    ip(
      'copy_',
      (h, y) => h.copy_(y),
      (_a, b) => b,
    ),
    ip(
      'fill_',
      (h) => h.fill_(2),
      () => 2,
    ),
    ip(
      'zero_',
      (h) => h.zero_(),
      () => 0,
    ),
    {
      name: 'in-place chain mixing ops',
      op: 'add_',
      inputs: [sp([2, 3], 'transposed'), sp([3])],
      fn: (x, y) => {
        const h = x.mul(1.5);
        h.add_(y).mul_(x).sub_(0.25).div_(2);
        return h;
      },
      forward: (x, y) => build([2, 3], ([i, j]) => ((1.5 * at(x, [i, j]) + at(y, [j])) * at(x, [i, j]) - 0.25) / 2),
    },
  ];
}
