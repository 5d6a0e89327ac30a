import { E } from '@surf/core';
import { Tensor, checkTensor } from '../tensor';
import { fused } from './fuse';

/** torch.square: x·x in one kernel (int32 stays int32, bool counts as int32); d/dx = 2x. */
export function square(x: Tensor): Tensor {
  checkTensor('square', x, 'input');
  const dt = x.dtype === 'bool' ? 'int32' : x.dtype;
  return fused('square', [x], [dt], {
    fwd: ([v]) => E.mul(v, v),
    grad: (g, [v]) => [E.mul(E.mul(g, v), E.f(2))],
  });
}
