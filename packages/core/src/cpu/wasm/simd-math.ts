import { Code } from './code';

/**
 * Vectorised float32 transcendentals for the generated elementwise loops: exp, log, tanh and
 * erf on f32x4 lanes, built from plain f32x4 mul/add (no fused multiply-add, whose rounding
 * varies by engine), so a value comes out the same on every thread and every run.
 *
 * exp, log and tanh are Cephes' single-precision algorithms (range reduction, then a minimax
 * polynomial; exp's refitted one degree lower), within 2 ulp of the exact result over the
 * whole float range; erf is two fitted polynomials, within 4 ulp (Horner's rule cancels a
 * little just below its split at 1.5), like PyTorch's vectorised erf. Tested against float64
 * references, ±Inf, NaN, ±0 and subnormals included (`cpu-simd-math.test.ts`). The JS kernel
 * rounds Math.exp & co. once, so a large array's result may differ from a small one's in the
 * last bit or two; the WebGPU backend's transcendentals differ likewise.
 *
 * Each emitter takes the operand as a thunk that pushes it, and `tmp()` for a fresh v128
 * local; it leaves the result on the stack.
 */
type Push = () => void;
type Tmp = () => number;

export type SimdMathOp = 'exp' | 'log' | 'tanh' | 'erf';

const LOG2E = 1.4426950408889634;
// ln 2 split so that n·LN2_HI is exact for |n| < 2^15 (Cody and Waite's reduction).
const LN2_HI = 0.693359375;
const LN2_LO = -2.1219444e-4;
// e^r ≈ 1 + r + r²·P(r) on |r| ≤ ln2/2, P of degree 4 fitted for relative error (3e-9,
// a twentieth of an ulp; Cephes' degree 5 buys nothing more in float32).
const EXP_P = [1.3814610429e-3, 8.3687100559e-3, 4.1668388992e-2, 1.6666521132e-1, 4.999999404e-1];
// log(1 + x) ≈ x − x²/2 + x³·P(x) on √½ − 1 ≤ x < √2 − 1.
const LOG_P = [
  7.0376836292e-2, -1.151461031e-1, 1.167699874e-1, -1.2420140846e-1, 1.4249322787e-1, -1.6668057665e-1,
  2.0000714765e-1, -2.4999993993e-1, 3.3333331174e-1,
];
// tanh(x) ≈ x + x³·P(x²) on |x| < 0.625.
const TANH_P = [-5.70498872745e-3, 2.06390887954e-2, -5.37397155531e-2, 1.33314422036e-1, -3.33332819422e-1];
const TANH_SMALL = 0.625;
// erf(x) ≈ x·S(x²) below ERF_SPLIT; erfc(x) ≈ e^{−x²}·L(x) from there to 4, past which erf
// rounds to ±1. Both fitted by scripts/perf/fit_erf_poly.py (relative errors 8e-10 and 4e-7,
// the latter scaled by erfc/erf ≤ 0.04 in the result).
const ERF_SPLIT = 1.5;
const ERF_S = [
  6.144708208921656e-7, -1.1272975825704634e-5, 1.1288871610304341e-4, -8.450582972727716e-4, 5.2164820954203606e-3,
  -2.6862889528274536e-2, 1.1283718794584274e-1, -3.7612631916999817e-1, 1.128379225730896,
];
const ERF_L = [
  1.0966207810270134e-5, -2.850318269338459e-4, 3.293848829343915e-3, -2.2324565798044205e-2, 9.860687702894211e-2,
  -2.983914613723755e-1, 6.329156756401062e-1, -9.431697726249695e-1, 9.567506909370422e-1,
];
const SIGN = -0x80000000;
// 1.5·2^23: adding it rounds |v| < 2^22 to an integer held in the low mantissa bits.
const ROUNDER = 12582912;
const ROUNDER_BITS = 0x4b400000;

/** Horner's rule on local `x`: leaves ((c0·x + c1)·x + …)·x + c_last on the stack. */
function horner(c: Code, x: number, coeffs: readonly number[]): void {
  c.f32x4Const(coeffs[0]);
  for (let i = 1; i < coeffs.length; i++) c.get(x).f32x4Mul().f32x4Const(coeffs[i]).f32x4Add();
}

/**
 * e^x = 2^n · e^r, n = round(x·log2 e), r = x − n·ln 2. The input is clamped to [−104, 89]
 * (past which the result is 0 or +Inf anyway; pmin/pmax let NaN through), and 2^n is applied
 * as two factors 2^⌊n/2⌋ · 2^(n−⌊n/2⌋), both normal floats, so results that overflow give
 * +Inf and subnormal results are rounded once. n is rounded by adding 1.5·2^23, which leaves
 * it in the low mantissa bits (cheaper than f32x4.nearest plus a saturating conversion).
 */
function exp(c: Code, tmp: Tmp, a: Push): void {
  const x = tmp(),
    t = tmp(),
    n = tmp(),
    r = tmp(),
    ni = tmp(),
    h = tmp();
  a();
  c.f32x4Const(89).f32x4Pmin().f32x4Const(-104).f32x4Pmax().set(x);
  c.get(x).f32x4Const(LOG2E).f32x4Mul().f32x4Const(ROUNDER).f32x4Add().set(t);
  c.get(t).f32x4Const(ROUNDER).f32x4Sub().set(n);
  c.get(x).get(n).f32x4Const(LN2_HI).f32x4Mul().f32x4Sub();
  c.get(n).f32x4Const(LN2_LO).f32x4Mul().f32x4Sub().set(r);
  c.get(t).i32x4Const(ROUNDER_BITS).i32x4Sub().set(ni);
  c.get(ni).i32Const(1).i32x4ShrS().set(h);
  // p = P(r)·r² + r + 1
  horner(c, r, EXP_P);
  c.get(r).get(r).f32x4Mul().f32x4Mul().get(r).f32x4Add().f32x4Const(1).f32x4Add();
  c.get(h).i32x4Const(127).i32x4Add().i32Const(23).i32x4Shl().f32x4Mul();
  c.get(ni).get(h).i32x4Sub().i32x4Const(127).i32x4Add().i32Const(23).i32x4Shl().f32x4Mul();
}

/**
 * log x = e·ln 2 + log(m), x = m·2^e with m in [√½, √2). Subnormal inputs are scaled by 2^23
 * first; x = 0 gives −Inf, +Inf gives +Inf, negative and NaN inputs NaN.
 */
function log(c: Code, tmp: Tmp, a: Push): void {
  const x = tmp(),
    sub = tmp(),
    bits = tmp(),
    e = tmp(),
    lt = tmp(),
    m = tmp(),
    z = tmp(),
    fe = tmp();
  a();
  c.set(x);
  c.get(x).f32x4Const(1.1754943508222875e-38).f32x4Lt().set(sub);
  c.get(x).f32x4Const(8388608).f32x4Mul().get(x).get(sub).v128Bitselect().set(bits);
  // frexp: exponent e with m in [0.5, 1); the subnormal scaling taken back off e.
  c.get(bits).i32Const(23).i32x4ShrU().i32x4Const(126).i32x4Sub();
  c.get(sub).i32x4Const(-23).v128And().i32x4Add().set(e);
  c.get(bits).i32x4Const(0x007fffff).v128And().i32x4Const(0x3f000000).v128Or().set(m);
  c.get(m).f32x4Const(Math.SQRT1_2).f32x4Lt().set(lt);
  // m < √½: m ← 2m − 1, e ← e − 1 (the mask is −1); else m ← m − 1. Both exact.
  c.get(e).get(lt).i32x4Add().set(e);
  c.get(m).get(m).f32x4Add().get(m).get(lt).v128Bitselect().f32x4Const(1).f32x4Sub().set(m);
  c.get(m).get(m).f32x4Mul().set(z);
  c.get(e).f32x4ConvertI32x4S().set(fe);
  // y = P(m)·m·z + e·LN2_LO − z/2; log = m + y + e·LN2_HI
  horner(c, m, LOG_P);
  c.get(m).f32x4Mul().get(z).f32x4Mul();
  c.get(fe).f32x4Const(LN2_LO).f32x4Mul().f32x4Add();
  c.get(z).f32x4Const(0.5).f32x4Mul().f32x4Sub();
  c.get(m).f32x4Add();
  c.get(fe).f32x4Const(LN2_HI).f32x4Mul().f32x4Add();
  // Special values: +Inf, 0 (either sign) and, by OR-ing all ones (a NaN), x < 0 or NaN.
  c.f32x4Const(Infinity).get(x).f32x4Const(Infinity).f32x4Ne().v128Bitselect();
  c.f32x4Const(-Infinity).get(x).f32x4Const(0).f32x4Ne().v128Bitselect();
  c.get(x).f32x4Const(0).f32x4Lt().get(x).get(x).f32x4Ne().v128Or().v128Or();
}

/**
 * tanh |x| = |x| + |x|³·P(x²) below 0.625, else 1 − 2/(e^{2|x|} + 1) (1 once e^{2|x|} is
 * +Inf); x's sign bit is put back last, so tanh(−0) = −0 and NaN stays NaN.
 */
function tanh(c: Code, tmp: Tmp, a: Push): void {
  const x = tmp(),
    ax = tmp(),
    z = tmp(),
    big = tmp();
  a();
  c.set(x);
  c.get(x).f32x4Abs().set(ax);
  c.get(ax).get(ax).f32x4Mul().set(z);
  exp(c, tmp, () => c.get(ax).get(ax).f32x4Add());
  c.f32x4Const(1).f32x4Add().set(big);
  c.f32x4Const(1).f32x4Const(2).get(big).f32x4Div().f32x4Sub().set(big);
  horner(c, z, TANH_P);
  c.get(z).f32x4Mul().get(ax).f32x4Mul().get(ax).f32x4Add();
  c.get(big).get(ax).f32x4Const(TANH_SMALL).f32x4Lt().v128Bitselect();
  c.get(x).i32x4Const(SIGN).v128And().v128Or();
}

/**
 * erf |x|: |x|·S(x²) below 1.5, else 1 − e^{−x²}·L(|x|) with |x| clamped to 4 (pmin lets NaN
 * through); the sign bit put back last, as tanh.
 */
function erf(c: Code, tmp: Tmp, a: Push): void {
  const x = tmp(),
    ax = tmp(),
    z = tmp(),
    big = tmp();
  a();
  c.set(x);
  c.get(x).f32x4Abs().f32x4Const(4).f32x4Pmin().set(ax);
  c.get(ax).get(ax).f32x4Mul().set(z);
  horner(c, ax, ERF_L);
  exp(c, tmp, () => c.get(z).f32x4Neg());
  c.f32x4Mul().set(big);
  c.f32x4Const(1).get(big).f32x4Sub().set(big);
  horner(c, z, ERF_S);
  c.get(ax).f32x4Mul();
  c.get(big).get(ax).f32x4Const(ERF_SPLIT).f32x4Lt().v128Bitselect();
  c.get(x).i32x4Const(SIGN).v128And().v128Or();
}

export const SIMD_MATH: Record<SimdMathOp, (c: Code, tmp: Tmp, a: Push) => void> = { exp, log, tanh, erf };

export const isSimdMathOp = (op: string): op is SimdMathOp => Object.hasOwn(SIMD_MATH, op);
