import { ValueError, parseOptions } from '@surf/core';
import { Dataset } from './map-dataset';
import { defaultCollate } from './collate';
import { BatchSampler, RandomSampler, SequentialSampler } from './samplers';

export interface MapDataLoaderOptions<S, B> {
  /** Samples per batch (default 1, as PyTorch). */
  batchSize?: number;
  /** A RandomSampler over the dataset (default false). */
  shuffle?: boolean;
  /** The index order (excludes shuffle). */
  sampler?: Iterable<number> & { length: number };
  /** Whole batches of indices (excludes batchSize, shuffle, sampler, dropLast). */
  batchSampler?: Iterable<number[]> & { length: number };
  /** Drop a last batch shorter than batchSize (default false). */
  dropLast?: boolean;
  /** Samples to a batch (default defaultCollate: stacks tensors, numbers, nested arrays and objects). */
  collate?: (samples: S[]) => B;
}

/**
 * torch.utils.data.DataLoader over a map-style Dataset of host samples: indices from a sampler,
 * grouped into batches, each batch's samples read with dataset.at(i) and merged by `collate`.
 * Batches are made on the current backend when iterated and owned by the caller (for data
 * already on the device as tensors, the DataLoader gathers faster).
 */
export class MapDataLoader<S = unknown, B = unknown> implements Iterable<B> {
  readonly batchSampler: Iterable<number[]> & { length: number };
  readonly collate: (samples: S[]) => B;

  constructor(
    readonly dataset: Dataset<S>,
    opts: MapDataLoaderOptions<S, B> = {},
  ) {
    const o = parseOptions<MapDataLoaderOptions<S, B>>('MapDataLoader', opts, {
      batchSize: 'posint',
      shuffle: 'boolean',
      sampler: 'object',
      batchSampler: 'object',
      dropLast: 'boolean',
      collate: 'function',
    });
    if (!(dataset instanceof Dataset))
      throw new ValueError('MapDataLoader: expected a map-style Dataset (ArrayDataset, FunctionDataset, ...)');
    if (o.sampler && o.shuffle) throw new ValueError('MapDataLoader: sampler and shuffle exclude each other');
    if (o.batchSampler && (o.batchSize !== undefined || o.shuffle || o.sampler || o.dropLast))
      throw new ValueError('MapDataLoader: batchSampler excludes batchSize, shuffle, sampler and dropLast');
    const sampler: Iterable<number> & { length: number } =
      o.sampler ?? (o.shuffle ? new RandomSampler(dataset) : new SequentialSampler(dataset));
    this.batchSampler = o.batchSampler ?? new BatchSampler(sampler, o.batchSize ?? 1, o.dropLast ?? false);
    this.collate = o.collate ?? (defaultCollate as (s: S[]) => B);
  }

  /** Batches per epoch. */
  get length(): number {
    return this.batchSampler.length;
  }

  *[Symbol.iterator](): Iterator<B> {
    for (const idx of this.batchSampler) yield this.collate(idx.map((i) => this.dataset.at(i)));
  }
}
