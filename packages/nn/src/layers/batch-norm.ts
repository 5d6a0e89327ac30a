import { ShapeError, ValueError, checkRule, fmtShape, parseOptions } from '@surf/core';
import { Tensor, batchNorm, keep, noGrad, ones, zeros } from '@surf/autograd';
import { Module, parameter } from '../module';

export interface BatchNormModuleOptions {
  eps?: number;
  /** null: a cumulative average over all batches seen (PyTorch's momentum=None). */
  momentum?: number | null;
  affine?: boolean;
  trackRunningStats?: boolean;
}

/** momentum: a number in [0, 1], or null for the cumulative average. */
function momentumRule(v: unknown, where: string): void {
  if (v !== null) checkRule('probability', v, where);
}

/**
 * BatchNorm1d/2d: weight (ones) and bias (zeros) when affine; running_mean (zeros),
 * running_var (ones) and num_batches_tracked (0) as buffers when trackRunningStats, under
 * PyTorch's state-dict keys. train() normalises with the batch's stats and updates the
 * running ones in place; eval() normalises with the running stats.
 */
abstract class BatchNormNd extends Module {
  readonly weight: Tensor | null;
  readonly bias: Tensor | null;
  running_mean: Tensor | null = null;
  running_var: Tensor | null = null;
  num_batches_tracked: Tensor | null = null;
  readonly eps: number;
  readonly momentum: number | null;

  constructor(
    private readonly layer: string,
    private readonly dims: number[],
    readonly numFeatures: number,
    opts: BatchNormModuleOptions,
  ) {
    super();
    parseOptions(layer, opts, {
      eps: 'positive',
      momentum: momentumRule,
      affine: 'boolean',
      trackRunningStats: 'boolean',
    });
    if (!Number.isInteger(numFeatures) || numFeatures < 1)
      throw new ValueError(`${layer}: numFeatures must be a positive integer; got ${numFeatures}`);
    this.eps = opts.eps ?? 1e-5;
    this.momentum = opts.momentum === undefined ? 0.1 : opts.momentum;
    const affine = opts.affine ?? true;
    this.weight = affine ? parameter(ones([numFeatures])) : null;
    this.bias = affine ? parameter(zeros([numFeatures])) : null;
    if (opts.trackRunningStats ?? true) {
      this.buffer('running_mean', zeros([numFeatures]));
      this.buffer('running_var', ones([numFeatures]));
      this.buffer('num_batches_tracked', zeros([], { dtype: 'int32' }));
    }
  }

  /** Module.registerBuffer where the module system has it (saved in stateDict), else a plain field. */
  private buffer(name: 'running_mean' | 'running_var' | 'num_batches_tracked', t: Tensor): void {
    const reg = (this as unknown as { registerBuffer?: (n: string, t: Tensor) => void }).registerBuffer;
    if (typeof reg === 'function') reg.call(this, name, t);
    else this[name] = keep(t);
  }

  forward(x: Tensor): Tensor {
    if (!this.dims.includes(x.ndim) || x.shape[1] !== this.numFeatures) {
      throw new ShapeError(
        `${this.layer}: input has shape ${fmtShape(x.shape)}; expected ${this.dims.map((d) => `${d}-d`).join(' or ')} with ${this.numFeatures} channels in dim 1`,
      );
    }
    let momentum = this.momentum ?? 0;
    if (this.training && this.num_batches_tracked) {
      const n = this.num_batches_tracked;
      // The sum is freed at once: left to the garbage collector, it would hold the count's
      // previous storage for a while, and a jitted step would see that storage freed in some
      // calls and not in others.
      noGrad(() => {
        const next = n.add(1);
        n.assign(next);
        next.dispose();
      });
      this.batches++;
      // A cumulative average: the host counts batches, so no readback is needed per step.
      if (this.momentum === null) momentum = 1 / this.batches;
    }
    const useBatch = this.training || !this.running_mean;
    return batchNorm(x, this.running_mean, this.running_var, this.weight, this.bias, {
      training: useBatch,
      momentum,
      eps: this.eps,
    });
  }

  /** Training batches seen by this instance (for momentum null). */
  private batches = 0;

  protected override extraRepr(): string {
    return `${this.numFeatures}, eps=${this.eps}, momentum=${this.momentum}, affine=${this.weight !== null}, trackRunningStats=${this.running_mean !== null}`;
  }
}

/** nn.BatchNorm1d over [N, C] or [N, C, L]. */
export class BatchNorm1d extends BatchNormNd {
  constructor(numFeatures: number, opts: BatchNormModuleOptions = {}) {
    super('BatchNorm1d', [2, 3], numFeatures, opts);
  }
}

/** nn.BatchNorm2d over [N, C, H, W]. */
export class BatchNorm2d extends BatchNormNd {
  constructor(numFeatures: number, opts: BatchNormModuleOptions = {}) {
    super('BatchNorm2d', [4], numFeatures, opts);
  }
}
