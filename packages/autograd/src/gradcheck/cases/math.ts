import { Tensor } from '../../tensor';
import { erf, log1p, expm1 } from '../../ops/special';
import { floor, ceil, round, trunc, sign } from '../../ops/rounding';
import { remainder } from '../../ops/arith';
import { silu, gelu } from '../../ops/activations';
import { map, zip } from '../host';
import { type GradcheckCase, unaryCase } from '../case';
import type { InputSpec } from '../inputs';

/**
 * Gradient checks for the op table's newer raw ops and the activations built on them. The
 * float64 host references are written independently of the kernels (erf by its series).
 */
function erf64(x: number): number {
  let sum = 0,
    term = x;
  for (let n = 0; n < 80; n++) {
    sum += term / (2 * n + 1);
    term *= (-x * x) / (n + 1);
  }
  return (2 / Math.sqrt(Math.PI)) * sum;
}
const sig = (v: number) => 1 / (1 + Math.exp(-v));
// Values a finite-difference step never pushes across an integer (the rounding ops are flat there).
const offGrid: InputSpec = {
  shape: [2, 4],
  values: [-2.7, -1.3, -0.6, -0.2, 0.3, 0.7, 1.6, 2.4],
  layout: 'transposed',
};
const pyMod = (a: number, b: number) => a - Math.floor(a / b) * b;

export function mathCases(): GradcheckCase[] {
  const u = unaryCase;
  return [
    u('erf', (x) => x.erf(), erf64, {
      shape: [2, 4],
      values: [-3, -1.2, -0.4, -0.01, 0.02, 0.5, 1.1, 2.5],
      layout: 'flipped',
    }),
    u('erf', (x) => erf(x), erf64, { shape: [2, 3], layout: 'sliced' }, { name: 'erf functional sliced' }),
    u(
      'log1p',
      (x) => x.log1p(),
      Math.log1p,
      { shape: [2, 3], values: [-0.5, -1e-3, 1e-4, 0.2, 1, 5], layout: 'transposed' },
      { eps: 1e-4 },
    ),
    u('log1p', (x) => log1p(x), Math.log1p, { shape: [2, 3], values: 'positive' }, { name: 'log1p functional' }),
    u('expm1', (x) => x.expm1(), Math.expm1, {
      shape: [2, 3],
      values: [-2, -1e-3, 1e-4, 0.3, 1, 2],
      layout: 'flipped',
    }),
    u('expm1', (x) => expm1(x), Math.expm1, { shape: [3], values: 'unit' }, { name: 'expm1 functional' }),
    u('floor', (x) => x.floor(), Math.floor, offGrid),
    u('ceil', (x) => ceil(x), Math.ceil, offGrid),
    u('round', (x) => x.round(), Math.round, offGrid),
    u(
      'round',
      (x) => round(x, 1),
      (v) => Math.round(v * 10) / 10,
      { shape: [4], values: [-1.234, 0.271, 1.666, 2.049] },
      { name: 'round decimals=1' },
    ),
    u('trunc', (x) => trunc(x), Math.trunc, offGrid),
    u('sign', (x) => x.sign(), Math.sign, offGrid),
    u(
      'floor',
      (x) => floor(x).add(x.mul(x)),
      (v) => Math.floor(v) + v * v,
      offGrid,
      { name: 'floor in a graph: only the other path carries gradient' },
    ),
    u(
      'sign',
      (x) => sign(x).mul(x),
      Math.abs,
      { shape: [4], values: [-2, -0.5, 0.25, 3] },
      { name: 'sign(x)·x = |x|' },
    ),
    u(
      'silu',
      (x) => x.silu(),
      (v) => v * sig(v),
      { shape: [2, 4], values: [-30, -3, -0.5, 0, 0.2, 1, 4, 30], layout: 'transposed' },
    ),
    u(
      'silu',
      (x) => silu(x),
      (v) => v * sig(v),
      { shape: [2, 3], layout: 'sliced' },
      { name: 'silu functional sliced' },
    ),
    u(
      'gelu',
      (x) => gelu(x),
      (v) => 0.5 * v * (1 + erf64(v / Math.SQRT2)),
      { shape: [2, 3], layout: 'flipped' },
      { name: 'gelu functional (raw erf)' },
    ),
    {
      name: 'remainder [2,3] with [3] (sign of the divisor)',
      op: 'remainder',
      inputs: [
        { shape: [2, 3], values: [-3.3, 2.2, 5.1, 0.7, -1.9, 4.6], layout: 'transposed' },
        { shape: [3], values: [1.5, -0.8, 2.4] },
      ],
      fn: (x, y) => x.remainder(y),
      forward: (x, y) => zip([x, y], pyMod),
    },
    {
      name: 'remainder by a number (functional)',
      op: 'remainder',
      inputs: [{ shape: [5], values: [-2.3, -0.4, 0.3, 1.2, 3.9] }],
      fn: (x) => remainder(x, 1.5),
      forward: (x) => map(x, (v) => pyMod(v, 1.5)),
    },
  ];
}
