import type { DType } from '@surf/core';
import type { PooledBuffer } from '../../pool';

/** An elementwise input as the kernels read it: buffer, dtype, offset, strides and view mask. */
export interface EwInput {
  buf: PooledBuffer;
  dtype: DType;
  offset: number;
  strides: readonly number[];
  mask: readonly (readonly [number, number])[] | null;
}
