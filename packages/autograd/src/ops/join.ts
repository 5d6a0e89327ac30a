import { DType, E, Expr, NDArray, ShapeError, ValueError, fmtShape, normAxis } from '@surf/core';
import { promoteTypes } from '../dtypes';
import { fromOp } from '../node';
import { tidy } from '../scope';
import { Tensor } from '../tensor';
import { unsqueeze } from './shape';

/**
 * cat as a sum of zero-padded views: each input is padded (a View mask, no copy) to the
 * output's shape at its offset, and one elementwise kernel adds them. Inputs are bound in
 * groups of at most MAX_INPUTS per kernel (WebGPU's default limit is 8 storage buffers per
 * shader stage, one of them the output). Each backward gradient is a crop of g: a view.
 */
const MAX_INPUTS = 6;

export function cat(tensors: readonly Tensor[], dim = 0): Tensor {
  if (!Array.isArray(tensors as unknown) || tensors.length === 0)
    throw new ValueError('cat: expected a non-empty array of tensors');
  tensors.forEach((t, i) => {
    if (!(t instanceof Tensor)) throw new ValueError(`cat: element ${i} is not a Tensor`);
  });
  const nds = tensors.map((t) => t.nd('cat'));
  const first = nds[0].shape;
  const ax = normAxis('cat', dim, first.length);
  for (const nd of nds) {
    if (nd.ndim !== first.length || nd.shape.some((d, i) => i !== ax && d !== first[i])) {
      throw new ShapeError(
        `cat: shapes ${nds.map((n) => fmtShape(n.shape)).join(', ')} differ outside dim ${dim}; expected equal sizes except along it`,
      );
    }
  }
  const dt: DType = promoteTypes(...nds.map((n) => n.dtype));
  const acc: DType = dt === 'bool' ? 'int32' : dt;
  const total = nds.reduce((a, n) => a + n.shape[ax], 0);
  const offsets: number[] = [];
  let o = 0;
  for (const nd of nds) {
    offsets.push(o);
    o += nd.shape[ax];
  }
  const widths = (k: number) =>
    first.map((_, i) => (i === ax ? [offsets[k], total - offsets[k] - nds[k].shape[ax]] : [0, 0]) as [number, number]);
  const conv = (e: Expr, from: DType) => (from === acc ? e : E.cast(e, acc));
  let out: NDArray | null = null;
  for (let k = 0; k < nds.length; k += MAX_INPUTS - 1) {
    const group = nds.slice(k, k + MAX_INPUTS - 1).map((nd, j) => nd.pad(widths(k + j)));
    const ins = out ? [out, ...group] : group;
    let e: Expr | null = null;
    ins.forEach((nd, i) => {
      const x = conv(E.in(i), nd.dtype);
      e = e ? E.add(e, x) : x;
    });
    const last = k + MAX_INPUTS - 1 >= nds.length;
    const [r] = NDArray.elementwise([last && acc !== dt ? E.cast(e!, dt) : e!], ins, 'cat');
    group.forEach((g) => g.dispose());
    out?.dispose();
    out = r;
  }
  const shapes = nds.map((n) => n.shape.slice());
  return fromOp('cat', out!, tensors, (g) =>
    shapes.map((s, k) =>
      g.crop(s.map((d, i) => (i === ax ? [offsets[k], offsets[k] + d] : [0, d]) as [number, number])),
    ),
  );
}

export function stack(tensors: readonly Tensor[], dim = 0): Tensor {
  if (!Array.isArray(tensors as unknown) || tensors.length === 0)
    throw new ValueError('stack: expected a non-empty array of tensors');
  const shape0 = tensors[0].shape;
  tensors.forEach((t, i) => {
    if (!(t instanceof Tensor)) throw new ValueError(`stack: element ${i} is not a Tensor`);
    if (t.ndim !== shape0.length || t.shape.some((d, j) => d !== shape0[j])) {
      throw new ShapeError(
        `stack: shapes ${tensors.map((x) => fmtShape(x.shape)).join(', ')} differ; expected all equal`,
      );
    }
  });
  const ax = normAxis('stack', dim, shape0.length + 1);
  return tidy(() =>
    cat(
      tensors.map((t) => unsqueeze(t, ax)),
      ax,
    ),
  );
}
