import { parseOptions } from '@surf/core';
import { AvgPoolOptions, MaxPoolOptions, Tensor, adaptiveAvgPool2d, avgPool2d, maxPool2d } from '@surf/autograd';
import { Module } from '../module';

type Size = number | readonly number[];

/** nn.MaxPool2d(kernelSize, { stride = kernelSize, padding, dilation, ceilMode }). */
export class MaxPool2d extends Module {
  constructor(
    readonly kernelSize: Size,
    readonly opts: MaxPoolOptions = {},
  ) {
    super();
    parseOptions('MaxPool2d', opts, { stride: 'any', padding: 'any', dilation: 'any', ceilMode: 'boolean' });
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
    parseOptions('AvgPool2d', opts, { stride: 'any', padding: 'any', ceilMode: 'boolean', countIncludePad: 'boolean' });
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
