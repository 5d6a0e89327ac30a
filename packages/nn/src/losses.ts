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

/** Each loss's options and their rules; the loss modules check theirs with the same table. */
export const LOSS_SPECS = {
  mseLoss: REDUCTION,
  l1Loss: REDUCTION,
  nllLoss: REDUCTION,
  crossEntropy: { reduction: REDUCTIONS, labelSmoothing: 'probability' },
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

/** Checks [N, C] scores against [N] int32 class indices; returns a bool [N, C] one-hot mask. */
function classMask(op: string, scores: Tensor, target: Tensor): Tensor {
  classMaskChecks(op, scores, target);
  const c = scores.shape[1];
  // An index outside [0, C) is an error: raised now on the CPU, at the next readback on WebGPU.
  checkIndexRange(op, target, { name: 'target', hi: c, range: `the class range of the input's ${c} columns` });
  return target.reshape([-1, 1]).eq(arange(c).reshape([1, -1]));
}

/** How to make integer labels, for the errors (JS numbers are float32). */
const INT_LABELS = "pass { dtype: 'int32' } to tensor() or an Int32Array";

function classMaskChecks(op: string, scores: Tensor, target: Tensor): void {
  checkTensor(op, scores, 'input');
  checkTensor(op, target, 'target');
  if (scores.ndim !== 2)
    throw new ShapeError(`${op}: input has shape ${fmtShape(scores.shape)}; expected [batch, classes]`);
  if (target.dtype !== 'int32')
    throw new DTypeError(
      `${op}: target has dtype ${target.dtype}; expected int32 class indices (${INT_LABELS})${op === 'crossEntropy' ? " or float32 class probabilities of the input's shape" : ''}`,
    );
  if (target.ndim !== 1 || target.shape[0] !== scores.shape[0]) {
    throw new ShapeError(
      `${op}: target has shape ${fmtShape(target.shape)}; expected [${scores.shape[0]}] (one class index per row of the input ${fmtShape(scores.shape)})`,
    );
  }
}

/** Negative log-likelihood of [N, C] log-probabilities at int32 targets [N]. */
export function nllLoss(logProbs: Tensor, target: Tensor, opts: LossOptions = {}): Tensor {
  parseOptions('nllLoss', opts, LOSS_SPECS.nllLoss);
  return tidy(() => {
    const mask = classMask('nllLoss', logProbs, target);
    // A row whose index matched no class is NaN, never a silent 0 (WebGPU raises it at the next read).
    const matched = mask.any(1);
    return reduce('nllLoss', Tensor.where(matched, Tensor.where(mask, logProbs, 0).sum(1).neg(), NaN), opts.reduction);
  });
}

export interface CrossEntropyOptions extends LossOptions {
  /** ε in [0, 1]: the target becomes (1 - ε)·onehot + ε/C, as PyTorch's label_smoothing. */
  labelSmoothing?: number;
}

/**
 * Cross entropy of [N, C] logits against int32 class indices [N] (or float32 class
 * probabilities [N, C]), stable for large logits (the row max is subtracted). Class indices
 * take autograd's fused softmaxCrossEntropy (5 forward kernels, 1 backward kernel);
 * probabilities go through logSoftmax.
 */
export function crossEntropy(logits: Tensor, target: Tensor, opts: CrossEntropyOptions = {}): Tensor {
  parseOptions('crossEntropy', opts, LOSS_SPECS.crossEntropy);
  const eps = opts.labelSmoothing ?? 0;
  if (typeof eps !== 'number' || !(eps >= 0 && eps <= 1))
    throw new ValueError(`crossEntropy: labelSmoothing must be in [0, 1]; got ${eps}`);
  checkTensor('crossEntropy', logits, 'input');
  checkTensor('crossEntropy', target, 'target');
  const probs = target.dtype === 'float32';
  // Float labels of one class per row are a dtype mistake, not a shape one (JS numbers are float32).
  if (probs && target.ndim === 1 && logits.ndim === 2 && target.shape[0] === logits.shape[0])
    classMaskChecks('crossEntropy', logits, target);
  if (probs) sameShape('crossEntropy', logits, target);
  if (logits.ndim !== 2)
    throw new ShapeError(`crossEntropy: input has shape ${fmtShape(logits.shape)}; expected [batch, classes]`);
  const c = logits.shape[1];
  if (!probs) {
    classMaskChecks('crossEntropy', logits, target);
    return softmaxCrossEntropy(logits, target, { labelSmoothing: eps, reduction: opts.reduction ?? 'mean' });
  }
  return tidy(() => {
    const w = eps ? target.mul(1 - eps).add(eps / c) : target;
    return reduce('crossEntropy', w.mul(logits.logSoftmax(1)).sum(1).neg(), opts.reduction);
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
