import type { GradcheckCase } from '../case';
import { Host, at, build, map, matmul2d, sumAll, zip } from '../host';
import { InputSpec } from '../inputs';
import { linear } from '../../ops/linear';

/**
 * Graphs the fusion pass rewrites (fusion/*): elementwise ops folded into a matmul's
 * epilogue, and a one-gradient backward (tanh, ReLU) applied in the next matmul's input
 * gradient. Written with the public ops only, as a user would.
 */
const sp = (s: number[], layout?: InputSpec['layout']): InputSpec => ({ shape: s, layout });
const add = (a: Host, b: Host) => zip([a, b], (u, v) => u + v);
const sig = (v: number) => 1 / (1 + Math.exp(-v));

export function fusionCases(): GradcheckCase[] {
  return [
    {
      name: 'fusion: matmul → add → tanh → matmul (tanh backward in the dgrad)',
      op: 'composite',
      inputs: [sp([3, 4], 'transposed'), sp([4, 5]), sp([5]), sp([5, 2], 'sliced')],
      fn: (x, w1, b1, w2) => x.matmul(w1).add(b1).tanh().matmul(w2),
      forward: (x, w1, b1, w2) => matmul2d(map(add(matmul2d(x, w1), b1), Math.tanh), w2),
    },
    {
      // Pre-activations are at least 0.5 from the kink: finite differences stay on one side.
      name: 'fusion: matmul → add → relu → matmul (mask in the dgrad)',
      op: 'composite',
      inputs: [
        { shape: [2, 3], values: [1, -2, 0.5, 0.3, 1.2, -0.7] },
        { shape: [3, 4], values: [0.5, -0.4, 0.9, 0.2, -0.3, 0.8, 0.1, -0.6, 0.7, 0.2, -0.5, 0.4] },
        { shape: [4], values: [0.1, -0.2, 0.3, 0.05] },
        sp([4, 2], 'flipped'),
      ],
      fn: (x, w1, b1, w2) => x.matmul(w1).add(b1).relu().matmul(w2),
      forward: (x, w1, b1, w2) =>
        matmul2d(
          map(add(matmul2d(x, w1), b1), (v) => Math.max(v, 0)),
          w2,
        ),
    },
    {
      // A transposed right operand (x.matmul(W.T)) gets its gradient computed in W's layout.
      name: 'fusion: x @ transposed w → add → sigmoid',
      op: 'composite',
      inputs: [sp([3, 4], 'sliced'), sp([4, 2], 'transposed'), sp([2])],
      fn: (x, w, b) => x.matmul(w).add(b).sigmoid(),
      forward: (x, w, b) => map(add(matmul2d(x, w), b), sig),
    },
    {
      name: 'fusion: batched matmul → scale → sigmoid',
      op: 'composite',
      inputs: [sp([2, 3, 4], 'flipped'), sp([4, 3])],
      fn: (a, b) => a.matmul(b).mul(0.5).sigmoid(),
      forward: (a, b) =>
        build([2, 3, 3], ([z, i, j]) => sig(0.5 * sumAll([0, 1, 2, 3].map((p) => at(a, [z, i, p]) * at(b, [p, j]))))),
    },
    {
      // The product is folded into sigmoid's epilogue, then read again: computed a second time.
      name: 'fusion: a folded product read again',
      op: 'composite',
      inputs: [sp([3, 2]), sp([2, 4], 'transposed')],
      fn: (a, b) => {
        const z = a.matmul(b);
        return z.sigmoid().add(z);
      },
      forward: (a, b) => {
        const z = matmul2d(a, b);
        return zip([map(z, sig), z], (u, v) => u + v);
      },
    },
    {
      // A 3-d input: tanh's backward still rides in the second linear's dgrad (rows regrouped).
      name: 'fusion: 3-d linear → tanh → linear',
      op: 'composite',
      inputs: [sp([2, 2, 3], 'flipped'), sp([4, 3]), sp([4]), sp([2, 4], 'transposed')],
      fn: (x, w1, b1, w2) => linear(linear(x, w1, b1).tanh(), w2),
      forward: (x, w1, b1, w2) =>
        build([2, 2, 2], ([z, i, o]) =>
          sumAll(
            [0, 1, 2, 3].map(
              (j) =>
                at(w2, [o, j]) *
                Math.tanh(b1.data[j] + sumAll([0, 1, 2].map((p) => at(x, [z, i, p]) * at(w1, [j, p])))),
            ),
          ),
        ),
    },
    {
      // A bias of rank 1 folds into a 3-d linear's 2-d product (rows folded).
      name: 'fusion: 3-d matmul @ 2-d → add bias → exp',
      op: 'composite',
      inputs: [sp([2, 2, 3], 'transposed'), sp([3, 2]), sp([2])],
      fn: (x, w, b) => x.matmul(w).add(b).mul(0.3).exp(),
      forward: (x, w, b) =>
        build([2, 2, 2], ([z, i, j]) =>
          Math.exp(0.3 * (sumAll([0, 1, 2].map((p) => at(x, [z, i, p]) * at(w, [p, j]))) + b.data[j])),
        ),
    },
  ];
}
