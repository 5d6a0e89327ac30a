import { ShapeError, ValueError, fmtShape, parseOptions } from '@surf/core';
import { Tensor, checkTensor, tensor } from '@surf/autograd';

/**
 * Resampling of torch.nn.functional: interpolate (nearest, linear, bilinear) and pixel
 * (un)shuffle. Interpolation is separable: one spatial dim at a time, each a gather of source
 * rows (indexSelect, whose gradient scatters back) and, for the linear modes, a blend of two.
 */

export type InterpolateMode = 'nearest' | 'linear' | 'bilinear';

export interface InterpolateOptions {
  /** Output spatial size (a number for every spatial dim, or one per dim). Give this or scaleFactor. */
  size?: number | readonly number[];
  /** Output = floor(input · scaleFactor) per spatial dim. */
  scaleFactor?: number | readonly number[];
  /** 'nearest' (default), 'linear' (3-d input), 'bilinear' (4-d input). */
  mode?: InterpolateMode;
  /** Linear modes: map corner pixel centres onto each other (default false, as PyTorch). */
  alignCorners?: boolean;
}

const SPATIAL: Record<InterpolateMode, number | null> = { nearest: null, linear: 1, bilinear: 2 };

function perDim(op: string, what: string, v: number | readonly number[], n: number): number[] {
  const a = typeof v === 'number' ? new Array<number>(n).fill(v) : [...v];
  if (a.length !== n || !a.every((x) => typeof x === 'number' && x > 0 && Number.isFinite(x)))
    throw new ValueError(`${op}: ${what} must be a positive number or ${n} of them; got ${JSON.stringify(v)}`);
  return a;
}

/** Resizes the spatial dims (all dims after [N, C]) of x. */
export function interpolate(x: Tensor, opts: InterpolateOptions = {}): Tensor {
  const op = 'interpolate';
  const o = parseOptions<InterpolateOptions>(op, opts, {
    size: 'any',
    scaleFactor: 'any',
    mode: ['nearest', 'linear', 'bilinear'],
    alignCorners: 'boolean',
  });
  checkTensor(op, x, 'the input');
  const mode = o.mode ?? 'nearest';
  const ns = x.ndim - 2;
  if (ns < 1 || (SPATIAL[mode] !== null && SPATIAL[mode] !== ns))
    throw new ShapeError(
      `${op}: mode '${mode}' expects ${SPATIAL[mode] === null ? 'an [N, C, ...] input with at least one spatial dim' : `a ${SPATIAL[mode]! + 2}-d [N, C, ...] input`}; got shape ${fmtShape(x.shape)}`,
    );
  if ((o.size === undefined) === (o.scaleFactor === undefined))
    throw new ValueError(`${op}: give exactly one of size and scaleFactor`);
  if (o.alignCorners !== undefined && mode === 'nearest')
    throw new ValueError(`${op}: alignCorners only applies to the linear modes; drop it for 'nearest'`);
  const inSize = x.shape.slice(2);
  const scales = o.scaleFactor !== undefined ? perDim(op, 'scaleFactor', o.scaleFactor, ns) : null;
  const outSize =
    o.size !== undefined ? perDim(op, 'size', o.size, ns) : inSize.map((s, i) => Math.floor(s * scales![i]));
  if (!outSize.every((s) => Number.isInteger(s) && s >= 1))
    throw new ValueError(`${op}: the output size ${fmtShape(outSize)} must be positive integers`);
  let y = x;
  for (let i = 0; i < ns; i++) {
    const dim = i + 2,
      n = inSize[i],
      m = outSize[i];
    // PyTorch's source scale: 1/scaleFactor when one was given, else in/out.
    const scale = scales ? 1 / scales[i] : n / m;
    if (mode === 'nearest') {
      const idx = Array.from({ length: m }, (_, j) => Math.min(Math.floor(j * scale), n - 1));
      y = y.indexSelect(dim, idx);
      continue;
    }
    const i0: number[] = [],
      i1: number[] = [],
      w: number[] = [];
    for (let j = 0; j < m; j++) {
      const src = o.alignCorners ? (m > 1 ? (j * (n - 1)) / (m - 1) : 0) : Math.max((j + 0.5) * scale - 0.5, 0);
      const a = Math.min(Math.floor(src), n - 1);
      i0.push(a);
      i1.push(Math.min(a + 1, n - 1));
      w.push(src - a);
    }
    const lam = tensor(Float32Array.from(w)).reshape([m, ...new Array<number>(ns - 1 - i).fill(1)]);
    const lo = y.indexSelect(dim, i0);
    y = lo.add(y.indexSelect(dim, i1).sub(lo).mul(lam));
  }
  return y;
}

function checkFactor(op: string, r: number): void {
  if (!Number.isInteger(r) || r < 1) throw new ValueError(`${op}: the factor must be a positive integer; got ${r}`);
}

/** [*, C·r², H, W] to [*, C, H·r, W·r] (PyTorch's pixel_shuffle). */
export function pixelShuffle(x: Tensor, upscaleFactor: number): Tensor {
  const op = 'pixelShuffle';
  checkTensor(op, x, 'the input');
  checkFactor(op, upscaleFactor);
  const r = upscaleFactor;
  if (x.ndim < 3 || x.shape[x.ndim - 3] % (r * r) !== 0)
    throw new ShapeError(
      `${op}: input has shape ${fmtShape(x.shape)}; expected [*, C·${r * r}, H, W] (channels divisible by ${r}²)`,
    );
  const lead = x.shape.slice(0, -3);
  const [c, h, w] = x.shape.slice(-3);
  const k = lead.length;
  const oc = c / (r * r);
  return x
    .reshape([...lead, oc, r, r, h, w])
    .permute([...lead.map((_, i) => i), k, k + 3, k + 1, k + 4, k + 2])
    .reshape([...lead, oc, h * r, w * r]);
}

/** [*, C, H·r, W·r] to [*, C·r², H, W] (PyTorch's pixel_unshuffle). */
export function pixelUnshuffle(x: Tensor, downscaleFactor: number): Tensor {
  const op = 'pixelUnshuffle';
  checkTensor(op, x, 'the input');
  checkFactor(op, downscaleFactor);
  const r = downscaleFactor;
  if (x.ndim < 3 || x.shape[x.ndim - 2] % r !== 0 || x.shape[x.ndim - 1] % r !== 0)
    throw new ShapeError(
      `${op}: input has shape ${fmtShape(x.shape)}; expected [*, C, H, W] with H and W divisible by ${r}`,
    );
  const lead = x.shape.slice(0, -3);
  const [c, h, w] = x.shape.slice(-3);
  const k = lead.length;
  return x
    .reshape([...lead, c, h / r, r, w / r, r])
    .permute([...lead.map((_, i) => i), k, k + 2, k + 4, k + 1, k + 3])
    .reshape([...lead, c * r * r, h / r, w / r]);
}
