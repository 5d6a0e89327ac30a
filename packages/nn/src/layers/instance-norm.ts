import { ShapeError, fmtShape, withDefaults } from '@surf/core';
import { Tensor, ones, tensor, zeros } from '@surf/autograd';
import { Module, parameter } from '../module';
import { instanceNorm } from '../functional/normalization';

export interface InstanceNormModuleOptions {
  eps?: number;
  momentum?: number;
  /** Per-channel weight (ones) and bias (zeros); default false, as PyTorch. */
  affine?: boolean;
  /** Keep running_mean/var (and use them in eval); default false, as PyTorch. */
  trackRunningStats?: boolean;
}

/**
 * PyTorch's InstanceNorm1d/2d: each (sample, channel) normalised over its positions. The state
 * dict has PyTorch's keys: weight, bias (affine), running_mean, running_var,
 * num_batches_tracked (trackRunningStats).
 */
abstract class InstanceNormBase extends Module {
  readonly weight: Tensor | null;
  readonly bias: Tensor | null;
  declare running_mean: Tensor | null; // eslint-disable-line @typescript-eslint/naming-convention
  declare running_var: Tensor | null; // eslint-disable-line @typescript-eslint/naming-convention
  declare num_batches_tracked: Tensor | null; // eslint-disable-line @typescript-eslint/naming-convention
  readonly eps: number;
  readonly momentum: number;
  readonly trackRunningStats: boolean;

  constructor(
    readonly numFeatures: number,
    opts: InstanceNormModuleOptions,
    private readonly spatial: number,
  ) {
    super();
    const o = withDefaults<Required<InstanceNormModuleOptions>>(
      this.constructor.name,
      opts,
      { eps: 'nonnegative', momentum: 'nonnegative', affine: 'boolean', trackRunningStats: 'boolean' },
      { eps: 1e-5, momentum: 0.1, affine: false, trackRunningStats: false },
    );
    this.eps = o.eps;
    this.momentum = o.momentum;
    this.trackRunningStats = o.trackRunningStats;
    this.weight = o.affine ? parameter(ones([numFeatures])) : null;
    this.bias = o.affine ? parameter(zeros([numFeatures])) : null;
    if (o.trackRunningStats) {
      this.registerBuffer('running_mean', zeros([numFeatures]));
      this.registerBuffer('running_var', ones([numFeatures]));
      this.registerBuffer('num_batches_tracked', tensor([0], { dtype: 'int32' }).reshape([]));
    }
  }

  forward(x: Tensor): Tensor {
    const batched = x instanceof Tensor && x.ndim === this.spatial + 2;
    if (
      !(x instanceof Tensor) ||
      (!batched && x.ndim !== this.spatial + 1) ||
      x.shape[batched ? 1 : 0] !== this.numFeatures
    )
      throw new ShapeError(
        `${this.constructor.name}: input has shape ${x instanceof Tensor ? fmtShape(x.shape) : typeof x}; expected [N, ${this.numFeatures}, ...${this.spatial} spatial dims] or without N`,
      );
    const xb = batched ? x : x.unsqueeze(0);
    const useInputStats = this.training || !this.trackRunningStats;
    const update = this.training && this.trackRunningStats;
    if (update && this.num_batches_tracked) this.num_batches_tracked.assign(this.num_batches_tracked.add(1));
    const y = instanceNorm(xb, {
      runningMean: update || !useInputStats ? this.running_mean : null,
      runningVar: update || !useInputStats ? this.running_var : null,
      weight: this.weight,
      bias: this.bias,
      useInputStats,
      momentum: this.momentum,
      eps: this.eps,
    });
    return batched ? y : y.squeeze(0);
  }

  protected override extraRepr(): string {
    return `${this.numFeatures}, eps=${this.eps}, momentum=${this.momentum}, affine=${this.weight !== null}, trackRunningStats=${this.trackRunningStats}`;
  }
}

/** [N, C, L] or [C, L]. */
export class InstanceNorm1d extends InstanceNormBase {
  constructor(numFeatures: number, opts: InstanceNormModuleOptions = {}) {
    super(numFeatures, opts, 1);
  }
}

/** [N, C, H, W] or [C, H, W]. */
export class InstanceNorm2d extends InstanceNormBase {
  constructor(numFeatures: number, opts: InstanceNormModuleOptions = {}) {
    super(numFeatures, opts, 2);
  }
}
