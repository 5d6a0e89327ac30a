import { DTypeError, E } from '@surf/core';
import { Tensor } from '../tensor';
import { Operand, computeDType, fused } from './fuse';

/**
 * bitwiseAnd / Or / Xor: the raw and/or/xor ops, on int32 (two's-complement bits) or bool
 * (logical) operands, as torch.bitwise_*. Not differentiable; float operands are an error.
 */
function bitwise(
  op: 'bitwiseAnd' | 'bitwiseOr' | 'bitwiseXor',
  raw: 'and' | 'or' | 'xor',
  a: Tensor,
  b: Operand,
): Tensor {
  const dt = computeDType(op, [a, b]);
  if (dt === 'float32')
    throw new DTypeError(
      `${op}: got dtype float32; expected int32 or bool operands (JS numbers must be integers or booleans)`,
    );
  return fused(op, [a, b], [dt, dt], { fwd: ([x, y]) => E.bin(raw, x, y) });
}

export const bitwiseAnd = (a: Tensor, b: Operand) => bitwise('bitwiseAnd', 'and', a, b);
export const bitwiseOr = (a: Tensor, b: Operand) => bitwise('bitwiseOr', 'or', a, b);
export const bitwiseXor = (a: Tensor, b: Operand) => bitwise('bitwiseXor', 'xor', a, b);
