import { E, Expr, NDArray, normAxes, normAxis } from '@surf/core';
import { alias, fromOp } from '../node';
import { Tensor } from '../tensor';
import { keptShape, spread } from './reduce';

/**
 * The log-sum-exp family, numerically stable by subtracting the max: 2 reductions and 2
 * fused elementwise kernels forward, and at most one reduction and one kernel backward.
 */
function floatNd(op: string, x: Tensor): { nd: NDArray; own: boolean } {
  const nd = x.nd(op);
  return nd.dtype === 'float32' ? { nd, own: false } : { nd: nd.cast('float32'), own: true };
}

/** The reduced axes, checked before floatNd makes a copy (a rejected call allocates nothing). */
const axesOf = (op: string, x: Tensor, dim: number | readonly number[] | undefined) => normAxes(op, dim, x.nd(op).ndim);
const axisOf = (op: string, x: Tensor, dim: number) => normAxis(op, dim, x.nd(op).ndim);

// A max of ±Infinity (a row of -Infinity) would make x - m NaN; shift by 0 instead.
const finiteOr0 = (m: Expr): Expr => E.where(E.eq(E.sub(m, m), E.f(0)), m, E.f(0));

/** m = max over axes (kept dims) and s = Σ exp(x - m'), m' the finite shift. */
function expSums(op: string, nd: NDArray, axes: number[]): { m: NDArray; s: NDArray } {
  const m = nd.max(axes, true);
  const [e] = NDArray.elementwise([E.exp(E.sub(E.in(0), finiteOr0(E.in(1))))], [nd, m], op);
  const s = e.sum(axes, true);
  e.dispose();
  return { m, s };
}

/** log Σ exp(x); gradient g·exp(x - out) (the softmax), one kernel. */
export function logsumexp(x: Tensor, dim: number | readonly number[] | undefined, keepdim: boolean): Tensor {
  const axes = axesOf('logsumexp', x, dim);
  const { nd, own } = floatNd('logsumexp', x);
  const { m, s } = expSums('logsumexp', nd, axes);
  const [lse] = NDArray.elementwise([E.add(E.log(E.in(0)), finiteOr0(E.in(1)))], [s, m], 'logsumexp');
  m.dispose();
  s.dispose();
  const shape = x.shape;
  const kept = keptShape(shape, axes);
  const out = keepdim ? alias(lse) : lse.reshape(shape.filter((_, i) => !axes.includes(i)));
  const savedX = own ? nd : alias(nd);
  return fromOp(
    'logsumexp',
    out,
    [x],
    (g) => {
      const gk = spread(g, kept, shape);
      const [r] = NDArray.elementwise(
        [E.mul(E.in(0), E.exp(E.sub(E.in(1), E.in(2))))],
        [gk, savedX, lse],
        'logsumexp backward',
      );
      gk.dispose();
      return [r];
    },
    [savedX, lse],
  );
}

/** exp(x - m) / Σ exp(x - m); gradient out·(g - Σ g·out). */
export function softmax(x: Tensor, dim: number): Tensor {
  const ax = axisOf('softmax', x, dim);
  const { nd, own } = floatNd('softmax', x);
  const { m, s } = expSums('softmax', nd, [ax]);
  const [out] = NDArray.elementwise([E.div(E.exp(E.sub(E.in(0), finiteOr0(E.in(1)))), E.in(2))], [nd, m, s], 'softmax');
  m.dispose();
  s.dispose();
  if (own) nd.dispose();
  const saved = alias(out);
  return fromOp(
    'softmax',
    out,
    [x],
    (g) => {
      const [go] = NDArray.elementwise([E.mul(E.in(0), E.in(1))], [g, saved], 'softmax backward');
      const dotp = go.sum(ax, true);
      go.dispose();
      const [r] = NDArray.elementwise([E.mul(E.in(1), E.sub(E.in(0), E.in(2)))], [g, saved, dotp], 'softmax backward');
      dotp.dispose();
      return [r];
    },
    [saved],
  );
}

/** x - m - log Σ exp(x - m); gradient g - exp(out)·Σ g. */
export function logSoftmax(x: Tensor, dim: number): Tensor {
  const ax = axisOf('logSoftmax', x, dim);
  const { nd, own } = floatNd('logSoftmax', x);
  const { m, s } = expSums('logSoftmax', nd, [ax]);
  const [out] = NDArray.elementwise(
    [E.sub(E.sub(E.in(0), finiteOr0(E.in(1))), E.log(E.in(2)))],
    [nd, m, s],
    'logSoftmax',
  );
  m.dispose();
  s.dispose();
  if (own) nd.dispose();
  const saved = alias(out);
  return fromOp(
    'logSoftmax',
    out,
    [x],
    (g) => {
      const gs = g.sum(ax, true);
      const [r] = NDArray.elementwise(
        [E.sub(E.in(0), E.mul(E.exp(E.in(1)), E.in(2)))],
        [g, saved, gs],
        'logSoftmax backward',
      );
      gs.dispose();
      return [r];
    },
    [saved],
  );
}
