import { DTypeError, ShapeError, SurfTypeError, ValueError, fmtShape, parseOptions, showValue } from '@surf/core';
import {
  Tensor,
  arange,
  binaryCrossEntropyTerms,
  checkIndexRange,
  checkTensor,
  softmaxCrossEntropy,
  tidy,
} from '@surf/autograd';

/**
 * Loss functions (torch.nn.functional's), composed from Tensor ops so autograd differentiates
 * them. Each takes `reduction`: 'mean' (default) averages over elements (over the batch for
 * the classification losses), 'sum' adds them, 'none' returns the per-element losses.
 */
export type Reduction = 'mean' | 'sum' | 'none';

export interface LossOptions {
  reduction?: Reduction;
}

const REDUCTIONS = ['mean', 'sum', 'none'];
const REDUCTION = { reduction: REDUCTIONS };

/** posWeight: a number or a tensor broadcast against the logits. */
function numberOrTensor(v: unknown, where: string): void {
  if (typeof v !== 'number' && !(v instanceof Tensor))
    throw new SurfTypeError(`${where} must be a number or a Tensor; got ${showValue(v)}`);
}

/** A class-weight option: a Tensor (its dtype and shape are checked against the classes later) or null. */
const weightRule = (v: unknown, where: string): void => {
  if (v !== null && !(v instanceof Tensor))
    throw new SurfTypeError(`${where}: weight must be a float32 Tensor of one weight per class; got ${typeof v}`);
};

/** Each loss's options and their rules; the loss modules check theirs with the same table. */
export const LOSS_SPECS = {
  mseLoss: REDUCTION,
  l1Loss: REDUCTION,
  nllLoss: { reduction: REDUCTIONS, ignoreIndex: 'int', weight: weightRule },
  crossEntropy: { reduction: REDUCTIONS, labelSmoothing: 'probability', ignoreIndex: 'int', weight: weightRule },
  binaryCrossEntropyWithLogits: { reduction: REDUCTIONS, posWeight: numberOrTensor },
  binaryCrossEntropy: REDUCTION,
  huberLoss: { reduction: REDUCTIONS, delta: 'positive' },
  smoothL1Loss: { reduction: REDUCTIONS, beta: 'nonnegative' },
  klDivLoss: { reduction: ['mean', 'batchmean', 'sum', 'none'], logTarget: 'boolean' },
} as const;

function reduce(op: string, loss: Tensor, reduction: Reduction | undefined): Tensor {
  const r = reduction ?? 'mean';
  if (r === 'mean') return loss.mean();
  if (r === 'sum') return loss.sum();
  if (r === 'none') return loss;
  throw new ValueError(`${op}: reduction must be 'mean', 'sum' or 'none'; got ${JSON.stringify(reduction)}`);
}

function sameShape(op: string, input: Tensor, target: Tensor): void {
  checkTensor(op, input, 'input');
  checkTensor(op, target, 'target');
  if (input.ndim !== target.ndim || input.shape.some((d, i) => d !== target.shape[i])) {
    throw new ShapeError(
      `${op}: input has shape ${fmtShape(input.shape)} and target ${fmtShape(target.shape)}; expected equal shapes`,
    );
  }
}

/** Mean squared error (input - target)². */
export function mseLoss(input: Tensor, target: Tensor, opts: LossOptions = {}): Tensor {
  parseOptions('mseLoss', opts, LOSS_SPECS.mseLoss);
  sameShape('mseLoss', input, target);
  return tidy(() => {
    const d = input.sub(target);
    return reduce('mseLoss', d.mul(d), opts.reduction);
  });
}

/** Mean absolute error |input - target|. */
export function l1Loss(input: Tensor, target: Tensor, opts: LossOptions = {}): Tensor {
  parseOptions('l1Loss', opts, LOSS_SPECS.l1Loss);
  sameShape('l1Loss', input, target);
  return tidy(() => reduce('l1Loss', input.sub(target).abs(), opts.reduction));
}

export interface NllLossOptions extends LossOptions {
  /** Targets equal to it add nothing and leave the mean's denominator (default -100, PyTorch's). */
  ignoreIndex?: number;
  /** Per-class weights (float32 [C]); the mean divides by the sum of the kept targets' weights. */
  weight?: Tensor | null;
}

/** How to make integer labels, for the errors (JS numbers are float32). */
const INT_LABELS = "pass { dtype: 'int32' } to tensor() or an Int32Array";

/** The shape of class-index targets for scores of shape `zs`: [N, d...] for [N, C, d...], [] for [C]. */
function classTargetShape(zs: readonly number[]): number[] {
  return zs.length === 1 ? [] : [zs[0], ...zs.slice(2)];
}

const sameDims = (a: readonly number[], b: readonly number[]) => a.length === b.length && a.every((d, i) => d === b[i]);

/** Checks class-index targets against the scores; returns C and the per-target shape. */
function checkClassTarget(op: string, scores: Tensor, target: Tensor): { c: number; outShape: number[] } {
  checkTensor(op, scores, 'input');
  checkTensor(op, target, 'target');
  const zs = scores.shape;
  if (zs.length === 0)
    throw new ShapeError(`${op}: input is 0-d; expected [classes], [batch, classes] or [batch, classes, d1, ...]`);
  if (target.dtype !== 'int32')
    throw new DTypeError(
      `${op}: target has dtype ${target.dtype}; expected int32 class indices (${INT_LABELS})${op === 'crossEntropy' ? " or float32 class probabilities of the input's shape" : ''}`,
    );
  const c = zs.length === 1 ? zs[0] : zs[1];
  const outShape = classTargetShape(zs);
  if (!sameDims(target.shape, outShape))
    throw new ShapeError(
      `${op}: target has shape ${fmtShape(target.shape)}; expected ${fmtShape(outShape)} (one class index per ${zs.length > 2 ? 'position' : 'row'} of the input ${fmtShape(zs)})`,
    );
  return { c, outShape };
}

/** [N, C, d...] scores as rows [N·d..., C] (the class dim last), targets as [N·d...]; [C] as one row. */
function asRows(
  op: string,
  scores: Tensor,
  target: Tensor,
): { rows: Tensor; y: Tensor; outShape: number[]; c: number } {
  const { c, outShape } = checkClassTarget(op, scores, target);
  const zs = scores.shape;
  const rows =
    zs.length === 1
      ? scores.reshape([1, c])
      : zs.length === 2
        ? scores
        : scores.permute([0, ...zs.slice(2).map((_, i) => i + 2), 1]).reshape([-1, c]);
  return { rows, y: target.reshape([-1]), outShape, c };
}

function checkWeight(op: string, weight: Tensor | null, c: number): void {
  if (!weight) return;
  if (weight.dtype !== 'float32') throw new DTypeError(`${op}: weight has dtype ${weight.dtype}; expected float32`);
  if (weight.ndim !== 1 || weight.shape[0] !== c)
    throw new ShapeError(`${op}: weight has shape ${fmtShape(weight.shape)}; expected [${c}] (one weight per class)`);
}

/**
 * Σ loss / Σ w as PyTorch: with nothing kept (Σ w = 0) the loss is NaN and the gradient 0 (a
 * plain division would send 0·∞ = NaN back).
 */
function meanOverWeights(loss: Tensor, w: Tensor): Tensor {
  const d = w.sum();
  const none = d.eq(0);
  return Tensor.where(none, NaN, loss.sum().div(Tensor.where(none, 1, d)));
}

/**
 * Negative log-likelihood of log-probabilities at int32 targets, PyTorch's F.nll_loss: input
 * [N, C] with target [N], [N, C, d1, ...] with [N, d1, ...], or [C] with a 0-d target.
 * loss_i = −w[y_i]·x[i, y_i] (w = 1 without `weight`), 0 where y_i = ignoreIndex; the mean
 * divides by the sum of w[y_i] over the kept targets. A target outside [0, C) other than
 * ignoreIndex is an error.
 */
export function nllLoss(logProbs: Tensor, target: Tensor, opts: NllLossOptions = {}): Tensor {
  const o = parseOptions<NllLossOptions>('nllLoss', opts, LOSS_SPECS.nllLoss);
  const ignore = o.ignoreIndex ?? -100;
  const weight = o.weight ?? null;
  return tidy(() => {
    const { rows, y, outShape, c } = asRows('nllLoss', logProbs, target);
    checkWeight('nllLoss', weight, c);
    // An index outside [0, C) is an error: raised now on the CPU, at the next readback on WebGPU.
    checkIndexRange('nllLoss', y, {
      name: 'target',
      hi: c,
      range: `the class range of the input's ${c} classes`,
      ignore,
    });
    const keep = y.ne(ignore);
    // A target outside [0, C) raised above (at the next read on WebGPU); its row is NaN, never
    // a silent 0, for whoever reads the value anyway.
    const inRange = y.ge(0).logicalAnd(y.lt(c));
    const safe = Tensor.where(keep.logicalAnd(inRange), y, 0);
    const k = keep.float();
    const wy = weight ? weight.indexSelect(0, safe).mul(k) : k;
    const picked = rows.gather(1, safe.reshape([-1, 1])).reshape([-1]);
    const loss = Tensor.where(inRange.logicalOr(keep.logicalNot()), picked.neg().mul(wy), NaN);
    const r = o.reduction ?? 'mean';
    if (r === 'none') return loss.reshape(outShape);
    if (r === 'sum') return loss.sum();
    return meanOverWeights(loss, wy);
  });
}

export interface CrossEntropyOptions extends NllLossOptions {
  /** ε in [0, 1]: the target becomes (1 - ε)·onehot + ε/C, as PyTorch's label_smoothing. */
  labelSmoothing?: number;
}

/**
 * Cross entropy of logits against int32 class indices (PyTorch's F.cross_entropy): input
 * [N, C] with target [N], [N, C, d1, ...] with [N, d1, ...], or [C] with a 0-d target; or
 * float32 class probabilities of the input's shape. Stable for large logits. Class indices
 * take autograd's fused softmaxCrossEntropy (one rows kernel forward, one kernel backward;
 * ignoreIndex handled inside it; class weights compose logSoftmax and gathers); probabilities
 * go through logSoftmax (`ignoreIndex` does not apply to them, as PyTorch).
 */
export function crossEntropy(logits: Tensor, target: Tensor, opts: CrossEntropyOptions = {}): Tensor {
  const o = parseOptions<CrossEntropyOptions>('crossEntropy', opts, LOSS_SPECS.crossEntropy);
  const eps = o.labelSmoothing ?? 0;
  checkTensor('crossEntropy', logits, 'input');
  checkTensor('crossEntropy', target, 'target');
  if (target.dtype !== 'float32') {
    checkClassTarget('crossEntropy', logits, target);
    return softmaxCrossEntropy(logits, target, {
      labelSmoothing: eps,
      reduction: o.reduction ?? 'mean',
      ignoreIndex: o.ignoreIndex ?? -100,
      weight: o.weight ?? null,
    });
  }
  // Float labels of one class per row are a dtype mistake, not a shape one (JS numbers are
  // float32): checkClassTarget says so.
  if (logits.ndim >= 2 && sameDims(target.shape, classTargetShape(logits.shape)))
    checkClassTarget('crossEntropy', logits, target);
  sameShape('crossEntropy', logits, target);
  if (logits.ndim < 1) throw new ShapeError('crossEntropy: input is 0-d; expected [classes] or [batch, classes, ...]');
  const cdim = logits.ndim === 1 ? 0 : 1;
  const c = logits.shape[cdim];
  const weight = o.weight ?? null;
  checkWeight('crossEntropy', weight, c);
  return tidy(() => {
    const t = eps ? target.mul(1 - eps).add(eps / c) : target;
    const wshape = logits.shape.map((d, i) => (i === cdim ? c : 1));
    const wt = weight ? t.mul(weight.reshape(wshape)) : t;
    // Probabilities: the mean is over the positions (N·d...), not the weights, as PyTorch.
    return reduce('crossEntropy', wt.mul(logits.logSoftmax(cdim)).sum(cdim).neg(), o.reduction);
  });
}

/**
 * Binary cross entropy on logits: softplus(x) - x·y, which is log(1 + e^x) - x·y without
 * overflow for any x. Targets are float32 in [0, 1], the input's shape.
 */
export function binaryCrossEntropyWithLogits(
  logits: Tensor,
  target: Tensor,
  opts: LossOptions & { posWeight?: Tensor | number } = {},
): Tensor {
  parseOptions('binaryCrossEntropyWithLogits', opts, LOSS_SPECS.binaryCrossEntropyWithLogits);
  sameShape('binaryCrossEntropyWithLogits', logits, target);
  const pw = opts.posWeight;
  if (pw !== undefined && typeof pw !== 'number' && !(pw instanceof Tensor))
    throw new ValueError(`binaryCrossEntropyWithLogits: posWeight must be a number or a Tensor; got ${typeof pw}`);
  return tidy(() => {
    if (pw === undefined)
      return reduce('binaryCrossEntropyWithLogits', logits.softplus().sub(logits.mul(target)), opts.reduction);
    // PyTorch's form with a positive-class weight p: (1 - y)·x + (1 + (p - 1)·y)·softplus(-x).
    const w = target.mul(typeof pw === 'number' ? pw - 1 : pw.sub(1)).add(1);
    return reduce(
      'binaryCrossEntropyWithLogits',
      target.neg().add(1).mul(logits).add(w.mul(logits.neg().softplus())),
      opts.reduction,
    );
  });
}

/**
 * Binary cross entropy of probabilities in [0, 1]: −(y·log x + (1 − y)·log(1 − x)), each log
 * clamped to >= −100 as PyTorch does, so x = 0 or 1 gives a finite loss.
 */
export function binaryCrossEntropy(input: Tensor, target: Tensor, opts: LossOptions = {}): Tensor {
  parseOptions('binaryCrossEntropy', opts, LOSS_SPECS.binaryCrossEntropy);
  sameShape('binaryCrossEntropy', input, target);
  // The terms' gradient is PyTorch's (x − y) / max(x(1 − x), 1e-12): finite at x = 0 or 1.
  return tidy(() => reduce('binaryCrossEntropy', binaryCrossEntropyTerms(input, target), opts.reduction));
}

/** Huber loss: ½d² where |d| < delta, else delta·(|d| − ½delta), d = input − target. */
export function huberLoss(input: Tensor, target: Tensor, opts: LossOptions & { delta?: number } = {}): Tensor {
  parseOptions('huberLoss', opts, LOSS_SPECS.huberLoss);
  const delta = opts.delta ?? 1;
  if (typeof delta !== 'number' || !(delta > 0))
    throw new ValueError(`huberLoss: delta must be a number > 0; got ${delta}`);
  sameShape('huberLoss', input, target);
  return tidy(() => {
    const d = input.sub(target);
    const a = d.abs();
    return reduce(
      'huberLoss',
      Tensor.where(a.lt(delta), d.mul(d).mul(0.5), a.sub(0.5 * delta).mul(delta)),
      opts.reduction,
    );
  });
}

/** Smooth L1: ½d²/beta where |d| < beta, else |d| − ½beta (beta 0 is the L1 loss). */
export function smoothL1Loss(input: Tensor, target: Tensor, opts: LossOptions & { beta?: number } = {}): Tensor {
  parseOptions('smoothL1Loss', opts, LOSS_SPECS.smoothL1Loss);
  const beta = opts.beta ?? 1;
  if (typeof beta !== 'number' || !(beta >= 0))
    throw new ValueError(`smoothL1Loss: beta must be a number >= 0; got ${beta}`);
  sameShape('smoothL1Loss', input, target);
  return tidy(() => {
    const d = input.sub(target);
    const a = d.abs();
    if (beta === 0) return reduce('smoothL1Loss', a, opts.reduction);
    return reduce(
      'smoothL1Loss',
      Tensor.where(a.lt(beta), d.mul(d).mul(0.5 / beta), a.sub(0.5 * beta)),
      opts.reduction,
    );
  });
}

export type KLDivReduction = Reduction | 'batchmean';

/**
 * Kullback–Leibler divergence with `input` log-probabilities and `target` probabilities (or
 * log-probabilities with logTarget): target·(log target − input), 0 where target is 0.
 * 'batchmean' divides the sum by the batch size (the true KL per sample); 'mean' averages over
 * every element, as PyTorch's (its documented pitfall).
 */
export function klDivLoss(
  input: Tensor,
  target: Tensor,
  opts: { reduction?: KLDivReduction; logTarget?: boolean } = {},
): Tensor {
  parseOptions('klDivLoss', opts, LOSS_SPECS.klDivLoss);
  sameShape('klDivLoss', input, target);
  return tidy(() => {
    let pointwise: Tensor;
    if (opts.logTarget) pointwise = target.exp().mul(target.sub(input));
    else {
      // log of the target where it is positive (1 elsewhere, so no 0·(−inf) reaches the gradient).
      const pos = target.gt(0);
      pointwise = Tensor.where(pos, target.mul(Tensor.where(pos, target, 1).log().sub(input)), 0);
    }
    if (opts.reduction === 'batchmean') return pointwise.sum().div(input.ndim > 0 ? input.shape[0] : 1);
    return reduce('klDivLoss', pointwise, opts.reduction as Reduction | undefined);
  });
}
