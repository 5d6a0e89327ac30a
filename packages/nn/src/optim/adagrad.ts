import { NDArray } from '@surf/core';
import { BaseOptions, Optimizer, OptimizerSpec, ParamState, ParamsArg, checkNonNegative } from './optimizer';
import { adagradExprs } from './update-exprs';

export interface AdagradOptions extends BaseOptions {
  lrDecay: number;
  weightDecay: number;
  initialAccumulatorValue: number;
  eps: number;
}

const SPEC_ADAGRAD: OptimizerSpec<AdagradOptions> = {
  lr: 'nonnegative',
  lrDecay: 'nonnegative',
  weightDecay: 'nonnegative',
  initialAccumulatorValue: 'nonnegative',
  eps: 'nonnegative',
};

/** torch.optim.Adagrad: s ← s + g²; p -= lr/(1 + (t-1)·lrDecay) · g/(√s + ε). One fused kernel. */
export class Adagrad extends Optimizer<AdagradOptions> {
  constructor(params: ParamsArg<AdagradOptions>, opts: Partial<AdagradOptions> = {}) {
    super(
      'Adagrad',
      params,
      opts,
      {
        lr: 1e-2,
        lrDecay: 0,
        weightDecay: 0,
        initialAccumulatorValue: 0,
        eps: 1e-10,
      },
      SPEC_ADAGRAD,
    );
  }

  protected validate(o: AdagradOptions): void {
    for (const k of ['lr', 'lrDecay', 'weightDecay', 'initialAccumulatorValue', 'eps'] as const)
      checkNonNegative('Adagrad', k, o[k]);
  }

  protected update(p: NDArray, g: NDArray, st: ParamState, o: AdagradOptions) {
    const first = !st.arrays.sum;
    // jit: the live form lets a replayed step read the current lr and step count
    const consts = () => ({ ...o, step: st.step, first });
    const exprs = adagradExprs(consts(), consts);
    const [param, sum] = NDArray.elementwise(exprs, first ? [p, g] : [p, g, st.arrays.sum], 'Adagrad.step');
    return { param, arrays: { sum } };
  }
}
