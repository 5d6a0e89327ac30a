import { NDArray, ValueError, fmtShape, normAxis, parseOptions, scatterFlat, sortAlong } from '@surf/core';
import { fromOp } from '../node';
import { Tensor } from '../tensor';
import { flatPositions } from './positions';

/** What sort and topk return (PyTorch's named tuple). */
export interface SortResult {
  values: Tensor;
  /** int32 positions along the sorted dim. */
  indices: Tensor;
}

/** Values picked from x by `indices` along `dim`; the gradient goes back to where each came from. */
function picked(op: string, x: Tensor, dim: number, values: NDArray, indices: NDArray): Tensor {
  const xs = x.shape;
  const pos = x.requiresGrad ? flatPositions(op, xs, dim, indices, indices.shape) : null;
  const flat = pos ? pos.reshape([pos.size]) : null;
  pos?.dispose();
  return fromOp(
    op,
    values,
    [x],
    (g) => {
      const zero = NDArray.full(g.backend, [xs.reduce((a, b) => a * b, 1)], 0);
      const gf = g.reshape([g.size]);
      const s = scatterFlat('add', zero, flat!, gf);
      zero.dispose();
      gf.dispose();
      const r = s.reshape(xs);
      s.dispose();
      return [r];
    },
    flat ? [flat] : [],
  );
}

function sortable(op: string, x: Tensor): NDArray {
  const nd = x.nd(op);
  if (nd.ndim === 0) throw new ValueError(`${op}: got a 0-d tensor; expected at least one dim`);
  return nd;
}

/** Stable sort along dim (default last); NaN sorts as the largest value. */
export function sort(x: Tensor, dim = -1, opts: { descending?: boolean } = {}): SortResult {
  opts = parseOptions<typeof opts>('sort', opts, { descending: 'boolean' });
  const nd = sortable('sort', x);
  const ax = normAxis('sort', dim, nd.ndim);
  const src = nd.dtype === 'bool' ? nd.cast('int32') : nd;
  const [v, i] = sortAlong(src, ax, !!opts.descending);
  if (src !== nd) {
    src.dispose();
    const b = v.cast('bool');
    v.dispose();
    return { values: new Tensor(b), indices: new Tensor(i) };
  }
  return { values: picked('sort', x, ax, v, i), indices: new Tensor(i) };
}

export function argsort(x: Tensor, dim = -1, opts: { descending?: boolean } = {}): Tensor {
  const { values, indices } = sort(x, dim, opts);
  values.dispose();
  return indices;
}

/** The k largest (or smallest) entries along dim, sorted, with their positions. */
export function topk(x: Tensor, k: number, dim = -1, opts: { largest?: boolean } = {}): SortResult {
  opts = parseOptions<typeof opts>('topk', opts, { largest: 'boolean' });
  const nd = sortable('topk', x);
  const ax = normAxis('topk', dim, nd.ndim);
  const n = nd.shape[ax];
  if (!Number.isInteger(k) || k < 0 || k > n)
    throw new ValueError(
      `topk: k = ${k} for dim ${dim} of size ${n} in shape ${fmtShape(nd.shape)}; expected an integer in [0, ${n}]`,
    );
  const src = nd.dtype === 'bool' ? nd.cast('int32') : nd;
  const [v, i] = sortAlong(src, ax, opts.largest ?? true);
  if (src !== nd) src.dispose();
  const ranges = nd.shape.map((d, a) => (a === ax ? [0, k] : [0, d]) as [number, number]);
  const vk = v.crop(ranges),
    ik = i.crop(ranges);
  v.dispose();
  i.dispose();
  if (nd.dtype === 'bool') {
    const b = vk.cast('bool');
    vk.dispose();
    return { values: new Tensor(b), indices: new Tensor(ik) };
  }
  return { values: picked('topk', x, ax, vk, ik), indices: new Tensor(ik) };
}
