import { E, Expr } from '@surf/core';
import { Tensor } from '../tensor';
import { fused } from './fuse';

/**
 * Binary cross-entropy's elementwise terms −(y·log x + (1 − y)·log(1 − x)), each log clamped
 * at −100, with PyTorch's gradients: in x, (x − y) / max((1 − x)·x, 1e-12), finite at x = 0
 * or 1 where the chain rule through the clamp gave 0·∞ = NaN; in y, log(1 − x) − log(x)
 * (unclamped, as PyTorch's: ±∞ at the ends).
 */
const EPS = 1e-12;
// A select, not max: NaN stays NaN on every backend.
const clampLog = (v: Expr) => {
  const l = E.log(v);
  return E.where(E.lt(l, E.f(-100)), E.f(-100), l);
};

export function binaryCrossEntropyTerms(input: Tensor, target: Tensor): Tensor {
  return fused('binaryCrossEntropy', [input, target], ['float32', 'float32'], {
    fwd: ([x, y]) => E.neg(E.add(E.mul(y, clampLog(x)), E.mul(E.sub(E.f(1), y), clampLog(E.sub(E.f(1), x))))),
    grad: (g, [x, y]) => [
      E.mul(g, E.div(E.sub(x, y), E.max(E.mul(E.sub(E.f(1), x), x), E.f(EPS)))),
      E.mul(g, E.sub(E.log(E.sub(E.f(1), x)), E.log(x))),
    ],
  });
}
