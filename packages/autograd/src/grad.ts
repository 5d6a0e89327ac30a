import { NDArray, SurfTypeError, ValueError, parseOptions } from '@surf/core';
import { runGraph } from './engine';
import { Tensor } from './tensor';

export interface GradOptions {
  /** The vector of the vector-Jacobian product per output (needed for outputs of more than one element). */
  gradOutputs?: Tensor | NDArray | readonly (Tensor | NDArray | null | undefined)[] | null;
  /** Keep the graph so it can be differentiated again (default false, as PyTorch). */
  retainGraph?: boolean;
  /** Not supported: backward rules run on raw arrays, so gradients carry no graph. Only false is accepted. */
  createGraph?: boolean;
  /** Give null for an input the outputs do not depend on, instead of raising (default false). */
  allowUnused?: boolean;
}

const list = <T>(v: T | readonly T[]): T[] => (Array.isArray(v) ? [...(v as T[])] : [v as T]);

/**
 * PyTorch's torch.autograd.grad: the gradients of `outputs` (summed, each weighted by its
 * gradOutput) with respect to `inputs`, returned as new tensors in the order of `inputs`.
 * No `.grad` is touched; inputs may be leaves or intermediate tensors. Tensor hooks on the
 * tensors the sweep passes run as in backward(). Differs from PyTorch: createGraph is refused
 * (no higher-order gradients), and an input with no path from the outputs raises unless
 * allowUnused is set, as PyTorch.
 */
export function grad(
  outputs: Tensor | readonly Tensor[],
  inputs: Tensor | readonly Tensor[],
  opts: GradOptions = {},
): (Tensor | null)[] {
  const o = parseOptions<GradOptions>('grad', opts, {
    gradOutputs: 'any',
    retainGraph: 'boolean',
    createGraph: 'boolean',
    allowUnused: 'boolean',
  });
  if (o.createGraph)
    throw new ValueError(
      'grad: createGraph is not supported (Surf has no higher-order gradients: backward rules run on raw arrays); compute the gradient once, or use finite differences for the second order',
    );
  const outs = list(outputs);
  const ins = list(inputs);
  if (!outs.length) throw new ValueError('grad: expected at least one output tensor');
  if (!ins.length) throw new ValueError('grad: expected at least one input tensor');
  outs.forEach((t, i) => {
    if (!(t instanceof Tensor)) throw new SurfTypeError(`grad: outputs[${i}] is ${typeof t}; expected a Tensor`);
  });
  ins.forEach((t, i) => {
    if (!(t instanceof Tensor)) throw new SurfTypeError(`grad: inputs[${i}] is ${typeof t}; expected a Tensor`);
    if (!t.requiresGrad)
      throw new ValueError(`grad: inputs[${i}] does not require grad; only tensors that require grad have gradients`);
  });
  const go = o.gradOutputs === undefined || o.gradOutputs === null ? [] : list(o.gradOutputs);
  if (go.length && go.length !== outs.length)
    throw new ValueError(`grad: ${go.length} gradOutputs for ${outs.length} outputs; expected one per output`);
  const seeds = outs.map((_, k) => {
    const g = go[k];
    if (g === undefined || g === null) return undefined;
    if (g instanceof Tensor) return g.nd('grad');
    if (g instanceof NDArray) return g;
    throw new SurfTypeError(`grad: gradOutputs[${k}] is ${typeof g}; expected a Tensor`);
  });
  const capture = new Map<Tensor, NDArray | null>(ins.map((t) => [t, null]));
  try {
    runGraph('grad', outs, seeds, { retainGraph: o.retainGraph }, capture);
  } catch (e) {
    capture.forEach((g) => g?.dispose());
    throw e;
  }
  const res = ins.map((t) => {
    const g = capture.get(t);
    return g ? new Tensor(g.contiguous()) : null;
  });
  capture.forEach((g) => g?.dispose());
  if (!o.allowUnused) {
    const unused = res.findIndex((r) => r === null);
    if (unused >= 0) {
      res.forEach((r) => r?.dispose());
      throw new ValueError(
        `grad: inputs[${unused}] is not used to compute the outputs (no path from them to it); pass { allowUnused: true } to get null for it`,
      );
    }
  }
  return res;
}
