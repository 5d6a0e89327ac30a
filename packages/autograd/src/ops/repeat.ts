import { ShapeError, fmtShape } from '@surf/core';
import { tidy } from '../scope';
import { Tensor } from '../tensor';
import * as S from './shape';

/**
 * torch.Tensor.repeat: tiles the tensor `sizes[d]` times along each dim (more sizes than dims
 * add leading dims). Built as views: [a, b] → [1, a, 1, b] → expand [r0, a, r1, b] → reshape
 * [r0·a, r1·b] (one copy). The gradient sums the tiles back (expand's rule).
 */
export function repeat(x: Tensor, sizes: readonly number[]): Tensor {
  const shape = x.shape;
  if (sizes.length < shape.length || !sizes.every((r) => Number.isInteger(r) && r >= 0)) {
    throw new ShapeError(
      `repeat: got sizes ${fmtShape(sizes)} for shape ${fmtShape(shape)}; expected at least ${shape.length} non-negative integers`,
    );
  }
  const full = [...new Array<number>(sizes.length - shape.length).fill(1), ...shape];
  return tidy(() => {
    const inter = S.reshape(
      x,
      full.flatMap((d) => [1, d]),
      'repeat',
    );
    const big = S.expand(
      inter,
      full.flatMap((d, i) => [sizes[i], d]),
      'repeat',
    );
    return S.reshape(
      big,
      full.map((d, i) => d * sizes[i]),
      'repeat',
    );
  });
}
