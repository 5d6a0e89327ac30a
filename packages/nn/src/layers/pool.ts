import { AvgPoolOptions, MaxPoolOptions, Tensor, adaptiveAvgPool2d, avgPool2d, maxPool2d } from '@surf/autograd';
import { Module } from '../module';
import { checkOptions } from '../options';

type Size = number | readonly number[];

/** nn.MaxPool2d(kernelSize, { stride = kernelSize, padding, dilation, ceilMode }). */
export class MaxPool2d extends Module {
  constructor(
    readonly kernelSize: Size,
    readonly opts: MaxPoolOptions = {},
  ) {
    super();
    checkOptions('MaxPool2d', opts, '{ stride?, padding?, dilation?, ceilMode? }');
  }
  forward(x: Tensor): Tensor {
    return maxPool2d(x, this.kernelSize, this.opts);
  }
  protected override extraRepr(): string {
    return `kernelSize=${JSON.stringify(this.kernelSize)}${Object.keys(this.opts).length ? `, ${JSON.stringify(this.opts)}` : ''}`;
  }
}

/** nn.AvgPool2d(kernelSize, { stride = kernelSize, padding, ceilMode, countIncludePad }). */
export class AvgPool2d extends Module {
  constructor(
    readonly kernelSize: Size,
    readonly opts: AvgPoolOptions = {},
  ) {
    super();
    checkOptions('AvgPool2d', opts, '{ stride?, padding?, ceilMode?, countIncludePad? }');
  }
  forward(x: Tensor): Tensor {
    return avgPool2d(x, this.kernelSize, this.opts);
  }
  protected override extraRepr(): string {
    return `kernelSize=${JSON.stringify(this.kernelSize)}${Object.keys(this.opts).length ? `, ${JSON.stringify(this.opts)}` : ''}`;
  }
}

/** nn.AdaptiveAvgPool2d(outputSize): a number, or a pair where null keeps the input's size. */
export class AdaptiveAvgPool2d extends Module {
  constructor(readonly outputSize: number | readonly (number | null)[]) {
    super();
  }
  forward(x: Tensor): Tensor {
    return adaptiveAvgPool2d(x, this.outputSize);
  }
  protected override extraRepr(): string {
    return `outputSize=${JSON.stringify(this.outputSize)}`;
  }
}
