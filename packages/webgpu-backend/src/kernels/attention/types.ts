import type { PooledBuffer } from '../../pool';

/** A q, k, v, mask or gradient operand: its buffer, offset and strides. */
export interface AttnOperand {
  buf: PooledBuffer;
  offset: number;
  /** Strides of the batch dims, then the row stride, then (except 1-d rows) the column stride. */
  strides: readonly number[];
}

export interface AttnDims {
  batch: readonly number[];
  L: number;
  S: number;
  E: number;
  Ev: number;
}
