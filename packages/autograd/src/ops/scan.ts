import { DTypeError, E, NDArray, normAxis } from '@surf/core';
import { fromOp } from '../node';
import { Tensor } from '../tensor';

/**
 * Prefix sums and products along a dim, as a log-step (Hillis-Steele) scan built from views:
 * step s adds (or multiplies) each element with the one s before it, read through a shifted,
 * padded view of the previous step. So a dim of n costs ceil(log2 n) elementwise kernels and
 * no new backend op. The padding reads 0; products use an iota input to keep the first s
 * elements as they are instead.
 */
function iota(backend: NDArray['backend'], shape: readonly number[], axis: number): NDArray {
  const n = shape[axis];
  return NDArray.fromData(
    backend,
    Int32Array.from({ length: n }, (_, i) => i),
    shape.map((d, i) => (i === axis ? n : 1)),
  );
}

function shifted(y: NDArray, axis: number, s: number): NDArray {
  const n = y.shape[axis];
  const c = y.crop(y.shape.map((d, i) => (i === axis ? [0, n - s] : [0, d]) as [number, number]));
  const p = c.pad(y.shape.map((_, i) => (i === axis ? [s, 0] : [0, 0]) as [number, number]));
  c.dispose();
  return p;
}

/** Inclusive scan of `op` along axis (a new array). */
export function scanArray(x: NDArray, axis: number, op: 'add' | 'mul'): NDArray {
  const n = x.shape[axis];
  let y = x.reshape(x.shape);
  const pos = op === 'mul' && n > 1 ? iota(x.backend, x.shape, axis) : null;
  for (let s = 1; s < n; s *= 2) {
    const sh = shifted(y, axis, s);
    const e = op === 'add' ? E.add(E.in(0), E.in(1)) : E.where(E.lt(E.in(2), E.i(s)), E.in(0), E.mul(E.in(0), E.in(1)));
    const [next] = NDArray.elementwise(
      [e],
      op === 'add' ? [y, sh] : [y, sh, pos!],
      op === 'add' ? 'cumsum' : 'cumprod',
    );
    sh.dispose();
    y.dispose();
    y = next;
  }
  pos?.dispose();
  if (y.view.isPlain && y.storage.size === y.size) return y;
  const c = y.contiguous();
  y.dispose();
  return c;
}

/** The scan of the reversed dim, reversed back (suffix sums/products). */
function reverseScan(x: NDArray, axis: number, op: 'add' | 'mul'): NDArray {
  const f = x.flip([axis]);
  const s = scanArray(f, axis, op);
  f.dispose();
  const r = s.flip([axis]);
  s.dispose();
  return r;
}

/** torch.cumsum. bool counts as int32. */
export function cumsum(x: Tensor, dim: number): Tensor {
  let nd = x.nd('cumsum');
  if (nd.ndim === 0) nd = nd.reshape([1]);
  const ax = normAxis('cumsum', dim, nd.ndim);
  const src = nd.dtype === 'bool' ? nd.cast('int32') : nd;
  const s = scanArray(src, ax, 'add');
  if (src !== nd) src.dispose();
  const out = x.ndim === 0 ? s.reshape([]) : s;
  if (out !== s) s.dispose();
  return fromOp('cumsum', out, [x], (g) => {
    const g1 = x.ndim === 0 ? g.reshape([1]) : g.reshape(g.shape);
    const r = reverseScan(g1, ax, 'add');
    g1.dispose();
    if (x.ndim !== 0) return [r];
    const r0 = r.reshape([]);
    r.dispose();
    return [r0];
  });
}

/** Shifts a scan one step along axis, filling the first element with 1 (exclusive products). */
function exclusive(y: NDArray, axis: number): NDArray {
  const sh = shifted(y, axis, 1);
  const pos = iota(y.backend, y.shape, axis);
  const [r] = NDArray.elementwise(
    [E.where(E.eq(E.in(1), E.i(0)), E.c(1, y.dtype), E.in(0))],
    [sh, pos],
    'prod backward',
  );
  sh.dispose();
  pos.dispose();
  return r;
}

/**
 * torch.prod over one dim, or all elements. The gradient of each element is the product of
 * all the others: (exclusive prefix product) × (exclusive suffix product), exact with zeros.
 */
export function prod(x: Tensor, dim?: number, keepdim = false): Tensor {
  const nd0 = x.nd('prod');
  const all = dim === undefined;
  const nd1 = all ? nd0.reshape([nd0.size]) : nd0.reshape(nd0.shape);
  const ax = all ? 0 : normAxis('prod', dim, nd0.ndim);
  if (nd0.dtype === 'bool') {
    nd1.dispose();
    throw new DTypeError('prod: got dtype bool; expected float32 or int32 (cast first)');
  }
  const n = nd1.shape[ax];
  const keptShape = nd1.shape.map((d, i) => (i === ax ? 1 : d));
  let last: NDArray;
  if (n === 0) last = NDArray.full(nd1.backend, keptShape, 1, nd1.dtype);
  else {
    const s = scanArray(nd1, ax, 'mul');
    last = s.crop(s.shape.map((d, i) => (i === ax ? [n - 1, n] : [0, d]) as [number, number]));
    s.dispose();
  }
  const outShape = all
    ? keepdim
      ? nd0.shape.map(() => 1)
      : []
    : keepdim
      ? keptShape
      : nd0.shape.filter((_, i) => i !== ax);
  const out = last.reshape(outShape);
  last.dispose();
  const saved = nd1;
  return fromOp(
    'prod',
    out,
    [x],
    (g) => {
      if (n === 0) return [NDArray.full(g.backend, nd0.shape, 0)];
      const pre = scanArray(saved, ax, 'mul');
      const suf = reverseScan(saved, ax, 'mul');
      const a = exclusive(pre, ax);
      const sufF = suf.flip([ax]);
      const bF = exclusive(sufF, ax);
      const b = bF.flip([ax]);
      const gk = g.reshape(keptShape);
      const [r] = NDArray.elementwise([E.mul(E.mul(E.in(0), E.in(1)), E.in(2))], [gk, a, b], 'prod backward');
      [pre, suf, a, sufF, bF, b, gk].forEach((t) => t.dispose());
      const back = r.reshape(nd0.shape);
      r.dispose();
      return [back];
    },
    [saved],
  );
}
