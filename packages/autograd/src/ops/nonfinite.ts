import { E, Expr, parseOptions } from '@surf/core';
import { Tensor, checkTensor } from '../tensor';
import { X, fused } from './fuse';

/**
 * isnan, isinf, isfinite and nanToNum: one fused kernel each, built from comparisons the op
 * table already has (x ≠ x is NaN; |x| > FLT_MAX is ±inf), so no backend needs a new spelling.
 * Integer and bool tensors hold no NaN or infinity: isfinite is all true, the others false.
 */
export const FLT_MAX = 3.4028234663852886e38;

const isNanE = (x: Expr): Expr => X.not(E.eq(x, x));
const isInfE = (x: Expr): Expr => E.lt(E.f(FLT_MAX), E.abs(x));

function predicate(op: string, x: Tensor, f: (x: Expr) => Expr, nonFloat: boolean): Tensor {
  checkTensor(op, x, 'input');
  if (x.dtype === 'float32') return fused(op, [x], ['float32'], { fwd: ([v]) => f(v) });
  // x = x holds for every integer: true; its negation is false (same shape, one kernel).
  return fused(op, [x], [x.dtype], { fwd: ([v]) => (nonFloat ? E.eq(v, v) : isNanE(v)) });
}

/** torch.isnan: a bool tensor, true where x is NaN. */
export const isnan = (x: Tensor): Tensor => predicate('isnan', x, isNanE, false);
/** torch.isinf: true where x is +inf or -inf. */
export const isinf = (x: Tensor): Tensor => predicate('isinf', x, isInfE, false);
/** torch.isfinite: true where x is neither NaN nor ±inf. */
export const isfinite = (x: Tensor): Tensor =>
  predicate('isfinite', x, (v) => X.and(E.eq(v, v), X.not(isInfE(v))), true);

export interface NanToNumOptions {
  /** What NaN becomes (default 0). */
  nan?: number;
  /** What +inf becomes (default the largest float32, 3.4028e38). */
  posinf?: number;
  /** What -inf becomes (default the lowest float32, -3.4028e38). */
  neginf?: number;
}

/**
 * torch.nan_to_num: NaN, +inf and -inf replaced (defaults 0 and ±FLT_MAX, as PyTorch for
 * float32). The gradient passes where x is finite and is 0 at the replaced elements.
 * Integer and bool tensors come back unchanged (a copy).
 */
export function nanToNum(x: Tensor, opts: NanToNumOptions = {}): Tensor {
  checkTensor('nanToNum', x, 'input');
  const o = parseOptions<NanToNumOptions>('nanToNum', opts, { nan: 'number', posinf: 'number', neginf: 'number' });
  const nan = o.nan ?? 0;
  const pos = o.posinf ?? FLT_MAX;
  const neg = o.neginf ?? -FLT_MAX;
  if (x.dtype !== 'float32') return fused('nanToNum', [x], [x.dtype], { fwd: ([v]) => v });
  return fused('nanToNum', [x], ['float32'], {
    fwd: ([v]) =>
      E.where(
        isNanE(v),
        E.f(nan),
        E.where(E.lt(E.f(FLT_MAX), v), E.f(pos), E.where(E.lt(v, E.f(-FLT_MAX)), E.f(neg), v)),
      ),
    grad: (g, [v]) => [E.where(X.and(E.eq(v, v), X.not(isInfE(v))), g, X.zero)],
  });
}
