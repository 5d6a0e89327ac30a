import type { Strided } from './backend';
import { DTypeError, ShapeError, ValueError, fmtShape } from './errors';
import { NDArray } from './ndarray';
import type { PoolParams } from './pool-params';

export type { PoolParams } from './pool-params';

/**
 * The contract's windowed pooling over the last two dims of x [N, C, H, W] (PyTorch's
 * max_pool2d / avg_pool2d). Output cell (oh, ow) reads the taps (i, j) of the window at
 * (oh·stride - padding + i·dilation, ow·stride - padding + j·dilation); taps outside the
 * input are skipped (never read). 'max' also returns, per output, the tap index i·kW + j of
 * the first largest value (NaN counts as largest), which is where its gradient goes. 'avg'
 * divides by the window's count as PyTorch does: the window clipped to the padded input
 * (countIncludePad) or to the input. `out` is given (the caller applied ceilMode).
 */

/** Validates a pool call (x float32 [N, C, H, W], no view mask); returns the output shape. */
export function checkPoolArgs(x: Pick<Strided, 'view' | 'storage'>, p: PoolParams, op = 'pool'): number[] {
  if (x.storage.dtype !== 'float32')
    throw new DTypeError(`${op}: input has dtype ${x.storage.dtype}; expected float32`);
  return checkPoolGeometry(x.view.shape, p, op);
}

/** The window rule for an input of shape [N, C, H, W]; returns the output shape. */
function checkPoolGeometry(xs: readonly number[], p: PoolParams, op: string): number[] {
  if (xs.length !== 4) throw new ShapeError(`${op}: input of shape ${fmtShape(xs)}; expected [N, C, H, W]`);
  if (p.kind !== 'max' && p.kind !== 'avg')
    throw new ValueError(`${op}: kind ${JSON.stringify(p.kind)}; expected 'max' or 'avg'`);
  for (let d = 0; d < 2; d++) {
    const [k, s, pad, dil, o] = [p.kernel[d], p.stride[d], p.padding[d], p.dilation[d], p.out[d]];
    if (![k, s, dil, o].every((v) => Number.isInteger(v) && v >= 1) || !Number.isInteger(pad) || pad < 0) {
      throw new ValueError(
        `${op}: kernel ${JSON.stringify(p.kernel)}, stride ${JSON.stringify(p.stride)}, dilation ${JSON.stringify(p.dilation)} and out ${JSON.stringify(p.out)} must be positive integers, padding ${JSON.stringify(p.padding)} integers >= 0`,
      );
    }
    if (2 * pad > k)
      throw new ValueError(
        `${op}: padding ${JSON.stringify(p.padding)} should be at most half the kernel size ${JSON.stringify(p.kernel)}`,
      );
    // The last window must start inside the input or its low padding (PyTorch's rule).
    if ((o - 1) * s - pad >= xs[2 + d])
      throw new ShapeError(
        `${op}: ${o} outputs with stride ${s} and padding ${pad} start past the input's ${xs[2 + d]} along dim ${2 + d}`,
      );
  }
  if (p.kind === 'avg' && (p.dilation[0] !== 1 || p.dilation[1] !== 1))
    throw new ValueError(`${op}: average pooling takes no dilation; got ${JSON.stringify(p.dilation)}`);
  return [xs[0], xs[1], p.out[0], p.out[1]];
}

/**
 * PyTorch's average-pool divisor of each output cell [oH·oW] for an [.., h, w] input: the
 * window clipped to the padded input (countIncludePad) or to the input.
 */
export function avgPoolDivisors(p: PoolParams, h: number, w: number): Float64Array {
  const along = (d: number, len: number) =>
    Array.from({ length: p.out[d] }, (_, o) => {
      const st = o * p.stride[d] - p.padding[d];
      const en = Math.min(st + p.kernel[d], len + p.padding[d]);
      return p.countIncludePad ? en - st : Math.min(en, len) - Math.max(st, 0);
    });
  const rows = along(0, h),
    cols = along(1, w);
  const out = new Float64Array(rows.length * cols.length);
  rows.forEach((r, i) =>
    cols.forEach((c, j) => {
      out[i * cols.length + j] = r * c;
    }),
  );
  return out;
}

/** NDArray-level pool: a masked input is made contiguous first (backends see no masks). */
export function poolNd(x: NDArray, p: PoolParams, op = 'pool'): [NDArray, NDArray | null] {
  const shape = checkPoolArgs(x, p, op);
  const xs = x.view.mask ? x.contiguous() : x;
  try {
    const [y, arg] = x.backend.pool2d(xs.strided, p);
    return [NDArray.fromStorage(y, shape), arg ? NDArray.fromStorage(arg, shape) : null];
  } finally {
    if (xs !== x) xs.dispose();
  }
}

/** NDArray-level pool gradient: dx [N, C, H, W] from gy (and max's tap indices). */
export function poolBackwardNd(
  gy: NDArray,
  arg: NDArray | null,
  p: PoolParams,
  inShape: readonly number[],
  op = 'pool backward',
): NDArray {
  checkPoolBackwardArgs(gy, arg, p, inShape, op);
  const plain = (a: NDArray) => (a.view.mask ? a.contiguous() : a);
  const g = plain(gy),
    a = arg && plain(arg);
  try {
    return NDArray.fromStorage(gy.backend.pool2dBackward(g.strided, a ? a.strided : null, p, inShape), inShape);
  } finally {
    if (g !== gy) g.dispose();
    if (a && a !== arg) a.dispose();
  }
}

export function checkPoolBackwardArgs(
  gy: Pick<Strided, 'view' | 'storage'>,
  arg: Pick<Strided, 'view' | 'storage'> | null,
  p: PoolParams,
  inShape: readonly number[],
  op = 'pool backward',
): void {
  const want = checkPoolGeometry(inShape, p, op);
  const same = (s: readonly number[]) => s.length === 4 && s.every((v, i) => v === want[i]);
  if (!same(gy.view.shape) || gy.storage.dtype !== 'float32')
    throw new ShapeError(
      `${op}: gradient ${fmtShape(gy.view.shape)} ${gy.storage.dtype}; expected float32 ${fmtShape(want)}`,
    );
  if ((p.kind === 'max') !== (arg !== null))
    throw new ValueError(`${op}: ${p.kind} pooling ${p.kind === 'max' ? 'needs' : 'takes no'} tap indices`);
  if (arg && (!same(arg.view.shape) || arg.storage.dtype !== 'int32'))
    throw new ShapeError(
      `${op}: tap indices ${fmtShape(arg.view.shape)} ${arg.storage.dtype}; expected int32 ${fmtShape(want)}`,
    );
}
