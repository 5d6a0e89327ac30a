import { DTypeError, E, Expr, NDArray, ValueError, normAxes } from '@surf/core';
import { fromOp } from '../node';
import { tidy } from '../scope';
import { Tensor } from '../tensor';
import { keptShape, spread } from './reduce';
import * as R from './reduce';
import * as U from './activations';
import { ne } from './arith';

type Dims = number | readonly number[] | undefined;
export type NormOrder = number | 'fro';

/**
 * torch.norm / linalg.vector_norm over dims (all by default): (Σ|x|^p)^(1/p); p = Infinity is
 * max|x|, -Infinity min|x|, 0 counts non-zeros, 'fro' is 2. The p-norm's gradient
 * g·x·|x|^(p-2)/‖x‖^(p-1) is written out so a zero vector gets gradient 0 (as PyTorch), not the
 * NaN a chain of sqrt and square would give.
 */
export function norm(x: Tensor, p: NormOrder = 2, dim?: Dims, keepdim = false): Tensor {
  const nd = x.nd('norm');
  if (nd.dtype !== 'float32') throw new DTypeError(`norm: got dtype ${nd.dtype}; expected float32 (cast first)`);
  const ord = p === 'fro' ? 2 : p;
  if (typeof ord !== 'number' || Number.isNaN(ord))
    throw new ValueError(`norm: order ${JSON.stringify(p)}; expected a number, Infinity, -Infinity or 'fro'`);
  const axes = normAxes('norm', dim, nd.ndim);
  if (ord === Infinity) return tidy(() => R.max(U.abs(x), axes, keepdim));
  if (ord === -Infinity) return tidy(() => R.min(U.abs(x), axes, keepdim));
  if (ord === 0) return tidy(() => R.sum(ne(x, 0).float(), axes, keepdim));
  const shape = nd.shape.slice();
  const kept = keptShape(shape, axes);
  const pw: Expr =
    ord === 2
      ? E.mul(E.in(0), E.in(0))
      : ord === 1
        ? E.max(E.in(0), E.neg(E.in(0)))
        : E.pow(E.max(E.in(0), E.neg(E.in(0))), E.f(ord));
  const [powered] = NDArray.elementwise([pw], [nd], 'norm');
  const s = powered.sum(axes, true);
  powered.dispose();
  const [outK] = NDArray.elementwise(
    [ord === 2 ? E.sqrt(E.in(0)) : ord === 1 ? E.in(0) : E.pow(E.in(0), E.f(1 / ord))],
    [s],
    'norm',
  );
  s.dispose();
  const out = keepdim ? outK.reshape(kept) : outK.reshape(shape.filter((_, i) => !axes.includes(i)));
  const savedX = nd.reshape(shape);
  return fromOp(
    'norm',
    out,
    [x],
    (g) => {
      const gk = spread(g, kept, shape);
      const xe = E.in(1),
        ne0 = E.in(2);
      // d‖x‖/dx = x·|x|^(p-2) / ‖x‖^(p-1); 0 where ‖x‖ = 0 (and where x = 0 for p < 2).
      const absx = E.max(xe, E.neg(xe));
      const num =
        ord === 2
          ? xe
          : ord === 1
            ? E.where(E.lt(E.f(0), xe), E.f(1), E.where(E.lt(xe, E.f(0)), E.f(-1), E.f(0)))
            : E.where(E.eq(xe, E.f(0)), E.f(0), E.mul(xe, E.pow(absx, E.f(ord - 2))));
      const den = ord === 2 ? ne0 : ord === 1 ? E.f(1) : E.pow(ne0, E.f(ord - 1));
      const [r] = NDArray.elementwise(
        [E.where(E.eq(ne0, E.f(0)), E.f(0), E.div(E.mul(E.in(0), num), den))],
        [gk, savedX, outK],
        'norm backward',
      );
      gk.dispose();
      return [r];
    },
    [savedX, outK],
  );
}
