import type { DType } from '../dtype';
import { E, Expr } from './node';
// The references have their own scalar math (not ops/scalar.ts, which the kernels use).
import { refErf, refIntRemainder, refRemainder, refRint, refSign } from './ref-scalar';

/**
 * The raw elementwise ops, each written once: everything a backend, the reference kit and
 * autograd need to know about an op except how a backend spells it. A backend's spelling
 * table is typed `Record<UnaryOp | BinaryOp, …>` (js-ops.ts, wgsl-ops.ts, and the wasm SIMD
 * table for the ops flagged `simd`), so adding a row here is a type error until every
 * backend has its line. docs/architecture.md walks through adding one.
 *
 * Semantics (shared by every backend): float math is IEEE f32 with every node rounded to
 * f32; int32 wraps; int division truncates with x / 0 = 0; x mod 0 is 0 for int32 and NaN for
 * float32; comparisons with NaN are false; max and min propagate NaN; sign(NaN) = 0 and
 * round() is half to even (both as PyTorch).
 */

/** Which operand dtypes an op accepts: float32 only, float32/int32, or int32/bool. */
export type DTypeRule = 'float' | 'numeric' | 'integral' | 'any';

export interface Tolerance {
  rtol: number;
  atol: number;
}

/** Where the testing kit draws float32 operands: [lo, hi), or ±[lo, hi) with `signed`. */
export interface Domain {
  lo: number;
  hi: number;
  signed?: boolean;
  /** few distinct values, so ties occur */ grid?: boolean;
}

export interface OpRow {
  readonly dtypes: DTypeRule;
  /** 'bool' for comparisons; otherwise the operands' dtype. */
  readonly result?: 'bool';
  /** WebAssembly SIMD has a single f32x4 instruction for it (the CPU's fast path). */
  readonly simd?: true;
  /**
   * The value a backend must produce for operands `xs` of dtype `dt` (JS numbers holding
   * f32/i32/0-1 values); the result is already rounded to what the result dtype stores.
   */
  readonly ref: (xs: readonly number[], dt: DType) => number;
  /** The kit's float32 test domain per operand and the tolerance the op is held to. */
  readonly test: { readonly domain: readonly Domain[]; readonly tol: Tolerance };
  /**
   * d(out)/d(x_i) times the upstream gradient g, for float32 operands; reading `out`
   * (exp, tanh, ...) lets autograd save the output instead of the input. Absent: no gradient
   * (comparisons, bitwise ops).
   */
  readonly grad?: (g: Expr, x: readonly Expr[], out: Expr) => (Expr | null)[];
}

const F = Math.fround;
const wrap = (v: number) => v | 0;
const imul = (a: number, b: number) => Number(BigInt.asIntN(32, BigInt(a) * BigInt(b)));
const isInt = (dt: DType) => dt === 'int32';

const EXACT: Tolerance = { rtol: 0, atol: 0 };
const F32: Tolerance = { rtol: 1e-5, atol: 0 };
/** WGSL lets transcendentals be a few ulp off, and less in absolute terms near 0. */
const TRANSC: Tolerance = { rtol: 1e-5, atol: 1e-5 };
const d = (lo: number, hi: number, more: Partial<Domain> = {}): Domain => ({ lo, hi, ...more });

const zero = E.f(0);
const one = E.f(1);
const noGrad = () => [zero];

/** Op names are listed apart from the rows so the rows' types (which mention Expr) can refer to them. */
export const UNARY_OPS = [
  'neg',
  'exp',
  'log',
  'sqrt',
  'recip',
  'sin',
  'cos',
  'tanh',
  'erf',
  'floor',
  'ceil',
  'round',
  'trunc',
  'log1p',
  'expm1',
  'abs',
  'sign',
] as const;
export const BINARY_OPS = [
  'add',
  'sub',
  'mul',
  'div',
  'pow',
  'max',
  'min',
  'mod',
  'eq',
  'lt',
  'and',
  'or',
  'xor',
] as const;
export type UnaryOp = (typeof UNARY_OPS)[number];
export type BinaryOp = (typeof BINARY_OPS)[number];
export type RawOp = UnaryOp | BinaryOp;

const unaryRows = {
  neg: {
    dtypes: 'numeric',
    simd: true,
    ref: ([a], dt) => (isInt(dt) ? wrap(-a) : -a),
    test: { domain: [d(-5, 5)], tol: EXACT },
    grad: (g) => [E.neg(g)],
  },
  exp: {
    dtypes: 'float',
    ref: ([a]) => F(Math.exp(a)),
    test: { domain: [d(-10, 10)], tol: F32 },
    grad: (g, _, o) => [E.mul(g, o)],
  },
  log: {
    dtypes: 'float',
    ref: ([a]) => F(Math.log(a)),
    test: { domain: [d(0.01, 20)], tol: TRANSC },
    grad: (g, [a]) => [E.div(g, a)],
  },
  sqrt: {
    dtypes: 'float',
    simd: true,
    ref: ([a]) => F(Math.sqrt(a)),
    test: { domain: [d(0, 50)], tol: F32 },
    grad: (g, _, o) => [E.div(E.mul(g, E.f(0.5)), o)],
  },
  recip: {
    dtypes: 'float',
    simd: true,
    ref: ([a]) => F(1 / a),
    test: { domain: [d(0.05, 8, { signed: true })], tol: F32 },
    grad: (g, _, o) => [E.neg(E.mul(g, E.mul(o, o)))],
  },
  sin: {
    dtypes: 'float',
    ref: ([a]) => F(Math.sin(a)),
    test: { domain: [d(-Math.PI, Math.PI)], tol: { rtol: 0, atol: 5e-4 } },
    grad: (g, [a]) => [E.mul(g, E.cos(a))],
  },
  cos: {
    dtypes: 'float',
    ref: ([a]) => F(Math.cos(a)),
    test: { domain: [d(-Math.PI, Math.PI)], tol: { rtol: 0, atol: 5e-4 } },
    grad: (g, [a]) => [E.neg(E.mul(g, E.sin(a)))],
  },
  tanh: {
    dtypes: 'float',
    ref: ([a]) => F(Math.tanh(a)),
    test: { domain: [d(-6, 6)], tol: TRANSC },
    grad: (g, _, o) => [E.mul(g, E.sub(one, E.mul(o, o)))],
  },
  erf: {
    dtypes: 'float',
    ref: ([a]) => F(refErf(a)),
    test: { domain: [d(-4, 4)], tol: TRANSC },
    grad: (g, [a]) => [E.mul(g, E.mul(E.f(2 / Math.sqrt(Math.PI)), E.exp(E.neg(E.mul(a, a)))))],
  },
  floor: {
    dtypes: 'float',
    simd: true,
    ref: ([a]) => Math.floor(a),
    test: { domain: [d(-5, 5, { grid: true })], tol: EXACT },
    grad: noGrad,
  },
  ceil: {
    dtypes: 'float',
    simd: true,
    ref: ([a]) => Math.ceil(a),
    test: { domain: [d(-5, 5, { grid: true })], tol: EXACT },
    grad: noGrad,
  },
  round: {
    dtypes: 'float',
    simd: true,
    ref: ([a]) => refRint(a),
    test: { domain: [d(-5, 5, { grid: true })], tol: EXACT },
    grad: noGrad,
  },
  trunc: {
    dtypes: 'float',
    simd: true,
    ref: ([a]) => Math.trunc(a),
    test: { domain: [d(-5, 5, { grid: true })], tol: EXACT },
    grad: noGrad,
  },
  log1p: {
    dtypes: 'float',
    ref: ([a]) => F(Math.log1p(a)),
    test: { domain: [d(-0.9, 3)], tol: TRANSC },
    grad: (g, [a]) => [E.div(g, E.add(one, a))],
  },
  expm1: {
    dtypes: 'float',
    ref: ([a]) => F(Math.expm1(a)),
    test: { domain: [d(-3, 3)], tol: TRANSC },
    grad: (g, _, o) => [E.mul(g, E.add(o, one))],
  },
  // |INT_MIN| wraps to INT_MIN, as in C and WGSL.
  abs: {
    dtypes: 'numeric',
    simd: true,
    ref: ([a], dt) => (isInt(dt) ? wrap(Math.abs(a)) : Math.abs(a)),
    test: { domain: [d(-5, 5)], tol: EXACT },
    // The subgradient 0 at 0, as PyTorch (g·sign(x)).
    grad: (g, [a]) => [E.where(E.lt(zero, a), g, E.where(E.lt(a, zero), E.neg(g), zero))],
  },
  sign: {
    dtypes: 'numeric',
    ref: ([a]) => refSign(a),
    test: { domain: [d(-3, 3, { grid: true })], tol: EXACT },
    grad: noGrad,
  },
} satisfies Record<UnaryOp, OpRow>;

/** Ties split the gradient equally, so maximum(x, x) has gradient 1 in x. */
function extremumGrad(wins: (x: Expr, y: Expr) => Expr) {
  return (g: Expr, [x, y]: readonly Expr[]): Expr[] => {
    const tie = E.mul(g, E.f(0.5));
    return [
      E.where(wins(x, y), g, E.where(E.eq(x, y), tie, zero)),
      E.where(wins(y, x), g, E.where(E.eq(x, y), tie, zero)),
    ];
  };
}

const arith = (a: Domain = d(-3, 3), b: Domain = d(-3, 3)) => [a, b];

const binaryRows = {
  add: {
    dtypes: 'numeric',
    simd: true,
    ref: ([a, b], dt) => (isInt(dt) ? wrap(a + b) : F(a + b)),
    test: { domain: arith(), tol: F32 },
    grad: (g) => [g, g],
  },
  sub: {
    dtypes: 'numeric',
    simd: true,
    ref: ([a, b], dt) => (isInt(dt) ? wrap(a - b) : F(a - b)),
    test: { domain: arith(), tol: F32 },
    grad: (g) => [g, E.neg(g)],
  },
  mul: {
    dtypes: 'numeric',
    simd: true,
    ref: ([a, b], dt) => (isInt(dt) ? imul(a, b) : F(a * b)),
    test: { domain: arith(), tol: F32 },
    grad: (g, [x, y]) => [E.mul(g, y), E.mul(g, x)],
  },
  div: {
    dtypes: 'numeric',
    simd: true,
    ref: ([a, b], dt) => (isInt(dt) ? (b === 0 ? 0 : wrap(Math.trunc(a / b))) : F(a / b)),
    test: { domain: arith(d(-3, 3), d(0.1, 4, { signed: true })), tol: F32 },
    grad: (g, [x, y]) => [E.div(g, y), E.neg(E.div(E.mul(g, x), E.mul(y, y)))],
  },
  /**
   * JS Math.pow. d/dx = y·x^(y-1), 0 where y = 0 (x^0 has gradient 0 even at x = 0);
   * d/dy = x^y·ln x, 0 where x = 0 (PyTorch's convention) and NaN for negative x.
   */
  pow: {
    dtypes: 'float',
    ref: ([a, b]) => F(Math.pow(a, b)),
    test: { domain: arith(d(0.05, 4), d(-3, 3)), tol: { rtol: 1e-4, atol: 0 } },
    grad: (g, [x, y], out) => [
      E.where(E.eq(y, zero), zero, E.mul(E.mul(g, y), E.pow(x, E.sub(y, one)))),
      E.where(E.eq(x, zero), zero, E.mul(E.mul(g, out), E.log(x))),
    ],
  },
  max: {
    dtypes: 'numeric',
    simd: true,
    ref: ([a, b]) => (Number.isNaN(a) || Number.isNaN(b) ? NaN : a > b ? a : b),
    test: { domain: arith(), tol: EXACT },
    grad: extremumGrad((x, y) => E.lt(y, x)),
  },
  min: {
    dtypes: 'numeric',
    simd: true,
    ref: ([a, b]) => (Number.isNaN(a) || Number.isNaN(b) ? NaN : a < b ? a : b),
    test: { domain: arith(), tol: EXACT },
    grad: extremumGrad((x, y) => E.lt(x, y)),
  },
  /** PyTorch's remainder: the result has the divisor's sign. d/dy = -floor(x / y). */
  mod: {
    dtypes: 'numeric',
    ref: ([a, b], dt) => (isInt(dt) ? refIntRemainder(a, b) : F(refRemainder(a, b))),
    test: { domain: arith(d(-6, 6), d(0.5, 3, { signed: true })), tol: { rtol: 1e-5, atol: 1e-5 } },
    grad: (g, [x, y]) => [g, E.neg(E.mul(g, E.floor(E.div(x, y))))],
  },
  eq: {
    dtypes: 'any',
    result: 'bool',
    simd: true,
    ref: ([a, b]) => (a === b ? 1 : 0),
    test: { domain: arith(d(-2, 3, { grid: true }), d(-2, 3, { grid: true })), tol: EXACT },
  },
  lt: {
    dtypes: 'numeric',
    result: 'bool',
    simd: true,
    ref: ([a, b]) => (a < b ? 1 : 0),
    test: { domain: arith(d(-2, 3, { grid: true }), d(-2, 3, { grid: true })), tol: EXACT },
  },
  and: { dtypes: 'integral', ref: ([a, b]) => a & b, test: { domain: [], tol: EXACT } },
  or: { dtypes: 'integral', ref: ([a, b]) => a | b, test: { domain: [], tol: EXACT } },
  xor: { dtypes: 'integral', ref: ([a, b]) => a ^ b, test: { domain: [], tol: EXACT } },
} satisfies Record<BinaryOp, OpRow>;

export const UNARY_TABLE: Readonly<Record<UnaryOp, OpRow>> = unaryRows;
export const BINARY_TABLE: Readonly<Record<BinaryOp, OpRow>> = binaryRows;

/** The ops the wasm SIMD path must spell (the rows flagged `simd`). */
type SimdOf<T> = { [K in keyof T]: T[K] extends { simd: true } ? K : never }[keyof T];
export type SimdOp = SimdOf<typeof unaryRows> | SimdOf<typeof binaryRows>;

export function opRow(op: RawOp): OpRow {
  return (unaryRows as Record<string, OpRow>)[op] ?? (binaryRows as Record<string, OpRow>)[op];
}

/** Which dtypes an op accepts, in words, for error messages. */
export function acceptedDTypes(rule: DTypeRule): DType[] {
  return rule === 'float'
    ? ['float32']
    : rule === 'numeric'
      ? ['float32', 'int32']
      : rule === 'integral'
        ? ['int32', 'bool']
        : ['float32', 'int32', 'bool'];
}
