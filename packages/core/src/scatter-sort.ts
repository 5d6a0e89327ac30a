import type { ScatterMode } from './backend';
import { BackendError, DTypeError, ShapeError, fmtShape } from './errors';
import { NDArray } from './ndarray';
import { normAxis } from './shape';

/**
 * NDArray-level entry points to the contract's scatter and sort: they take care of masked
 * views (backends never see them here) and of moving the sorted dim last.
 */

function unmasked(x: NDArray): NDArray {
  return x.view.mask ? x.contiguous() : x;
}

/**
 * A copy of `base` with `src[i]` set or added at row-major flat position `idx[i]` (both 1-d);
 * positions outside [0, base.size) are skipped.
 */
export function scatterFlat(mode: ScatterMode, base: NDArray, idx: NDArray, src: NDArray): NDArray {
  if (idx.backend !== base.backend || src.backend !== base.backend)
    throw new BackendError('scatter: base, index and source live on different backends; move them to one first');
  if (idx.dtype !== 'int32') throw new DTypeError(`scatter: index has dtype ${idx.dtype}; expected int32`);
  if (idx.ndim !== 1 || src.ndim !== 1 || idx.size !== src.size)
    throw new ShapeError(
      `scatter: index ${fmtShape(idx.shape)} and source ${fmtShape(src.shape)}; expected two 1-d arrays of the same length`,
    );
  const b = unmasked(base),
    i = unmasked(idx),
    s = unmasked(src);
  const out = base.backend.scatter(mode, b.strided, i.strided, s.strided);
  for (const [t, o] of [
    [b, base],
    [i, idx],
    [s, src],
  ] as const)
    if (t !== o) t.dispose();
  return NDArray.fromStorage(out, base.shape);
}

/** Stable sort along `axis`: [values, int32 indices], both with x's shape. */
export function sortAlong(x: NDArray, axis: number, descending: boolean): [NDArray, NDArray] {
  if (x.ndim === 0) throw new ShapeError('sort: got a 0-d array; expected at least one dim');
  const ax = normAxis('sort', axis, x.ndim);
  const last = x.ndim - 1;
  const order = [...x.shape.keys()];
  [order[ax], order[last]] = [order[last], order[ax]];
  const moved = ax === last ? x : x.permute(order);
  const m = unmasked(moved);
  const [v, i] = x.backend.sort(m.strided, descending);
  if (m !== moved) m.dispose();
  if (moved !== x) moved.dispose();
  const vs = NDArray.fromStorage(v, m.shape),
    is = NDArray.fromStorage(i, m.shape);
  if (ax === last) return [vs, is];
  const back = [vs.permute(order), is.permute(order)] as [NDArray, NDArray];
  vs.dispose();
  is.dispose();
  return back;
}
