import { ShapeError, ValueError, fmtShape, parseOptions } from '@surf/core';
import { Tensor, ones, tidy, zeros } from '@surf/autograd';
import { Module, parameter } from '../module';

/**
 * RMSNorm (PyTorch's nn.RMSNorm): x / √(mean(x²) + ε) over the trailing normalizedShape dims,
 * times a weight (1 at start). eps defaults to float32's machine epsilon, as PyTorch's None.
 */
export class RMSNorm extends Module {
  readonly normalizedShape: number[];
  readonly eps: number;
  readonly weight: Tensor | null;

  constructor(normalizedShape: number | readonly number[], opts: { eps?: number; elementwiseAffine?: boolean } = {}) {
    super();
    parseOptions('RMSNorm', opts, { eps: 'positive', elementwiseAffine: 'boolean' });
    const shape =
      typeof normalizedShape === 'number'
        ? [normalizedShape]
        : Array.isArray(normalizedShape)
          ? normalizedShape.slice()
          : [];
    if (!shape.length || !shape.every((d) => Number.isInteger(d) && d > 0))
      throw new ValueError(
        `RMSNorm: normalizedShape must be positive integers; got ${JSON.stringify(normalizedShape)}`,
      );
    this.normalizedShape = shape;
    this.eps = opts.eps ?? 1.1920928955078125e-7;
    if (typeof this.eps !== 'number' || !(this.eps >= 0))
      throw new ValueError(`RMSNorm: eps must be non-negative; got ${this.eps}`);
    this.weight = opts.elementwiseAffine === false ? null : parameter(ones(shape));
  }

  forward(x: Tensor): Tensor {
    const k = this.normalizedShape.length;
    if (x.ndim < k || x.shape.slice(x.ndim - k).some((d, i) => d !== this.normalizedShape[i])) {
      throw new ShapeError(
        `RMSNorm: input has shape ${fmtShape(x.shape)}; expected it to end in normalizedShape ${fmtShape(this.normalizedShape)}`,
      );
    }
    const dims = Array.from({ length: k }, (_, i) => x.ndim - k + i);
    return tidy(() => {
      const y = x.mul(x.mul(x).mean(dims, true).add(this.eps).rsqrt());
      return this.weight ? y.mul(this.weight) : y;
    });
  }

  protected override extraRepr(): string {
    return `${fmtShape(this.normalizedShape)}, eps=${this.eps}, elementwiseAffine=${this.weight !== null}`;
  }
}

/**
 * GroupNorm (PyTorch's nn.GroupNorm): the C channels of an [N, C, *] input split into G
 * groups, each normalised over its channels and positions with the biased variance, then a
 * per-channel affine map (weight 1, bias 0 at start).
 */
export class GroupNorm extends Module {
  readonly eps: number;
  readonly weight: Tensor | null;
  readonly bias: Tensor | null;

  constructor(
    readonly numGroups: number,
    readonly numChannels: number,
    opts: { eps?: number; affine?: boolean } = {},
  ) {
    super();
    parseOptions('GroupNorm', opts, { eps: 'positive', affine: 'boolean' });
    for (const [k, v] of [
      ['numGroups', numGroups],
      ['numChannels', numChannels],
    ] as const) {
      if (!Number.isInteger(v) || v <= 0) throw new ValueError(`GroupNorm: ${k} must be a positive integer; got ${v}`);
    }
    if (numChannels % numGroups !== 0)
      throw new ValueError(`GroupNorm: numChannels ${numChannels} is not divisible by numGroups ${numGroups}`);
    this.eps = opts.eps ?? 1e-5;
    if (typeof this.eps !== 'number' || !(this.eps >= 0))
      throw new ValueError(`GroupNorm: eps must be non-negative; got ${this.eps}`);
    const affine = opts.affine ?? true;
    this.weight = affine ? parameter(ones([numChannels])) : null;
    this.bias = affine ? parameter(zeros([numChannels])) : null;
  }

  forward(x: Tensor): Tensor {
    if (x.ndim < 2 || x.shape[1] !== this.numChannels) {
      throw new ShapeError(
        `GroupNorm: input has shape ${fmtShape(x.shape)}; expected [N, ${this.numChannels}, ...] (numChannels in dim 1)`,
      );
    }
    const [n] = x.shape;
    return tidy(() => {
      const g = x.reshape([n, this.numGroups, -1]);
      const d = g.sub(g.mean(2, true));
      let y = d.mul(d.mul(d).mean(2, true).add(this.eps).rsqrt()).reshape(x.shape);
      // Per-channel parameters broadcast as [C, 1, ..., 1] over the trailing dims.
      const bshape = [this.numChannels, ...x.shape.slice(2).map(() => 1)];
      if (this.weight) y = y.mul(this.weight.reshape(bshape));
      if (this.bias) y = y.add(this.bias.reshape(bshape));
      return y;
    });
  }

  protected override extraRepr(): string {
    return `${this.numGroups}, ${this.numChannels}, eps=${this.eps}, affine=${this.weight !== null}`;
  }
}
