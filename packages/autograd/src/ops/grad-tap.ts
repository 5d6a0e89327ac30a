import { ShapeError, ValueError, fmtShape } from '@surf/core';
import { alias, fromOp } from '../node';
import { Tensor, checkTensor } from '../tensor';

/**
 * The identity, whose backward hands the incoming gradient to `fn` before passing it on: what
 * module backward hooks are built from (PyTorch wraps a module's inputs and outputs the same
 * way). `fn` gets the gradient as a Tensor it may keep, and may return a replacement of the
 * same shape. Nothing is recorded when x does not require grad (fn then never runs).
 */
export function gradTap(x: Tensor, fn: (grad: Tensor) => Tensor | void | undefined): Tensor {
  checkTensor('gradTap', x, 'the input');
  if (typeof fn !== 'function') throw new ValueError(`gradTap: expected a function; got ${typeof fn}`);
  const nd = x.nd('gradTap');
  return fromOp('gradTap', alias(nd), [x], (g) => {
    const r = fn(Tensor.fromNDArray(alias(g)));
    if (r === undefined || r === null) return [alias(g)];
    if (!(r instanceof Tensor))
      throw new ValueError(`gradTap: the hook returned ${typeof r}; expected a Tensor or nothing`);
    if (r.ndim !== g.ndim || r.shape.some((d, i) => d !== g.shape[i]))
      throw new ShapeError(
        `gradTap: the hook returned a gradient of shape ${fmtShape(r.shape)}; expected ${fmtShape(g.shape)}`,
      );
    return [alias(r.nd('gradTap'))];
  });
}
