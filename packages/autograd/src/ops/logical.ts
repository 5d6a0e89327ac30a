import { E, NDArray, normAxes } from '@surf/core';
import { Tensor } from '../tensor';
import { X } from './fuse';

type Dims = number | readonly number[] | undefined;

/**
 * torch.any / torch.all over dims (all by default): bool results, no gradient. Each is one
 * compare kernel plus a max reduction: any = max(x != 0); all = not max(x == 0). NaN counts
 * as true, as in PyTorch. Empty reductions give any = false, all = true.
 */
function anyOf(op: string, x: Tensor, dim: Dims, keepdim: boolean, zeroTest: boolean): Tensor {
  const nd = x.nd(op);
  const axes = normAxes(op, dim, nd.ndim);
  const isZero = nd.dtype === 'bool' ? X.not(E.in(0)) : E.eq(E.in(0), E.c(0, nd.dtype));
  const [hit] = NDArray.elementwise([E.cast(zeroTest ? isZero : X.not(isZero), 'int32')], [nd], op);
  const m = axes.length ? hit.max(axes, keepdim) : hit.reshape(hit.shape);
  hit.dispose();
  // max of an empty set is the minimum int32: compare with 0, not with 1.
  const [r] = NDArray.elementwise([zeroTest ? X.not(E.lt(E.i(0), E.in(0))) : E.lt(E.i(0), E.in(0))], [m], op);
  m.dispose();
  return new Tensor(r);
}

export const any = (x: Tensor, dim: Dims, keepdim: boolean) => anyOf('any', x, dim, keepdim, false);
export const all = (x: Tensor, dim: Dims, keepdim: boolean) => anyOf('all', x, dim, keepdim, true);
