import { DTypeError } from '@surf/core';
import { Tensor, checkTensor } from '@surf/autograd';

/** Rows of `weight` [V, D] for an int32 index tensor of any shape: [...index.shape, D] (F.embedding). */
export function embedding(index: Tensor, weight: Tensor): Tensor {
  checkTensor('embedding', weight, 'the weight');
  if (!(index instanceof Tensor) || index.dtype !== 'int32')
    throw new DTypeError(
      `embedding: index must be an int32 Tensor; got ${index instanceof Tensor ? `dtype ${index.dtype}` : typeof index}; make it with { dtype: 'int32' }`,
    );
  return weight.indexSelect(0, index.reshape([-1])).reshape([...index.shape, weight.shape[1]]);
}
