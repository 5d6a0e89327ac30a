import { E, ValueError } from '@surf/core';
import { requireNumeric } from '../dtypes';
import { Tensor } from '../tensor';
import { computeDType, fused, tableRule } from './fuse';

/**
 * floor, ceil, round (half to even), trunc and sign: raw ops whose gradient is 0 almost
 * everywhere (the table's rows say so; PyTorch gives 0 too). On int32 the four rounding ops
 * return the values unchanged, as PyTorch does; sign works on int32 as well.
 */
type RoundOp = 'floor' | 'ceil' | 'round' | 'trunc';

function rounding(op: RoundOp, x: Tensor): Tensor {
  const dt = requireNumeric(op, computeDType(op, [x]));
  // A copy, not an alias: in-place ops on the result must not reach x.
  if (dt === 'int32') return fused(op, [x], [dt], { fwd: ([a]) => a });
  return fused(op, [x], [dt], tableRule(op));
}

export const floor = (x: Tensor) => rounding('floor', x);
export const ceil = (x: Tensor) => rounding('ceil', x);
export const trunc = (x: Tensor) => rounding('trunc', x);

/**
 * Round half to even; with `decimals`, to that many decimal places (negative: tens,
 * hundreds, ...) as round(x·10^d)/10^d, PyTorch's formula.
 */
export function round(x: Tensor, decimals = 0): Tensor {
  if (!Number.isInteger(decimals)) throw new ValueError(`round: decimals must be an integer; got ${decimals}`);
  if (decimals === 0) return rounding('round', x);
  const dt = requireNumeric('round', computeDType('round', [x]));
  if (dt === 'int32') return rounding('round', x.float()).int();
  const p = E.f(10 ** Math.abs(decimals));
  return fused('round', [x], [dt], {
    fwd: ([a]) => (decimals > 0 ? E.div(E.round(E.mul(a, p)), p) : E.mul(E.round(E.div(a, p)), p)),
    grad: () => [E.f(0)],
  });
}

/** -1, 0 or 1 by the sign of x (sign(NaN) = 0, as PyTorch). */
export function sign(x: Tensor): Tensor {
  const dt = requireNumeric('sign', computeDType('sign', [x]));
  return fused('sign', [x], [dt], tableRule('sign'));
}
