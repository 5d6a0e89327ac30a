import { Tensor } from '../tensor';
import { computeDType, fused, tableRule } from './fuse';

/**
 * erf, log1p and expm1: raw ops (native kernels on every backend, accurate where the
 * composite forms cancel: log(1 + x) and exp(x) - 1 near 0, 1 - erfc). Int and bool inputs
 * promote to float32. Derivatives from the op table.
 */
function special(op: 'erf' | 'log1p' | 'expm1', x: Tensor): Tensor {
  return fused(op, [x], [computeDType(op, [x], true)], tableRule(op));
}

export const erf = (x: Tensor) => special('erf', x);
export const log1p = (x: Tensor) => special('log1p', x);
export const expm1 = (x: Tensor) => special('expm1', x);
