import { ShapeError, ValueError, fmtShape, withDefaults } from '@surf/core';
import { Tensor, checkTensor } from '@surf/autograd';

/**
 * PyTorch's activation functions (torch.nn.functional), composed from autograd's elementwise
 * ops, so their gradients come from those ops and the fusion pass fuses each into the kernels
 * around it. Branches that could overflow are clamped before exp (where() multiplies the unused
 * branch's gradient by zero, and 0·∞ would be NaN).
 */

const finite = (v: unknown, where: string) => {
  if (typeof v !== 'number' || !Number.isFinite(v))
    throw new ValueError(`${where} must be a finite number; got ${String(v)}`);
};
const positive = (v: unknown, where: string) => {
  if (typeof v !== 'number' || !(v > 0) || !Number.isFinite(v))
    throw new ValueError(`${where} must be a finite number > 0; got ${String(v)}`);
};

export const relu = (x: Tensor): Tensor => checkTensor('relu', x, 'the input').relu();
export const sigmoid = (x: Tensor): Tensor => checkTensor('sigmoid', x, 'the input').sigmoid();
export const tanh = (x: Tensor): Tensor => checkTensor('tanh', x, 'the input').tanh();
export const silu = (x: Tensor): Tensor => checkTensor('silu', x, 'the input').silu();
export const leakyRelu = (x: Tensor, negativeSlope = 0.01): Tensor =>
  checkTensor('leakyRelu', x, 'the input').leakyRelu(negativeSlope);
/** approximate 'none' (default) is x·Φ(x); 'tanh' the tanh approximation. */
export function gelu(x: Tensor, opts: { approximate?: 'none' | 'tanh' } = {}): Tensor {
  const o = withDefaults('gelu', opts, { approximate: ['none', 'tanh'] }, { approximate: 'none' as 'none' | 'tanh' });
  return checkTensor('gelu', x, 'the input').gelu(o.approximate);
}
export const softmax = (x: Tensor, dim = -1): Tensor => checkTensor('softmax', x, 'the input').softmax(dim);
export const logSoftmax = (x: Tensor, dim = -1): Tensor => checkTensor('logSoftmax', x, 'the input').logSoftmax(dim);
/** softmax(−x) over `dim`. */
export const softmin = (x: Tensor, dim = -1): Tensor => checkTensor('softmin', x, 'the input').neg().softmax(dim);

/** x for x > 0, α·(eˣ − 1) otherwise (default α = 1). */
export function elu(x: Tensor, opts: number | { alpha?: number } = {}): Tensor {
  if (typeof opts === 'number') opts = { alpha: opts };
  const { alpha } = withDefaults('elu', opts, { alpha: finite }, { alpha: 1 });
  checkTensor('elu', x, 'the input');
  return Tensor.where(x.gt(0), x, x.minimum(0).expm1().mul(alpha));
}

/** scale·elu(x, α) with PyTorch's constants α ≈ 1.6733, scale ≈ 1.0507. */
export const SELU_ALPHA = 1.6732632423543772;
export const SELU_SCALE = 1.0507009873554805;
export function selu(x: Tensor): Tensor {
  checkTensor('selu', x, 'the input');
  return Tensor.where(
    x.gt(0),
    x.mul(SELU_SCALE),
    x
      .minimum(0)
      .expm1()
      .mul(SELU_ALPHA * SELU_SCALE),
  );
}

/** x for x > 0, α·(e^{x/α} − 1) otherwise (default α = 1). */
export function celu(x: Tensor, opts: number | { alpha?: number } = {}): Tensor {
  if (typeof opts === 'number') opts = { alpha: opts };
  const { alpha } = withDefaults('celu', opts, { alpha: finite }, { alpha: 1 });
  if (alpha === 0) throw new ValueError('celu: alpha must not be 0 (it divides x); pass a nonzero alpha');
  checkTensor('celu', x, 'the input');
  return Tensor.where(x.gt(0), x, x.minimum(0).div(alpha).expm1().mul(alpha));
}

/** log(1 + e^{βx})/β, and x itself where βx > threshold (defaults β = 1, threshold = 20), as PyTorch. */
export function softplus(
  x: Tensor,
  opts: number | { beta?: number; threshold?: number } = {},
  threshold?: number,
): Tensor {
  if (typeof opts === 'number') opts = { beta: opts, threshold };
  const o = withDefaults('softplus', opts, { beta: positive, threshold: finite }, { beta: 1, threshold: 20 });
  checkTensor('softplus', x, 'the input');
  return Tensor.where(x.mul(o.beta).gt(o.threshold), x, x.softplus(o.beta));
}

/** x·tanh(softplus(x)). */
export function mish(x: Tensor): Tensor {
  checkTensor('mish', x, 'the input');
  return x.mul(x.softplus(1).tanh());
}

/** x·relu6(x + 3)/6. */
export function hardswish(x: Tensor): Tensor {
  checkTensor('hardswish', x, 'the input');
  return x.mul(x.add(3).clamp(0, 6)).div(6);
}

/** relu6(x + 3)/6. */
export function hardsigmoid(x: Tensor): Tensor {
  checkTensor('hardsigmoid', x, 'the input');
  return x.add(3).clamp(0, 6).div(6);
}

/** min(max(x, 0), 6). */
export const relu6 = (x: Tensor): Tensor => checkTensor('relu6', x, 'the input').clamp(0, 6);

/** x clamped to [minVal, maxVal] (defaults −1, 1). */
export function hardtanh(x: Tensor, opts: number | { minVal?: number; maxVal?: number } = {}, maxVal?: number): Tensor {
  if (typeof opts === 'number') opts = { minVal: opts, maxVal };
  const o = withDefaults('hardtanh', opts, { minVal: finite, maxVal: finite }, { minVal: -1, maxVal: 1 });
  if (!(o.maxVal > o.minVal))
    throw new ValueError(`hardtanh: maxVal (${o.maxVal}) must be greater than minVal (${o.minVal})`);
  return checkTensor('hardtanh', x, 'the input').clamp(o.minVal, o.maxVal);
}

/** x / (1 + |x|). */
export const softsign = (x: Tensor): Tensor => checkTensor('softsign', x, 'the input').div(x.abs().add(1));

/** x − tanh(x). */
export const tanhshrink = (x: Tensor): Tensor => checkTensor('tanhshrink', x, 'the input').sub(x.tanh());

/** log σ(x) = −softplus(−x), stable for large |x|. */
export const logsigmoid = (x: Tensor): Tensor => checkTensor('logsigmoid', x, 'the input').neg().softplus(1).neg();

/** x − λ for x > λ, x + λ for x < −λ, else 0 (default λ = 0.5). */
export function softshrink(x: Tensor, opts: number | { lambd?: number } = {}): Tensor {
  if (typeof opts === 'number') opts = { lambd: opts };
  const { lambd } = withDefaults('softshrink', opts, { lambd: (v, w) => finite(v, w) }, { lambd: 0.5 });
  if (lambd < 0) throw new ValueError(`softshrink: lambd must be >= 0; got ${lambd}`);
  checkTensor('softshrink', x, 'the input');
  return Tensor.where(x.gt(lambd), x.sub(lambd), Tensor.where(x.lt(-lambd), x.add(lambd), 0));
}

/** x where |x| > λ, else 0 (default λ = 0.5). */
export function hardshrink(x: Tensor, opts: number | { lambd?: number } = {}): Tensor {
  if (typeof opts === 'number') opts = { lambd: opts };
  const { lambd } = withDefaults('hardshrink', opts, { lambd: finite }, { lambd: 0.5 });
  checkTensor('hardshrink', x, 'the input');
  return Tensor.where(x.abs().gt(lambd), x, 0);
}

/** x where x > threshold, else value. */
export function threshold(x: Tensor, thresholdValue: number, value: number): Tensor {
  finite(thresholdValue, 'threshold: threshold');
  finite(value, 'threshold: value');
  checkTensor('threshold', x, 'the input');
  return Tensor.where(x.gt(thresholdValue), x, value);
}

/** a·σ(b) for the two halves a, b of `dim` (default the last). */
export function glu(x: Tensor, dim = -1): Tensor {
  checkTensor('glu', x, 'the input');
  const d = dim < 0 ? dim + x.ndim : dim;
  if (!Number.isInteger(dim) || d < 0 || d >= x.ndim || x.shape[d] % 2 !== 0)
    throw new ShapeError(
      `glu: dim ${dim} of the input (shape ${fmtShape(x.shape)}) must exist and have an even size; pick another dim`,
    );
  const [a, b] = x.chunk(2, d);
  return a.mul(b.sigmoid());
}

/**
 * x where x ≥ 0, weight·x otherwise; `weight` has 1 element or one per channel (dim 1 of the
 * input, or dim 0 of a 1-d input), as PyTorch's prelu.
 */
export function prelu(x: Tensor, weight: Tensor): Tensor {
  checkTensor('prelu', x, 'the input');
  checkTensor('prelu', weight, 'the weight');
  let w = weight;
  if (weight.numel !== 1) {
    const c = x.ndim >= 2 ? 1 : 0;
    if (weight.ndim !== 1 || x.ndim === 0 || x.shape[c] !== weight.numel)
      throw new ShapeError(
        `prelu: weight has shape ${fmtShape(weight.shape)}; expected 1 element or one per channel (${x.ndim ? x.shape[c] : 1} for input shape ${fmtShape(x.shape)})`,
      );
    w = weight.reshape([weight.numel, ...new Array<number>(x.ndim - c - 1).fill(1)]);
  } else w = weight.reshape([]);
  return Tensor.where(x.ge(0), x, x.mul(w));
}
