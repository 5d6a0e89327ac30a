import { ValueError, parseOptions } from '@surf/core';
import { BaseOptions, Optimizer } from './optimizer';
import { LRScheduler, SchedulerStateDict } from './schedulers';

/** Step-count schedules beside schedulers.ts's: MultiStepLR, LambdaLR and OneCycleLR (closed forms of t, as PyTorch's). */

/** lr = base·γ^(number of milestones <= t). */
export class MultiStepLR extends LRScheduler {
  readonly milestones: number[];
  readonly gamma: number;
  constructor(optimizer: Optimizer<BaseOptions>, opts: { milestones: readonly number[]; gamma?: number }) {
    super(optimizer);
    parseOptions('MultiStepLR', opts, { milestones: 'array', gamma: 'nonnegative' });
    if (!Array.isArray(opts?.milestones) || !opts.milestones.every((m) => Number.isInteger(m) && m >= 0)) {
      throw new ValueError(
        `MultiStepLR: milestones must be an array of non-negative integers; got ${JSON.stringify(opts?.milestones)}`,
      );
    }
    this.milestones = [...opts.milestones].sort((a, b) => a - b);
    this.gamma = opts.gamma ?? 0.1;
    if (typeof this.gamma !== 'number' || !(this.gamma >= 0))
      throw new ValueError(`MultiStepLR: gamma must be >= 0; got ${this.gamma}`);
    this.apply();
  }
  lrAt(i: number, t: number): number {
    return this.baseLrs[i] * Math.pow(this.gamma, this.milestones.filter((m) => m <= t).length);
  }
}

/** lr = base·f(t), with one f for all groups or one per group. */
export class LambdaLR extends LRScheduler {
  readonly lrLambdas: ((t: number) => number)[];
  constructor(
    optimizer: Optimizer<BaseOptions>,
    opts: { lrLambda: ((t: number) => number) | ((t: number) => number)[] },
  ) {
    super(optimizer);
    parseOptions('LambdaLR', opts, { lrLambda: 'any' });
    const f = opts?.lrLambda;
    const list = Array.isArray(f) ? f : optimizer.paramGroups.map(() => f);
    if (list.length !== optimizer.paramGroups.length || !list.every((x) => typeof x === 'function')) {
      throw new ValueError(
        `LambdaLR: lrLambda must be a function or one function per parameter group (${optimizer.paramGroups.length})`,
      );
    }
    this.lrLambdas = list as ((t: number) => number)[];
    this.apply();
  }
  lrAt(i: number, t: number): number {
    const f = this.lrLambdas[i](t);
    if (typeof f !== 'number' || !Number.isFinite(f))
      throw new ValueError(`LambdaLR: lrLambda(${t}) returned ${f}; expected a finite number`);
    return this.baseLrs[i] * f;
  }
}

export interface OneCycleOptions {
  maxLr: number | number[];
  totalSteps: number;
  /** Fraction of the steps spent rising to maxLr. Default 0.3. */
  pctStart?: number;
  annealStrategy?: 'cos' | 'linear';
  /** The start lr is maxLr/divFactor. Default 25. */
  divFactor?: number;
  /** The final lr is the start lr/finalDivFactor. Default 1e4. */
  finalDivFactor?: number;
}

/**
 * The 1cycle policy (PyTorch's OneCycleLR, two phases, no momentum cycling): from maxLr/div
 * up to maxLr over pctStart of the steps, then annealed down to maxLr/div/finalDiv at step
 * totalSteps - 1.
 */
export class OneCycleLR extends LRScheduler {
  readonly maxLrs: number[];
  readonly totalSteps: number;
  readonly pctStart: number;
  readonly annealStrategy: 'cos' | 'linear';
  readonly divFactor: number;
  readonly finalDivFactor: number;
  constructor(optimizer: Optimizer<BaseOptions>, opts: OneCycleOptions) {
    super(optimizer);
    parseOptions<OneCycleOptions>('OneCycleLR', opts, {
      maxLr: 'any',
      totalSteps: 'int',
      pctStart: 'number',
      annealStrategy: ['cos', 'linear'],
      divFactor: 'positive',
      finalDivFactor: 'positive',
    });
    const n = optimizer.paramGroups.length;
    const maxLr = opts?.maxLr;
    const list = Array.isArray(maxLr) ? maxLr : Array.from({ length: n }, () => maxLr);
    if (list.length !== n || !list.every((v) => typeof v === 'number' && v > 0))
      throw new ValueError(
        `OneCycleLR: maxLr must be a positive number or one per parameter group (${n}); got ${JSON.stringify(maxLr)}`,
      );
    if (!Number.isInteger(opts.totalSteps) || opts.totalSteps <= 1)
      throw new ValueError(`OneCycleLR: totalSteps must be an integer > 1; got ${opts.totalSteps}`);
    this.maxLrs = list as number[];
    this.totalSteps = opts.totalSteps;
    this.pctStart = opts.pctStart ?? 0.3;
    if (!(this.pctStart > 0 && this.pctStart < 1))
      throw new ValueError(`OneCycleLR: pctStart must be in (0, 1); got ${this.pctStart}`);
    this.annealStrategy = opts.annealStrategy ?? 'cos';
    if (this.annealStrategy !== 'cos' && this.annealStrategy !== 'linear')
      throw new ValueError(
        `OneCycleLR: annealStrategy must be 'cos' or 'linear'; got ${JSON.stringify(this.annealStrategy)}`,
      );
    this.divFactor = opts.divFactor ?? 25;
    this.finalDivFactor = opts.finalDivFactor ?? 1e4;
    if (!(this.divFactor > 0) || !(this.finalDivFactor > 0))
      throw new ValueError('OneCycleLR: divFactor and finalDivFactor must be > 0');
    // As PyTorch, the schedule's own start lr becomes each group's initial lr.
    optimizer.paramGroups.forEach((g, i) => {
      g.initialLr = this.maxLrs[i] / this.divFactor;
      this.baseLrs[i] = g.initialLr;
    });
    this.apply();
  }
  private anneal(start: number, end: number, pct: number): number {
    if (this.annealStrategy === 'linear') return start + (end - start) * pct;
    return end + ((start - end) / 2) * (1 + Math.cos(Math.PI * pct));
  }
  lrAt(i: number, t: number): number {
    if (t >= this.totalSteps) throw new ValueError(`OneCycleLR: step ${t} is past totalSteps ${this.totalSteps}`);
    const initial = this.maxLrs[i] / this.divFactor;
    const min = initial / this.finalDivFactor;
    const end1 = this.pctStart * this.totalSteps - 1;
    if (t <= end1) return this.anneal(initial, this.maxLrs[i], t / end1);
    return this.anneal(this.maxLrs[i], min, (t - end1) / (this.totalSteps - 1 - end1));
  }
}
