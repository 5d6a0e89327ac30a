import { NDArray, ValueError } from '@surf/core';
import { Tensor } from '../tensor';
import type { Operand } from '../tensor';
import * as A from './arith';
import * as S from './shape';

/**
 * In-place ops (PyTorch's trailing underscore): each is the out-of-place op applied to the old
 * value, whose result this tensor then holds (Tensor._inplace does the bookkeeping). They
 * bump the tensor's version, so a backward that would need the overwritten value raises.
 */
type Bin = 'add_' | 'sub_' | 'mul_' | 'div_';
const OPS: Record<Bin, (a: Tensor, b: Operand) => Tensor> = { add_: A.add, sub_: A.sub, mul_: A.mul, div_: A.div };

export function binary<T extends Tensor>(x: T, op: Bin, o: Operand): T {
  return x._inplace(op, (old) => OPS[op](old, o));
}

export function clampInPlace<T extends Tensor>(x: T, lo?: Operand | null, hi?: Operand | null): T {
  return x._inplace('clamp_', (old) => A.clamp(old, lo ?? undefined, hi ?? undefined));
}

export function fill<T extends Tensor>(x: T, value: number | boolean): T {
  if (typeof value !== 'number' && typeof value !== 'boolean')
    throw new ValueError(`fill_: value ${JSON.stringify(value)}; expected a number or a boolean`);
  return x._inplace('fill_', (old) => {
    const nd = old.nd('fill_');
    return new Tensor(NDArray.full(nd.backend, nd.shape, Number(value), nd.dtype));
  });
}

export function copy<T extends Tensor>(x: T, src: Tensor): T {
  return x._inplace('copy_', () => {
    const c = src.dtype === x.dtype ? src : A.cast(src, x.dtype);
    const e = S.expand(c, x.shape, 'copy_');
    if (c !== src) c.dispose();
    return e;
  });
}
