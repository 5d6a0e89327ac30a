import { E, Expr, ValueError } from '@surf/core';
import { requireNumeric } from '../dtypes';
import { Tensor } from '../tensor';
import { Rule, X, computeDType, fused } from './fuse';

/**
 * Unary math and activations. Each is one fused forward kernel and one fused backward
 * kernel, written in numerically stable forms (no exp of a large positive number, no
 * 1 + erf cancellation). Float-valued ops promote int32/bool inputs to float32.
 */
function unary(op: string, x: Tensor, rule: Rule, float = true): Tensor {
  const dt = float ? computeDType(op, [x], true) : requireNumeric(op, computeDType(op, [x]));
  return fused(op, [x], [dt], rule);
}

export const neg = (x: Tensor) => unary('neg', x, { fwd: ([a]) => E.neg(a), grad: (g) => [E.neg(g)] }, false);
export const exp = (x: Tensor) => unary('exp', x, { fwd: ([a]) => E.exp(a), grad: (g, _, o) => [E.mul(g, o)] });
export const log = (x: Tensor) => unary('log', x, { fwd: ([a]) => E.log(a), grad: (g, [a]) => [E.div(g, a)] });
export const sqrt = (x: Tensor) => unary('sqrt', x, { fwd: ([a]) => E.sqrt(a), grad: (g, _, o) => [E.div(E.mul(g, X.half), o)] });
export const rsqrt = (x: Tensor) => unary('rsqrt', x, {
  fwd: ([a]) => E.recip(E.sqrt(a)),
 
  grad: (g, _, o) => [E.mul(E.mul(g, E.f(-0.5)), E.mul(o, X.sq(o)))],
});
/** |x|; the gradient at 0 is 0 (the subgradient PyTorch picks). */
export const abs = (x: Tensor) => unary('abs', x, {
  fwd: ([a]) => X.abs(a),
  grad: (g, [a]) => [E.where(E.lt(X.zero, a), g, E.where(E.lt(a, X.zero), E.neg(g), X.zero))],
}, false);

// cos(x) = 1 - 2 sin²(x/2): no large-argument shift by π/2, exact to f32 rounding near 0.
const cosE = (a: Expr): Expr => E.sub(X.one, E.mul(E.f(2), X.sq(E.sin(E.mul(a, X.half)))));
export const sin = (x: Tensor) => unary('sin', x, { fwd: ([a]) => E.sin(a), grad: (g, [a]) => [E.mul(g, cosE(a))] });
export const cos = (x: Tensor) => unary('cos', x, { fwd: ([a]) => cosE(a), grad: (g, [a]) => [E.neg(E.mul(g, E.sin(a)))] });

/** tanh(|x|) = (1 - e^{-2|x|}) / (1 + e^{-2|x|}), sign restored: never overflows. */
export const tanh = (x: Tensor) => unary('tanh', x, {
  fwd: ([a]) => {
    const e = E.exp(E.mul(E.f(-2), X.abs(a)));
    const t = E.div(E.sub(X.one, e), E.add(X.one, e));
    return E.where(E.lt(a, X.zero), E.neg(t), t);
  },
 
  grad: (g, _, o) => [E.mul(g, E.sub(X.one, X.sq(o)))],
});

export const sigmoid = (x: Tensor) => unary('sigmoid', x, {
  fwd: ([a]) => X.sigmoid(a),
 
  grad: (g, _, o) => [E.mul(E.mul(g, o), E.sub(X.one, o))],
});

/**
 * max(x, 0); the gradient at 0 is 0. The mask reads the output (y > 0 exactly where x > 0), so
 * a matmul feeding relu never needs its pre-activation kept (fusion pass, fusion/fold.ts).
 */
export const relu = (x: Tensor) => unary('relu', x, {
  fwd: ([a]) => E.max(a, E.c(0, x.dtype === 'float32' ? 'float32' : 'int32')),
  grad: (g, _, o) => [E.where(E.lt(X.zero, o), g, X.zero)],
}, false);

export function leakyRelu(x: Tensor, slope: number): Tensor {
  if (typeof slope !== 'number') throw new ValueError(`leakyRelu: negativeSlope must be a number; got ${typeof slope}`);
  const s = E.f(slope);
  return unary('leakyRelu', x, {
    fwd: ([a]) => E.where(E.lt(X.zero, a), a, E.mul(a, s)),
    grad: (g, [a]) => [E.where(E.lt(X.zero, a), g, E.mul(g, s))],
  });
}

/**
 * Φ(x), the standard normal CDF, from Abramowitz & Stegun 7.1.26 (|error| < 1.5e-7) written
 * as the tail q = P(t)·e^{-u²} so neither side of 0 suffers 1 - 1 cancellation.
 */
function normalCdf(x: Expr): Expr {
  const u = E.mul(X.abs(x), E.f(Math.SQRT1_2));
  const t = E.recip(E.add(X.one, E.mul(E.f(0.3275911), u)));
  const coeffs = [1.061405429, -1.453152027, 1.421413741, -0.284496736, 0.254829592];
  let p: Expr = E.f(coeffs[0]);
  for (const c of coeffs.slice(1)) p = E.add(E.mul(p, t), E.f(c));
  const q = E.mul(E.mul(p, t), E.exp(E.neg(X.sq(u))));
  const tail = E.mul(X.half, q); // P(Z > |x|)
  return E.where(E.lt(x, X.zero), tail, E.sub(X.one, tail));
}

const SQRT_2_OVER_PI = Math.sqrt(2 / Math.PI);
const INV_SQRT_2PI = 1 / Math.sqrt(2 * Math.PI);

export function gelu(x: Tensor, approximate: 'none' | 'tanh'): Tensor {
  if (approximate === 'tanh') {
    // 0.5·x·(1 + tanh(k)) = x·σ(2k), k = √(2/π)(x + 0.044715x³).
    const twoK = (a: Expr) => E.mul(E.f(2 * SQRT_2_OVER_PI), E.add(a, E.mul(E.f(0.044715), E.mul(a, X.sq(a)))));
    return unary('gelu', x, {
      fwd: ([a]) => E.mul(a, X.sigmoid(twoK(a))),
      grad: (g, [a]) => {
        const s = X.sigmoid(twoK(a));
        const dTwoK = E.mul(E.f(2 * SQRT_2_OVER_PI), E.add(X.one, E.mul(E.f(3 * 0.044715), X.sq(a))));
        return [E.mul(g, E.add(s, E.mul(E.mul(a, E.mul(s, E.sub(X.one, s))), dTwoK)))];
      },
    });
  }
  if (approximate !== 'none') throw new ValueError(`gelu: approximate must be 'none' or 'tanh'; got ${JSON.stringify(approximate)}`);
  return unary('gelu', x, {
    fwd: ([a]) => E.mul(a, normalCdf(a)),
    // d/dx xΦ(x) = Φ(x) + x·φ(x)
    grad: (g, [a]) => [E.mul(g, E.add(normalCdf(a), E.mul(a, E.mul(E.f(INV_SQRT_2PI), E.exp(E.mul(E.f(-0.5), X.sq(a)))))))],
  });
}

/** log(1 + e^{βx})/β as max(βx, 0) + log(1 + e^{-|βx|}), divided by β; gradient σ(βx). */
export function softplus(x: Tensor, beta: number): Tensor {
  if (typeof beta !== 'number' || !(beta > 0)) throw new ValueError(`softplus: beta must be a positive number; got ${beta}`);
  const b = E.f(beta);
  return unary('softplus', x, {
    fwd: ([a]) => {
      const z = E.mul(a, b);
      return E.div(E.add(E.max(z, X.zero), E.log(E.add(X.one, E.exp(E.neg(X.abs(z)))))), b);
    },
    grad: (g, [a]) => [E.mul(g, X.sigmoid(E.mul(a, b)))],
  });
}
