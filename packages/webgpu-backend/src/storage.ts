import type { Backend, DType, Storage } from '@surf/core';
import type { PooledBuffer } from './pool';

/** A tensor's flat buffer on the GPU. bool is stored as u32 0/1. */
export class GPUStorage implements Storage {
  buf: PooledBuffer | null;
  constructor(
    readonly backend: Backend,
    readonly dtype: DType,
    readonly size: number,
    buf: PooledBuffer,
  ) {
    this.buf = buf;
  }
  get disposed(): boolean {
    return this.buf === null;
  }
}
