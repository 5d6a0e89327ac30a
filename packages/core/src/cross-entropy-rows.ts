import type { Strided } from './backend';
import { DTypeError, ShapeError, ValueError, fmtShape } from './errors';

/** The contract's crossEntropyRows arguments, checked the same way by every backend. */
export function checkCrossEntropyRowsArgs(
  op: string,
  z: Strided,
  y: Strided,
  opts: { smoothing: number; scale: number },
): void {
  if (z.storage.dtype !== 'float32')
    throw new DTypeError(`${op}: input has dtype ${z.storage.dtype}; expected float32`);
  if (y.storage.dtype !== 'int32')
    throw new DTypeError(`${op}: target has dtype ${y.storage.dtype}; expected int32 class indices`);
  const zs = z.view.shape,
    ys = y.view.shape;
  if (zs.length !== 2 || ys.length !== 1 || ys[0] !== zs[0])
    throw new ShapeError(`${op}: got input ${fmtShape(zs)} and target ${fmtShape(ys)}; expected [N, C] and [N]`);
  if (!(opts.smoothing >= 0 && opts.smoothing <= 1))
    throw new ValueError(`${op}: smoothing ${opts.smoothing}; expected a number in [0, 1]`);
  if (!Number.isFinite(opts.scale)) throw new ValueError(`${op}: scale ${opts.scale}; expected a finite number`);
}
