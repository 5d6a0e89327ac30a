import { ValueError } from '@surf/core';
import { Tensor, dropout } from '@surf/autograd';
import { Module } from '../module';

/**
 * Zeroes each element with probability p while training and scales the rest by 1/(1-p)
 * (inverted dropout), so eval() is the identity. The mask comes from the global Philox
 * stream (manualSeed), drawn on the device: one random kernel and one fused elementwise pass.
 */
export class Dropout extends Module {
  constructor(readonly p = 0.5) {
    super();
    if (typeof p !== 'number' || !(p >= 0 && p <= 1))
      throw new ValueError(`Dropout: p must be a probability in [0, 1]; got ${p}`);
  }

  forward(x: Tensor): Tensor {
    // Identity in eval, as PyTorch: the input itself, no copy.
    return dropout(x, this.p, this.training);
  }

  protected override extraRepr(): string {
    return `p=${this.p}`;
  }
}
