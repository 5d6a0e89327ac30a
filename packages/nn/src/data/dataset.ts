import { ShapeError, ValueError, fmtShape, parseOptions } from '@surf/core';
import { Tensor, nextSeed } from '@surf/autograd';
import { permutation } from './batches';
import { Dataset } from './map-dataset';

/**
 * Datasets over tensors that live on the device (torch.utils.data's TensorDataset, Subset and
 * random_split). A dataset is the tensors plus, for a subset, which of their rows it holds;
 * the DataLoader gathers batches from them on the device.
 */
export class TensorDataset<T extends readonly Tensor[] = Tensor[]> {
  readonly tensors: T;

  constructor(...tensors: T) {
    if (tensors.length === 0 || !tensors.every((t) => t instanceof Tensor))
      throw new ValueError('TensorDataset: expected one or more tensors');
    const n = tensors[0].ndim > 0 ? tensors[0].shape[0] : -1;
    tensors.forEach((t, i) => {
      if (t.ndim === 0 || t.shape[0] !== n) {
        throw new ShapeError(
          `TensorDataset: tensor ${i} has shape ${fmtShape(t.shape)}; every tensor needs the same first dim (rows), here ${n < 0 ? 'at least 1-d' : n}`,
        );
      }
    });
    this.tensors = tensors;
  }

  get length(): number {
    return this.tensors[0].shape[0];
  }

  /** Row indices into `tensors` this dataset holds (null: all, in order). */
  get indices(): Int32Array | null {
    return null;
  }

  /** Row i of every tensor (views, no copy), as PyTorch's dataset[i]. */
  at(i: number): { [K in keyof T]: Tensor } {
    if (!Number.isInteger(i) || i < -this.length || i >= this.length)
      throw new ValueError(`${this.constructor.name}.at: index ${i} is out of range for ${this.length} rows`);
    const row = this.row(i < 0 ? i + this.length : i);
    return this.tensors.map((t) => t.narrow(0, row, 1).squeeze(0)) as { [K in keyof T]: Tensor };
  }

  protected row(i: number): number {
    return i;
  }
}

/** Some rows of a dataset, by index (torch's Subset). */
export class Subset<T extends readonly Tensor[] = Tensor[]> extends TensorDataset<T> {
  private readonly rows: Int32Array;

  constructor(
    readonly dataset: TensorDataset<T>,
    indices: ArrayLike<number>,
  ) {
    super(...dataset.tensors);
    const base = dataset.indices;
    const n = dataset.length;
    const rows = new Int32Array(indices.length);
    for (let i = 0; i < indices.length; i++) {
      const k = indices[i];
      if (!Number.isInteger(k) || k < 0 || k >= n)
        throw new ValueError(`Subset: index ${k} is out of range for a dataset of ${n} rows`);
      rows[i] = base ? base[k] : k;
    }
    this.rows = rows;
  }

  override get length(): number {
    return this.rows.length;
  }
  override get indices(): Int32Array {
    return this.rows;
  }
  protected override row(i: number): number {
    return this.rows[i];
  }
}

/**
 * Splits a dataset into non-overlapping random subsets (torch's random_split): lengths are
 * row counts summing to the dataset's length, or fractions summing to 1 (remainders go one
 * row each to the first subsets, as PyTorch). The permutation comes from manualSeed's seed,
 * or from `seed` when given.
 */
export function randomSplit<T extends readonly Tensor[]>(
  dataset: TensorDataset<T>,
  lengths: readonly number[],
  opts?: { seed?: number | string },
): Subset<T>[];
/** A map-style Dataset splits into its subsets the same way. */
export function randomSplit<S>(
  dataset: Dataset<S>,
  lengths: readonly number[],
  opts?: { seed?: number | string },
): Dataset<S>[];
export function randomSplit<T extends readonly Tensor[], S>(
  dataset: TensorDataset<T> | Dataset<S>,
  lengths: readonly number[],
  opts: { seed?: number | string } = {},
): Subset<T>[] | Dataset<S>[] {
  if (!(dataset instanceof TensorDataset) && !(dataset instanceof Dataset))
    throw new ValueError('randomSplit: expected a TensorDataset (new TensorDataset(x, y)) or a map-style Dataset');
  parseOptions('randomSplit', opts, { seed: 'any' });
  if (!Array.isArray(lengths) || lengths.length === 0 || !lengths.every((v) => typeof v === 'number' && v >= 0))
    throw new ValueError(
      `randomSplit: lengths must be a non-empty array of non-negative numbers; got ${JSON.stringify(lengths)}`,
    );
  const n = dataset.length;
  let counts = lengths.slice();
  const fractions =
    counts.every((v) => v <= 1) &&
    Math.abs(counts.reduce((a, b) => a + b, 0) - 1) < 1e-9 &&
    !counts.every(Number.isInteger);
  if (fractions) {
    counts = counts.map((f) => Math.floor(f * n));
    let rest = n - counts.reduce((a, b) => a + b, 0);
    for (let i = 0; rest > 0; i = (i + 1) % counts.length, rest--) counts[i]++;
  }
  if (!counts.every(Number.isInteger) || counts.reduce((a, b) => a + b, 0) !== n) {
    throw new ValueError(
      `randomSplit: lengths ${JSON.stringify(lengths)} do not add up to the dataset's ${n} rows (or fractions to 1)`,
    );
  }
  const order = permutation(n, opts.seed ?? nextSeed());
  const parts: Int32Array[] = [];
  let start = 0;
  for (const c of counts) {
    parts.push(order.subarray(start, start + c));
    start += c;
  }
  return dataset instanceof Dataset ? parts.map((p) => dataset.subset(p)) : parts.map((p) => new Subset(dataset, p));
}
