import { E, NDArray, ValueError } from '@surf/core';
import { BaseOptions, Optimizer, OptimizerSpec, ParamState, ParamsArg, checkNonNegative } from './optimizer';
import { live } from './adamax';

export interface AdadeltaOptions extends BaseOptions {
  rho: number;
  eps: number;
  weightDecay: number;
}

/**
 * torch.optim.Adadelta: v ← ρv + (1 − ρ)g², Δ = √(a + ε)/√(v + ε)·g, a ← ρa + (1 − ρ)Δ²,
 * p ← p − lr·Δ (defaults lr 1, ρ 0.9, ε 1e-6). One fused kernel: inputs [p, g, v, a]
 * ([p, g] on the first step, both starting at zero), outputs [p', v', a'].
 */
export class Adadelta extends Optimizer<AdadeltaOptions> {
  constructor(params: ParamsArg<AdadeltaOptions>, opts: Partial<AdadeltaOptions> = {}) {
    super('Adadelta', params, opts, { lr: 1, rho: 0.9, eps: 1e-6, weightDecay: 0 }, {
      lr: 'any',
      rho: 'any',
      eps: 'any',
      weightDecay: 'any',
    } as OptimizerSpec<AdadeltaOptions>);
  }
  protected validate(o: AdadeltaOptions): void {
    for (const k of ['lr', 'eps', 'weightDecay'] as const) checkNonNegative('Adadelta', k, o[k]);
    if (typeof o.rho !== 'number' || !(o.rho >= 0 && o.rho <= 1))
      throw new ValueError(`Adadelta: rho must be a number in [0, 1]; got ${String(o.rho)}`);
  }
  protected update(p: NDArray, g: NDArray, st: ParamState, o: AdadeltaOptions) {
    const first = !st.arrays.squareAvg || !st.arrays.accDelta;
    const P = E.in(0);
    const G = E.add(
      E.in(1),
      E.mul(
        live(() => o.weightDecay),
        P,
      ),
    );
    const rho = live(() => o.rho),
      rest = live(() => 1 - o.rho),
      eps = live(() => o.eps);
    const v = first ? E.mul(rest, E.mul(G, G)) : E.add(E.mul(rho, E.in(2)), E.mul(rest, E.mul(G, G)));
    const a0 = first ? null : E.in(3);
    const delta = E.mul(E.div(E.sqrt(a0 ? E.add(a0, eps) : eps), E.sqrt(E.add(v, eps))), G);
    const a = a0 ? E.add(E.mul(rho, a0), E.mul(rest, E.mul(delta, delta))) : E.mul(rest, E.mul(delta, delta));
    const outs = NDArray.elementwise(
      [
        E.sub(
          P,
          E.mul(
            live(() => o.lr),
            delta,
          ),
        ),
        v,
        a,
      ],
      first ? [p, g] : [p, g, st.arrays.squareAvg, st.arrays.accDelta],
      'Adadelta.step',
    );
    return { param: outs[0], arrays: { squareAvg: outs[1], accDelta: outs[2] } };
  }
}
