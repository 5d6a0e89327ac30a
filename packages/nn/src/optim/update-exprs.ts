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
 * Inputs [param, grad, m, v(, v̂)] ([param, grad] on the first step, where m and v are zero, so no
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
  /** Keep the running max of v (input and output 4) and divide by its root (AMSGrad). */
  amsgrad?: boolean;
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
  // AMSGrad: v̂ ← max(v̂, v) and the denominator uses v̂ (v̂ = v on the first step).
  const vHat = c.amsgrad && !first ? E.max(E.in(4), v) : v;
  const denom = E.add(E.mul(E.sqrt(vHat), E.f(invBc2Sqrt)), E.f(c.eps));
  const out = [E.sub(p, E.div(E.mul(E.f(stepSize), m), denom)), m, v];
  return c.amsgrad ? [...out, vHat] : out;
}

/**
 * RMSprop (torch.optim.RMSprop). State inputs are given by index, or null on the first step
 * (they start at zero): v the mean square, gAvg the mean gradient (centered), buf the momentum
 * buffer. Outputs [param', v', gAvg'?, buf'?] in that order, those present.
 */
export interface RmspropConsts {
  lr: number;
  alpha: number;
  eps: number;
  weightDecay: number;
  momentum: number;
  centered: boolean;
  /** Input index of each state array, null when it starts from zero now. */
  v: number | null;
  gAvg: number | null;
  buf: number | null;
}

export function rmspropExprs(c: RmspropConsts): Expr[] {
  const g = c.weightDecay ? E.add(G, E.mul(E.f(c.weightDecay), P)) : G;
  const old = (i: number | null): Expr | null => (i === null ? null : E.in(i));
  // v ← α·v + (1 − α)·g²
  const v = lerp(c.alpha, old(c.v), E.mul(g, g));
  const gAvg = c.centered ? lerp(c.alpha, old(c.gAvg), g) : null;
  // avg = √(v − ḡ²) + ε (centered) or √v + ε
  const avg = E.add(E.sqrt(gAvg ? E.sub(v, E.mul(gAvg, gAvg)) : v), E.f(c.eps));
  const step = E.div(g, avg);
  const out: Expr[] = [];
  let buf: Expr | null = null;
  if (c.momentum > 0) {
    // buf ← μ·buf + g/avg ; p ← p − lr·buf
    buf = c.buf === null ? step : E.add(E.mul(E.f(c.momentum), E.in(c.buf)), step);
    out.push(E.sub(P, E.mul(E.f(c.lr), buf)));
  } else {
    out.push(E.sub(P, E.mul(E.f(c.lr), step)));
  }
  out.push(v);
  if (gAvg) out.push(gAvg);
  if (buf) out.push(buf);
  return out;
}

/**
 * Adagrad (torch.optim.Adagrad): s ← s + g², p ← p − clr·g/(√s + ε) with
 * clr = lr/(1 + (t − 1)·lrDecay). Inputs [param, grad, s] ([param, grad] on the first step,
 * s then starting at initialAccumulatorValue); outputs [param', s'].
 */
export interface AdagradConsts {
  lr: number;
  lrDecay: number;
  weightDecay: number;
  eps: number;
  initialAccumulatorValue: number;
  step: number;
  first: boolean;
}

export function adagradExprs(c: AdagradConsts): Expr[] {
  const g = c.weightDecay ? E.add(G, E.mul(E.f(c.weightDecay), P)) : G;
  const s = E.add(c.first ? E.f(c.initialAccumulatorValue) : E.in(2), E.mul(g, g));
  const clr = c.lr / (1 + (c.step - 1) * c.lrDecay);
  return [E.sub(P, E.div(E.mul(E.f(clr), g), E.add(E.sqrt(s), E.f(c.eps)))), s];
}
