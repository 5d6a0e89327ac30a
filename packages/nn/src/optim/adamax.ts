import { E, Expr, NDArray, ValueError } from '@surf/core';
import { dynamicConst } from '@surf/autograd';
import { BaseOptions, Optimizer, OptimizerSpec, ParamState, ParamsArg, checkNonNegative } from './optimizer';

export interface AdamaxOptions extends BaseOptions {
  betas: [number, number];
  eps: number;
  weightDecay: number;
}

export function checkBetas(name: string, betas: unknown): void {
  if (!Array.isArray(betas) || betas.length !== 2 || !betas.every((b) => typeof b === 'number' && b >= 0 && b < 1))
    throw new ValueError(`${name}: betas must be two numbers in [0, 1); got ${JSON.stringify(betas)}`);
}

/** A scalar of the update: a dynamic constant (read again when a jitted step replays). */
export const live = (f: () => number): Expr => dynamicConst(f);

/**
 * torch.optim.Adamax: m ← β1·m + (1 − β1)·g, u ← max(β2·u, |g| + ε),
 * p ← p − lr/(1 − β1ᵗ) · m/u. One fused kernel per parameter: inputs [p, g, m, u]
 * ([p, g] on the first step, both states starting at zero), outputs [p', m', u'].
 */
export class Adamax extends Optimizer<AdamaxOptions> {
  constructor(params: ParamsArg<AdamaxOptions>, opts: Partial<AdamaxOptions> = {}) {
    super('Adamax', params, opts, { lr: 2e-3, betas: [0.9, 0.999], eps: 1e-8, weightDecay: 0 }, {
      lr: 'any',
      betas: 'any',
      eps: 'any',
      weightDecay: 'any',
    } as OptimizerSpec<AdamaxOptions>);
  }
  protected validate(o: AdamaxOptions): void {
    for (const k of ['lr', 'eps', 'weightDecay'] as const) checkNonNegative('Adamax', k, o[k]);
    checkBetas('Adamax', o.betas);
  }
  protected update(p: NDArray, g: NDArray, st: ParamState, o: AdamaxOptions) {
    const first = !st.arrays.expAvg || !st.arrays.expInf;
    const P = E.in(0);
    const G0 = E.in(1);
    const G = E.add(
      G0,
      E.mul(
        live(() => o.weightDecay),
        P,
      ),
    );
    const b1 = live(() => o.betas[0]);
    const m = first
      ? E.mul(
          live(() => 1 - o.betas[0]),
          G,
        )
      : E.add(
          E.mul(b1, E.in(2)),
          E.mul(
            live(() => 1 - o.betas[0]),
            G,
          ),
        );
    const absG = E.add(
      E.max(G, E.neg(G)),
      live(() => o.eps),
    );
    const u = first
      ? absG
      : E.max(
          E.mul(
            live(() => o.betas[1]),
            E.in(3),
          ),
          absG,
        );
    const clr = live(() => o.lr / (1 - Math.pow(o.betas[0], st.step)));
    const outs = NDArray.elementwise(
      [E.sub(P, E.div(E.mul(clr, m), u)), m, u],
      first ? [p, g] : [p, g, st.arrays.expAvg, st.arrays.expInf],
      'Adamax.step',
    );
    return { param: outs[0], arrays: { expAvg: outs[1], expInf: outs[2] } };
  }
}
