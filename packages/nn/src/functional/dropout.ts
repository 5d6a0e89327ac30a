import { ValueError } from '@surf/core';
import { Tensor } from '@surf/autograd';
import { Dropout } from '../layers/dropout';

/**
 * PyTorch's F.dropout: drops with probability p when `training` (default true), else the input
 * itself. Runs the Dropout module's code, so both draw their masks the same way.
 */
export function dropout(x: Tensor, p = 0.5, training = true): Tensor {
  if (typeof training !== 'boolean')
    throw new ValueError(`dropout: training must be a boolean; got ${typeof training}; pass true or false`);
  const d = new Dropout(p);
  d.training = training;
  return d.forward(x);
}
