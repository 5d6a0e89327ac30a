import { DType, DTypeError, typeErr } from '@surf/core';

/**
 * Type promotion, PyTorch's rule reduced to Surf's three dtypes: bool < int32 < float32, and
 * an op computes in the highest category among its operands, where a JS number counts as
 * int32 when it is an integer and float32 otherwise, and a JS boolean as bool. So
 * int32 tensor + 0.5 is float32, int32 tensor + 2 stays int32, float32 + anything is float32.
 * Ops that only make sense in floats (div, exp, log, sigmoid, mean, softmax, ...) promote
 * int32 and bool inputs to float32, as PyTorch's true division does.
 */
const RANK: Record<DType, number> = { bool: 0, int32: 1, float32: 2 };

export type Scalar = number | boolean;

export function scalarDType(v: Scalar): DType {
  if (typeof v === 'boolean') return 'bool';
  return Number.isInteger(v) ? 'int32' : 'float32';
}

export function promoteTypes(...dts: DType[]): DType {
  let best: DType = 'bool';
  for (const d of dts) if (RANK[d] > RANK[best]) best = d;
  return best;
}

export function checkScalar(op: string, v: unknown): Scalar {
  if (typeof v === 'number' || typeof v === 'boolean') return v;
  throw typeErr(op, 'an operand', 'a Tensor, a number or a boolean', v);
}

/** Arithmetic ops (neg, abs, relu, maximum, ...) take float32 or int32, never bool. */
export function requireNumeric(op: string, dtype: DType): DType {
  if (dtype === 'bool') throw new DTypeError(`${op}: got dtype bool; expected float32 or int32 (cast first)`);
  return dtype;
}

export function requireFloat(op: string, dtype: DType): void {
  if (dtype !== 'float32')
    throw new DTypeError(
      `${op}: got dtype ${dtype}; expected float32 (only floating-point tensors can require gradients)`,
    );
}
