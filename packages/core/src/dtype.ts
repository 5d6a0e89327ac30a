import { DTypeError } from './errors';

/** float32 computes; int32 holds indices and labels; bool holds comparison results (stored 0/1). */
export type DType = 'float32' | 'int32' | 'bool';

export const DTYPES: readonly DType[] = ['float32', 'int32', 'bool'];

export type TypedArray = Float32Array | Int32Array | Uint8Array;

/** The typed array a dtype reads back as: bool is a Uint8Array of 0/1. */
export function arrayFor(dtype: DType, size: number): TypedArray {
  switch (dtype) {
    case 'float32':
      return new Float32Array(size);
    case 'int32':
      return new Int32Array(size);
    case 'bool':
      return new Uint8Array(size);
  }
}

export function dtypeOfArray(a: TypedArray): DType {
  if (a instanceof Float32Array) return 'float32';
  if (a instanceof Int32Array) return 'int32';
  if (a instanceof Uint8Array) return 'bool';
  throw new DTypeError(
    `dtypeOfArray: unsupported typed array ${(a as object).constructor?.name}; expected Float32Array, Int32Array or Uint8Array`,
  );
}

export function assertDType(op: string, d: unknown): DType {
  if (d === 'float32' || d === 'int32' || d === 'bool') return d;
  throw new DTypeError(`${op}: unknown dtype ${JSON.stringify(d)}; expected one of ${DTYPES.join(', ')}`);
}

/** Converts a JS number to what a dtype stores, as a cast would (float→int truncates toward zero). */
export function castScalar(v: number, to: DType): number {
  if (to === 'float32') return Math.fround(v);
  // As in PyTorch and C, NaN is truthy.
  if (to === 'bool') return v !== 0 ? 1 : 0;
  if (!Number.isFinite(v)) return Number.isNaN(v) ? 0 : v > 0 ? 2147483647 : -2147483648;
  return Math.max(-2147483648, Math.min(2147483647, Math.trunc(v))) | 0;
}
