import { DTypeError, E, NDArray, normAxis } from '@surf/core';
import { fromOp } from '../node';
import { Tensor, checkTensor } from '../tensor';
import { scanArray } from './scan';

/**
 * torch.cumprod along dim, forward as the log-step product scan of scan.ts. The gradient is
 * exact with zeros (no division by x): with P_k = x_0···x_{k-1} (exclusive prefix product)
 * and S_k = Σ_{i≥k} g_i·x_{k+1}···x_i, dL/dx_k = P_k·S_k. S satisfies S_k = g_k + x_{k+1}·S_{k+1},
 * a linear recurrence solved as a log-step scan of affine pairs (A, B) from the end:
 * (A_k, B_k) ∘ (A_{k+s}, B_{k+s}) = (A_k·A_{k+s}, B_k + A_k·B_{k+s}).
 */

/** y moved s places toward index 0 along axis, the last s places filled with 0. */
function pulled(y: NDArray, axis: number, s: number): NDArray {
  const n = y.shape[axis];
  const c = y.crop(y.shape.map((d, i) => (i === axis ? [Math.min(s, n), n] : [0, d]) as [number, number]));
  const p = c.pad(y.shape.map((_, i) => (i === axis ? [0, Math.min(s, n)] : [0, 0]) as [number, number]));
  c.dispose();
  return p;
}

/** y moved s places away from index 0 along axis, the first s places filled with `fill`. */
function pushed(y: NDArray, axis: number, fill: number): NDArray {
  const n = y.shape[axis];
  const c = y.crop(y.shape.map((d, i) => (i === axis ? [0, n - 1] : [0, d]) as [number, number]));
  const p = c.pad(y.shape.map((_, i) => (i === axis ? [1, 0] : [0, 0]) as [number, number]));
  c.dispose();
  if (fill === 0) return p;
  const pos = NDArray.fromData(
    y.backend,
    Int32Array.from({ length: n }, (_, i) => i),
    y.shape.map((d, i) => (i === axis ? n : 1)),
  );
  const [r] = NDArray.elementwise([E.where(E.eq(E.in(1), E.i(0)), E.c(fill, y.dtype), E.in(0))], [p, pos], 'cumprod');
  p.dispose();
  pos.dispose();
  return r;
}

/** The suffix recurrence S_k = g_k + x_{k+1}·S_{k+1} along axis. */
function suffixAffine(g: NDArray, x: NDArray, axis: number): NDArray {
  const n = g.shape[axis];
  let a = pulled(x, axis, 1);
  let b = g.reshape(g.shape);
  for (let s = 1; s < n; s *= 2) {
    const as = pulled(a, axis, s);
    const bs = pulled(b, axis, s);
    const [na, nb] = NDArray.elementwise(
      [E.mul(E.in(0), E.in(2)), E.add(E.in(1), E.mul(E.in(0), E.in(3)))],
      [a, b, as, bs],
      'cumprod backward',
    );
    [a, b, as, bs].forEach((t) => t.dispose());
    a = na;
    b = nb;
  }
  a.dispose();
  return b;
}

export function cumprod(x: Tensor, dim: number): Tensor {
  checkTensor('cumprod', x, 'input');
  const nd0 = x.nd('cumprod');
  if (nd0.dtype === 'bool') throw new DTypeError('cumprod: got dtype bool; expected float32 or int32 (cast first)');
  const nd = nd0.ndim === 0 ? nd0.reshape([1]) : nd0.reshape(nd0.shape);
  const ax = normAxis('cumprod', dim, nd.ndim);
  const y = scanArray(nd, ax, 'mul');
  const out = nd0.ndim === 0 ? y.reshape([]) : y;
  if (out !== y) y.dispose();
  return fromOp(
    'cumprod',
    out,
    [x],
    (g) => {
      if (nd.shape[ax] === 0) return [g.reshape(nd0.shape)];
      const g1 = g.reshape(nd.shape);
      const sc = scanArray(nd, ax, 'mul');
      const pre = pushed(sc, ax, 1);
      sc.dispose();
      const s = suffixAffine(g1, nd, ax);
      const [r] = NDArray.elementwise([E.mul(E.in(0), E.in(1))], [pre, s], 'cumprod backward');
      [g1, pre, s].forEach((t) => t.dispose());
      const back = r.reshape(nd0.shape);
      r.dispose();
      return [back];
    },
    [nd],
  );
}
