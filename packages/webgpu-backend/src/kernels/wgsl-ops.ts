import type { BinaryOp, DType, UnaryOp } from '@surf/core';

/**
 * How WGSL spells each raw op of the op table (core/src/ops/table.ts holds the semantics).
 * `dt` is the operands' dtype. Helpers named `*_` live in FLOAT_HELPERS (wgsl.ts) or in
 * OP_HELPERS below, where WGSL's builtins leave NaN, Inf or accuracy open.
 */
type Spell1 = (a: string, dt: DType) => string;
type Spell2 = (a: string, b: string, dt: DType) => string;
const f32 = (dt: DType) => dt === 'float32';

export const WGSL_UNARY: Record<UnaryOp, Spell1> = {
  neg: (a, dt) => (f32(dt) ? `(-${a})` : `(0 - ${a})`),
  exp: (a) => `fexp_(${a})`,
  log: (a) => `flog_(${a})`,
  sqrt: (a) => `fsqrt_(${a})`,
  recip: (a) => `(1.0 / ${a})`,
  sin: (a) => `fsin_(${a})`,
  cos: (a) => `fcos_(${a})`,
  tanh: (a) => `ftanh_(${a})`,
  erf: (a) => `ferf_(${a})`,
  floor: (a) => `floor(${a})`,
  ceil: (a) => `ceil(${a})`,
  round: (a) => `round(${a})`, // WGSL's round is half to even, as PyTorch's
  trunc: (a) => `trunc(${a})`,
  log1p: (a) => `flog1p_(${a})`,
  expm1: (a) => `fexpm1_(${a})`,
  abs: (a) => `abs(${a})`,
  sign: (a, dt) => (f32(dt) ? `fsign_(${a})` : `isign_(${a})`),
};

export const WGSL_BINARY: Record<BinaryOp, Spell2> = {
  add: (a, b) => `(${a} + ${b})`,
  sub: (a, b) => `(${a} - ${b})`,
  mul: (a, b) => `(${a} * ${b})`,
  div: (a, b, dt) => (f32(dt) ? `(${a} / ${b})` : `idiv_(${a}, ${b})`),
  pow: (a, b) => `fpow_(${a}, ${b})`,
  max: (a, b, dt) => (f32(dt) ? `fmax_(${a}, ${b})` : `max(${a}, ${b})`),
  min: (a, b, dt) => (f32(dt) ? `fmin_(${a}, ${b})` : `min(${a}, ${b})`),
  mod: (a, b, dt) => (f32(dt) ? `fmod_(${a}, ${b})` : `imod_(${a}, ${b})`),
  eq: (a, b, dt) => (f32(dt) ? `feq_(${a}, ${b})` : `(${a} == ${b})`),
  lt: (a, b, dt) => (f32(dt) ? `flt_(${a}, ${b})` : `(${a} < ${b})`),
  and: (a, b) => `(${a} & ${b})`,
  or: (a, b) => `(${a} | ${b})`,
  xor: (a, b, dt) => (dt === 'bool' ? `(${a} != ${b})` : `(${a} ^ ${b})`),
};

/**
 * Helpers for the ops above that WGSL lacks or leaves loose (uses FLOAT_HELPERS' nan_,
 * isnan_, inf_). Accuracy targets: within the op table's test tolerance of the f64 result.
 */
export const OP_HELPERS = /* wgsl */ `
fn fmin_(a: f32, b: f32) -> f32 { if (isnan_(a) || isnan_(b)) { return nan_(); } return min(a, b); }
fn fsign_(x: f32) -> f32 { if (x > 0.0) { return 1.0; } if (x < 0.0) { return -1.0; } return 0.0; }
fn isign_(x: i32) -> i32 { if (x > 0) { return 1; } if (x < 0) { return -1; } return 0; }
// PyTorch's remainder: fmod moved to the divisor's sign; float x mod 0 is NaN, int x mod 0 is 0.
fn fmod_(a: f32, b: f32) -> f32 {
  if (b == 0.0 || isnan_(a) || isnan_(b) || isinf_(a)) { return nan_(); }
  if (isinf_(b)) { if (a == 0.0 || (a < 0.0) == (b < 0.0)) { return a; } return b; }
  var m = a - b * trunc(a / b);
  if (m != 0.0 && (m < 0.0) != (b < 0.0)) { m = m + b; }
  return m;
}
fn imod_(a: i32, b: i32) -> i32 {
  if (b == 0 || b == -1) { return 0; }
  var m = a % b;
  if (m != 0 && (m < 0) != (b < 0)) { m = m + b; }
  return m;
}
// cos by fsin_'s reduction with the quadrant moved by one (fsinq_ in wgsl.ts).
fn fcos_(x: f32) -> f32 { return fsinq_(x, 1); }
// e^x - 1: the Taylor series near 0 (where exp(x) - 1 cancels), exp beyond.
fn fexpm1_(x: f32) -> f32 {
  if (isnan_(x)) { return x; }
  if (abs(x) < 0.35) {
    return x * (1.0 + x * (0.5 + x * (1.6666667e-1 + x * (4.1666668e-2 + x * (8.3333338e-3 + x * (1.3888889e-3 + x * (1.9841270e-4 + x * 2.4801587e-5)))))));
  }
  return exp(x) - 1.0;
}
// ln(1 + x): 2·atanh(s), s = x / (2 + x), as a series near 0 (where 1 + x rounds), log beyond.
fn flog1p_(x: f32) -> f32 {
  if (isnan_(x) || x < -1.0) { return nan_(); }
  if (x == -1.0) { return -inf_(); }
  if (x > -0.25 && x < 0.5) {
    let s = x / (2.0 + x);
    let z = s * s;
    return 2.0 * s * (1.0 + z * (0.33333334 + z * (0.2 + z * (0.14285715 + z * (0.11111111 + z * 0.09090909)))));
  }
  return flog_(1.0 + x);
}
// tanh(|x|) = -expm1(-2|x|) / (2 + expm1(-2|x|)): never overflows, accurate near 0.
fn ftanh_(x: f32) -> f32 {
  if (isnan_(x)) { return x; }
  let e = fexpm1_(-2.0 * abs(x));
  let t = -e / (2.0 + e);
  return select(t, -t, x < 0.0);
}
// erf: the Maclaurin series for |x| < 1; 1 - erfc beyond, erfc from the Chebyshev fit of
// Numerical Recipes (erfcc, relative error < 1.2e-7).
fn ferf_(x: f32) -> f32 {
  if (isnan_(x)) { return x; }
  let a = abs(x);
  if (a < 1.0) {
    let z = x * x;
    return x * (1.1283792 + z * (-0.37612638 + z * (0.11283792 + z * (-0.026866171 + z * (0.0052239776 + z * (-0.00085483270 + z * (0.00012055332 + z * (-0.000014925650 + z * (0.0000016462114 + z * (-0.00000016365845 + z * 0.000000014807192))))))))));
  }
  if (a >= 4.0) { return select(1.0, -1.0, x < 0.0); }
  let t = 1.0 / (1.0 + 0.5 * a);
  let erfc = t * exp(-a * a - 1.26551223 + t * (1.00002368 + t * (0.37409196 + t * (0.09678418 + t * (-0.18628806 + t * (0.27886807 + t * (-1.13520398 + t * (1.48851587 + t * (-0.82215223 + t * 0.17087277)))))))));
  return select(1.0 - erfc, erfc - 1.0, x < 0.0);
}
`;

/** OP_HELPERS split into its functions (each with the comment above it), by name. */
const HELPER_FNS: ReadonlyMap<string, string> = (() => {
  const m = new Map<string, string>();
  let pending: string[] = [];
  for (const chunk of OP_HELPERS.split('\n').reduce<string[][]>((acc, line) => {
    if (line.startsWith('fn ')) {
      acc.push([...pending, line]);
      pending = [];
    } else if (line.startsWith('//') || line === '') pending.push(line);
    else acc[acc.length - 1].push(line);
    return acc;
  }, [])) {
    const name = /fn (\w+)\(/.exec(chunk.find((l) => l.startsWith('fn '))!)![1];
    m.set(name, chunk.filter((l) => l !== '').join('\n'));
  }
  return m;
})();

/** The OP_HELPERS functions that `code` calls, with the ones they call, in dependency order. */
export function opHelpersFor(code: string): string {
  const out: string[] = [];
  const seen = new Set<string>();
  const visit = (text: string) => {
    for (const [, name] of text.matchAll(/\b(\w+_)\(/g)) {
      const fn = HELPER_FNS.get(name);
      if (!fn || seen.has(name)) continue;
      seen.add(name);
      visit(fn.slice(fn.indexOf('{')));
      out.push(fn);
    }
  };
  visit(code);
  return out.join('\n');
}
