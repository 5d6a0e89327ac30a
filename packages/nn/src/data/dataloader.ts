import { NDArray, ShapeError, ValueError, fmtShape, parseOptions } from '@surf/core';
import { Tensor, keep, nextSeed } from '@surf/autograd';
import { batchCount, batchIndices, permutation } from './batches';
import { TensorDataset } from './dataset';

/** DataLoader.state(): where a loader is, as plain JSON. */
export interface DataLoaderState {
  /** The epoch of the next batch. */
  epoch: number;
  /** Batches of that epoch already yielded. */
  batch: number;
  /** The shuffles' seed. */
  seed: number | string;
}

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
  /** The shuffles' seed (loadState may replace it). */
  seed: number | string;
  readonly dropLast: boolean;
  /** Epochs started so far (the next one uses this number in its shuffle seed). */
  epoch = 0;
  /** Where the batch last yielded leaves the stream: [epoch, batches of it yielded]. */
  private position: [number, number] | null = null;
  /** Batches the next epoch skips (set by loadState to resume mid-epoch). */
  private skip = 0;

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

  /**
   * The loader's position, to save with a checkpoint (JSON-safe): the epoch and how many of its
   * batches were yielded, and the shuffle seed. A loader given it by loadState() yields the
   * batch that would have come next here.
   */
  state(): DataLoaderState {
    const [epoch, batch] = this.position ?? [this.epoch, 0];
    return batch >= this.length ? { epoch: epoch + 1, batch: 0, seed: this.seed } : { epoch, batch, seed: this.seed };
  }

  /** Continues from a state() of a loader over the same data: the next loop resumes mid-epoch. */
  loadState(state: DataLoaderState): void {
    const s = parseOptions<DataLoaderState>('DataLoader.loadState', state, {
      epoch: 'nonnegint',
      batch: 'nonnegint',
      seed: (v, where) => {
        if (typeof v !== 'number' && typeof v !== 'string')
          throw new ValueError(`${where} is ${typeof v}; expected the number or string state() gave`);
      },
    });
    if (s.epoch === undefined || s.batch === undefined || s.seed === undefined)
      throw new ValueError('DataLoader.loadState: expected { epoch, batch, seed } as state() returns');
    if (s.batch > this.length)
      throw new ValueError(
        `DataLoader.loadState: batch ${s.batch} is past the ${this.length} batches of an epoch; is this loader over other data?`,
      );
    // A finished epoch resumes at the start of the next one, not with an empty loop.
    const done = s.batch === this.length;
    this.seed = s.seed;
    this.epoch = done ? s.epoch + 1 : s.epoch;
    this.skip = done ? 0 : s.batch;
    this.position = [this.epoch, this.skip];
  }

  *[Symbol.iterator](): Iterator<T> {
    const e = this.epoch++;
    const batches = batchIndices(this.order(e), this.batchSize, this.dropLast);
    const skip = this.skip;
    this.skip = 0;
    this.position = [e, skip];
    let current: readonly Tensor[] = [];
    try {
      for (let i = skip; i < batches.length; i++) {
        current.forEach((t) => t.dispose());
        const b = this.batch(batches[i]);
        current = b;
        this.position = [e, i + 1];
        yield b;
      }
      this.position = [e + 1, 0];
    } finally {
      current.forEach((t) => t.dispose());
    }
  }
}
