import { ValueError, randomArray, withDefaults } from '@surf/core';
import { nextSeed } from '@surf/autograd';
import { permutation } from './batches';

/**
 * Samplers (torch.utils.data): iterables of dataset indices, seeded from the global seed
 * (manualSeed) unless given a seed; each epoch (each iteration) draws afresh.
 */
export abstract class Sampler implements Iterable<number> {
  abstract get length(): number;
  abstract [Symbol.iterator](): Iterator<number>;
}

const size = (where: string, n: number | { length: number }): number => {
  const v = typeof n === 'number' ? n : n?.length;
  if (!Number.isInteger(v) || v < 0)
    throw new ValueError(`${where}: expected a dataset or a size >= 0; got ${String(v)}`);
  return v;
};

/** 0, 1, ..., n − 1. */
export class SequentialSampler extends Sampler {
  readonly n: number;
  constructor(data: number | { length: number }) {
    super();
    this.n = size('SequentialSampler', data);
  }
  get length(): number {
    return this.n;
  }
  *[Symbol.iterator](): Iterator<number> {
    for (let i = 0; i < this.n; i++) yield i;
  }
}

/** A fresh permutation per iteration, or numSamples draws with replacement. */
export class RandomSampler extends Sampler {
  readonly n: number;
  readonly replacement: boolean;
  readonly numSamples: number;
  private readonly seed: string | number | undefined;
  private epoch = 0;
  constructor(
    data: number | { length: number },
    opts: { replacement?: boolean; numSamples?: number; seed?: number | string } = {},
  ) {
    super();
    this.n = size('RandomSampler', data);
    const o = withDefaults(
      'RandomSampler',
      opts,
      { replacement: 'boolean', numSamples: 'posint', seed: 'any' },
      { replacement: false, numSamples: this.n, seed: undefined as number | string | undefined },
    );
    this.replacement = o.replacement;
    this.numSamples = o.numSamples;
    this.seed = o.seed;
  }
  get length(): number {
    return this.numSamples;
  }
  private nextSeed(): string | number {
    return this.seed === undefined ? nextSeed() : `${this.seed}:${this.epoch++}`;
  }
  *[Symbol.iterator](): Iterator<number> {
    const seed = this.nextSeed();
    if (this.replacement) {
      const u = randomArray('uniform', this.numSamples, seed);
      for (let i = 0; i < this.numSamples; i++) yield Math.min(this.n - 1, Math.floor(u[i] * this.n));
      return;
    }
    // numSamples beyond n: whole permutations one after another, as PyTorch.
    for (let done = 0, k = 0; done < this.numSamples; k++) {
      const p = permutation(this.n, `${seed}/${k}`);
      for (let i = 0; i < p.length && done < this.numSamples; i++, done++) yield p[i];
    }
  }
}

/** The given indices in a fresh random order each iteration. */
export class SubsetRandomSampler extends Sampler {
  readonly indices: number[];
  constructor(indices: ArrayLike<number>) {
    super();
    this.indices = Array.from(indices);
  }
  get length(): number {
    return this.indices.length;
  }
  *[Symbol.iterator](): Iterator<number> {
    for (const i of permutation(this.indices.length, nextSeed())) yield this.indices[i];
  }
}

/** numSamples indices drawn with probability ∝ weights (with replacement by default). */
export class WeightedRandomSampler extends Sampler {
  readonly weights: Float64Array;
  readonly numSamples: number;
  readonly replacement: boolean;
  constructor(weights: ArrayLike<number>, numSamples: number, opts: { replacement?: boolean } = {}) {
    super();
    this.replacement = withDefaults(
      'WeightedRandomSampler',
      opts,
      { replacement: 'boolean' },
      { replacement: true },
    ).replacement;
    this.weights = Float64Array.from(weights);
    if (
      !this.weights.length ||
      !this.weights.every((w) => w >= 0 && Number.isFinite(w)) ||
      !this.weights.some((w) => w > 0)
    )
      throw new ValueError('WeightedRandomSampler: weights must be finite, >= 0 and not all zero');
    if (!Number.isInteger(numSamples) || numSamples < 1)
      throw new ValueError(`WeightedRandomSampler: numSamples must be a positive integer; got ${numSamples}`);
    if (!this.replacement && numSamples > this.weights.filter((w) => w > 0).length)
      throw new ValueError('WeightedRandomSampler: without replacement, numSamples cannot exceed the nonzero weights');
    this.numSamples = numSamples;
  }
  get length(): number {
    return this.numSamples;
  }
  *[Symbol.iterator](): Iterator<number> {
    const w = this.weights.slice();
    const u = randomArray('uniform', this.numSamples, nextSeed());
    for (let k = 0; k < this.numSamples; k++) {
      let total = 0;
      for (const v of w) total += v;
      let r = u[k] * total,
        i = 0;
      while (i < w.length - 1 && (r >= w[i] || w[i] === 0)) r -= w[i++];
      while (w[i] === 0) i--; // rounding past the end lands on the last nonzero weight
      if (!this.replacement) w[i] = 0;
      yield i;
    }
  }
}

/** Groups another sampler's indices into batches (PyTorch's BatchSampler). */
export class BatchSampler implements Iterable<number[]> {
  constructor(
    readonly sampler: Iterable<number> & { length: number },
    readonly batchSize: number,
    readonly dropLast = false,
  ) {
    if (!Number.isInteger(batchSize) || batchSize < 1)
      throw new ValueError(`BatchSampler: batchSize must be a positive integer; got ${batchSize}`);
    if (typeof dropLast !== 'boolean') throw new ValueError('BatchSampler: dropLast must be a boolean');
  }
  get length(): number {
    const n = this.sampler.length;
    return this.dropLast ? Math.floor(n / this.batchSize) : Math.ceil(n / this.batchSize);
  }
  *[Symbol.iterator](): Iterator<number[]> {
    let b: number[] = [];
    for (const i of this.sampler) {
      b.push(i);
      if (b.length === this.batchSize) {
        yield b;
        b = [];
      }
    }
    if (b.length && !this.dropLast) yield b;
  }
}
