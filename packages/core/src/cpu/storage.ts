import type { Backend, Storage } from '../backend';
import { DType, TypedArray } from '../dtype';
import { BackendError, DisposedError } from '../errors';

export class CpuStorage implements Storage {
  private _data: TypedArray | null;
  constructor(
    readonly backend: Backend,
    readonly dtype: DType,
    data: TypedArray,
  ) {
    this._data = data;
  }
  get size(): number {
    return this._data ? this._data.length : 0;
  }
  get disposed(): boolean {
    return this._data === null;
  }
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

// allocation failures as BackendErrors naming the op, shape and bytes asked for.
const ITEM_BYTES: Record<DType, number> = { float32: 4, int32: 4, bool: 1 };

/**
 * A typed array for a new CPU storage from `take` (the array pool). A size the JS engine
 * cannot allocate (RangeError: "Invalid typed array length", or "Array buffer allocation
 * failed") becomes a BackendError naming the op, the shape and the bytes, as on WebGPU.
 */
export function allocate(
  take: (dtype: DType, size: number) => TypedArray,
  op: string,
  dtype: DType,
  shape: readonly number[],
): TypedArray {
  const size = shape.reduce((a, b) => a * b, 1);
  try {
    return take(dtype, size);
  } catch (e) {
    if (!(e instanceof RangeError)) throw e;
    const bytes = size * ITEM_BYTES[dtype];
    throw new BackendError(
      `cpu ${op}: cannot allocate ${dtype} [${shape.join(',')}] (${bytes.toLocaleString('en-US')} bytes): ${e.message}`,
    );
  }
}
