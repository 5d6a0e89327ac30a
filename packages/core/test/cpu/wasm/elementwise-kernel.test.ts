import { CpuBackend, E, Expr, NDArray } from '@surf/core';
import { buildElementwiseModule, supportedByWasm } from '../../../src/cpu/wasm/elementwise-kernel';
import { hasWasmSimd } from '../../../src/cpu/wasm/simd';
import { f32Values } from '../../f32-values';

// Flat float32 elementwise work of >= 4096 elements runs on generated WebAssembly SIMD. It
// must equal, bit for bit, IEEE f32 evaluation of the expression (each node rounded), which
// this file computes with its own tiny interpreter.
const f = Math.fround;
function evalRef(e: Expr, vals: number[]): number {
  switch (e.kind) {
    case 'input':
      return vals[e.index];
    case 'const':
      return f(e.value);
    case 'cast':
      return evalRef(e.a, vals);
    case 'unary': {
      const a = evalRef(e.a, vals);
      switch (e.op) {
        case 'floor':
          return Math.floor(a);
        case 'ceil':
          return Math.ceil(a);
        case 'trunc':
          return Math.trunc(a);
        case 'round':
          return Math.abs(a % 1) === 0.5 ? 2 * Math.round(a / 2) : Math.round(a); // ties to even
        case 'abs':
          return Math.abs(a);
        default:
          return e.op === 'neg' ? -a : e.op === 'sqrt' ? f(Math.sqrt(a)) : e.op === 'recip' ? f(1 / a) : f(Math.exp(a));
      }
    }
    case 'binary': {
      const a = evalRef(e.a, vals);
      const b = evalRef(e.b, vals);
      switch (e.op) {
        case 'add':
          return f(a + b);
        case 'sub':
          return f(a - b);
        case 'mul':
          return f(a * b);
        case 'div':
          return f(a / b);
        case 'max':
          return Number.isNaN(a) || Number.isNaN(b) ? NaN : Math.max(a, b);
        case 'min':
          return Number.isNaN(a) || Number.isNaN(b) ? NaN : Math.min(a, b);
        case 'eq':
          return a === b ? 1 : 0;
        case 'lt':
          return a < b ? 1 : 0;
        default:
          throw new Error(e.op);
      }
    }
    case 'where':
      return evalRef(e.c, vals) !== 0 ? evalRef(e.a, vals) : evalRef(e.b, vals);
  }
}

const values = (n: number, seed: number) => f32Values(n, seed, 97);

const same = (a: number, b: number) => (Number.isNaN(a) && Number.isNaN(b)) || Object.is(a, b);

const x = E.in(0),
  y = E.in(1),
  z = E.in(2);
const exprs: [string, Expr[]][] = [
  ['sgd with weight decay', [E.sub(x, E.mul(E.f(0.1), E.add(y, E.mul(E.f(1e-4), x))))]],
  ['relu', [E.max(x, E.f(0))]],
  ['relu backward', [E.where(E.lt(E.f(0), x), y, E.f(0))]],
  ['where with constants on every side', [E.where(E.eq(E.add(x, E.f(1)), E.f(2)), E.mul(y, E.f(3)), E.sub(E.f(4), z))]],
  [
    'adam-like, two outputs',
    [
      E.div(E.mul(E.f(0.9), x), E.add(E.sqrt(y), E.f(1e-8))),
      E.add(E.mul(E.f(0.999), y), E.mul(E.f(0.001), E.mul(x, x))),
    ],
  ],
  ['neg, recip, cast', [E.neg(E.recip(E.cast(x, 'float32')))]],
  // The op table's other simd rows: rounding (ties to even, -0 kept), abs, min.
  [
    'floor, ceil, round, trunc, abs, min',
    [
      E.add(E.floor(E.mul(x, E.f(4))), E.ceil(y)),
      E.sub(E.round(E.mul(x, E.f(2))), E.trunc(z)),
      E.min(E.abs(x), y),
      E.round(E.mul(y, E.f(8))),
    ],
  ],
];

test('the generated SIMD kernels match IEEE f32 evaluation bit for bit', async () => {
  expect(hasWasmSimd()).toBe(true);
  const be = new CpuBackend();
  const n = 5003; // not a multiple of 4
  const big = NDArray.fromData(be, values(n + 7, 1), [n + 7]);
  const xs = big.crop([[7, n + 7]]); // a view with an offset
  const ys = NDArray.fromData(be, values(n, 2), [n]);
  const zs = NDArray.fromData(be, values(n, 3), [n]);
  const scalar = NDArray.fromData(be, [0.5], []);
  const xv = (await xs.data()) as Float32Array;
  const yv = (await ys.data()) as Float32Array;
  const zv = (await zs.data()) as Float32Array;
  for (const [name, outs] of exprs) {
    expect(outs.every((e) => supportedByWasm(e, ['float32', 'float32', 'float32']))).toBe(true);
    for (const third of ['full', 'scalar'] as const) {
      const got = NDArray.elementwise(outs, [xs, ys, third === 'full' ? zs : scalar]);
      for (let k = 0; k < outs.length; k++) {
        const g = (await got[k].data()) as Float32Array;
        for (let i = 0; i < n; i++) {
          const want = f(evalRef(outs[k], [xv[i], yv[i], third === 'full' ? zv[i] : 0.5]));
          if (!same(g[i], want))
            throw new Error(
              `${name} (${third}) output ${k} element ${i}: got ${g[i]}, want ${want} for inputs ${xv[i]}, ${yv[i]}`,
            );
        }
      }
    }
  }
});

test('a 2-d contiguous array takes the flat SIMD path and matches too', async () => {
  const be = new CpuBackend();
  const a = NDArray.fromData(be, values(128 * 50, 5), [128, 50]);
  const b = NDArray.fromData(be, values(128 * 50, 6), [128, 50]);
  const e = E.sub(E.in(0), E.mul(E.f(0.01), E.in(1)));
  const got = (await a.map(e, b).data()) as Float32Array;
  const av = (await a.data()) as Float32Array;
  const bv = (await b.data()) as Float32Array;
  for (let i = 0; i < got.length; i++) expect(same(got[i], f(av[i] - f(f(0.01) * bv[i])))).toBe(true);
});

test('expressions without a SIMD form are refused (they stay on the JS kernel)', () => {
  const F3 = ['float32', 'float32', 'float32'] as const;
  expect(supportedByWasm(E.sin(x), F3)).toBe(false);
  expect(supportedByWasm(E.lt(x, y), F3)).toBe(false); // a bool output
  expect(supportedByWasm(E.add(x, y), ['float32', 'int32'])).toBe(false);
  expect(supportedByWasm(E.cast(x, 'int32'), F3)).toBe(false);
  // The ones it accepts compile to valid modules.
  for (const [, outs] of exprs) expect(WebAssembly.validate(buildElementwiseModule(outs, ['u', 'u', 'z']))).toBe(true);
});

test('constant fills and scalar-only inputs of SIMD size', async () => {
  const be = new CpuBackend();
  const filled = (await NDArray.full(be, [70, 90], -2.5).data()) as Float32Array;
  expect(filled.length).toBe(6300);
  expect(filled.every((v) => v === -2.5)).toBe(true);
  const s = NDArray.fromData(be, [3], []).expand([5000]);
  const got = (await s.map(E.mul(E.in(0), E.f(0.1))).data()) as Float32Array;
  expect(got.every((v) => v === f(f(3) * f(0.1)))).toBe(true);
});
