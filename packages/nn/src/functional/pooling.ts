import { ShapeError, fmtShape, parseOptions } from '@surf/core';
import {
  AvgPoolOptions,
  MaxPoolOptions,
  Tensor,
  adaptiveAvgPool2d,
  avgPool2d,
  checkTensor,
  maxPool2d,
  stack,
} from '@surf/autograd';

/**
 * 1-d pools over [N, C, L] (or [C, L]) run the 2-d kernels on a height-1 image; the adaptive
 * max pool takes each output cell's window max, PyTorch's windows
 * [⌊i·in/out⌋, ⌈(i+1)·in/out⌉), one dim at a time.
 */

type One = number | readonly [number];
const first = (v: One | undefined): number | undefined =>
  v === undefined ? undefined : typeof v === 'number' ? v : v[0];

function as2d(op: string, x: Tensor): Tensor {
  checkTensor(op, x, 'the input');
  if (x.ndim !== 2 && x.ndim !== 3)
    throw new ShapeError(`${op}: input has shape ${fmtShape(x.shape)}; expected [N, C, L] or [C, L]`);
  return x.unsqueeze(-2);
}

export interface Pool1dOptions {
  stride?: One;
  padding?: One;
}

/** max over windows of `kernelSize` along the last dim (stride defaults to kernelSize). */
export function maxPool1d(
  x: Tensor,
  kernelSize: One,
  opts: Pool1dOptions & { dilation?: One; ceilMode?: boolean } = {},
): Tensor {
  parseOptions('maxPool1d', opts, { stride: 'any', padding: 'any', dilation: 'any', ceilMode: 'boolean' });
  const o: MaxPoolOptions = { ceilMode: opts.ceilMode };
  const s = first(opts.stride),
    p = first(opts.padding),
    d = first(opts.dilation);
  if (s !== undefined) o.stride = [1, s];
  if (p !== undefined) o.padding = [0, p];
  if (d !== undefined) o.dilation = [1, d];
  if (o.ceilMode === undefined) delete o.ceilMode;
  return maxPool2d(as2d('maxPool1d', x), [1, first(kernelSize)!], o).squeeze(-2);
}

/** mean over windows along the last dim (countIncludePad true by default, as PyTorch). */
export function avgPool1d(
  x: Tensor,
  kernelSize: One,
  opts: Pool1dOptions & { ceilMode?: boolean; countIncludePad?: boolean } = {},
): Tensor {
  parseOptions('avgPool1d', opts, { stride: 'any', padding: 'any', ceilMode: 'boolean', countIncludePad: 'boolean' });
  const o: AvgPoolOptions = {};
  const s = first(opts.stride),
    p = first(opts.padding);
  if (s !== undefined) o.stride = [1, s];
  if (p !== undefined) o.padding = [0, p];
  if (opts.ceilMode !== undefined) o.ceilMode = opts.ceilMode;
  if (opts.countIncludePad !== undefined) o.countIncludePad = opts.countIncludePad;
  return avgPool2d(as2d('avgPool1d', x), [1, first(kernelSize)!], o).squeeze(-2);
}

export function adaptiveAvgPool1d(x: Tensor, outputSize: One): Tensor {
  return adaptiveAvgPool2d(as2d('adaptiveAvgPool1d', x), [1, first(outputSize)!]).squeeze(-2);
}

/** Window max along one dim, PyTorch's adaptive windows: out slices, one max each. */
function adaptiveMaxAlong(x: Tensor, dim: number, out: number): Tensor {
  const n = x.shape[dim];
  if (out === n) return x;
  const parts: Tensor[] = [];
  for (let i = 0; i < out; i++) {
    const s = Math.floor((i * n) / out);
    const e = Math.ceil(((i + 1) * n) / out);
    parts.push(x.narrow(dim, s, e - s).amax(dim));
  }
  return stack(parts, dim);
}

/** [N, C, H, W] (or [C, H, W]) to [.., oh, ow]; null keeps that dim's size. */
export function adaptiveMaxPool2d(x: Tensor, outputSize: number | readonly (number | null)[]): Tensor {
  checkTensor('adaptiveMaxPool2d', x, 'the input');
  if (x.ndim !== 3 && x.ndim !== 4)
    throw new ShapeError(`adaptiveMaxPool2d: input has shape ${fmtShape(x.shape)}; expected [N, C, H, W] or [C, H, W]`);
  const sz = typeof outputSize === 'number' ? [outputSize, outputSize] : outputSize;
  const H = x.shape[x.ndim - 2],
    W = x.shape[x.ndim - 1];
  const oh = sz[0] ?? H,
    ow = sz[1] ?? W;
  if (sz.length !== 2 || ![oh, ow].every((v) => Number.isInteger(v) && v >= 1))
    throw new ShapeError(
      `adaptiveMaxPool2d: outputSize must be a positive integer or a pair; got ${JSON.stringify(outputSize)}`,
    );
  return adaptiveMaxAlong(adaptiveMaxAlong(x, x.ndim - 2, oh), x.ndim - 1, ow);
}
