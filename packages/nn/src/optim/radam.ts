import { E, NDArray } from '@surf/core';
import { BaseOptions, Optimizer, OptimizerSpec, ParamState, ParamsArg, checkNonNegative } from './optimizer';
import { checkBetas, live } from './adamax';

export interface RAdamOptions extends BaseOptions {
  betas: [number, number];
  eps: number;
  weightDecay: number;
}

/**
 * The two host scalars of RAdam's step t: while the variance is intractable (ρ_t ≤ 5) the
 * update is plain momentum, p ← p − lr·m̂ (a = 0, b = 1); after, p ← p − lr·m̂·r·√(1 − β2ᵗ)/(√v + ε)
 * (a = r·√(1 − β2ᵗ), b = 0). Both branches are one expression, so a jitted step replays right
 * across the switch.
 */
function rectification(b2: number, t: number): { a: number; b: number } {
  const bc2 = 1 - Math.pow(b2, t);
  const rhoInf = 2 / (1 - b2) - 1;
  const rhoT = rhoInf - (2 * t * Math.pow(b2, t)) / bc2;
  if (!(rhoT > 5)) return { a: 0, b: 1 };
  const r = Math.sqrt(((rhoT - 4) * (rhoT - 2) * rhoInf) / ((rhoInf - 4) * (rhoInf - 2) * rhoT));
  return { a: r * Math.sqrt(bc2), b: 0 };
}

/** torch.optim.RAdam (rectified Adam). One fused kernel per parameter. */
export class RAdam extends Optimizer<RAdamOptions> {
  constructor(params: ParamsArg<RAdamOptions>, opts: Partial<RAdamOptions> = {}) {
    super('RAdam', params, opts, { lr: 1e-3, betas: [0.9, 0.999], eps: 1e-8, weightDecay: 0 }, {
      lr: 'any',
      betas: 'any',
      eps: 'any',
      weightDecay: 'any',
    } as OptimizerSpec<RAdamOptions>);
  }
  protected validate(o: RAdamOptions): void {
    for (const k of ['lr', 'eps', 'weightDecay'] as const) checkNonNegative('RAdam', k, o[k]);
    checkBetas('RAdam', o.betas);
  }
  protected update(p: NDArray, g: NDArray, st: ParamState, o: RAdamOptions) {
    const first = !st.arrays.expAvg || !st.arrays.expAvgSq;
    if (first) st.step = 1;
    const P = E.in(0);
    const G = E.add(
      E.in(1),
      E.mul(
        live(() => o.weightDecay),
        P,
      ),
    );
    const [b1, b2] = [live(() => o.betas[0]), live(() => o.betas[1])];
    const [r1, r2] = [live(() => 1 - o.betas[0]), live(() => 1 - o.betas[1])];
    const m = first ? E.mul(r1, G) : E.add(E.mul(b1, E.in(2)), E.mul(r1, G));
    const v = first ? E.mul(r2, E.mul(G, G)) : E.add(E.mul(b2, E.in(3)), E.mul(r2, E.mul(G, G)));
    // lr·m̂ = lr/(1 − β1ᵗ)·m
    const lrM = E.mul(
      live(() => o.lr / (1 - Math.pow(o.betas[0], st.step))),
      m,
    );
    const a = live(() => rectification(o.betas[1], st.step).a);
    const b = live(() => rectification(o.betas[1], st.step).b);
    const scale = E.add(
      E.div(
        a,
        E.add(
          E.sqrt(v),
          live(() => o.eps),
        ),
      ),
      b,
    );
    const outs = NDArray.elementwise(
      [E.sub(P, E.mul(lrM, scale)), m, v],
      first ? [p, g] : [p, g, st.arrays.expAvg, st.arrays.expAvgSq],
      'RAdam.step',
    );
    return { param: outs[0], arrays: { expAvg: outs[1], expAvgSq: outs[2] } };
  }
}
