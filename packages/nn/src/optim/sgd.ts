import { NDArray, ValueError } from '@surf/core';
import { BaseOptions, Optimizer, OptimizerSpec, ParamState, ParamsArg, checkNonNegative } from './optimizer';
import { sgdExprs } from './update-exprs';

export interface SGDOptions extends BaseOptions {
  momentum: number;
  dampening: number;
  weightDecay: number;
  nesterov: boolean;
}

const SPEC_SGD: OptimizerSpec<SGDOptions> = {
  lr: 'nonnegative',
  momentum: 'nonnegative',
  dampening: 'nonnegative',
  weightDecay: 'nonnegative',
  nesterov: 'boolean',
};

/**
 * Stochastic gradient descent as torch.optim.SGD: g += λp; b = μb + (1-τ)g (b = g on the
 * first step); g = g + μb (Nesterov) or b; p -= lr·g. One fused kernel per parameter.
 */
export class SGD extends Optimizer<SGDOptions> {
  constructor(params: ParamsArg<SGDOptions>, opts: Partial<SGDOptions> = {}) {
    super(
      'SGD',
      params,
      opts,
      {
        lr: 1e-3,
        momentum: 0,
        dampening: 0,
        weightDecay: 0,
        nesterov: false,
      },
      SPEC_SGD,
    );
  }

  protected validate(o: SGDOptions): void {
    for (const k of ['lr', 'momentum', 'dampening', 'weightDecay'] as const) checkNonNegative('SGD', k, o[k]);
    if (o.nesterov && (o.momentum <= 0 || o.dampening !== 0))
      throw new ValueError(
        `SGD: nesterov needs momentum > 0 and dampening 0; got momentum ${o.momentum}, dampening ${o.dampening}`,
      );
  }

  protected update(
    p: NDArray,
    g: NDArray,
    st: ParamState,
    o: SGDOptions,
  ): { param: NDArray; arrays: Record<string, NDArray> } {
    const first = st.step === 1 || !st.arrays.momentumBuffer;
    // jit: the live form lets a replayed step read the current lr
    const consts = () => ({
      lr: o.lr,
      weightDecay: o.weightDecay,
      momentum: o.momentum,
      dampening: o.dampening,
      nesterov: o.nesterov,
      first,
    });
    const exprs = sgdExprs(consts(), consts);
    if (o.momentum === 0) {
      const [param] = NDArray.elementwise(exprs, [p, g], 'SGD.step');
      return { param, arrays: {} };
    }
    const [param, momentumBuffer] = NDArray.elementwise(
      exprs,
      first ? [p, g] : [p, g, st.arrays.momentumBuffer],
      'SGD.step',
    );
    return { param, arrays: { momentumBuffer } };
  }
}
