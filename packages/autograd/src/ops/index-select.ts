import { DTypeError, NDArray, ShapeError, ValueError, fmtShape, normAxis, scatterFlat } from '@surf/core';
import { alias, fromOp } from '../node';
import { Tensor } from '../tensor';
import { flatPositions } from './positions';
import { checkIndexRange } from './index-range';

/**
 * Slices of `dim` picked by a 1-d int32 index (torch.index_select): the backend's gather.
 * The backward pass scatter-adds g's slices back to the rows they came from (repeated
 * indices add up) with the contract's scatter, at flat positions computed in one kernel.
 */
export function indexSelect(x: Tensor, dim: number, index: Tensor | readonly number[]): Tensor {
  const nd = x.nd('indexSelect');
  const ax = normAxis('indexSelect', dim, nd.ndim);
  const n = nd.shape[ax];
  let idx: NDArray;
  if (index instanceof Tensor) {
    const i = index.nd('indexSelect');
    if (i.dtype !== 'int32')
      throw new DTypeError(`indexSelect: index has dtype ${i.dtype}; expected int32 (use .int())`);
    if (i.ndim !== 1)
      throw new ShapeError(
        `indexSelect: index has shape ${fmtShape(i.shape)}; expected a 1-d index (flatten it, then reshape the result)`,
      );
    checkIndexRange('indexSelect', i, {
      name: 'index',
      hi: n,
      range: `dim ${ax} of size ${n} in shape ${fmtShape(nd.shape)}`,
    });
    idx = alias(i);
  } else if (Array.isArray(index)) {
    // Host indices are checked here; a tensor index by checkIndexRange (on the device where it lives).
    index.forEach((v) => {
      if (!Number.isInteger(v) || v < 0 || v >= n)
        throw new ValueError(
          `indexSelect: index ${v} is out of range for dim ${dim} of size ${n} in shape ${fmtShape(nd.shape)}`,
        );
    });
    idx = NDArray.fromData(nd.backend, Int32Array.from(index), [index.length]);
  } else {
    throw new ValueError('indexSelect: index must be an int32 Tensor or an array of integers');
  }
  const out = nd.gather(ax, idx);
  const shape = nd.shape.slice();
  return fromOp(
    'indexSelect',
    out,
    [x],
    (g) => {
      const shaped = idx.reshape(shape.map((_, d) => (d === ax ? idx.shape[0] : 1)));
      const pos = flatPositions('indexSelect backward', shape, ax, shaped, g.shape);
      shaped.dispose();
      const flatP = pos.reshape([pos.size]);
      pos.dispose();
      const zero = NDArray.full(g.backend, [shape.reduce((a, b) => a * b, 1)], 0);
      const gf = g.reshape([g.size]);
      const s = scatterFlat('add', zero, flatP, gf);
      zero.dispose();
      gf.dispose();
      flatP.dispose();
      const r = s.reshape(shape);
      s.dispose();
      return [r];
    },
    [idx],
  );
}
