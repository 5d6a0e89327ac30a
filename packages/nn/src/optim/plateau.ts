import { ValueError, parseOptions } from '@surf/core';
import { BaseOptions, Optimizer } from './optimizer';
import type { SchedulerStateDict } from './schedulers';

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
