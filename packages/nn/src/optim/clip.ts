import { DTypeError, E, Expr, NDArray, ValueError, fmtShape, parseOptions } from '@surf/core';
import { Tensor } from '@surf/autograd';

/**
 * Rescales gradients in place so their joint norm is at most maxNorm (torch's
 * clip_grad_norm_, same 1e-6 guard): g ← g·min(1, maxNorm/(‖g‖ + 1e-6)). Everything stays on
 * the device; the returned 0-d tensor is the norm before clipping (read it only if needed).
 */
export function clipGradNorm(params: Iterable<Tensor>, maxNorm: number, opts: { normType?: number } = {}): Tensor {
  const p = parseOptions('clipGradNorm', opts, { normType: 'positive' }).normType ?? 2;
  if (typeof maxNorm !== 'number' || !(maxNorm >= 0))
    throw new ValueError(`clipGradNorm: maxNorm must be a number >= 0; got ${maxNorm}`);
  if (typeof p !== 'number' || !(p > 0))
    throw new ValueError(`clipGradNorm: normType must be > 0 or Infinity; got ${p}`);
  const list = [...params];
  const grads = list
    .map((t) => {
      if (!(t instanceof Tensor)) throw new ValueError('clipGradNorm: params must be tensors');
      return t.grad;
    })
    .filter((g): g is Tensor => g !== null);
  for (const g of grads)
    if (g.dtype !== 'float32')
      throw new DTypeError(
        `clipGradNorm: a gradient of shape ${fmtShape(g.shape)} has dtype ${g.dtype}; expected float32`,
      );
  if (grads.length === 0) return Tensor.fromNDArray(NDArray.full(getAny(list), [], 0));
  const abs = (e: Expr) => E.max(e, E.neg(e));
  // Per gradient: Σ|g|^p (or max|g|), then all combined into one scalar.
  const parts = grads.map((g) => {
    const nd = g.ndarray;
    const term = p === Infinity ? abs(E.in(0)) : p === 2 ? E.mul(E.in(0), E.in(0)) : E.pow(abs(E.in(0)), E.f(p));
    const [t] = NDArray.elementwise([term], [nd], 'clipGradNorm');
    const r = p === Infinity ? t.max() : t.sum();
    t.dispose();
    return r;
  });
  const total = combine(parts, p === Infinity ? E.max : E.add);
  const [norm] =
    p === Infinity || p === 1
      ? [total]
      : NDArray.elementwise([p === 2 ? E.sqrt(E.in(0)) : E.pow(E.in(0), E.f(1 / p))], [total], 'clipGradNorm');
  if (norm !== total) total.dispose();
  // coef = min(1, maxNorm / (norm + 1e-6)), as -max(-x, -1).
  const coef = E.neg(E.max(E.neg(E.div(E.f(maxNorm), E.add(E.in(1), E.f(1e-6)))), E.f(-1)));
  // Every scaled gradient first, then the assignments: a jitted step sees one run of
  // elementwise calls and merges it into grouped kernels (autograd's jit/merge.ts).
  const scaled = grads.map((g) => NDArray.elementwise([E.mul(E.in(0), coef)], [g.ndarray, norm], 'clipGradNorm')[0]);
  grads.forEach((g, i) => {
    g.assign(scaled[i]);
    scaled[i].dispose();
  });
  return Tensor.fromNDArray(norm);
}

/**
 * Folds scalars with `op`, up to COMBINE_INPUTS per elementwise call (a tree, not a chain: 53
 * parameters take 11 kernels instead of 52; 7 inputs and an output fit the 8 storage buffers
 * every WebGPU adapter offers a kernel). Disposes the parts it consumes.
 */
function combine(parts: NDArray[], op: (a: Expr, b: Expr) => Expr): NDArray {
  let level = parts;
  while (level.length > 1) {
    const next: NDArray[] = [];
    for (let i = 0; i < level.length; i += COMBINE_INPUTS) {
      const chunk = level.slice(i, i + COMBINE_INPUTS);
      if (chunk.length === 1) {
        next.push(chunk[0]);
        continue;
      }
      const expr = chunk.slice(1).reduce((acc: Expr, _x, j) => op(acc, E.in(j + 1)), E.in(0));
      next.push(NDArray.elementwise([expr], chunk, 'clipGradNorm')[0]);
      chunk.forEach((x) => x.dispose());
    }
    level = next;
  }
  return level[0];
}

const COMBINE_INPUTS = 7;

function getAny(params: Tensor[]) {
  for (const t of params) return t.ndarray.backend;
  throw new ValueError('clipGradNorm: got no parameters');
}

/**
 * Clamps every gradient element to [-clipValue, clipValue] in place (torch's clip_grad_value_),
 * one kernel per gradient, no readback.
 */
export function clipGradValue(params: Iterable<Tensor>, clipValue: number): void {
  if (typeof clipValue !== 'number' || !(clipValue >= 0))
    throw new ValueError(`clipGradValue: clipValue must be a number >= 0; got ${clipValue}`);
  if (params === null || typeof (params as Iterable<Tensor>)?.[Symbol.iterator] !== 'function')
    throw new ValueError('clipGradValue: params must be an iterable of tensors (model.parameters())');
  for (const t of params) {
    if (!(t instanceof Tensor)) throw new ValueError('clipGradValue: params must be tensors');
    const g = t.grad;
    if (!g) continue;
    if (g.dtype !== 'float32')
      throw new DTypeError(
        `clipGradValue: a gradient of shape ${fmtShape(g.shape)} has dtype ${g.dtype}; expected float32`,
      );
    const [c] = NDArray.elementwise(
      [E.max(E.neg(E.max(E.neg(E.in(0)), E.f(-clipValue))), E.f(-clipValue))],
      [g.ndarray],
      'clipGradValue',
    );
    g.assign(c);
    c.dispose();
  }
}
