import { E, Expr, parseOptions } from '@surf/core';
import { Tensor, checkTensor } from '../tensor';
import { Operand, X, fused } from './fuse';
import { checkScalar } from '../dtypes';

export interface IsCloseOptions {
  /** Relative tolerance (default 1e-5, PyTorch's). */
  rtol?: number;
  /** Absolute tolerance (default 1e-8, PyTorch's). */
  atol?: number;
  /** NaN counts as equal to NaN (default false). */
  equalNan?: boolean;
}

const SPEC = { rtol: 'nonnegative', atol: 'nonnegative', equalNan: 'boolean' } as const;
const FLT_MAX = 3.4028234663852886e38;

/**
 * torch.isclose: |a − b| <= atol + rtol·|b| elementwise (not symmetric: b is the reference),
 * computed in float32 after broadcasting. Infinities are close only to themselves (an infinite
 * b does not make every finite a close), NaN only with equalNan. One fused kernel.
 */
export function isclose(a: Tensor, b: Operand, opts: IsCloseOptions = {}): Tensor {
  checkTensor('isclose', a, 'input');
  if (!(b instanceof Tensor)) checkScalar('isclose', b);
  const o = parseOptions<IsCloseOptions>('isclose', opts, SPEC);
  const rtol = o.rtol ?? 1e-5;
  const atol = o.atol ?? 1e-8;
  const equalNan = o.equalNan ?? false;
  const finite = (v: Expr) => X.and(E.eq(v, v), X.not(E.lt(E.f(FLT_MAX), E.abs(v))));
  return fused('isclose', [a, b], ['float32', 'float32'], {
    fwd: ([x, y]) => {
      const near = X.not(E.lt(E.add(E.f(atol), E.mul(E.f(rtol), E.abs(y))), E.abs(E.sub(x, y))));
      let r = X.or(E.eq(x, y), X.and(X.and(finite(x), finite(y)), near));
      if (equalNan) r = X.or(r, X.and(X.not(E.eq(x, x)), X.not(E.eq(y, y))));
      return r;
    },
  });
}

/**
 * torch.allclose: true when every element of isclose(a, b) is. It reads one value back, so
 * it returns a Promise (await it), unlike PyTorch's plain bool.
 */
export async function allclose(a: Tensor, b: Operand, opts: IsCloseOptions = {}): Promise<boolean> {
  const c = isclose(a, b, opts);
  const all = c.all();
  c.dispose();
  try {
    const v = await all.item();
    return v !== 0;
  } finally {
    all.dispose();
  }
}
