import { E, Expr } from '@surf/core';
import { dynamicConst, isRecording } from '@surf/autograd';

/**
 * Optimizer updates as expression trees, so one step of one parameter is one fused kernel
 * whatever its formula. Every hyperparameter and per-step scalar (lr, bias corrections) is
 * an expression constant, which backends pass as a kernel parameter: a scheduler changing lr
 * every step never recompiles. The formulas are PyTorch's documented ones.
 */

const P = E.in(0);
const G = E.in(1);

/**
 * jit: the scalars of one update as named constants. With `live` (the hyperparameters as
 * they are when called) each is a dynamic constant, so a replayed step reads the current lr
 * and step count; without, a plain E.f.
 */
function scalarConsts<C, T extends Record<string, number>>(
  c: C,
  scalars: (c: C) => T,
  live?: () => C,
): (name: keyof T) => Expr {
  const now = scalars(c);
  return (name) => (live ? dynamicConst(() => scalars(live())[name]) : E.f(now[name]));
}

/**
 * Outside a jit recording, one configuration (its flags and scalar values) gets the same Expr
 * objects every time: every parameter of a step, and every step while the scalars stay put,
 * so the backends' per-Expr caches (dtype, key, constants, kernel plans) hit instead of
 * walking a fresh tree per parameter per step. A recording builds afresh: its constants must
 * be the live ones a replay re-reads.
 */
function memoized<C>(
  build: (c: C, live?: () => C) => Expr[],
  scalars: (c: C) => Record<string, number>,
  flags: (c: C) => string,
): (c: C, live?: () => C) => Expr[] {
  const cache = new Map<string, Expr[]>();
  return (c, live) => {
    if (isRecording()) return build(c, live);
    const vals = scalars(c);
    let key = flags(c);
    for (const k in vals) key += `|${vals[k]}`;
    let exprs = cache.get(key);
    if (!exprs) {
      if (cache.size >= 32) cache.clear();
      exprs = build(c);
      cache.set(key, exprs);
    }
    return exprs;
  };
}

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

const sgdScalars = (c: SgdConsts) => ({
  weightDecay: c.weightDecay,
  lr: c.lr,
  momentum: c.momentum,
  keep: 1 - c.dampening,
});

function buildSgd(c: SgdConsts, live?: () => SgdConsts): Expr[] {
  const k = scalarConsts(c, sgdScalars, live);
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

/** keep·old + rest·x (rest = 1 − keep), or rest·x when old starts at zero. */
const lerpK = (keep: Expr, rest: Expr, old: Expr | null, x: Expr): Expr =>
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

function buildAdam(c: AdamConsts, live?: () => AdamConsts): Expr[] {
  const k = scalarConsts(c, adamScalars, live);
  const g = c.decoupled ? G : E.add(G, E.mul(k('weightDecay'), P));
  const p = c.decoupled ? E.mul(P, k('decay')) : P;
  // m ← β1·m + (1 − β1)·g ;  v ← β2·v + (1 − β2)·g²
  const first = c.step === 1;
  const m = lerpK(k('beta1'), k('rest1'), first ? null : E.in(2), g);
  const v = lerpK(k('beta2'), k('rest2'), first ? null : E.in(3), E.mul(g, g));
  // p ← p − (lr / (1 − β1ᵗ)) · m / (√v / √(1 − β2ᵗ) + ε)
  // AMSGrad: v̂ ← max(v̂, v) and the denominator uses v̂ (v̂ = v on the first step).
  const vHat = c.amsgrad && !first ? E.max(E.in(4), v) : v;
  const denom = E.add(E.mul(E.sqrt(vHat), k('invBc2Sqrt')), k('eps'));
  const out = [E.sub(p, E.div(E.mul(k('stepSize'), m), denom)), m, v];
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

const rmspropScalars = (c: RmspropConsts) => ({
  weightDecay: c.weightDecay,
  alpha: c.alpha,
  rest: 1 - c.alpha,
  eps: c.eps,
  momentum: c.momentum,
  lr: c.lr,
});

function buildRmsprop(c: RmspropConsts, live?: () => RmspropConsts): Expr[] {
  const k = scalarConsts(c, rmspropScalars, live);
  const g = c.weightDecay ? E.add(G, E.mul(k('weightDecay'), P)) : G;
  const old = (i: number | null): Expr | null => (i === null ? null : E.in(i));
  // v ← α·v + (1 − α)·g²
  const v = lerpK(k('alpha'), k('rest'), old(c.v), E.mul(g, g));
  const gAvg = c.centered ? lerpK(k('alpha'), k('rest'), old(c.gAvg), g) : null;
  // avg = √(v − ḡ²) + ε (centered) or √v + ε
  const avg = E.add(E.sqrt(gAvg ? E.sub(v, E.mul(gAvg, gAvg)) : v), k('eps'));
  const step = E.div(g, avg);
  const out: Expr[] = [];
  let buf: Expr | null = null;
  if (c.momentum > 0) {
    // buf ← μ·buf + g/avg ; p ← p − lr·buf
    buf = c.buf === null ? step : E.add(E.mul(k('momentum'), E.in(c.buf)), step);
    out.push(E.sub(P, E.mul(k('lr'), buf)));
  } else {
    out.push(E.sub(P, E.mul(k('lr'), step)));
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

const adagradScalars = (c: AdagradConsts) => ({
  weightDecay: c.weightDecay,
  clr: c.lr / (1 + (c.step - 1) * c.lrDecay),
  eps: c.eps,
});

function buildAdagrad(c: AdagradConsts, live?: () => AdagradConsts): Expr[] {
  const k = scalarConsts(c, adagradScalars, live);
  const g = c.weightDecay ? E.add(G, E.mul(k('weightDecay'), P)) : G;
  const s = E.add(c.first ? E.f(c.initialAccumulatorValue) : E.in(2), E.mul(g, g));
  return [E.sub(P, E.div(E.mul(k('clr'), g), E.add(E.sqrt(s), k('eps')))), s];
}

export const sgdExprs = memoized(buildSgd, sgdScalars, (c) => `${c.first}${c.nesterov}`);
export const adamExprs = memoized(buildAdam, adamScalars, (c) => `${c.decoupled}${c.step === 1}${c.amsgrad === true}`);
export const rmspropExprs = memoized(buildRmsprop, rmspropScalars, (c) => `${c.centered}${c.v}${c.gAvg}${c.buf}`);
export const adagradExprs = memoized(buildAdagrad, adagradScalars, (c) => `${c.first}${c.initialAccumulatorValue}`);
