import { Tensor } from '@surf/autograd';
import { Module } from '../module';

/** Merges dims startDim..endDim (default: all but the batch dim), a view when possible. */
export class Flatten extends Module {
  constructor(
    readonly startDim = 1,
    readonly endDim = -1,
  ) {
    super();
  }
  forward(x: Tensor): Tensor {
    return x.flatten(this.startDim, this.endDim);
  }
  protected override extraRepr(): string {
    return `startDim=${this.startDim}, endDim=${this.endDim}`;
  }
}
