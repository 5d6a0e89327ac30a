import { E, NDArray } from '@surf/core';
import { BaseOptions, Optimizer, OptimizerSpec, ParamState, ParamsArg, checkNonNegative } from './optimizer';
import { checkBetas, live } from './adamax';

export interface NAdamOptions extends BaseOptions {
  betas: [number, number];
  eps: number;
  weightDecay: number;
  /** ψ in μ_t = β1·(1 − ½·0.96^(tψ)) (default 4e-3). */
  momentumDecay: number;
}

/** μ_t of NAdam's momentum schedule. */
const mu = (b1: number, psi: number, t: number) => b1 * (1 - 0.5 * Math.pow(0.96, t * psi));

// Products μ_1·…·μ_t per (β1, ψ), grown as steps advance: the host's share of NAdam's state.
const products = new Map<string, number[]>();
function muProduct(b1: number, psi: number, t: number): number {
  const key = `${b1}|${psi}`;
  let a = products.get(key);
  if (!a) products.set(key, (a = [1]));
  while (a.length <= t) a.push(a[a.length - 1] * mu(b1, psi, a.length));
  return a[t];
}

/**
 * torch.optim.NAdam: Adam with Nesterov momentum on a decaying schedule μ_t:
 * p ← p − lr·(1 − μ_t)/(1 − Πμ_{≤t})·g/d − lr·μ_{t+1}/(1 − Πμ_{≤t+1})·m/d, d = √(v/(1 − β2ᵗ)) + ε.
 * One fused kernel; the μ products are host scalars of the step count.
 */
export class NAdam extends Optimizer<NAdamOptions> {
  constructor(params: ParamsArg<NAdamOptions>, opts: Partial<NAdamOptions> = {}) {
    super('NAdam', params, opts, { lr: 2e-3, betas: [0.9, 0.999], eps: 1e-8, weightDecay: 0, momentumDecay: 4e-3 }, {
      lr: 'any',
      betas: 'any',
      eps: 'any',
      weightDecay: 'any',
      momentumDecay: 'any',
    } as OptimizerSpec<NAdamOptions>);
  }
  protected validate(o: NAdamOptions): void {
    for (const k of ['lr', 'eps', 'weightDecay', 'momentumDecay'] as const) checkNonNegative('NAdam', k, o[k]);
    checkBetas('NAdam', o.betas);
  }
  protected update(p: NDArray, g: NDArray, st: ParamState, o: NAdamOptions) {
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
    const d = E.add(
      E.sqrt(
        E.mul(
          v,
          live(() => 1 / (1 - Math.pow(o.betas[1], st.step))),
        ),
      ),
      live(() => o.eps),
    );
    const cg = live(() => {
      const t = st.step;
      return (o.lr * (1 - mu(o.betas[0], o.momentumDecay, t))) / (1 - muProduct(o.betas[0], o.momentumDecay, t));
    });
    const cm = live(() => {
      const t = st.step;
      return (o.lr * mu(o.betas[0], o.momentumDecay, t + 1)) / (1 - muProduct(o.betas[0], o.momentumDecay, t + 1));
    });
    const outs = NDArray.elementwise(
      [E.sub(P, E.div(E.add(E.mul(cg, G), E.mul(cm, m)), d)), m, v],
      first ? [p, g] : [p, g, st.arrays.expAvg, st.arrays.expAvgSq],
      'NAdam.step',
    );
    return { param: outs[0], arrays: { expAvg: outs[1], expAvgSq: outs[2] } };
  }
}
