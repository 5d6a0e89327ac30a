import { SurfTypeError, ValueError, parseOptions, showValue } from '@surf/core';
import { hostEffect } from '@surf/autograd';
import { BaseOptions, Optimizer } from './optimizer';

/**
 * Learning-rate schedules as closed forms of the step count t (PyTorch's), written into each
 * parameter group's lr. Call scheduler.step() after optimizer.step(). Nothing recompiles:
 * lr reaches the kernel as a parameter.
 */
export abstract class LRScheduler {
  /** Steps taken (PyTorch's last_epoch): 0 right after construction. */
  lastEpoch = 0;
  readonly baseLrs: number[];

  constructor(readonly optimizer: Optimizer<BaseOptions>) {
    if (!(optimizer instanceof Optimizer)) throw new ValueError(`${new.target.name}: expected an optimizer`);
    for (const g of optimizer.paramGroups) g.initialLr ??= g.lr;
    this.baseLrs = optimizer.paramGroups.map((g) => g.initialLr!);
  }

  /** The lr of group i after t steps. */
  abstract lrAt(i: number, t: number): number;

  protected apply(): void {
    this.optimizer.paramGroups.forEach((g, i) => {
      g.lr = this.lrAt(i, this.lastEpoch);
    });
  }

  step(): void {
    // jit: a scheduler stepped inside a jitted function steps on every replay
    hostEffect(() => {
      this.lastEpoch++;
      this.apply();
    });
  }

  getLastLr(): number[] {
    return this.optimizer.paramGroups.map((g) => g.lr);
  }

  /** The step count and base rates (PyTorch's last_epoch, base_lrs); plain numbers. */
  stateDict(): SchedulerStateDict {
    return { lastEpoch: this.lastEpoch, baseLrs: this.baseLrs.slice() };
  }

  /** Restores stateDict() and writes the lr of that step into the optimizer. */
  loadStateDict(sd: SchedulerStateDict): void {
    if (sd === null || typeof sd !== 'object' || !Number.isInteger(sd.lastEpoch) || sd.lastEpoch < 0) {
      throw new ValueError(
        `${this.constructor.name}.loadStateDict: expected { lastEpoch, baseLrs } from stateDict(); got ${JSON.stringify(sd)}`,
      );
    }
    if (sd.baseLrs !== undefined) {
      if (!Array.isArray(sd.baseLrs) || sd.baseLrs.length !== this.baseLrs.length)
        throw new ValueError(
          `${this.constructor.name}.loadStateDict: baseLrs has ${Array.isArray(sd.baseLrs) ? sd.baseLrs.length : 'no'} entries; the optimizer has ${this.baseLrs.length} groups`,
        );
      sd.baseLrs.forEach((v, i) => {
        if (typeof v !== 'number' || !Number.isFinite(v) || v < 0)
          throw new ValueError(
            `${this.constructor.name}.loadStateDict: baseLrs[${i}] must be a finite number >= 0; got ${JSON.stringify(v)}`,
          );
      });
      sd.baseLrs.forEach((v, i) => {
        this.baseLrs[i] = v;
      });
    }
    this.lastEpoch = sd.lastEpoch;
    this.apply();
  }
}

export interface SchedulerStateDict {
  lastEpoch: number;
  baseLrs?: number[];
  [key: string]: unknown;
}

/** An `after` schedule must be an LRScheduler. */
function schedulerRule(v: unknown, where: string): void {
  if (!(v instanceof LRScheduler)) throw new SurfTypeError(`${where} must be an LRScheduler; got ${showValue(v)}`);
}

function positiveInt(op: string, name: string, v: unknown): void {
  if (!Number.isInteger(v) || (v as number) <= 0)
    throw new ValueError(`${op}: ${name} must be a positive integer; got ${v}`);
}

/** lr = base·γ^⌊t/stepSize⌋. */
export class StepLR extends LRScheduler {
  readonly stepSize: number;
  readonly gamma: number;
  constructor(optimizer: Optimizer<BaseOptions>, opts: { stepSize: number; gamma?: number }) {
    super(optimizer);
    parseOptions('StepLR', opts, { stepSize: 'posint', gamma: 'nonnegative' });
    positiveInt('StepLR', 'stepSize', opts?.stepSize);
    this.stepSize = opts.stepSize;
    this.gamma = opts.gamma ?? 0.1;
    if (!(this.gamma >= 0)) throw new ValueError(`StepLR: gamma must be >= 0; got ${this.gamma}`);
    this.apply();
  }
  lrAt(i: number, t: number): number {
    return this.baseLrs[i] * Math.pow(this.gamma, Math.floor(t / this.stepSize));
  }
}

/** lr = ηmin + (base - ηmin)·(1 + cos(πt/tMax))/2. */
export class CosineAnnealingLR extends LRScheduler {
  readonly tMax: number;
  readonly etaMin: number;
  constructor(optimizer: Optimizer<BaseOptions>, opts: { tMax: number; etaMin?: number }) {
    super(optimizer);
    parseOptions('CosineAnnealingLR', opts, { tMax: 'posint', etaMin: 'nonnegative' });
    positiveInt('CosineAnnealingLR', 'tMax', opts?.tMax);
    this.tMax = opts.tMax;
    this.etaMin = opts.etaMin ?? 0;
    this.apply();
  }
  lrAt(i: number, t: number): number {
    return this.etaMin + ((this.baseLrs[i] - this.etaMin) * (1 + Math.cos((Math.PI * t) / this.tMax))) / 2;
  }
}

/**
 * Linear warmup: lr = base·min(1, (t + 1)/warmupSteps), so the first step already moves and
 * step warmupSteps - 1 reaches base. With `after`, that schedule takes over from then on,
 * counted from the end of the warmup (e.g. warmup then cosine decay).
 */
export class LinearWarmup extends LRScheduler {
  readonly warmupSteps: number;
  readonly after: LRScheduler | undefined;
  constructor(optimizer: Optimizer<BaseOptions>, opts: { warmupSteps: number; after?: LRScheduler }) {
    super(optimizer);
    parseOptions('LinearWarmup', opts, { warmupSteps: 'posint', after: schedulerRule });
    positiveInt('LinearWarmup', 'warmupSteps', opts?.warmupSteps);
    if (opts.after && opts.after.optimizer !== optimizer)
      throw new ValueError('LinearWarmup: `after` must schedule the same optimizer');
    this.warmupSteps = opts.warmupSteps;
    this.after = opts.after;
    this.apply();
  }
  lrAt(i: number, t: number): number {
    if (t < this.warmupSteps) return (this.baseLrs[i] * (t + 1)) / this.warmupSteps;
    return this.after ? this.after.lrAt(i, t - this.warmupSteps + 1) : this.baseLrs[i];
  }
}
