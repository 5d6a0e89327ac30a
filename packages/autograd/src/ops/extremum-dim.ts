import { ValueError, normAxis } from '@surf/core';
import { tidy } from '../scope';
import { Tensor, checkTensor } from '../tensor';
import { argmax, argmin } from './reduce';
import { gather } from './gather';
import * as S from './shape';

/** What max(dim) and min(dim) return (PyTorch's (values, indices) named tuple). */
export interface MinMaxResult {
  values: Tensor;
  /** int32 position of the first extremum along dim (NaN counts as the maximum and the minimum, as PyTorch). */
  indices: Tensor;
}

/**
 * torch.max(x, dim, keepdim) / torch.min(x, dim, keepdim): the extremum along one dim and
 * where it is. The values are read at the indices, so the gradient goes to that one element
 * (PyTorch's rule for this form; the all-elements max() splits ties instead).
 */
function extremumDim(op: 'max' | 'min', x: Tensor, dim: number, keepdim: boolean): MinMaxResult {
  checkTensor(op, x, 'input');
  if (typeof keepdim !== 'boolean') throw new ValueError(`${op}: keepdim must be a boolean; got ${String(keepdim)}`);
  const nd = x.nd(op);
  if (nd.ndim === 0) {
    // PyTorch accepts dim 0 / -1 on a 0-d tensor: the value itself at index 0.
    normAxis(op, dim, 1);
    return tidy(() => ({ values: S.reshape(x, []), indices: S.reshape(argmax(x, undefined, false), []) }));
  }
  const ax = normAxis(op, dim, nd.ndim);
  return tidy(() => {
    const idx = (op === 'max' ? argmax : argmin)(x, ax, true);
    const v = gather(x, ax, idx);
    if (keepdim) return { values: v, indices: idx };
    return { values: S.squeeze(v, ax), indices: S.squeeze(idx, ax) };
  });
}

export const maxDim = (x: Tensor, dim: number, keepdim = false): MinMaxResult => extremumDim('max', x, dim, keepdim);
export const minDim = (x: Tensor, dim: number, keepdim = false): MinMaxResult => extremumDim('min', x, dim, keepdim);
