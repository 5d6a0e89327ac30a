import { E, Expr, ValueError } from '@surf/core';
import { requireNumeric } from '../dtypes';
import { Tensor } from '../tensor';
import { Rule, X, computeDType, derivedRule, fused, tableRule } from './fuse';

/**
 * Unary math and activations. Each is one fused forward kernel and one fused backward
 * kernel, written in numerically stable forms (no exp of a large positive number, no
 * 1 + erf cancellation). Float-valued ops promote int32/bool inputs to float32.
 */
function unary(op: string, x: Tensor, rule: Rule, float = true): Tensor {
  const dt = float ? computeDType(op, [x], true) : requireNumeric(op, computeDType(op, [x]));
  return fused(op, [x], [dt], rule);
}

// Raw ops: forward node and derivative straight from the op table.
export const neg = (x: Tensor) => unary('neg', x, tableRule('neg'), false);
export const exp = (x: Tensor) => unary('exp', x, tableRule('exp'));
export const log = (x: Tensor) => unary('log', x, tableRule('log'));
export const sqrt = (x: Tensor) => unary('sqrt', x, tableRule('sqrt'));
export const rsqrt = (x: Tensor) =>
  unary('rsqrt', x, {
    fwd: ([a]) => E.recip(E.sqrt(a)),

    grad: (g, _, o) => [E.mul(E.mul(g, E.f(-0.5)), E.mul(o, X.sq(o)))],
  });
/** |x|; the gradient at 0 is 0 (the subgradient PyTorch picks). */
export const abs = (x: Tensor) => unary('abs', x, tableRule('abs'), false);
export const sin = (x: Tensor) => unary('sin', x, tableRule('sin'));
export const cos = (x: Tensor) => unary('cos', x, tableRule('cos'));
export const tanh = (x: Tensor) => unary('tanh', x, tableRule('tanh'));

export const sigmoid = (x: Tensor) =>
  unary('sigmoid', x, {
    fwd: ([a]) => X.sigmoid(a),

    grad: (g, _, o) => [E.mul(E.mul(g, o), E.sub(X.one, o))],
  });

/**
 * max(x, 0); the gradient at 0 is 0. The mask reads the output (y > 0 exactly where x > 0), so
 * a matmul feeding relu never needs its pre-activation kept (fusion pass, fusion/fold.ts).
 */
const reluRule = (dt: 'float32' | 'int32'): Rule => ({
  fwd: ([a]) => E.max(a, E.c(0, dt)),
  grad: (g, _, o) => [E.where(E.lt(X.zero, o), g, X.zero)],
});
// Rules are module constants so the fusion pass's plan cache (fusion/fold.ts) hits.
const RELU_F = reluRule('float32'),
  RELU_I = reluRule('int32');
export const relu = (x: Tensor) => unary('relu', x, x.dtype === 'float32' ? RELU_F : RELU_I, false);

export function leakyRelu(x: Tensor, slope: number): Tensor {
  if (typeof slope !== 'number') throw new ValueError(`leakyRelu: negativeSlope must be a number; got ${typeof slope}`);
  const s = E.f(slope);
  return unary('leakyRelu', x, {
    fwd: ([a]) => E.where(E.lt(X.zero, a), a, E.mul(a, s)),
    grad: (g, [a]) => [E.where(E.lt(X.zero, a), g, E.mul(g, s))],
  });
}

const SQRT_2_OVER_PI = Math.sqrt(2 / Math.PI);
const INV_SQRT_2PI = 1 / Math.sqrt(2 * Math.PI);

/**
 * PyTorch's gelu. 'none': x·Φ(x) = ½x(1 + erf(x/√2)) with the raw erf; 'tanh':
 * ½x(1 + tanh(k)), k = √(2/π)(x + 0.044715x³), computed as x·σ(2k), which never overflows.
 */
export function gelu(x: Tensor, approximate: 'none' | 'tanh' = 'none'): Tensor {
  if (approximate === 'tanh') {
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
  if (approximate !== 'none')
    throw new ValueError(`gelu: approximate must be 'none' or 'tanh'; got ${JSON.stringify(approximate)}`);
  const cdf = (a: Expr) => E.mul(X.half, E.add(X.one, E.erf(E.mul(a, E.f(Math.SQRT1_2)))));
  return unary('gelu', x, {
    fwd: ([a]) => E.mul(a, cdf(a)),
    // d/dx xΦ(x) = Φ(x) + x·φ(x)
    grad: (g, [a]) => [E.mul(g, E.add(cdf(a), E.mul(a, E.mul(E.f(INV_SQRT_2PI), E.exp(E.mul(E.f(-0.5), X.sq(a)))))))],
  });
}

/** x·σ(x) (swish); its gradient is derived from the op table's rules. */
export const silu = (x: Tensor) =>
  unary(
    'silu',
    x,
    derivedRule(([a]) => E.mul(a, X.sigmoid(a))),
  );

/** log(1 + e^{βx})/β as max(βx, 0) + log1p(e^{-|βx|}), divided by β (no 1 + tiny rounding to 1); gradient σ(βx). */
export function softplus(x: Tensor, beta: number): Tensor {
  if (typeof beta !== 'number' || !(beta > 0))
    throw new ValueError(`softplus: beta must be a positive number; got ${beta}`);
  const b = E.f(beta);
  return unary('softplus', x, {
    fwd: ([a]) => {
      const z = E.mul(a, b);
      return E.div(E.add(E.max(z, X.zero), E.log1p(E.exp(E.neg(X.abs(z))))), b);
    },
    grad: (g, [a]) => [E.mul(g, X.sigmoid(E.mul(a, b)))],
  });
}
