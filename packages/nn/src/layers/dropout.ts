import { ValueError } from '@surf/core';
import { Tensor, rand, tidy } from '@surf/autograd';
import { Module } from '../module';

/**
 * Zeroes each element with probability p while training and scales the rest by 1/(1-p)
 * (inverted dropout), so eval() is the identity. The mask comes from the global seed.
 */
export class Dropout extends Module {
  constructor(readonly p = 0.5) {
    super();
    if (typeof p !== 'number' || !(p >= 0 && p <= 1))
      throw new ValueError(`Dropout: p must be a probability in [0, 1]; got ${p}`);
  }

  forward(x: Tensor): Tensor {
    // Identity in eval, as PyTorch: the input itself, no copy.
    if (!this.training || this.p === 0) return x;
    if (this.p === 1) return x.mul(0);
    return tidy(() => Tensor.where(rand(x.shape).ge(this.p), x.mul(1 / (1 - this.p)), 0));
  }

  protected override extraRepr(): string {
    return `p=${this.p}`;
  }
}
