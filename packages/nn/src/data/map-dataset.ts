import { ValueError } from '@surf/core';

/**
 * Map-style datasets over host data (torch.utils.data.Dataset): `length` samples, sample i from
 * `at(i)`. A sample is anything the collate function understands: numbers, typed arrays,
 * tensors, and arrays or objects of those. The MapDataLoader batches them.
 */
export abstract class Dataset<S = unknown> {
  abstract get length(): number;
  abstract at(i: number): S;

  /** The samples at `indices`, in that order (PyTorch's Subset). */
  subset(indices: ArrayLike<number>): Dataset<S> {
    return new SubsetOf(this, indices);
  }
}

/** A dataset over an array of samples (or any array-like). */
export class ArrayDataset<S> extends Dataset<S> {
  constructor(readonly samples: ArrayLike<S>) {
    super();
    if (samples === null || typeof samples !== 'object' || typeof samples.length !== 'number')
      throw new ValueError('ArrayDataset: expected an array of samples');
  }
  get length(): number {
    return this.samples.length;
  }
  at(i: number): S {
    checkIndex('ArrayDataset', i, this.length);
    return this.samples[i];
  }
}

/** A dataset whose sample i is `get(i)`, for data made on demand (e.g. read from files). */
export class FunctionDataset<S> extends Dataset<S> {
  constructor(
    readonly size: number,
    readonly get: (i: number) => S,
  ) {
    super();
    if (!Number.isInteger(size) || size < 0)
      throw new ValueError(`FunctionDataset: size must be an integer >= 0; got ${size}`);
    if (typeof get !== 'function') throw new ValueError('FunctionDataset: get must be a function of the index');
  }
  get length(): number {
    return this.size;
  }
  at(i: number): S {
    checkIndex('FunctionDataset', i, this.size);
    return this.get(i);
  }
}

/** Datasets one after another (PyTorch's ConcatDataset). */
export class ConcatDataset<S> extends Dataset<S> {
  readonly datasets: Dataset<S>[];
  constructor(datasets: readonly Dataset<S>[]) {
    super();
    if (!Array.isArray(datasets) || !datasets.length || !datasets.every((d) => d instanceof Dataset))
      throw new ValueError('ConcatDataset: expected a non-empty array of datasets');
    this.datasets = [...datasets];
  }
  get length(): number {
    return this.datasets.reduce((a, d) => a + d.length, 0);
  }
  at(i: number): S {
    checkIndex('ConcatDataset', i, this.length);
    for (const d of this.datasets) {
      if (i < d.length) return d.at(i);
      i -= d.length;
    }
    throw new ValueError('ConcatDataset: unreachable');
  }
}

class SubsetOf<S> extends Dataset<S> {
  readonly indices: Int32Array;
  constructor(
    readonly dataset: Dataset<S>,
    indices: ArrayLike<number>,
  ) {
    super();
    this.indices = Int32Array.from(indices as ArrayLike<number>, (k) => {
      if (!Number.isInteger(k) || k < 0 || k >= dataset.length)
        throw new ValueError(`Dataset.subset: index ${k} is out of range for a dataset of ${dataset.length} samples`);
      return k;
    });
  }
  get length(): number {
    return this.indices.length;
  }
  at(i: number): S {
    checkIndex('Subset', i, this.indices.length);
    return this.dataset.at(this.indices[i]);
  }
}

function checkIndex(where: string, i: number, n: number): void {
  if (!Number.isInteger(i) || i < 0 || i >= n)
    throw new ValueError(`${where}.at: index ${i} is out of range for ${n} samples`);
}
