import type { PooledBuffer } from '../../pool';

/** A pool input or gradient [N, C, H, W]: its buffer, offset and strides. */
export interface PoolOperand {
  buf: PooledBuffer;
  offset: number;
  strides: readonly number[];
}
