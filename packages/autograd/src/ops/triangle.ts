import { E, NDArray, ShapeError, ValueError, fmtShape } from '@surf/core';
import { fromOp } from '../node';
import { Tensor } from '../tensor';

/**
 * torch.triu / torch.tril on the last two dims: keeps the elements on and above (triu) or on
 * and below (tril) the `diagonal`-th diagonal, zeroing the rest; the gradient is masked alike.
 */
function triangle(op: 'triu' | 'tril', x: Tensor, diagonal: number): Tensor {
  const nd = x.nd(op);
  if (nd.ndim < 2) throw new ShapeError(`${op}: got shape ${fmtShape(nd.shape)}; expected at least 2 dims`);
  if (!Number.isInteger(diagonal)) throw new ValueError(`${op}: diagonal ${diagonal}; expected an integer`);
  const [m, n] = nd.shape.slice(-2);
  const rows = NDArray.fromData(
    nd.backend,
    Int32Array.from({ length: m }, (_, i) => i),
    [m, 1],
  );
  const cols = NDArray.fromData(
    nd.backend,
    Int32Array.from({ length: n }, (_, i) => i),
    [1, n],
  );
  // keep iff col - row >= k (triu) or col - row <= k (tril)
  const d = E.sub(E.in(2), E.in(1));
  const keep = op === 'triu' ? E.lt(E.i(diagonal - 1), d) : E.lt(d, E.i(diagonal + 1));
  const zero = E.c(0, nd.dtype);
  const [out] = NDArray.elementwise([E.where(keep, E.in(0), zero)], [nd, rows, cols], op);
  return fromOp(
    op,
    out,
    [x],
    (g) => {
      const [r] = NDArray.elementwise([E.where(keep, E.in(0), E.f(0))], [g, rows, cols], `${op} backward`);
      return [r];
    },
    [rows, cols],
  );
}

export const triu = (x: Tensor, diagonal = 0) => triangle('triu', x, diagonal);
export const tril = (x: Tensor, diagonal = 0) => triangle('tril', x, diagonal);
