import { ValueError, parseOptions } from '@surf/core';
import { Tensor } from '@surf/autograd';
import { Module } from '../module';
import { adaptiveAvgPool1d, adaptiveMaxPool2d, avgPool1d, maxPool1d } from '../functional/pooling';

/** 1-d pools over [N, C, L] and the adaptive max pool, as PyTorch's layers; no parameters. */

export interface MaxPool1dOptions {
  stride?: number;
  padding?: number;
  dilation?: number;
  ceilMode?: boolean;
}

export class MaxPool1d extends Module {
  readonly opts: MaxPool1dOptions;
  constructor(
    readonly kernelSize: number,
    opts: MaxPool1dOptions = {},
  ) {
    super();
    this.opts = parseOptions<MaxPool1dOptions>('MaxPool1d', opts, {
      stride: 'posint',
      padding: 'nonnegint',
      dilation: 'posint',
      ceilMode: 'boolean',
    });
  }
  forward(x: Tensor): Tensor {
    return maxPool1d(x, this.kernelSize, this.opts);
  }
  protected override extraRepr(): string {
    return `kernelSize=${this.kernelSize}`;
  }
}

export interface AvgPool1dOptions {
  stride?: number;
  padding?: number;
  ceilMode?: boolean;
  countIncludePad?: boolean;
}

export class AvgPool1d extends Module {
  readonly opts: AvgPool1dOptions;
  constructor(
    readonly kernelSize: number,
    opts: AvgPool1dOptions = {},
  ) {
    super();
    this.opts = parseOptions<AvgPool1dOptions>('AvgPool1d', opts, {
      stride: 'posint',
      padding: 'nonnegint',
      ceilMode: 'boolean',
      countIncludePad: 'boolean',
    });
  }
  forward(x: Tensor): Tensor {
    return avgPool1d(x, this.kernelSize, this.opts);
  }
  protected override extraRepr(): string {
    return `kernelSize=${this.kernelSize}`;
  }
}

export class AdaptiveAvgPool1d extends Module {
  constructor(readonly outputSize: number) {
    super();
    if (!Number.isInteger(outputSize) || outputSize < 1)
      throw new ValueError(`AdaptiveAvgPool1d: outputSize must be a positive integer; got ${outputSize}`);
  }
  forward(x: Tensor): Tensor {
    return adaptiveAvgPool1d(x, this.outputSize);
  }
}

/** outputSize: n (n × n) or [h, w], null keeping that dim. */
export class AdaptiveMaxPool2d extends Module {
  constructor(readonly outputSize: number | readonly (number | null)[]) {
    super();
  }
  forward(x: Tensor): Tensor {
    return adaptiveMaxPool2d(x, this.outputSize);
  }
  protected override extraRepr(): string {
    return `outputSize=${JSON.stringify(this.outputSize)}`;
  }
}
