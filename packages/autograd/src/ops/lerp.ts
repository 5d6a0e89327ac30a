import { DTypeError, E } from '@surf/core';
import { Tensor, checkTensor } from '../tensor';
import { Operand, fused } from './fuse';
import { checkScalar } from '../dtypes';

/**
 * torch.lerp: start + weight·(end − start), broadcasting all three; weight is a number or a
 * tensor. Float32 only, as PyTorch. Gradients: (1 − w)·g to start, w·g to end and
 * (end − start)·g to a tensor weight.
 */
export function lerp(start: Tensor, end: Tensor, weight: Operand): Tensor {
  checkTensor('lerp', start, 'start');
  checkTensor('lerp', end, 'end');
  if (!(weight instanceof Tensor)) checkScalar('lerp', weight);
  for (const [name, t] of [
    ['start', start],
    ['end', end],
    ['weight', weight],
  ] as const)
    if (t instanceof Tensor && t.dtype !== 'float32')
      throw new DTypeError(`lerp: ${name} has dtype ${t.dtype}; expected float32 (cast with .float())`);
  return fused('lerp', [start, end, weight], ['float32', 'float32', 'float32'], {
    fwd: ([a, b, w]) => E.add(a, E.mul(w, E.sub(b, a))),
    grad: (g, [a, b, w]) => [E.mul(g, E.sub(E.f(1), w)), E.mul(g, w), E.mul(g, E.sub(b, a))],
  });
}
