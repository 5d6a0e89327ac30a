import { E, Expr } from '@surf/core';

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

export function sgdExprs(c: SgdConsts): Expr[] {
  // g ← g + λ·p
  const g = E.add(G, E.mul(E.f(c.weightDecay), P));
  if (c.momentum === 0) return [E.sub(P, E.mul(E.f(c.lr), g))];
  // b ← μ·b + (1 − τ)·g, and b ← g on the first step
  const buf = c.first ? g : E.add(E.mul(E.f(c.momentum), E.in(2)), E.mul(E.f(1 - c.dampening), g));
  // d ← g + μ·b (Nesterov) or b
  const d = c.nesterov ? E.add(g, E.mul(E.f(c.momentum), buf)) : buf;
  return [E.sub(P, E.mul(E.f(c.lr), d)), buf];
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

const lerp = (keep: number, old: Expr | null, x: Expr): Expr =>
  old ? E.add(E.mul(E.f(keep), old), E.mul(E.f(1 - keep), x)) : E.mul(E.f(1 - keep), x);

export function adamExprs(c: AdamConsts): Expr[] {
  const g = c.decoupled ? G : E.add(G, E.mul(E.f(c.weightDecay), P));
  const p = c.decoupled ? E.mul(P, E.f(1 - c.lr * c.weightDecay)) : P;
  // m ← β1·m + (1 − β1)·g ;  v ← β2·v + (1 − β2)·g²
  const first = c.step === 1;
  const m = lerp(c.beta1, first ? null : E.in(2), g);
  const v = lerp(c.beta2, first ? null : E.in(3), E.mul(g, g));
  // p ← p − (lr / (1 − β1ᵗ)) · m / (√v / √(1 − β2ᵗ) + ε), the host computing the scalars in f64.
  const stepSize = c.lr / (1 - Math.pow(c.beta1, c.step));
  const invBc2Sqrt = 1 / Math.sqrt(1 - Math.pow(c.beta2, c.step));
  const denom = E.add(E.mul(E.sqrt(v), E.f(invBc2Sqrt)), E.f(c.eps));
  return [E.sub(p, E.div(E.mul(E.f(stepSize), m), denom)), m, v];
}
