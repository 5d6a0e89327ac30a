import { ValueError, parseOptions } from '@surf/core';
import { Tensor } from '@surf/autograd';
import { Module } from '../module';
import { InterpolateMode, InterpolateOptions, interpolate, pixelShuffle, pixelUnshuffle } from '../functional/resample';

/** nn.Upsample({ size | scaleFactor, mode = 'nearest', alignCorners }): functional.interpolate as a layer. */
export class Upsample extends Module {
  readonly size: number | readonly number[] | undefined;
  readonly scaleFactor: number | readonly number[] | undefined;
  readonly mode: InterpolateMode;
  readonly alignCorners: boolean | undefined;
  constructor(opts: InterpolateOptions = {}) {
    super();
    const o = parseOptions<InterpolateOptions>('Upsample', opts, {
      size: 'any',
      scaleFactor: 'any',
      mode: ['nearest', 'linear', 'bilinear'],
      alignCorners: 'boolean',
    });
    if ((o.size === undefined) === (o.scaleFactor === undefined))
      throw new ValueError('Upsample: give exactly one of size and scaleFactor');
    this.size = o.size;
    this.scaleFactor = o.scaleFactor;
    this.mode = o.mode ?? 'nearest';
    this.alignCorners = o.alignCorners;
  }
  forward(x: Tensor): Tensor {
    return interpolate(x, {
      size: this.size,
      scaleFactor: this.scaleFactor,
      mode: this.mode,
      alignCorners: this.alignCorners,
    });
  }
  protected override extraRepr(): string {
    const s =
      this.size !== undefined ? `size=${JSON.stringify(this.size)}` : `scaleFactor=${JSON.stringify(this.scaleFactor)}`;
    return `${s}, mode='${this.mode}'${this.alignCorners ? ', alignCorners=true' : ''}`;
  }
}

export class PixelShuffle extends Module {
  constructor(readonly upscaleFactor: number) {
    super();
    if (!Number.isInteger(upscaleFactor) || upscaleFactor < 1)
      throw new ValueError(`PixelShuffle: upscaleFactor must be a positive integer; got ${upscaleFactor}`);
  }
  forward(x: Tensor): Tensor {
    return pixelShuffle(x, this.upscaleFactor);
  }
  protected override extraRepr(): string {
    return `upscaleFactor=${this.upscaleFactor}`;
  }
}

export class PixelUnshuffle extends Module {
  constructor(readonly downscaleFactor: number) {
    super();
    if (!Number.isInteger(downscaleFactor) || downscaleFactor < 1)
      throw new ValueError(`PixelUnshuffle: downscaleFactor must be a positive integer; got ${downscaleFactor}`);
  }
  forward(x: Tensor): Tensor {
    return pixelUnshuffle(x, this.downscaleFactor);
  }
  protected override extraRepr(): string {
    return `downscaleFactor=${this.downscaleFactor}`;
  }
}
