import type { ScatterMode, Strided } from './backend';
import { DTypeError, ShapeError, ValueError, fmtShape } from './errors';

// The arguments of the contract's scatter and sort, checked the same way by every backend
// before it touches memory (see validate.ts for the other ops).

export function checkScatterArgs(mode: ScatterMode, base: Strided, idx: Strided, src: Strided): void {
  if (mode !== 'set' && mode !== 'add')
    throw new ValueError(`scatter: unknown mode ${JSON.stringify(mode)}; expected 'set' or 'add'`);
  if (idx.storage.dtype !== 'int32')
    throw new DTypeError(`scatter: index has dtype ${idx.storage.dtype}; expected int32`);
  if (src.storage.dtype !== base.storage.dtype)
    throw new DTypeError(
      `scatter: source has dtype ${src.storage.dtype} but the base has ${base.storage.dtype}; expected them equal`,
    );
  if (mode === 'add' && base.storage.dtype === 'bool')
    throw new DTypeError(`scatter: mode 'add' got dtype bool; expected float32 or int32`);
  const is = idx.view.shape,
    ss = src.view.shape;
  if (is.length !== 1 || ss.length !== 1 || is[0] !== ss[0]) {
    throw new ShapeError(
      `scatter: index ${fmtShape(is)} and source ${fmtShape(ss)}; expected two 1-d operands of the same length`,
    );
  }
}

export function checkSortArgs(x: Strided, descending: boolean): void {
  if (typeof descending !== 'boolean')
    throw new ValueError(`sort: descending is ${JSON.stringify(descending)}; expected a boolean`);
  if (x.storage.dtype === 'bool') throw new DTypeError('sort: got dtype bool; expected float32 or int32 (cast first)');
  if (x.view.shape.length === 0)
    throw new ShapeError('sort: got a 0-d tensor; expected at least one dim (the sorted axis is the last)');
}
