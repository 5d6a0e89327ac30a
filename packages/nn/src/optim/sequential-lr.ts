import { ValueError, withDefaults } from '@surf/core';
import { BaseOptions, Optimizer } from './optimizer';
import { LRScheduler } from './schedulers';

/**
 * PyTorch's SequentialLR: schedulers[k] runs from milestones[k−1] on, its own count restarting
 * at 0 there. Step only the SequentialLR (the inner schedulers are read, not stepped).
 */
export class SequentialLR extends LRScheduler {
  readonly schedulers: LRScheduler[];
  readonly milestones: number[];
  constructor(optimizer: Optimizer<BaseOptions>, opts: { schedulers: LRScheduler[]; milestones: number[] }) {
    super(optimizer);
    const o = withDefaults(
      'SequentialLR',
      opts,
      { schedulers: 'array', milestones: 'array' },
      { schedulers: [] as LRScheduler[], milestones: [] as number[] },
    );
    if (!o.schedulers.length || !o.schedulers.every((s) => s instanceof LRScheduler && s.optimizer === optimizer))
      throw new ValueError('SequentialLR: schedulers must be a non-empty list of schedulers of this optimizer');
    if (
      o.milestones.length !== o.schedulers.length - 1 ||
      !o.milestones.every((m, k) => Number.isInteger(m) && m > 0 && (k === 0 || m > o.milestones[k - 1]))
    )
      throw new ValueError(
        `SequentialLR: milestones must be ${o.schedulers.length - 1} increasing positive integers (one fewer than schedulers); got ${JSON.stringify(o.milestones)}`,
      );
    this.schedulers = [...o.schedulers];
    this.milestones = [...o.milestones];
    this.apply();
  }
  lrAt(i: number, t: number): number {
    let k = 0;
    while (k < this.milestones.length && t >= this.milestones[k]) k++;
    return this.schedulers[k].lrAt(i, t - (k ? this.milestones[k - 1] : 0));
  }
}
