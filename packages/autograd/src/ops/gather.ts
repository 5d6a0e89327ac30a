import { DTypeError, NDArray, ValueError, fmtShape, normAxis, scatterFlat } from '@surf/core';
import { fromOp } from '../node';
import { Tensor } from '../tensor';
import { checkIndexFits, flatPositions } from './positions';
import { checkIndexRange } from './index-range';

/**
 * Reads x at flat positions (an int32 array of the output's shape; -1 reads 0). The
 * gradient scatter-adds back to the same positions, so repeated positions add up.
 */
export function gatherFlat(op: string, x: Tensor, positions: NDArray): Tensor {
  const nd = x.nd(op);
  const shape = positions.shape.slice();
  const xs = nd.shape.slice();
  const flatX = nd.reshape([nd.size]);
  const flatP = positions.reshape([positions.size]);
  positions.dispose();
  const got = flatX.gather(0, flatP);
  flatX.dispose();
  const out = got.reshape(shape);
  got.dispose();
  return fromOp(
    op,
    out,
    [x],
    (g) => {
      const zero = NDArray.full(g.backend, [xs.reduce((a, b) => a * b, 1)], 0);
      const gf = g.reshape([g.size]);
      const s = scatterFlat('add', zero, flatP, gf);
      zero.dispose();
      gf.dispose();
      const r = s.reshape(xs);
      s.dispose();
      return [r];
    },
    [flatP],
  );
}

export function indexArray(op: string, index: Tensor): NDArray {
  const i = index.nd(op);
  if (i.dtype !== 'int32') throw new DTypeError(`${op}: index has dtype ${i.dtype}; expected int32 (use .int())`);
  return i;
}

/** torch.gather: out[i][j][k] = x[i][index[i][j][k]][k] for dim 1. An index outside the dim is an error. */
export function gather(x: Tensor, dim: number, index: Tensor): Tensor {
  if (!(index instanceof Tensor)) throw new ValueError('gather: index must be an int32 Tensor');
  const xs = x.shape;
  const ax = normAxis('gather', dim, xs.length);
  const i = indexArray('gather', index);
  checkIndexFits('gather', 'the input', xs, ax, i.shape);
  checkIndexRange('gather', i, { name: 'index', hi: xs[ax], range: `dim ${ax} of the input, size ${xs[ax]}` });
  return gatherFlat('gather', x, flatPositions('gather', xs, ax, i, i.shape));
}

/** Slices of `dim` picked by a 1-d int32 index (indexSelect's semantics, gradient by scatter-add). */
export function takeAlong(op: string, x: Tensor, dim: number, idx: NDArray, opts: { wrap?: boolean } = {}): Tensor {
  const xs = x.shape;
  if (idx.ndim !== 1) throw new ValueError(`${op}: expected a 1-d index; got ${fmtShape(idx.shape)}`);
  const outShape = xs.slice();
  outShape[dim] = idx.shape[0];
  const shaped = idx.reshape(xs.map((_, d) => (d === dim ? idx.shape[0] : 1)));
  const pos = flatPositions(op, xs, dim, shaped, outShape, opts);
  shaped.dispose();
  return gatherFlat(op, x, pos);
}
