import type { Backend, Storage } from '../backend';
import { DType, TypedArray } from '../dtype';
import { DisposedError } from '../errors';

export class CpuStorage implements Storage {
  private _data: TypedArray | null;
  constructor(readonly backend: Backend, readonly dtype: DType, data: TypedArray) {
    this._data = data;
  }
  get size(): number { return this._data ? this._data.length : 0; }
  get disposed(): boolean { return this._data === null; }
  get data(): TypedArray {
    if (!this._data) throw new DisposedError('cpu: storage was used after dispose()');
    return this._data;
  }
  // jit: Backend.adopt swaps the array in
  /** Replaces the data with `data`; returns the array it held (null if already freed). */
  swap(data: TypedArray): TypedArray | null {
    const d = this._data;
    this._data = data;
    return d;
  }

  /** Drops the data; returns the array it held (null if already freed). */
  free(): TypedArray | null {
    const d = this._data;
    this._data = null;
    return d;
  }
}
