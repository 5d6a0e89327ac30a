import { ShapeError, ValueError, normAxis } from '@surf/core';
import { tidy } from '../scope';
import { Tensor, checkTensor } from '../tensor';
import { cat } from './join';
import * as S from './shape';

/**
 * torch.roll: elements shifted along dims, wrapping around. Without dims the tensor is
 * flattened, rolled and reshaped back, as PyTorch. Each rolled dim is two views joined by
 * one cat kernel; the gradient rolls back through the same views.
 */
export function roll(x: Tensor, shifts: number | readonly number[], dims?: number | readonly number[]): Tensor {
  checkTensor('roll', x, 'input');
  const sh = typeof shifts === 'number' ? [shifts] : shifts.slice();
  if (!sh.every((s) => Number.isInteger(s)))
    throw new ValueError(`roll: shifts ${JSON.stringify(shifts)}; expected an integer or a list of integers`);
  if (dims === undefined) {
    if (sh.length !== 1)
      throw new ShapeError(`roll: ${sh.length} shifts without dims; expected one shift (or pass one dim per shift)`);
    const shape = x.shape;
    return tidy(() => S.reshape(rollDim(S.reshape(x, [x.numel]), sh[0], 0), shape));
  }
  const ds = typeof dims === 'number' ? [dims] : dims.slice();
  if (ds.length !== sh.length)
    throw new ShapeError(`roll: ${sh.length} shifts and ${ds.length} dims; expected one shift per dim`);
  const axes = ds.map((d) => normAxis('roll', d, x.ndim));
  return tidy(() => axes.reduce((t, ax, i) => rollDim(t, sh[i], ax), S.reshape(x, x.shape)));
}

function rollDim(x: Tensor, shift: number, ax: number): Tensor {
  const n = x.shape[ax];
  const s = n === 0 ? 0 : ((shift % n) + n) % n;
  if (s === 0) return S.reshape(x, x.shape);
  return cat([S.narrow(x, ax, n - s, s), S.narrow(x, ax, 0, n - s)], ax);
}
