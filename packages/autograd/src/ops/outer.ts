import { ShapeError } from '@surf/core';
import { Tensor, checkTensor } from '../tensor';
import { mul } from './arith';
import * as S from './shape';
import { tidy } from '../scope';

/** torch.outer: out[i][j] = a[i]·b[j] for 1-d a and b (one broadcast multiply). */
export function outer(a: Tensor, b: Tensor): Tensor {
  checkTensor('outer', a, 'input');
  checkTensor('outer', b, 'vec2');
  if (a.ndim !== 1 || b.ndim !== 1)
    throw new ShapeError(`outer: got shapes [${a.shape}] and [${b.shape}]; expected two 1-d tensors`);
  return tidy(() => mul(S.reshape(a, [a.shape[0], 1]), S.reshape(b, [1, b.shape[0]])));
}
