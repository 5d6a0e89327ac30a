import { ShapeError, parseOptions } from '@surf/core';
import { Tensor, checkTensor } from '../tensor';
import * as S from './shape';
import { tidy } from '../scope';

export interface MeshgridOptions {
  /** 'ij' (matrix indexing, the default here and PyTorch's) or 'xy' (Cartesian: the first two dims swap). */
  indexing?: 'ij' | 'xy';
}

/**
 * torch.meshgrid: for 1-d tensors of sizes n0..nk, k+1 tensors of shape [n0, ..., nk], the
 * i-th varying along dim i ('xy' swaps the first two dims' roles). Broadcast views: no copy,
 * and the gradient sums back.
 */
export function meshgrid(tensors: readonly Tensor[], opts: MeshgridOptions = {}): Tensor[] {
  const o = parseOptions<MeshgridOptions>('meshgrid', opts, { indexing: ['ij', 'xy'] });
  const xy = o.indexing === 'xy';
  if (!Array.isArray(tensors) || tensors.length === 0)
    throw new ShapeError('meshgrid: expected a non-empty list of 1-d tensors');
  tensors.forEach((t, i) => {
    checkTensor('meshgrid', t, `tensors[${i}]`);
    if (t.ndim > 1) throw new ShapeError(`meshgrid: tensors[${i}] has shape [${t.shape}]; expected 0-d or 1-d`);
  });
  const sizes = tensors.map((t) => t.numel);
  // 'xy' is 'ij' with the first two inputs' places swapped in the output shape.
  const place = sizes.map((_, i) => (xy && sizes.length > 1 && i < 2 ? 1 - i : i));
  const shape = place.map((_, d) => sizes[place.indexOf(d)]);
  return tidy(() =>
    tensors.map((t, i) => {
      const v = shape.map((_, d) => (d === place[i] ? sizes[i] : 1));
      return S.expand(S.reshape(t, v), shape, 'meshgrid');
    }),
  );
}
