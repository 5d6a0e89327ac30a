import { E, Expr } from '@surf/core';
import { dynamicConst } from '@surf/autograd';

/**
 * Optimizer updates as expression trees, so one step of one parameter is one fused kernel
 * whatever its formula. Every hyperparameter and per-step scalar (lr, bias corrections) is
 * an expression constant, which backends pass as a kernel parameter: a scheduler changing lr
 * every step never recompiles. The formulas are PyTorch's documented ones.
 */

const P = E.in(0);
const G = E.in(1);

/**
 * Inputs [param, grad, buf] (just [param, grad] without momentum or on the first step, when
 * the buffer starts as g); outputs [param'] or [param', buf'].
 */
export interface SgdConsts {
  lr: number;
  weightDecay: number;
  /** 0 means no momentum buffer at all. */
  momentum: number;
  dampening: number;
  nesterov: boolean;
  first: boolean;
}

const sgdScalars = (c: SgdConsts) => ({ weightDecay: c.weightDecay, lr: c.lr, momentum: c.momentum, keep: 1 - c.dampening });

/**
 * jit: with `live` (the hyperparameters as they are when called), every scalar is a dynamic
 * constant, so a replayed step reads the current lr and step count.
 */
function scalarConsts<T extends Record<string, number>>(now: T, live?: () => T): (name: keyof T) => Expr {
  return (name) => (live ? dynamicConst(() => live()[name]) : E.f(now[name]));
}

export function sgdExprs(c: SgdConsts, live?: () => SgdConsts): Expr[] {
  const k = scalarConsts(sgdScalars(c), live && (() => sgdScalars(live())));
  // g ← g + λ·p
  const g = E.add(G, E.mul(k('weightDecay'), P));
  if (c.momentum === 0) return [E.sub(P, E.mul(k('lr'), g))];
  // b ← μ·b + (1 − τ)·g, and b ← g on the first step
  const buf = c.first ? g : E.add(E.mul(k('momentum'), E.in(2)), E.mul(k('keep'), g));
  // d ← g + μ·b (Nesterov) or b
  const d = c.nesterov ? E.add(g, E.mul(k('momentum'), buf)) : buf;
  return [E.sub(P, E.mul(k('lr'), d)), buf];
}

/**
 * Inputs [param, grad, m, v] ([param, grad] on the first step, where m and v are zero, so no
 * zero-filled arrays are made); outputs [param', m', v'].
 */
export interface AdamConsts {
  lr: number;
  beta1: number;
  beta2: number;
  eps: number;
  weightDecay: number;
  /** AdamW: decay the weights directly (p ← p·(1 − lr·λ)) instead of adding λ·p to the gradient. */
  decoupled: boolean;
  /** The step number t, from 1. */
  step: number;
}

const lerp = (keep: Expr, rest: Expr, old: Expr | null, x: Expr): Expr =>
  old ? E.add(E.mul(keep, old), E.mul(rest, x)) : E.mul(rest, x);

// The host computes the scalars in f64: lr / (1 − β1ᵗ) and 1 / √(1 − β2ᵗ).
const adamScalars = (c: AdamConsts) => ({
  weightDecay: c.weightDecay,
  decay: 1 - c.lr * c.weightDecay,
  beta1: c.beta1,
  rest1: 1 - c.beta1,
  beta2: c.beta2,
  rest2: 1 - c.beta2,
  stepSize: c.lr / (1 - Math.pow(c.beta1, c.step)),
  invBc2Sqrt: 1 / Math.sqrt(1 - Math.pow(c.beta2, c.step)),
  eps: c.eps,
});

export function adamExprs(c: AdamConsts, live?: () => AdamConsts): Expr[] {
  const k = scalarConsts(adamScalars(c), live && (() => adamScalars(live())));
  const g = c.decoupled ? G : E.add(G, E.mul(k('weightDecay'), P));
  const p = c.decoupled ? E.mul(P, k('decay')) : P;
  // m ← β1·m + (1 − β1)·g ;  v ← β2·v + (1 − β2)·g²
  const first = c.step === 1;
  const m = lerp(k('beta1'), k('rest1'), first ? null : E.in(2), g);
  const v = lerp(k('beta2'), k('rest2'), first ? null : E.in(3), E.mul(g, g));
  // p ← p − (lr / (1 − β1ᵗ)) · m / (√v / √(1 − β2ᵗ) + ε)
  const denom = E.add(E.mul(E.sqrt(v), k('invBc2Sqrt')), k('eps'));
  return [E.sub(p, E.div(E.mul(k('stepSize'), m), denom)), m, v];
}
