import { ValueError, fmtShape, normAxis } from '@surf/core';
import { Tensor } from '../tensor';
import * as S from './shape';

/**
 * torch.split: pieces of `size` along dim (the last may be smaller), or pieces of the given
 * sizes (which must add up to the dim). Each piece is a view (narrow).
 */
export function split(x: Tensor, size: number | readonly number[], dim = 0): Tensor[] {
  const shape = x.nd('split').shape;
  const ax = normAxis('split', dim, shape.length);
  const n = shape[ax];
  let sizes: number[];
  if (typeof size === 'number') {
    if (!Number.isInteger(size) || size <= 0) throw new ValueError(`split: size ${size}; expected a positive integer`);
    sizes = [];
    for (let s = 0; s < n; s += size) sizes.push(Math.min(size, n - s));
    if (n === 0) sizes.push(0);
  } else if (Array.isArray(size)) {
    sizes = size.slice();
    const total = sizes.reduce((a, b) => a + b, 0);
    if (!sizes.every((s) => Number.isInteger(s) && s >= 0) || total !== n) {
      throw new ValueError(
        `split: sizes ${fmtShape(sizes)} add up to ${total}; expected non-negative integers adding up to dim ${dim} of size ${n} in shape ${fmtShape(shape)}`,
      );
    }
  } else {
    throw new ValueError('split: size must be a number or an array of numbers');
  }
  let at = 0;
  return sizes.map((s) => {
    const t = S.narrow(x, ax, at, s);
    at += s;
    return t;
  });
}

/** torch.chunk: up to `chunks` pieces of ceil(n / chunks) along dim (fewer when n is small). */
export function chunk(x: Tensor, chunks: number, dim = 0): Tensor[] {
  if (!Number.isInteger(chunks) || chunks <= 0)
    throw new ValueError(`chunk: chunks ${chunks}; expected a positive integer`);
  const shape = x.nd('chunk').shape;
  const n = shape[normAxis('chunk', dim, shape.length)];
  // An empty dim gives `chunks` empty pieces, as PyTorch (not one).
  if (n === 0) return split(x, new Array<number>(chunks).fill(0), dim);
  return split(x, Math.max(1, Math.ceil(n / chunks)), dim);
}
