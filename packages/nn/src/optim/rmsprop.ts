import { NDArray } from '@surf/core';
import { BaseOptions, Optimizer, OptimizerSpec, ParamState, ParamsArg, checkNonNegative } from './optimizer';
import { rmspropExprs } from './update-exprs';

export interface RMSpropOptions extends BaseOptions {
  alpha: number;
  eps: number;
  weightDecay: number;
  momentum: number;
  centered: boolean;
}

const SPEC_RMSPROP: OptimizerSpec<RMSpropOptions> = {
  lr: 'nonnegative',
  alpha: 'nonnegative',
  eps: 'nonnegative',
  weightDecay: 'nonnegative',
  momentum: 'nonnegative',
  centered: 'boolean',
};

/**
 * torch.optim.RMSprop: v ← αv + (1-α)g²; p -= lr·g/(√v + ε) (centered: √(v - ḡ²)), with an
 * optional momentum buffer. One fused kernel per parameter.
 */
export class RMSprop extends Optimizer<RMSpropOptions> {
  constructor(params: ParamsArg<RMSpropOptions>, opts: Partial<RMSpropOptions> = {}) {
    super(
      'RMSprop',
      params,
      opts,
      {
        lr: 1e-2,
        alpha: 0.99,
        eps: 1e-8,
        weightDecay: 0,
        momentum: 0,
        centered: false,
      },
      SPEC_RMSPROP,
    );
  }

  protected validate(o: RMSpropOptions): void {
    for (const k of ['lr', 'alpha', 'eps', 'weightDecay', 'momentum'] as const) checkNonNegative('RMSprop', k, o[k]);
  }

  protected update(p: NDArray, g: NDArray, st: ParamState, o: RMSpropOptions) {
    const inputs = [p, g];
    const at = (a: NDArray | undefined): number | null => (a ? inputs.push(a) - 1 : null);
    const v = at(st.arrays.squareAvg);
    const gAvg = o.centered ? at(st.arrays.gradAvg) : null;
    const buf = o.momentum > 0 ? at(st.arrays.momentumBuffer) : null;
    // jit: the live form lets a replayed step read the current lr
    const consts = () => ({ ...o, v, gAvg, buf });
    const outs = NDArray.elementwise(rmspropExprs(consts(), consts), inputs, 'RMSprop.step');
    const arrays: Record<string, NDArray> = { squareAvg: outs[1] };
    let k = 2;
    if (o.centered) arrays.gradAvg = outs[k++];
    if (o.momentum > 0) arrays.momentumBuffer = outs[k++];
    return { param: outs[0], arrays };
  }
}
