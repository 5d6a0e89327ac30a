import { NDArray, ShapeError, ValueError, fmtShape, parseOptions } from '@surf/core';
import { Tensor, keep, nextSeed } from '@surf/autograd';
import { batchCount, batchIndices, permutation } from './batches';
import { TensorDataset } from './dataset';

export interface DataLoaderOptions {
  batchSize: number;
  /** Reshuffle the rows every epoch (seeded). Default false. */
  shuffle?: boolean;
  /**
   * Seed of the shuffles: epoch e uses the permutation of seed `${seed}:${e}`. Default: drawn
   * from the global seed when the loader is made, so manualSeed() fixes the order.
   */
  seed?: number | string;
  /** Leave out a last batch shorter than batchSize. Default false. */
  dropLast?: boolean;
}

/**
 * Batches over tensors that already live on the device (uploaded once, e.g. with tensor()).
 * Each batch is gathered there: only the batch's int32 row index (batchSize × 4 bytes)
 * is uploaded, and without shuffling not even that (a batch is then a view of a row range).
 *
 * Iterating runs one epoch and yields one tensor per dataset tensor (`[x, y]`). A batch lives
 * until the iterator moves on: the loader disposes it then (and when the loop ends or breaks),
 * so a training loop does not leak; clone() a batch to keep it.
 */
export class DataLoader<T extends readonly Tensor[] = Tensor[]> implements Iterable<T> {
  readonly tensors: T;
  /** The dataset's rows in `tensors` (a Subset from randomSplit), or null for all of them. */
  readonly rows: Int32Array | null;
  readonly batchSize: number;
  readonly shuffle: boolean;
  readonly seed: number | string;
  readonly dropLast: boolean;
  /** Epochs started so far (the next one uses this number in its shuffle seed). */
  epoch = 0;

  /**
   * Over a TensorDataset (or a Subset of one), an array of tensors (`[x, y]`: batches are then
   * typed as that tuple), or one tensor.
   */
  constructor(data: TensorDataset<T> | readonly [...T] | Tensor, opts: DataLoaderOptions) {
    parseOptions<DataLoaderOptions>('DataLoader', opts, {
      batchSize: 'posint',
      shuffle: 'boolean',
      seed: 'any',
      dropLast: 'boolean',
    });
    const ds = data instanceof TensorDataset ? data : null;
    const list = ds ? ds.tensors.slice() : data instanceof Tensor ? [data] : Array.isArray(data) ? data.slice() : null;
    if (!list || list.length === 0 || !list.every((t) => t instanceof Tensor))
      throw new ValueError('DataLoader: expected a tensor or a non-empty array of tensors (or a TensorDataset)');
    const n = list[0].ndim > 0 ? list[0].shape[0] : -1;
    list.forEach((t, i) => {
      if (t.ndim === 0 || t.shape[0] !== n) {
        throw new ShapeError(
          `DataLoader: tensor ${i} has shape ${fmtShape(t.shape)}; every tensor needs the same first dim (rows), here ${n < 0 ? 'at least 1-d' : n}`,
        );
      }
    });
    if (!opts || !(Number.isInteger(opts.batchSize) && opts.batchSize > 0))
      throw new ValueError(`DataLoader: batchSize must be a positive integer; got ${opts?.batchSize}`);
    this.rows = ds?.indices ?? null;
    this.tensors = list as unknown as T;
    this.batchSize = opts.batchSize;
    this.shuffle = opts.shuffle ?? false;
    this.seed = opts.seed ?? (this.shuffle ? nextSeed() : 0);
    this.dropLast = opts.dropLast ?? false;
  }

  /** Rows in the dataset. */
  get size(): number {
    return this.rows ? this.rows.length : this.tensors[0].shape[0];
  }

  /** Batches per epoch. */
  get length(): number {
    return batchCount(this.size, this.batchSize, this.dropLast);
  }

  /** The row order of epoch e. */
  order(e: number): Int32Array {
    if (this.shuffle) return permutation(this.size, `${this.seed}:${e}`);
    return Int32Array.from({ length: this.size }, (_, i) => i);
  }

  private batch(order: Int32Array): T {
    // Batches are owned by the loader (disposed when it moves on), not by a tidy() scope.
    if (!this.shuffle && !this.rows) {
      return this.tensors.map((t) => keep(t.narrow(0, order[0], order.length))) as unknown as T;
    }
    const rows = this.rows ? order.map((i) => this.rows![i]) : order;
    const backend = this.tensors[0].ndarray.backend;
    const idx = Tensor.fromNDArray(NDArray.fromData(backend, rows.slice(), [rows.length], 'int32'));
    try {
      return this.tensors.map((t) => keep(t.indexSelect(0, idx))) as unknown as T;
    } finally {
      idx.dispose();
    }
  }

  *[Symbol.iterator](): Iterator<T> {
    const batches = batchIndices(this.order(this.epoch++), this.batchSize, this.dropLast);
    let current: readonly Tensor[] = [];
    try {
      for (const rows of batches) {
        current.forEach((t) => t.dispose());
        const b = this.batch(rows);
        current = b;
        yield b;
      }
    } finally {
      current.forEach((t) => t.dispose());
    }
  }
}
