import { ShapeError, ValueError, fmtShape, parseOptions } from '@surf/core';
import { Tensor, ones, tidy, zeros } from '@surf/autograd';
import { Module, parameter } from '../module';

/**
 * Normalises over the trailing `normalizedShape` dims with the biased variance, then applies
 * an elementwise affine map (weight 1, bias 0 at start), as PyTorch's LayerNorm.
 */
export class LayerNorm extends Module {
  readonly normalizedShape: number[];
  readonly eps: number;
  readonly weight: Tensor | null;
  readonly bias: Tensor | null;

  constructor(
    normalizedShape: number | readonly number[],
    opts: { eps?: number; elementwiseAffine?: boolean; bias?: boolean } = {},
  ) {
    super();
    parseOptions('LayerNorm', opts, { eps: 'positive', elementwiseAffine: 'boolean', bias: 'boolean' });
    const shape = typeof normalizedShape === 'number' ? [normalizedShape] : normalizedShape.slice();
    if (!shape.length || !shape.every((d) => Number.isInteger(d) && d > 0))
      throw new ValueError(
        `LayerNorm: normalizedShape must be positive integers; got ${JSON.stringify(normalizedShape)}`,
      );
    this.normalizedShape = shape;
    this.eps = opts.eps ?? 1e-5;
    if (!(this.eps >= 0)) throw new ValueError(`LayerNorm: eps must be non-negative; got ${this.eps}`);
    const affine = opts.elementwiseAffine ?? true;
    this.weight = affine ? parameter(ones(shape)) : null;
    this.bias = affine && opts.bias !== false ? parameter(zeros(shape)) : null;
  }

  forward(x: Tensor): Tensor {
    const k = this.normalizedShape.length;
    const tail = x.shape.slice(x.ndim - k);
    if (x.ndim < k || tail.some((d, i) => d !== this.normalizedShape[i])) {
      throw new ShapeError(
        `LayerNorm: input has shape ${fmtShape(x.shape)}; expected it to end in normalizedShape ${fmtShape(this.normalizedShape)}`,
      );
    }
    const dims = Array.from({ length: k }, (_, i) => x.ndim - k + i);
    return tidy(() => {
      const d = x.sub(x.mean(dims, true));
      let y = d.mul(d.mul(d).mean(dims, true).add(this.eps).rsqrt());
      if (this.weight) y = y.mul(this.weight);
      if (this.bias) y = y.add(this.bias);
      return y;
    });
  }

  protected override extraRepr(): string {
    return `${fmtShape(this.normalizedShape)}, eps=${this.eps}, elementwiseAffine=${this.weight !== null}`;
  }
}
