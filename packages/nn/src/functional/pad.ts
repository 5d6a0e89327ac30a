import { ShapeError, ValueError, withDefaults } from '@surf/core';
import { Tensor, checkTensor } from '@surf/autograd';

/**
 * PyTorch's F.pad: `pad` lists (before, after) pairs starting from the LAST dim, e.g. [1, 1, 2, 0]
 * pads the last dim by 1 on both sides and the one before it by 2 at the start. Constant mode
 * with any `value`. (Tensor.pad takes pairs first-dim-first and pads with zeros.)
 */
export function pad(x: Tensor, pad: readonly number[], opts: { mode?: 'constant'; value?: number } = {}): Tensor {
  const o = withDefaults('pad', opts, { mode: ['constant'], value: 'finite' }, { mode: 'constant' as const, value: 0 });
  checkTensor('pad', x, 'the input');
  if (!Array.isArray(pad) || pad.length % 2 !== 0 || pad.length / 2 > x.ndim || !pad.every(Number.isInteger))
    throw new ShapeError(
      `pad: pad must be an even-length list of integers, at most 2 per dim (${2 * x.ndim} here); got ${JSON.stringify(pad)}`,
    );
  const widths: [number, number][] = x.shape.map(() => [0, 0]);
  for (let i = 0; i < pad.length / 2; i++) widths[x.ndim - 1 - i] = [pad[2 * i], pad[2 * i + 1]];
  if (widths.some(([a, b]) => a < 0 || b < 0))
    throw new ValueError(`pad: negative padding (cropping) is not supported; got ${JSON.stringify(pad)}`);
  const y = x.pad(widths);
  if (o.value === 0) return y;
  // Zero padding, then `value` where the padding is: a mask of the original region padded the same way.
  const inside = x.detach().mul(0).add(1).pad(widths);
  return y.add(inside.sub(1).mul(-o.value));
}
