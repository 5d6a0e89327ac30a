import { ValueError, withDefaults } from '@surf/core';
import { BaseOptions, Optimizer } from './optimizer';
import { LRScheduler } from './schedulers';

/** More of PyTorch's schedules, each a closed form of the step count t. */

const posint = 'posint' as const;

/** lr = base·γᵗ. */
export class ExponentialLR extends LRScheduler {
  readonly gamma: number;
  constructor(optimizer: Optimizer<BaseOptions>, opts: { gamma: number }) {
    super(optimizer);
    const o = withDefaults('ExponentialLR', opts, { gamma: 'nonnegative' }, { gamma: NaN });
    if (Number.isNaN(o.gamma)) throw new ValueError('ExponentialLR: gamma is required, e.g. { gamma: 0.9 }');
    this.gamma = o.gamma;
    this.apply();
  }
  lrAt(i: number, t: number): number {
    return this.baseLrs[i] * Math.pow(this.gamma, t);
  }
}

/** lr = base·(start + (end − start)·min(t, totalIters)/totalIters) (defaults 1/3, 1, 5). */
export class LinearLR extends LRScheduler {
  readonly startFactor: number;
  readonly endFactor: number;
  readonly totalIters: number;
  constructor(
    optimizer: Optimizer<BaseOptions>,
    opts: { startFactor?: number; endFactor?: number; totalIters?: number } = {},
  ) {
    super(optimizer);
    const o = withDefaults(
      'LinearLR',
      opts,
      { startFactor: 'positive', endFactor: 'nonnegative', totalIters: posint },
      { startFactor: 1 / 3, endFactor: 1, totalIters: 5 },
    );
    if (o.startFactor > 1 || o.endFactor > 1)
      throw new ValueError(
        `LinearLR: startFactor and endFactor must be in (0, 1] and [0, 1]; got ${o.startFactor}, ${o.endFactor}`,
      );
    this.startFactor = o.startFactor;
    this.endFactor = o.endFactor;
    this.totalIters = o.totalIters;
    this.apply();
  }
  lrAt(i: number, t: number): number {
    const f = this.startFactor + ((this.endFactor - this.startFactor) * Math.min(t, this.totalIters)) / this.totalIters;
    return this.baseLrs[i] * f;
  }
}

/** lr = base·factor for t < totalIters, then base (defaults 1/3, 5). */
export class ConstantLR extends LRScheduler {
  readonly factor: number;
  readonly totalIters: number;
  constructor(optimizer: Optimizer<BaseOptions>, opts: { factor?: number; totalIters?: number } = {}) {
    super(optimizer);
    const o = withDefaults(
      'ConstantLR',
      opts,
      { factor: 'nonnegative', totalIters: posint },
      { factor: 1 / 3, totalIters: 5 },
    );
    if (o.factor > 1) throw new ValueError(`ConstantLR: factor must be in [0, 1]; got ${o.factor}`);
    this.factor = o.factor;
    this.totalIters = o.totalIters;
    this.apply();
  }
  lrAt(i: number, t: number): number {
    return t < this.totalIters ? this.baseLrs[i] * this.factor : this.baseLrs[i];
  }
}

/**
 * SGDR: cosine annealing restarted every T_i steps, T_0 = t0 and T_{i+1} = tMult·T_i:
 * lr = ηmin + (base − ηmin)·(1 + cos(π·T_cur/T_i))/2.
 */
export class CosineAnnealingWarmRestarts extends LRScheduler {
  readonly t0: number;
  readonly tMult: number;
  readonly etaMin: number;
  constructor(optimizer: Optimizer<BaseOptions>, opts: { t0: number; tMult?: number; etaMin?: number }) {
    super(optimizer);
    const o = withDefaults(
      'CosineAnnealingWarmRestarts',
      opts,
      { t0: posint, tMult: posint, etaMin: 'finite' },
      { t0: 0, tMult: 1, etaMin: 0 },
    );
    if (!o.t0) throw new ValueError('CosineAnnealingWarmRestarts: t0 (PyTorch T_0) is required, e.g. { t0: 10 }');
    this.t0 = o.t0;
    this.tMult = o.tMult;
    this.etaMin = o.etaMin;
    this.apply();
  }
  lrAt(i: number, t: number): number {
    let cur = t,
      len = this.t0;
    if (this.tMult === 1) cur = t % this.t0;
    else
      while (cur >= len) {
        cur -= len;
        len *= this.tMult;
      }
    return this.etaMin + ((this.baseLrs[i] - this.etaMin) * (1 + Math.cos((Math.PI * cur) / len))) / 2;
  }
}
