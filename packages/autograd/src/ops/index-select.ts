import { DTypeError, E, NDArray, ShapeError, ValueError, fmtShape, normAxis } from '@surf/core';
import { alias, fromOp } from '../node';
import { Tensor } from '../tensor';

/**
 * Slices of `dim` picked by a 1-d int32 index (torch.index_select): the backend's gather.
 * The backward pass must scatter-add g's slices back to the rows they came from, and
 * repeated indices must add up. The contract has no scatter, so it is a matmul with a
 * one-hot matrix: grad = g (moved to [rest, L]) @ onehot[L, n], onehot[l, r] = (idx[l] == r).
 * That costs rest·L·n multiply-adds, fine for batching and modest vocabularies.
 */
export function indexSelect(x: Tensor, dim: number, index: Tensor | readonly number[]): Tensor {
  const nd = x.nd('indexSelect');
  const ax = normAxis('indexSelect', dim, nd.ndim);
  const n = nd.shape[ax];
  let idx: NDArray;
  if (index instanceof Tensor) {
    const i = index.nd('indexSelect');
    if (i.dtype !== 'int32') throw new DTypeError(`indexSelect: index has dtype ${i.dtype}; expected int32 (use .int())`);
    if (i.ndim !== 1) throw new ShapeError(`indexSelect: index has shape ${fmtShape(i.shape)}; expected a 1-d index (flatten it, then reshape the result)`);
    idx = alias(i);
  } else if (Array.isArray(index)) {
    // Host indices can be checked; a tensor index is not read back (out-of-range rows read 0).
    index.forEach((v) => {
      if (!Number.isInteger(v) || v < 0 || v >= n) throw new ValueError(`indexSelect: index ${v} is out of range for dim ${dim} of size ${n} in shape ${fmtShape(nd.shape)}`);
    });
    idx = NDArray.fromData(nd.backend, Int32Array.from(index), [index.length]);
  } else {
    throw new ValueError('indexSelect: index must be an int32 Tensor or an array of integers');
  }
  const out = nd.gather(ax, idx);
  const shape = nd.shape.slice();
  return fromOp('indexSelect', out, [x], (g) => {
    const L = idx.shape[0];
    const moved = g.permute([...g.shape.keys()].filter((d) => d !== ax).concat(ax));
    const rest = moved.shape.slice(0, -1);
    const g2 = moved.reshape([rest.reduce((a, b) => a * b, 1), L]);
    moved.dispose();
    const rows = NDArray.fromData(g.backend, Int32Array.from({ length: n }, (_, r) => r), [1, n]);
    const col = idx.reshape([L, 1]);
    const [onehot] = NDArray.elementwise([E.cast(E.eq(E.in(0), E.in(1)), 'float32')], [col, rows], 'indexSelect backward');
    rows.dispose(); col.dispose();
    const r2 = g2.matmul(onehot);
    g2.dispose(); onehot.dispose();
    const r = r2.reshape([...rest, n]);
    r2.dispose();
    const inv = new Array<number>(shape.length);
    [...shape.keys()].filter((d) => d !== ax).concat(ax).forEach((d, i) => { inv[d] = i; });
    const back = r.permute(inv);
    r.dispose();
    return [back];
  }, [idx]);
}
