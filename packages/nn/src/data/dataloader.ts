import { NDArray, ShapeError, ValueError, fmtShape } from '@surf/core';
import { Tensor, keep } from '@surf/autograd';
import { batchCount, batchIndices, permutation } from './batches';
import { checkOptions } from '../options';

export interface DataLoaderOptions {
  batchSize: number;
  /** Reshuffle the rows every epoch (seeded). Default false. */
  shuffle?: boolean;
  /** Seed of the shuffles: epoch e uses the permutation of seed `${seed}:${e}`. Default 0. */
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
export class DataLoader implements Iterable<Tensor[]> {
  readonly tensors: Tensor[];
  readonly batchSize: number;
  readonly shuffle: boolean;
  readonly seed: number | string;
  readonly dropLast: boolean;
  /** Epochs started so far (the next one uses this number in its shuffle seed). */
  epoch = 0;

  constructor(tensors: Tensor | readonly Tensor[], opts: DataLoaderOptions) {
    const list = tensors instanceof Tensor ? [tensors] : Array.isArray(tensors) ? tensors.slice() : null;
    if (!list || list.length === 0 || !list.every((t) => t instanceof Tensor)) throw new ValueError('DataLoader: expected a tensor or a non-empty array of tensors');
    const n = list[0].ndim > 0 ? list[0].shape[0] : -1;
    list.forEach((t, i) => {
      if (t.ndim === 0 || t.shape[0] !== n) {
        throw new ShapeError(`DataLoader: tensor ${i} has shape ${fmtShape(t.shape)}; every tensor needs the same first dim (rows), here ${n < 0 ? 'at least 1-d' : n}`);
      }
    });
    checkOptions('DataLoader', opts, '{ batchSize, shuffle?, seed?, dropLast? }');
    if (!opts || !(Number.isInteger(opts.batchSize) && opts.batchSize > 0)) throw new ValueError(`DataLoader: batchSize must be a positive integer; got ${opts?.batchSize}`);
    this.tensors = list;
    this.batchSize = opts.batchSize;
    this.shuffle = opts.shuffle ?? false;
    this.seed = opts.seed ?? 0;
    this.dropLast = opts.dropLast ?? false;
  }

  /** Rows in the dataset. */
  get size(): number {
    return this.tensors[0].shape[0];
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

  private batch(rows: Int32Array): Tensor[] {
    // Batches are owned by the loader (disposed when it moves on), not by a tidy() scope.
    if (!this.shuffle) {
      return this.tensors.map((t) => keep(t.narrow(0, rows[0], rows.length)));
    }
    const backend = this.tensors[0].ndarray.backend;
    const idx = Tensor.fromNDArray(NDArray.fromData(backend, rows.slice(), [rows.length], 'int32'));
    try {
      return this.tensors.map((t) => keep(t.indexSelect(0, idx)));
    } finally {
      idx.dispose();
    }
  }

  *[Symbol.iterator](): Iterator<Tensor[]> {
    const batches = batchIndices(this.order(this.epoch++), this.batchSize, this.dropLast);
    let current: Tensor[] = [];
    try {
      for (const rows of batches) {
        current.forEach((t) => t.dispose());
        current = this.batch(rows);
        yield current;
      }
    } finally {
      current.forEach((t) => t.dispose());
    }
  }
}
