import { DTypeError, E, NDArray, ValueError } from '@surf/core';
import { Tensor } from '../tensor';
import { checkIndexRange } from './index-range';

/**
 * torch.nn.functional.one_hot with int32 output: [..., numClasses]. numClasses is required:
 * inferring it (PyTorch's -1) would read the data back. A class outside [0, numClasses) is
 * an error (index-range.ts; on WebGPU raised at the next readback, its row then all zeros).
 */
export function oneHot(t: Tensor, numClasses: number): Tensor {
  const nd = t.nd('oneHot');
  if (nd.dtype !== 'int32') throw new DTypeError(`oneHot: got dtype ${nd.dtype}; expected int32 class indices`);
  if (!Number.isInteger(numClasses) || numClasses <= 0)
    throw new ValueError(
      `oneHot: numClasses ${numClasses}; expected a positive integer (Surf does not infer it from the data)`,
    );
  checkIndexRange('oneHot', nd, { name: 'class index', hi: numClasses, range: `numClasses ${numClasses}` });
  const col = nd.reshape([...nd.shape, 1]);
  const classes = NDArray.fromData(
    nd.backend,
    Int32Array.from({ length: numClasses }, (_, i) => i),
    [numClasses],
  );
  const [r] = NDArray.elementwise([E.cast(E.eq(E.in(0), E.in(1)), 'int32')], [col, classes], 'oneHot');
  col.dispose();
  classes.dispose();
  return new Tensor(r);
}
