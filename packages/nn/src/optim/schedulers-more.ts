import { ValueError, parseOptions } from '@surf/core';
import { BaseOptions, Optimizer } from './optimizer';
import { LRScheduler, SchedulerStateDict } from './schedulers';

/** More of PyTorch's schedules: MultiStepLR, LambdaLR, OneCycleLR (closed forms) and ReduceLROnPlateau. */

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

export interface ReduceLROnPlateauOptions {
  mode?: 'min' | 'max';
  factor?: number;
  patience?: number;
  threshold?: number;
  thresholdMode?: 'rel' | 'abs';
  cooldown?: number;
  minLr?: number | number[];
  eps?: number;
}

/**
 * Multiplies the lr by `factor` once a metric stopped improving for `patience` steps
 * (PyTorch's ReduceLROnPlateau): call step(metric) once per epoch with a number (read the
 * loss back first).
 */
export class ReduceLROnPlateau {
  readonly mode: 'min' | 'max';
  readonly factor: number;
  readonly patience: number;
  readonly threshold: number;
  readonly thresholdMode: 'rel' | 'abs';
  readonly cooldown: number;
  readonly minLrs: number[];
  readonly eps: number;
  best: number;
  numBadEpochs = 0;
  cooldownCounter = 0;
  lastEpoch = 0;

  constructor(
    readonly optimizer: Optimizer<BaseOptions>,
    opts: ReduceLROnPlateauOptions = {},
  ) {
    if (!(optimizer instanceof Optimizer)) throw new ValueError('ReduceLROnPlateau: expected an optimizer');
    const o = parseOptions<ReduceLROnPlateauOptions>('ReduceLROnPlateau', opts, {
      mode: ['min', 'max'],
      factor: 'number',
      patience: 'nonnegint',
      threshold: 'nonnegative',
      thresholdMode: ['rel', 'abs'],
      cooldown: 'nonnegint',
      minLr: 'any',
      eps: 'nonnegative',
    });
    this.mode = o.mode ?? 'min';
    if (this.mode !== 'min' && this.mode !== 'max')
      throw new ValueError(`ReduceLROnPlateau: mode must be 'min' or 'max'; got ${JSON.stringify(this.mode)}`);
    this.factor = o.factor ?? 0.1;
    if (!(this.factor >= 0 && this.factor < 1))
      throw new ValueError(`ReduceLROnPlateau: factor must be in [0, 1); got ${this.factor}`);
    this.patience = o.patience ?? 10;
    this.cooldown = o.cooldown ?? 0;
    for (const [k, v] of [
      ['patience', this.patience],
      ['cooldown', this.cooldown],
    ] as const) {
      if (!Number.isInteger(v) || v < 0)
        throw new ValueError(`ReduceLROnPlateau: ${k} must be a non-negative integer; got ${v}`);
    }
    this.threshold = o.threshold ?? 1e-4;
    this.thresholdMode = o.thresholdMode ?? 'rel';
    if (this.thresholdMode !== 'rel' && this.thresholdMode !== 'abs')
      throw new ValueError(
        `ReduceLROnPlateau: thresholdMode must be 'rel' or 'abs'; got ${JSON.stringify(this.thresholdMode)}`,
      );
    const n = optimizer.paramGroups.length;
    const minLr = o.minLr ?? 0;
    this.minLrs = Array.isArray(minLr) ? minLr.slice() : Array.from({ length: n }, () => minLr);
    if (this.minLrs.length !== n)
      throw new ValueError(`ReduceLROnPlateau: minLr has ${this.minLrs.length} entries; the optimizer has ${n} groups`);
    this.eps = o.eps ?? 1e-8;
    this.best = this.mode === 'min' ? Infinity : -Infinity;
  }

  private isBetter(a: number): boolean {
    const { mode, thresholdMode: tm, threshold: th, best } = this;
    if (mode === 'min') return tm === 'rel' ? a < best * (1 - th) : a < best - th;
    return tm === 'rel' ? a > best * (1 + th) : a > best + th;
  }

  /** Records this epoch's metric and lowers the lr when it has plateaued. */
  step(metric: number): void {
    if (typeof metric !== 'number' || Number.isNaN(metric))
      throw new ValueError(
        `ReduceLROnPlateau.step: metric must be a number (read the loss with await loss.item()); got ${typeof metric === 'number' ? metric : typeof metric}`,
      );
    this.lastEpoch++;
    if (this.isBetter(metric)) {
      this.best = metric;
      this.numBadEpochs = 0;
    } else {
      this.numBadEpochs++;
    }
    if (this.cooldownCounter > 0) {
      this.cooldownCounter--;
      this.numBadEpochs = 0;
    }
    if (this.numBadEpochs > this.patience) {
      this.optimizer.paramGroups.forEach((g, i) => {
        const next = Math.max(g.lr * this.factor, this.minLrs[i]);
        if (g.lr - next > this.eps) g.lr = next;
      });
      this.cooldownCounter = this.cooldown;
      this.numBadEpochs = 0;
    }
  }

  getLastLr(): number[] {
    return this.optimizer.paramGroups.map((g) => g.lr);
  }

  stateDict(): SchedulerStateDict {
    return {
      lastEpoch: this.lastEpoch,
      best: this.best,
      numBadEpochs: this.numBadEpochs,
      cooldownCounter: this.cooldownCounter,
    };
  }

  loadStateDict(sd: SchedulerStateDict): void {
    // JSON (a checkpoint's metadata) writes the initial ±Infinity best as null: no best yet.
    if (sd !== null && typeof sd === 'object' && sd.best === null)
      sd = { ...sd, best: this.mode === 'min' ? Infinity : -Infinity };
    if (sd === null || typeof sd !== 'object' || typeof sd.best !== 'number' || Number.isNaN(sd.best))
      throw new ValueError(
        'ReduceLROnPlateau.loadStateDict: expected { lastEpoch, best, numBadEpochs, cooldownCounter } from stateDict()',
      );
    for (const k of ['lastEpoch', 'numBadEpochs', 'cooldownCounter'] as const) {
      const v = sd[k] ?? 0;
      if (!Number.isSafeInteger(v) || (v as number) < 0)
        throw new ValueError(`ReduceLROnPlateau.loadStateDict: ${k} must be an integer >= 0; got ${JSON.stringify(v)}`);
    }
    this.lastEpoch = (sd.lastEpoch as number | undefined) ?? 0;
    this.best = sd.best as number;
    this.numBadEpochs = Number(sd.numBadEpochs) || 0;
    this.cooldownCounter = Number(sd.cooldownCounter) || 0;
  }
}
