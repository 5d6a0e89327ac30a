import { DTypeError, NDArray, ScatterMode, ValueError, normAxis, scatterFlat } from '@surf/core';
import { alias, fromOp } from '../node';
import { Tensor } from '../tensor';
import { indexArray } from './gather';
import { checkIndexFits, flatPositions } from './positions';
import { checkIndexRange } from './index-range';

/**
 * torch.scatter / scatter_add (out of place): a copy of x where, for every position i of
 * `index`, out[..., index[i], ...] (along dim) is set to / increased by src[i]. src is a
 * tensor at least as large as index in every dim, or a number. An index outside the dim is
 * an error (index-range.ts), as in PyTorch.
 */
function scatterOp(mode: ScatterMode, x: Tensor, dim: number, index: Tensor, src: Tensor | number): Tensor {
  const op = mode === 'add' ? 'scatterAdd' : 'scatter';
  const xnd = x.nd(op);
  const xs = xnd.shape.slice();
  const ax = normAxis(op, dim, xs.length);
  if (!(index instanceof Tensor)) throw new ValueError(`${op}: index must be an int32 Tensor`);
  const i = indexArray(op, index);
  checkIndexFits(op, 'the input', xs, ax, i.shape);
  checkIndexRange(op, i, { name: 'index', hi: xs[ax], range: `dim ${ax} of the input, size ${xs[ax]}` });
  const ishape = i.shape.slice();
  const n = ishape.reduce((a, b) => a * b, 1);
  let srcNd: NDArray;
  if (src instanceof Tensor) {
    const s = src.nd(op);
    if (s.dtype !== xnd.dtype)
      throw new DTypeError(`${op}: src has dtype ${s.dtype} but the input has ${xnd.dtype}; expected them equal`);
    if (s.ndim !== ishape.length || s.shape.some((v, d) => v < ishape[d]))
      throw new ValueError(
        `${op}: src of shape [${s.shape}] is smaller than the index [${ishape}] in some dim; expected src.shape[d] >= index.shape[d]`,
      );
    const part = s.crop(ishape.map((v) => [0, v] as [number, number]));
    srcNd = part.reshape([n]);
    part.dispose();
  } else if (typeof src === 'number') {
    if (mode === 'add')
      throw new ValueError(
        'scatterAdd: src must be a Tensor (use scatter with a value, or add a tensor of that value)',
      );
    srcNd = NDArray.full(xnd.backend, [n], src, xnd.dtype);
  } else {
    throw new ValueError(`${op}: src must be a Tensor or a number`);
  }
  const pos = flatPositions(op, xs, ax, i, ishape);
  const flatP = pos.reshape([n]);
  pos.dispose();
  const r = scatterFlat(mode, xnd, flatP, srcNd);
  srcNd.dispose();
  const srcShape = src instanceof Tensor ? src.shape : null;
  const parents = src instanceof Tensor ? [x, src] : [x];
  return fromOp(
    op,
    r,
    parents,
    (g) => {
      // x's gradient: everything, except (for 'set') the positions that were overwritten.
      let gx: NDArray;
      if (mode === 'add') gx = alias(g);
      else {
        const zero = NDArray.full(g.backend, [n], 0);
        gx = scatterFlat('set', g, flatP, zero);
        zero.dispose();
      }
      if (!srcShape) return [gx];
      // src's gradient: g read at the positions it went to (PyTorch's rule), zero where unused.
      const gf = g.reshape([g.size]);
      const picked = gf.gather(0, flatP);
      gf.dispose();
      const shaped = picked.reshape(ishape);
      picked.dispose();
      const gs = shaped.pad(ishape.map((v, d) => [0, srcShape[d] - v] as [number, number]));
      shaped.dispose();
      return [gx, gs];
    },
    [flatP],
  );
}

export const scatter = (x: Tensor, dim: number, index: Tensor, src: Tensor | number) =>
  scatterOp('set', x, dim, index, src);
export const scatterAdd = (x: Tensor, dim: number, index: Tensor, src: Tensor) => scatterOp('add', x, dim, index, src);
