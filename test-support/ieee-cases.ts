import { DType } from '@surf/core';
import { compare } from '@surf/core/testing';
import { Tensor, tensor, tidy } from '@surf/autograd';

/**
 * IEEE edge cases at the Tensor API, with the results Surf defines (docs/errors.md lists
 * them). Expected values are written by hand from the semantics: f32 math, max/min propagate
 * NaN, comparisons with NaN are false, pow follows JS Math.pow, float->int casts truncate
 * and saturate with NaN -> 0, int32 wraps. Used by ieee.test.ts on every backend and by
 * ieee-main.ts as a standalone script for a real GPU:
 *   node scripts/run-ts.mjs packages/autograd/test/reliability/ieee-main.ts [cpu|webgpu]
 */
export interface IeeeCase {
  name: string;
  /** Builds the inputs on the current backend and applies the op. */
  run(): Tensor;
  want: number[];
  dtype: DType;
  /** Relative tolerance for finite values (WGSL allows a few ULP for exp/log/div). */
  rtol?: number;
}

const I = Infinity;
const f = (xs: number[]) => tensor(Float32Array.from(xs));
const i32 = (xs: number[]) => tensor(Int32Array.from(xs));
const F32_MAX = 3.4028234663852886e38;

export const IEEE_CASES: IeeeCase[] = [
  // ---- log, sqrt, exp
  {
    name: 'log: log(0) = log(-0) = -Inf, log(<0) = NaN, log(Inf) = Inf, log(NaN) = NaN',
    run: () => f([0, -0, -1, I, NaN, 1]).log(),
    want: [-I, -I, NaN, I, NaN, 0],
    dtype: 'float32',
  },
  {
    name: 'sqrt: sqrt(-1) = NaN, sqrt(-0) = -0, sqrt(Inf) = Inf',
    run: () => f([-1, -0, I, 4]).sqrt(),
    want: [NaN, 0, I, 2],
    dtype: 'float32',
  },
  {
    name: 'rsqrt: rsqrt(0) = Inf, rsqrt(Inf) = 0',
    run: () => f([0, I, 4]).rsqrt(),
    want: [I, 0, 0.5],
    dtype: 'float32',
  },
  {
    name: 'exp: overflow to Inf past ~88.72, underflow to 0, exp(-Inf) = 0',
    run: () => f([88, 89, 100, I, -200, -I, NaN]).exp(),
    want: [1.6516362549940018e38, I, I, I, 0, 0, NaN],
    dtype: 'float32',
    rtol: 1e-5,
  },
  // ---- division
  {
    name: 'div: 0/0 = NaN, x/0 = ±Inf by the signs, x/Inf = 0, Inf/Inf = NaN',
    run: () => f([0, 1, -1, 1, 1, I]).div(f([0, 0, 0, -0, I, I])),
    want: [NaN, I, -I, -I, 0, NaN],
    dtype: 'float32',
  },
  {
    name: 'div: int32 operands use true division (float32 result), so 7/0 = Inf and 0/0 = NaN',
    run: () => i32([7, -7, 0, 7]).div(i32([0, 0, 0, -2])),
    want: [I, -I, NaN, -3.5],
    dtype: 'float32',
  },
  {
    name: 'mul/add: f32 overflow to Inf, Inf - Inf = NaN, 0 * Inf = NaN',
    run: () =>
      f([3e38, I, 0])
        .mul(f([10, 1, I]))
        .add(f([0, -I, 0])),
    want: [I, NaN, NaN],
    dtype: 'float32',
  },
  // ---- reductions
  { name: 'sum: NaN anywhere gives NaN', run: () => f([1, NaN, 2]).sum(), want: [NaN], dtype: 'float32' },
  {
    name: 'sum: Inf + finite = Inf, Inf + -Inf = NaN (per row)',
    run: () => f([I, 1, -I, 2, I, -I]).reshape(3, 2).sum(1),
    want: [I, -I, NaN],
    dtype: 'float32',
  },
  {
    name: 'sum: f32 overflow of a finite sum gives Inf',
    run: () => f([F32_MAX, F32_MAX]).sum(),
    want: [I],
    dtype: 'float32',
  },
  { name: 'sum of an empty tensor is 0', run: () => f([]).sum(), want: [0], dtype: 'float32' },
  { name: 'sum: int32 wraps', run: () => i32([2147483647, 1]).sum(), want: [-2147483648], dtype: 'int32' },
  { name: 'mean of an empty tensor is 0/0 = NaN', run: () => f([]).mean(), want: [NaN], dtype: 'float32' },
  { name: 'mean: Inf and -Inf give NaN', run: () => f([I, -I]).mean(), want: [NaN], dtype: 'float32' },
  {
    name: 'max: propagates NaN wherever it is',
    run: () => f([NaN, 1, 2, 1, NaN, 2, 1, 2, NaN]).reshape(3, 3).amax(1),
    want: [NaN, NaN, NaN],
    dtype: 'float32',
  },
  {
    name: 'max: -Inf rows give -Inf, Inf wins',
    run: () => f([-I, -I, 1, I]).reshape(2, 2).amax(1),
    want: [-I, I],
    dtype: 'float32',
  },
  {
    name: 'min: propagates NaN, -Inf wins',
    run: () => f([NaN, 1, -I, 1]).reshape(2, 2).amin(1),
    want: [NaN, -I],
    dtype: 'float32',
  },
  {
    name: 'argmax: NaN counts as the maximum (first one wins)',
    run: () => f([1, NaN, I, NaN]).argmax(),
    want: [1],
    dtype: 'int32',
  },
  { name: 'argmin: NaN counts as the minimum', run: () => f([1, -I, NaN]).argmin(), want: [2], dtype: 'int32' },
  { name: 'var: one element with correction 1 is 0/0 = NaN', run: () => f([3]).var(), want: [NaN], dtype: 'float32' },
  // ---- elementwise max/min and activations
  {
    name: 'maximum/minimum: NaN from either side propagates',
    run: () => f([NaN, 1, NaN, -I]).maximum(f([1, NaN, NaN, 1])),
    want: [NaN, NaN, NaN, 1],
    dtype: 'float32',
  },
  {
    name: 'minimum: NaN from either side propagates',
    run: () => f([NaN, 1, I]).minimum(f([1, NaN, 1])),
    want: [NaN, NaN, 1],
    dtype: 'float32',
  },
  {
    name: 'relu: relu(NaN) = NaN, relu(-Inf) = 0, relu(Inf) = Inf',
    run: () => f([NaN, -I, I]).relu(),
    want: [NaN, 0, I],
    dtype: 'float32',
  },
  {
    name: 'clamp: NaN stays NaN; ±Inf clamp to the bounds',
    run: () => f([NaN, I, -I, 0.5]).clamp(0, 1),
    want: [NaN, 1, 0, 0.5],
    dtype: 'float32',
  },
  // -80, not -100: sigmoid(-100) is an f32 subnormal, which GPUs may flush to 0.
  {
    name: 'sigmoid: ±Inf give 1 and 0, no overflow at ±80',
    run: () => f([I, -I, 80, -80, NaN]).sigmoid(),
    want: [1, 0, 1, 1.8048513878454153e-35, NaN],
    dtype: 'float32',
    rtol: 1e-4,
  },
  {
    name: 'tanh: ±Inf give ±1, large inputs do not overflow',
    run: () => f([I, -I, 50, NaN]).tanh(),
    want: [1, -1, 1, NaN],
    dtype: 'float32',
  },
  {
    name: 'softplus: softplus(Inf) = Inf, softplus(-Inf) = 0, large inputs stay finite',
    run: () => f([I, -I, 100]).softplus(),
    want: [I, 0, 100],
    dtype: 'float32',
  },
  // ---- softmax family
  {
    name: 'softmax: -Inf entries get 0; a row of -Inf is 0/0 = NaN',
    run: () => f([0, -I, -I, -I]).reshape(2, 2).softmax(1),
    want: [1, 0, NaN, NaN],
    dtype: 'float32',
  },
  {
    name: 'softmax: +Inf entry gives NaN there (Inf/Inf), 0 elsewhere',
    run: () => f([I, 1]).softmax(0),
    want: [NaN, 0],
    dtype: 'float32',
  },
  {
    name: 'softmax: huge finite logits do not overflow',
    run: () => f([1000, 1000]).softmax(0),
    want: [0.5, 0.5],
    dtype: 'float32',
  },
  {
    name: 'logsumexp: all -Inf gives -Inf, +Inf gives +Inf, 1000+ln2 stays finite',
    run: () => f([-I, -I, I, 1, 1000, 1000]).reshape(3, 2).logsumexp(1),
    want: [-I, I, 1000.6931471805599],
    dtype: 'float32',
    rtol: 1e-6,
  },
  {
    name: 'logSoftmax: stable for large gaps',
    run: () => f([1000, 0]).logSoftmax(0),
    want: [0, -1000],
    dtype: 'float32',
    rtol: 1e-6,
  },
  // ---- pow (JS Math.pow)
  {
    name: 'pow: negative base with integer exponent is real; non-integer exponent gives NaN',
    run: () => f([-2, -2, -2, -2, -8, -3]).pow(f([3, 2, -1, 0.5, 1 / 3, 5])),
    want: [-8, 4, -0.5, NaN, NaN, -243],
    dtype: 'float32',
    rtol: 1e-6,
  },
  {
    name: 'pow: 0^0 = 1, 0^-1 = Inf, (-0)^-1 = -Inf, 0^2 = 0, NaN^0 = 1, 1^NaN = NaN, 1^Inf = NaN, Inf^-1 = 0, (-Inf)^3 = -Inf',
    run: () => f([0, 0, -0, 0, NaN, 1, 1, I, -I]).pow(f([0, -1, -1, 2, 0, NaN, I, -1, 3])),
    want: [1, I, -I, 0, 1, NaN, NaN, 0, -I],
    dtype: 'float32',
  },
  {
    name: 'pow with a number exponent: x^0 = 1 for every x, NaN included',
    run: () => f([0, -2, NaN, I]).pow(0),
    want: [1, 1, 1, 1],
    dtype: 'float32',
  },
  // ---- comparisons and casts
  {
    name: 'eq/lt/le with NaN are false; ne(NaN, NaN) is true',
    run: () =>
      Tensor.cat([
        f([NaN, NaN, 1]).eq(f([NaN, 1, NaN])),
        f([NaN, 1]).lt(f([1, NaN])),
        f([NaN]).le(f([NaN])),
        f([NaN]).ne(f([NaN])),
      ]),
    want: [0, 0, 0, 0, 0, 0, 1],
    dtype: 'bool',
  },
  { name: 'eq: -0 equals 0; Inf equals Inf', run: () => f([-0, I]).eq(f([0, I])), want: [1, 1], dtype: 'bool' },
  {
    name: 'cast float32 -> int32 truncates toward 0, saturates, NaN -> 0',
    run: () => f([3.9, -3.9, NaN, I, -I, 3e9, -3e9]).int(),
    want: [3, -3, 0, 2147483647, -2147483648, 2147483647, -2147483648],
    dtype: 'int32',
  },
  {
    name: 'cast float32 -> bool is x != 0 (NaN -> true, -0 -> false)',
    run: () => f([NaN, 0, -0, 0.1, -I]).cast('bool'),
    want: [1, 0, 0, 1, 1],
    dtype: 'bool',
  },
  {
    name: 'int32 add and mul wrap',
    run: () =>
      i32([2147483647, 65536, -2147483648])
        .mul(i32([1, 65536, 1]))
        .add(i32([1, 0, -1])),
    want: [-2147483648, 0, 2147483647],
    dtype: 'int32',
  },
  // ---- float checks, nanToNum, max(dim), cumprod
  {
    name: 'isnan / isinf / isfinite over NaN, ±Inf, FLT_MAX, -0',
    run: () => {
      const x = f([NaN, I, -I, F32_MAX, -0, 1]);
      return Tensor.stack([x.isnan(), x.isinf(), x.isfinite()]).int();
    },
    want: [1, 0, 0, 0, 0, 0, 0, 1, 1, 0, 0, 0, 0, 0, 0, 1, 1, 1],
    dtype: 'int32',
  },
  {
    name: 'nanToNum: NaN -> 0, ±Inf -> ±FLT_MAX by default',
    run: () => f([NaN, I, -I, 2]).nanToNum(),
    want: [0, F32_MAX, -F32_MAX, 2],
    dtype: 'float32',
  },
  {
    name: 'max(dim): a NaN wins and its first index is returned',
    run: () => {
      const r = f([1, NaN, 3, -I, -I, -I]).reshape(2, 3).max(1);
      return Tensor.cat([r.values, r.indices.float()]);
    },
    want: [NaN, -I, 1, 0],
    dtype: 'float32',
  },
  {
    name: 'cumprod: a 0 times Inf is NaN from there on, 0 stays 0',
    run: () => f([2, 0, I, 3]).cumprod(0),
    want: [2, 0, NaN, NaN],
    dtype: 'float32',
  },
];

export interface IeeeResult {
  name: string;
  ok: boolean;
  message: string;
  got: number[];
  want: number[];
}

/** Runs every case on the current backend; never throws for a wrong value (see `ok`). */
export async function runIeeeCases(cases: readonly IeeeCase[] = IEEE_CASES): Promise<IeeeResult[]> {
  const out: IeeeResult[] = [];
  for (const c of cases) {
    let got: number[] = [];
    let ok = false;
    let message: string;
    try {
      // tidy frees the inputs the case built; the result is disposed below.
      const t = tidy(() => c.run());
      got = Array.from(await t.data());
      if (t.dtype !== c.dtype) message = `dtype ${t.dtype}, expected ${c.dtype}`;
      else {
        const r = compare(got, c.dtype === 'float32' ? c.want.map(Math.fround) : c.want, {
          tol: { rtol: c.rtol ?? 0, atol: 0 },
        });
        ok = r.ok;
        message = r.message;
      }
      t.dispose();
    } catch (e) {
      message = `threw ${(e as Error).name}: ${(e as Error).message}`;
    }
    out.push({ name: c.name, ok, message, got, want: c.want });
  }
  return out;
}
