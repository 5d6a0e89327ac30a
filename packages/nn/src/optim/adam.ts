import { NDArray, ValueError } from '@surf/core';
import { BaseOptions, Optimizer, OptimizerSpec, ParamState, ParamsArg, betasRule, checkNonNegative } from './optimizer';
import { adamExprs } from './update-exprs';

export interface AdamOptions extends BaseOptions {
  betas: [number, number];
  eps: number;
  weightDecay: number;
  /** AMSGrad: divide by the running maximum of the second moment (PyTorch's amsgrad). */
  amsgrad: boolean;
}

function validateAdam(name: string, o: AdamOptions): void {
  checkNonNegative(name, 'lr', o.lr);
  checkNonNegative(name, 'eps', o.eps);
  checkNonNegative(name, 'weightDecay', o.weightDecay);
  if (typeof o.amsgrad !== 'boolean')
    throw new ValueError(`${name}: amsgrad must be a boolean; got ${JSON.stringify(o.amsgrad)}`);
  if (
    !Array.isArray(o.betas) ||
    o.betas.length !== 2 ||
    !o.betas.every((b) => typeof b === 'number' && b >= 0 && b < 1)
  ) {
    throw new ValueError(`${name}: betas must be two numbers in [0, 1); got ${JSON.stringify(o.betas)}`);
  }
}

function adamStep(name: string, decoupled: boolean, p: NDArray, g: NDArray, st: ParamState, o: AdamOptions) {
  // A restored state without moments (or step 1) starts them from zero: the first-step kernel.
  if (!st.arrays.expAvg || !st.arrays.expAvgSq || (o.amsgrad && !st.arrays.maxExpAvgSq)) st.step = 1;
  // jit: the live form lets a replayed step read the current lr and step count
  const consts = () => ({
    lr: o.lr,
    beta1: o.betas[0],
    beta2: o.betas[1],
    eps: o.eps,
    weightDecay: o.weightDecay,
    decoupled,
    step: st.step,
    amsgrad: o.amsgrad,
  });
  const exprs = adamExprs(consts(), consts);
  const inputs =
    st.step === 1
      ? [p, g]
      : [p, g, st.arrays.expAvg, st.arrays.expAvgSq, ...(o.amsgrad ? [st.arrays.maxExpAvgSq] : [])];
  const [param, expAvg, expAvgSq, maxExpAvgSq] = NDArray.elementwise(exprs, inputs, `${name}.step`);
  const arrays: Record<string, NDArray> = { expAvg, expAvgSq };
  if (o.amsgrad) arrays.maxExpAvgSq = maxExpAvgSq;
  return { param, arrays };
}

const SPEC_ADAM: OptimizerSpec<AdamOptions> = {
  lr: 'nonnegative',
  betas: betasRule,
  eps: 'nonnegative',
  weightDecay: 'nonnegative',
  amsgrad: 'boolean',
};

/**
 * torch.optim.Adam: g += λp (L2 penalty in the gradient); m, v moving averages of g and g²;
 * p -= lr/(1-β1ᵗ) · m / (√v/√(1-β2ᵗ) + ε). One fused kernel per parameter; lr and the bias
 * corrections are kernel parameters, so schedules never recompile.
 */
export class Adam extends Optimizer<AdamOptions> {
  constructor(params: ParamsArg<AdamOptions>, opts: Partial<AdamOptions> = {}) {
    super(
      'Adam',
      params,
      opts,
      {
        lr: 1e-3,
        betas: [0.9, 0.999],
        eps: 1e-8,
        weightDecay: 0,
        amsgrad: false,
      },
      SPEC_ADAM,
    );
  }
  protected validate(o: AdamOptions): void {
    validateAdam('Adam', o);
  }
  protected update(p: NDArray, g: NDArray, st: ParamState, o: AdamOptions) {
    return adamStep('Adam', false, p, g, st, o);
  }
}

/** torch.optim.AdamW: Adam with decoupled weight decay p ← p·(1 - lr·λ) (default λ = 0.01). */
export class AdamW extends Optimizer<AdamOptions> {
  constructor(params: ParamsArg<AdamOptions>, opts: Partial<AdamOptions> = {}) {
    super(
      'AdamW',
      params,
      opts,
      {
        lr: 1e-3,
        betas: [0.9, 0.999],
        eps: 1e-8,
        weightDecay: 1e-2,
        amsgrad: false,
      },
      SPEC_ADAM,
    );
  }
  protected validate(o: AdamOptions): void {
    validateAdam('AdamW', o);
  }
  protected update(p: NDArray, g: NDArray, st: ParamState, o: AdamOptions) {
    return adamStep('AdamW', true, p, g, st, o);
  }
}
