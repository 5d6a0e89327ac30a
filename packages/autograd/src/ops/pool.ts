import {
  DTypeError,
  NDArray,
  PoolParams,
  ShapeError,
  ValueError,
  parseOptions,
  poolBackwardNd,
  poolNd,
} from '@surf/core';
import { fromOp } from '../node';
import { Tensor, checkTensor } from '../tensor';
import { matmul } from './matmul';
import { SIZE_RULE, batchify, tuple } from './conv';

/**
 * 2-d pooling over the contract's pool2d: one windowed kernel forward (max also keeps the
 * first maximum's tap, where PyTorch sends the gradient) and one gather kernel backward.
 * adaptiveAvgPool2d's windows vary in size: it is two matmuls with averaging matrices.
 */

export interface MaxPoolOptions {
  stride?: number | readonly number[];
  padding?: number | readonly number[];
  dilation?: number | readonly number[];
  ceilMode?: boolean;
}

export interface AvgPoolOptions {
  stride?: number | readonly number[];
  padding?: number | readonly number[];
  ceilMode?: boolean;
  countIncludePad?: boolean;
}

/** PyTorch's pooling output size: the last window must start inside the input or the low padding. */
function poolOut(op: string, len: number, k: number, s: number, p: number, d: number, ceil: boolean): number {
  const span = len + 2 * p - d * (k - 1) - 1;
  if (span < 0)
    throw new ShapeError(`${op}: kernel ${k} (dilation ${d}) is larger than the padded input ${len} + 2·${p}`);
  let o = Math.floor((span + (ceil ? s - 1 : 0)) / s) + 1;
  if (ceil && (o - 1) * s >= len + p) o--;
  return o;
}

interface Geometry {
  k: number[];
  s: number[];
  p: number[];
  d: number[];
  out: number[];
}

function geometry(
  op: string,
  x: Tensor,
  kernelSize: unknown,
  opts: { stride?: unknown; padding?: unknown; dilation?: unknown; ceilMode?: boolean },
): Geometry {
  if (x.dtype !== 'float32') throw new DTypeError(`${op}: input has dtype ${x.dtype}; expected float32`);
  const k = tuple(op, 'kernelSize', kernelSize, 2, 1);
  const s = opts.stride === undefined || opts.stride === null ? k.slice() : tuple(op, 'stride', opts.stride, 2, 1);
  const p = tuple(op, 'padding', opts.padding ?? 0, 2, 0);
  const d = tuple(op, 'dilation', opts.dilation ?? 1, 2, 1);
  if (p.some((q, i) => q > k[i] / 2))
    throw new ValueError(
      `${op}: padding ${JSON.stringify(p)} should be at most half the kernel size ${JSON.stringify(k)}`,
    );
  const xs = x.shape;
  const out = [0, 1].map((i) => poolOut(op, xs[xs.length - 2 + i], k[i], s[i], p[i], d[i], !!opts.ceilMode));
  return { k, s, p, d, out };
}

export function maxPool2d(x: Tensor, kernelSize: number | readonly number[], opts: MaxPoolOptions = {}): Tensor {
  const op = 'maxPool2d';
  checkTensor(op, x, 'the input');
  parseOptions(op, opts, { stride: SIZE_RULE, padding: SIZE_RULE, dilation: SIZE_RULE, ceilMode: 'boolean' });
  const [xb, unbatch] = batchify(op, x, 2, '[N, C, H, W]');
  const g = geometry(op, xb, kernelSize, opts);
  return unbatch(poolOp(op, xb, params('max', g)));
}

/** The contract's pool parameters for this geometry. */
function params(kind: 'max' | 'avg', g: Geometry, countIncludePad = true): PoolParams {
  const two = (a: number[]) => [a[0], a[1]] as const;
  return {
    kind,
    kernel: two(g.k),
    stride: two(g.s),
    padding: two(g.p),
    dilation: two(g.d),
    out: two(g.out),
    countIncludePad,
  };
}

/** One pool2d kernel forward; its gradient is the contract's pool2dBackward (a gather, no atomics). */
function poolOp(op: string, x: Tensor, p: PoolParams): Tensor {
  const [out, arg] = poolNd(x.nd(op), p, op);
  const inShape = x.shape.slice();
  return fromOp(op, out, [x], (gy) => [poolBackwardNd(gy, arg, p, inShape, `${op} backward`)], arg ? [arg] : []);
}

export function avgPool2d(x: Tensor, kernelSize: number | readonly number[], opts: AvgPoolOptions = {}): Tensor {
  const op = 'avgPool2d';
  checkTensor(op, x, 'the input');
  parseOptions(op, opts, { stride: SIZE_RULE, padding: SIZE_RULE, ceilMode: 'boolean', countIncludePad: 'boolean' });
  const [xb, unbatch] = batchify(op, x, 2, '[N, C, H, W]');
  const g = geometry(op, xb, kernelSize, opts);
  return unbatch(poolOp(op, xb, params('avg', g, opts.countIncludePad ?? true)));
}

/**
 * PyTorch's adaptive average pool: output cell i averages input rows floor(i·H/oH) to
 * ceil((i+1)·H/oH). Separable, so it is two matmuls with host-built averaging matrices
 * (P_h · x · P_wᵀ), and matmul's backward gives the gradient.
 */
export function adaptiveAvgPool2d(x: Tensor, outputSize: number | readonly (number | null)[]): Tensor {
  const op = 'adaptiveAvgPool2d';
  checkTensor(op, x, 'the input');
  if (x.dtype !== 'float32') throw new DTypeError(`${op}: input has dtype ${x.dtype}; expected float32`);
  const [xb, unbatch] = batchify(op, x, 2, '[N, C, H, W]');
  const [h, w] = xb.shape.slice(2);
  const raw =
    typeof outputSize === 'number'
      ? [outputSize, outputSize]
      : Array.isArray(outputSize) && outputSize.length === 2
        ? outputSize.map((v, i) => (v === null ? [h, w][i] : v))
        : null;
  if (!raw || !raw.every((v) => Number.isInteger(v) && (v as number) >= 1))
    throw new ValueError(
      `${op}: outputSize ${JSON.stringify(outputSize)}; expected a positive integer or a pair (null keeps that dim)`,
    );
  const [oH, oW] = raw as number[];
  const avg = (o: number, len: number, transpose: boolean): Tensor => {
    const m = new Float32Array(o * len);
    for (let i = 0; i < o; i++) {
      const st = Math.floor((i * len) / o),
        en = Math.ceil(((i + 1) * len) / o);
      for (let j = st; j < en; j++) m[transpose ? j * o + i : i * len + j] = 1 / (en - st);
    }
    return new Tensor(NDArray.fromData(xb.nd(op).backend, m, transpose ? [len, o] : [o, len]));
  };
  const ph = avg(oH, h, false),
    pw = avg(oW, w, true);
  const t = matmul(ph, xb);
  const y = matmul(t, pw);
  t.dispose();
  ph.dispose();
  pw.dispose();
  return unbatch(y);
}
