import { DTypeError, E, NDArray, ValueError, normAxes, normAxis } from '@surf/core';
import { alias, fromOp } from '../node';
import { tidy } from '../scope';
import { Tensor } from '../tensor';
import { X, fused } from './fuse';
import { sub, mul, div } from './arith';

/**
 * Reductions over `dim` (a number, a list, or absent for all dims). Backward rules broadcast
 * the gradient back as a stride-0 view (no kernel) wherever the rule is a plain copy.
 */
type Dims = number | readonly number[] | undefined;

/** The shape with reduced dims kept as 1 (what the backend returns). */
export function keptShape(shape: readonly number[], axes: readonly number[]): number[] {
  return shape.map((d, i) => (axes.includes(i) ? 1 : d));
}

/** A gradient of the reduced output, reshaped to kept dims and broadcast back to `shape`. */
export function spread(g: NDArray, kept: readonly number[], shape: readonly number[]): NDArray {
  const k = g.reshape(kept);
  const out = k.expand(shape);
  k.dispose();
  return out;
}

function numeric(op: string, x: Tensor): NDArray {
  const nd = x.nd(op);
  if (nd.dtype === 'bool') throw new DTypeError(`${op}: got dtype bool; expected float32 or int32 (cast first)`);
  return nd;
}

export function sum(x: Tensor, dim: Dims, keepdim: boolean): Tensor {
  let nd = x.nd('sum');
  const axes = normAxes('sum', dim, nd.ndim);
  // As PyTorch, summing bools counts them.
  const counted = nd.dtype === 'bool' ? nd.cast('int32') : null;
  if (counted) nd = counted;
  const out = nd.sum(axes, keepdim);
  counted?.dispose();
  const shape = x.shape;
  const kept = keptShape(shape, axes);
  return fromOp('sum', out, [x], (g) => [spread(g, kept, shape)]);
}

export function mean(x: Tensor, dim: Dims, keepdim: boolean): Tensor {
  const nd0 = x.nd('mean');
  const axes = normAxes('mean', dim, nd0.ndim);
  const nd = nd0.dtype === 'float32' ? nd0 : nd0.cast('float32');
  const n = axes.reduce((a, d) => a * nd.shape[d], 1);
  const s = nd.sum(axes, keepdim);
  if (nd !== nd0) nd.dispose();
  const out = s.map(E.mul(E.in(0), E.f(1 / n)));
  s.dispose();
  const shape = x.shape;
  const kept = keptShape(shape, axes);
  return fromOp('mean', out, [x], (g) => {
    const scaled = g.map(E.mul(E.in(0), E.f(1 / n)));
    const r = spread(scaled, kept, shape);
    scaled.dispose();
    return [r];
  });
}

/**
 * max/min values. The gradient is split equally among tied extrema (PyTorch's amax rule):
 * each of k tied elements gets g/k, so the gradient's sum is always g.
 */
function extreme(op: 'max' | 'min', x: Tensor, dim: Dims, keepdim: boolean): Tensor {
  const nd = numeric(op, x);
  const axes = normAxes(op, dim, nd.ndim);
  if (axes.some((a) => nd.shape[a] === 0) && nd.size === 0)
    throw new ValueError(`${op}: cannot reduce an empty dim (it has no ${op === 'max' ? 'maximum' : 'minimum'})`);
  // min(x) = -max(-x) for floats (exact); for int32, ~x = -1 - x flips the order without overflow.
  const flip = (e = E.in(0)) => (nd.dtype === 'float32' ? E.neg(e) : E.sub(E.i(-1), e));
  const src = op === 'max' ? alias(nd) : nd.map(flip());
  const mk = src.max(axes, true);
  src.dispose();
  const mKept = op === 'max' ? mk : mk.map(flip());
  if (mKept !== mk) mk.dispose();
  const shape = x.shape;
  const kept = keptShape(shape, axes);
  const out = keepdim ? alias(mKept) : mKept.reshape(shape.filter((_, i) => !axes.includes(i)));
  const savedX = alias(nd);
  return fromOp(
    op,
    out,
    [x],
    (g) => {
      const [hit] = NDArray.elementwise([E.cast(E.eq(E.in(0), E.in(1)), 'float32')], [savedX, mKept], `${op} backward`);
      const count = hit.sum(axes, true);
      const gk = g.reshape(kept);
      const [r] = NDArray.elementwise([E.div(E.mul(E.in(0), E.in(1)), E.in(2))], [hit, gk, count], `${op} backward`);
      hit.dispose();
      count.dispose();
      gk.dispose();
      return [r];
    },
    [savedX, mKept],
  );
}
export const max = (x: Tensor, dim: Dims, keepdim: boolean) => extreme('max', x, dim, keepdim);
export const min = (x: Tensor, dim: Dims, keepdim: boolean) => extreme('min', x, dim, keepdim);

/** The first index of the extremum (NaN counts as the maximum, as in PyTorch). */
function argExtreme(op: 'argmax' | 'argmin', x: Tensor, dim: number | undefined, keepdim: boolean): Tensor {
  const nd0 = numeric(op, x);
  const flat = dim === undefined;
  const ax = flat ? 0 : normAxis(op, dim, nd0.ndim);
  const n = flat ? nd0.size : nd0.shape[ax];
  if (n === 0) throw new ValueError(`${op}: cannot take ${op} of an empty dim`);
  const nd = flat ? nd0.reshape([nd0.size]) : alias(nd0);
  const isF = nd.dtype === 'float32';
  const src = op === 'argmax' ? alias(nd) : nd.map(isF ? E.neg(E.in(0)) : E.sub(E.i(-1), E.in(0)));
  nd.dispose();
  const m = src.max(ax, true);
  const idxShape = src.shape.map((d, i) => (i === ax ? d : 1));
  const idx = NDArray.fromData(
    src.backend,
    Int32Array.from({ length: n }, (_, i) => i),
    idxShape,
  );
  const hit = isF ? X.or(E.eq(E.in(0), E.in(1)), X.not(E.eq(E.in(0), E.in(0)))) : E.eq(E.in(0), E.in(1));
  // Non-hits get n; the first hit is the smallest candidate, found as -1 - max(-1 - cand).
  const cand = NDArray.elementwise([E.sub(E.i(-1), E.where(hit, E.in(2), E.i(n)))], [src, m, idx], op)[0];
  src.dispose();
  m.dispose();
  idx.dispose();
  const best = cand.max(ax, keepdim);
  cand.dispose();
  const out = best.map(E.sub(E.i(-1), E.in(0)));
  best.dispose();
  if (flat && keepdim) {
    const r = out.reshape(x.shape.map(() => 1));
    out.dispose();
    return new Tensor(r);
  }
  return new Tensor(out);
}
export const argmax = (x: Tensor, dim: number | undefined, keepdim: boolean) => argExtreme('argmax', x, dim, keepdim);
export const argmin = (x: Tensor, dim: number | undefined, keepdim: boolean) => argExtreme('argmin', x, dim, keepdim);

/** Σ(x - mean)² / max(n - correction, 0), composed from differentiable ops. */
export function variance(x: Tensor, dim: Dims, keepdim: boolean, correction: number, op = 'var'): Tensor {
  const axes = normAxes(op, dim, x.nd(op).ndim);
  const n = axes.reduce((a, d) => a * x.shape[d], 1);
  return tidy(() => {
    const xf = x.dtype === 'float32' ? x : x.float();
    const d = sub(xf, mean(xf, axes, true));
    return div(sum(mul(d, d), axes, keepdim), Math.max(n - correction, 0));
  });
}

/**
 * sqrt of the variance, whose gradient g / (2·std) is 0 where std is 0 (PyTorch's rule: a
 * constant input has gradient 0, not 0·∞ = NaN).
 */
export function std(x: Tensor, dim: Dims, keepdim: boolean, correction: number): Tensor {
  return tidy(() =>
    fused('std', [variance(x, dim, keepdim, correction, 'std')], ['float32'], {
      fwd: ([v]) => E.sqrt(v),
      grad: (g, _, out) => [E.where(E.eq(out, E.f(0)), E.f(0), E.div(g, E.mul(E.f(2), out)))],
    }),
  );
}
