import { ShapeError, ValueError, fmtShape } from '@surf/core';
import { Tensor } from '@surf/autograd';
import { Module } from '../module';

/** Splits dim `dim` into `sizes` (one may be -1), PyTorch's nn.Unflatten. */
export class Unflatten extends Module {
  readonly sizes: number[];
  constructor(
    readonly dim: number,
    sizes: readonly number[],
  ) {
    super();
    if (!Number.isInteger(dim)) throw new ValueError(`Unflatten: dim must be an integer; got ${dim}`);
    if (!Array.isArray(sizes) || !sizes.length || !sizes.every((s) => Number.isInteger(s) && (s >= 1 || s === -1)))
      throw new ValueError(
        `Unflatten: sizes must be a list of positive integers (one may be -1); got ${JSON.stringify(sizes)}`,
      );
    this.sizes = [...sizes];
  }
  forward(x: Tensor): Tensor {
    const d = this.dim < 0 ? this.dim + x.ndim : this.dim;
    if (d < 0 || d >= x.ndim)
      throw new ShapeError(`Unflatten: dim ${this.dim} is out of range for an input of shape ${fmtShape(x.shape)}`);
    return x.reshape([...x.shape.slice(0, d), ...this.sizes, ...x.shape.slice(d + 1)]);
  }
  protected override extraRepr(): string {
    return `dim=${this.dim}, sizes=${fmtShape(this.sizes)}`;
  }
}
