import { DTypeError, ShapeError, broadcastShapes, fmtShape, shapesEqual } from '@surf/core';
import { tidy } from '../scope';
import { Tensor } from '../tensor';
import { cast, where } from './arith';

/**
 * torch.Tensor.masked_fill: `value` where the bool mask (broadcast to x's shape) is true, x
 * elsewhere; the result keeps x's dtype. Gradients flow to x where the mask is false, and to
 * a tensor value where it is true.
 */
export function maskedFill(x: Tensor, mask: Tensor, value: number | boolean | Tensor): Tensor {
  if (!(mask instanceof Tensor) || mask.dtype !== 'bool')
    throw new DTypeError(
      `maskedFill: mask must be a bool Tensor; got ${mask instanceof Tensor ? mask.dtype : typeof mask} (compare first, e.g. x.gt(0))`,
    );
  const shape = x.shape;
  const b = broadcastShapes('maskedFill', shape, mask.shape);
  if (!shapesEqual(b, shape))
    throw new ShapeError(
      `maskedFill: mask of shape ${fmtShape(mask.shape)} does not broadcast to the input's shape ${fmtShape(shape)}`,
    );
  if (value instanceof Tensor && value.ndim !== 0)
    throw new ShapeError(`maskedFill: a tensor value must be 0-d; got shape ${fmtShape(value.shape)}`);
  return tidy(() => {
    const r = where(mask, value, x);
    return r.dtype === x.dtype ? r : cast(r, x.dtype);
  });
}
