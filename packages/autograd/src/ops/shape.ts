import { E, NDArray, ShapeError, ValueError, fmtShape, normAxes, normAxis, numel } from '@surf/core';
import { alias, fromOp } from '../node';
import { Tensor } from '../tensor';

/**
 * Movement ops: new views of the same storage (core's View), so they cost no kernel; each
 * backward rule is the inverse movement applied to the gradient (also a view), except
 * expand, whose gradient the engine sums back to the original shape.
 */

/** Resolves one -1 in a requested shape. */
function inferShape(op: string, shape: readonly number[], size: number, from: readonly number[]): number[] {
  const free = shape.filter((d) => d === -1).length;
  if (free > 1 || !shape.every((d) => Number.isInteger(d) && d >= -1))
    throw new ShapeError(`${op}: invalid shape ${fmtShape(shape)}; expected non-negative integers and at most one -1`);
  if (free === 0) {
    if (numel(shape) !== size)
      throw new ShapeError(
        `${op}: cannot reshape ${fmtShape(from)} (${size} elements) to ${fmtShape(shape)} (${numel(shape)} elements)`,
      );
    return shape.slice();
  }
  const known = shape.reduce((a, d) => (d === -1 ? a : a * d), 1);
  if (known === 0 || size % known !== 0)
    throw new ShapeError(`${op}: cannot reshape ${fmtShape(from)} (${size} elements) to ${fmtShape(shape)}`);
  return shape.map((d) => (d === -1 ? size / known : d));
}

export function reshape(x: Tensor, shape: readonly number[], op = 'reshape'): Tensor {
  const nd = x.nd(op);
  const target = inferShape(op, shape, nd.size, nd.shape);
  const from = nd.shape.slice();
  return fromOp(op, nd.reshape(target), [x], (g) => [g.reshape(from)]);
}

export function permute(x: Tensor, order: readonly number[]): Tensor {
  const nd = x.nd('permute');
  if (order.length !== nd.ndim)
    throw new ShapeError(
      `permute: got ${order.length} dims ${JSON.stringify(order)} for a ${nd.ndim}-d tensor of shape ${fmtShape(nd.shape)}; expected a permutation of all ${nd.ndim} dims`,
    );
  const ord = order.map((a) => normAxis('permute', a, nd.ndim));
  const inv = new Array<number>(ord.length);
  ord.forEach((a, i) => {
    inv[a] = i;
  });
  return fromOp('permute', nd.permute(ord), [x], (g) => [g.permute(inv)]);
}

export function transpose(x: Tensor, d0: number, d1: number): Tensor {
  const n = x.ndim;
  const a = normAxis('transpose', d0, n),
    b = normAxis('transpose', d1, n);
  const order = Array.from({ length: n }, (_, i) => (i === a ? b : i === b ? a : i));
  return permute(x, order);
}

export function expand(x: Tensor, shape: readonly number[], op = 'expand'): Tensor {
  const nd = x.nd(op);
  const lead = shape.length - nd.ndim;
  if (lead < 0)
    throw new ShapeError(`${op}: cannot expand shape ${fmtShape(nd.shape)} to fewer dims ${fmtShape(shape)}`);
  const target = shape.map((d, i) => (d === -1 && i >= lead ? nd.shape[i - lead] : d));
  return fromOp(op, nd.expand(target, op), [x], (g) => [alias(g)]);
}

export function narrow(x: Tensor, dim: number, start: number, length: number): Tensor {
  const nd = x.nd('narrow');
  const ax = normAxis('narrow', dim, nd.ndim);
  const n = nd.shape[ax];
  const s = start < 0 ? start + n : start;
  if (!Number.isInteger(s) || !Number.isInteger(length) || s < 0 || length < 0 || s + length > n) {
    throw new ShapeError(
      `narrow: start ${start} and length ${length} do not fit dim ${dim} of size ${n} in shape ${fmtShape(nd.shape)} (expected 0 <= start <= start + length <= ${n})`,
    );
  }
  const ranges = nd.shape.map((d, i) => (i === ax ? [s, s + length] : [0, d]) as [number, number]);
  const widths = nd.shape.map((d, i) => (i === ax ? [s, n - s - length] : [0, 0]) as [number, number]);
  return fromOp('narrow', nd.crop(ranges), [x], (g) => [g.pad(widths)]);
}

export function flip(x: Tensor, dims: number | readonly number[]): Tensor {
  const nd = x.nd('flip');
  const axes = normAxes('flip', dims, nd.ndim);
  return fromOp('flip', nd.flip(axes), [x], (g) => [g.flip(axes)]);
}

export function squeeze(x: Tensor, dim?: number | readonly number[]): Tensor {
  const shape = x.shape;
  const axes = dim === undefined ? shape.map((_, i) => i) : normAxes('squeeze', dim, shape.length);
  // As PyTorch: a named dim that is not 1 is left alone.
  return reshape(
    x,
    shape.filter((d, i) => !(d === 1 && axes.includes(i))),
    'squeeze',
  );
}

export function unsqueeze(x: Tensor, dim: number): Tensor {
  const shape = x.shape;
  const ax = normAxis('unsqueeze', dim, shape.length + 1);
  shape.splice(ax, 0, 1);
  return reshape(x, shape, 'unsqueeze');
}

export function flatten(x: Tensor, startDim: number, endDim: number): Tensor {
  const shape = x.shape;
  if (shape.length === 0) return reshape(x, [1], 'flatten');
  const a = normAxis('flatten', startDim, shape.length),
    b = normAxis('flatten', endDim, shape.length);
  if (a > b)
    throw new ValueError(`flatten: startDim ${startDim} comes after endDim ${endDim} for shape ${fmtShape(shape)}`);
  return reshape(x, [...shape.slice(0, a), numel(shape.slice(a, b + 1)), ...shape.slice(b + 1)], 'flatten');
}

export function contiguous(x: Tensor): Tensor {
  return fromOp('contiguous', x.nd('contiguous').contiguous(), [x], (g) => [alias(g)]);
}

export function clone(x: Tensor): Tensor {
  const [c] = NDArray.elementwise([E.in(0)], [x.nd('clone')], 'clone');
  return fromOp('clone', c, [x], (g) => [alias(g)]);
}
