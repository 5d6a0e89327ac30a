import { ShapeError, ValueError, fmtShape, withDefaults } from '@surf/core';
import { Tensor, checkTensor, noGrad } from '@surf/autograd';

/**
 * Normalisation functions of torch.nn.functional. Statistics use the biased variance, as
 * PyTorch's; running statistics (instanceNorm) are updated in place, outside the graph, with
 * the unbiased one.
 */

const optTensor = (v: unknown, where: string) => {
  if (v !== null && !(v instanceof Tensor)) throw new ValueError(`${where} must be a Tensor or null`);
};
const nonneg = (v: unknown, where: string) => {
  if (typeof v !== 'number' || !(v >= 0)) throw new ValueError(`${where} must be a number >= 0; got ${String(v)}`);
};

/** Per-channel tensor [C] viewed as [C, 1, ..., 1] against an [N, C, ...] input. */
const perChannel = (t: Tensor, x: Tensor): Tensor => t.reshape([t.numel, ...x.shape.slice(2).map(() => 1)]);

function standardize(x: Tensor, dims: number[], eps: number): Tensor {
  const d = x.sub(x.mean(dims, true));
  return d.mul(d.mul(d).mean(dims, true).add(eps).rsqrt());
}

/** Normalises over the trailing dims `normalizedShape`, then `·weight + bias` when given. */
export function layerNorm(
  x: Tensor,
  normalizedShape: number | readonly number[],
  opts: { weight?: Tensor | null; bias?: Tensor | null; eps?: number } = {},
): Tensor {
  const o = withDefaults(
    'layerNorm',
    opts,
    { weight: optTensor, bias: optTensor, eps: nonneg },
    { weight: null, bias: null, eps: 1e-5 },
  );
  checkTensor('layerNorm', x, 'the input');
  const shape = typeof normalizedShape === 'number' ? [normalizedShape] : [...normalizedShape];
  const k = shape.length;
  if (x.ndim < k || x.shape.slice(x.ndim - k).some((d, i) => d !== shape[i]))
    throw new ShapeError(
      `layerNorm: input has shape ${fmtShape(x.shape)}; expected it to end in normalizedShape ${fmtShape(shape)}`,
    );
  let y = standardize(
    x,
    shape.map((_, i) => x.ndim - k + i),
    o.eps,
  );
  if (o.weight) y = y.mul(o.weight);
  if (o.bias) y = y.add(o.bias);
  return y;
}

/** x·rsqrt(mean(x²) + eps) over the trailing dims, times weight (eps default 2⁻²³, PyTorch's eps=None). */
export function rmsNorm(
  x: Tensor,
  normalizedShape: number | readonly number[],
  opts: { weight?: Tensor | null; eps?: number } = {},
): Tensor {
  const o = withDefaults('rmsNorm', opts, { weight: optTensor, eps: nonneg }, { weight: null, eps: 2 ** -23 });
  checkTensor('rmsNorm', x, 'the input');
  const shape = typeof normalizedShape === 'number' ? [normalizedShape] : [...normalizedShape];
  const k = shape.length;
  if (x.ndim < k || x.shape.slice(x.ndim - k).some((d, i) => d !== shape[i]))
    throw new ShapeError(
      `rmsNorm: input has shape ${fmtShape(x.shape)}; expected it to end in normalizedShape ${fmtShape(shape)}`,
    );
  const dims = shape.map((_, i) => x.ndim - k + i);
  const y = x.mul(x.mul(x).mean(dims, true).add(o.eps).rsqrt());
  return o.weight ? y.mul(o.weight) : y;
}

/** [N, C, ...]: channels split into numGroups, each normalised over its channels and positions. */
export function groupNorm(
  x: Tensor,
  numGroups: number,
  opts: { weight?: Tensor | null; bias?: Tensor | null; eps?: number } = {},
): Tensor {
  const o = withDefaults(
    'groupNorm',
    opts,
    { weight: optTensor, bias: optTensor, eps: nonneg },
    { weight: null, bias: null, eps: 1e-5 },
  );
  checkTensor('groupNorm', x, 'the input');
  if (x.ndim < 2 || !Number.isInteger(numGroups) || numGroups < 1 || x.shape[1] % numGroups !== 0)
    throw new ShapeError(
      `groupNorm: input shape ${fmtShape(x.shape)} must be [N, C, ...] with C divisible by numGroups (${numGroups})`,
    );
  let y = standardize(x.reshape([x.shape[0], numGroups, -1]), [2], o.eps).reshape(x.shape);
  if (o.weight) y = y.mul(perChannel(o.weight, x));
  if (o.bias) y = y.add(perChannel(o.bias, x));
  return y;
}

export interface InstanceNormOptions {
  runningMean?: Tensor | null;
  runningVar?: Tensor | null;
  weight?: Tensor | null;
  bias?: Tensor | null;
  /** Normalise with each instance's own statistics (default true); false uses the running ones. */
  useInputStats?: boolean;
  momentum?: number;
  eps?: number;
}

/**
 * [N, C, ...]: each (sample, channel) normalised over its positions (PyTorch's instance_norm).
 * With useInputStats and running stats given, those are updated in place with the batch mean
 * of the per-instance statistics (unbiased variance), as PyTorch.
 */
export function instanceNorm(x: Tensor, opts: InstanceNormOptions = {}): Tensor {
  const o = withDefaults<Required<InstanceNormOptions>>(
    'instanceNorm',
    opts,
    {
      runningMean: optTensor,
      runningVar: optTensor,
      weight: optTensor,
      bias: optTensor,
      useInputStats: 'boolean',
      momentum: nonneg,
      eps: nonneg,
    },
    { runningMean: null, runningVar: null, weight: null, bias: null, useInputStats: true, momentum: 0.1, eps: 1e-5 },
  );
  checkTensor('instanceNorm', x, 'the input');
  if (x.ndim < 3)
    throw new ShapeError(`instanceNorm: input has shape ${fmtShape(x.shape)}; expected [N, C, L] or [N, C, H, W]`);
  const dims = x.shape.slice(2).map((_, i) => i + 2);
  let y: Tensor;
  if (o.useInputStats) {
    y = standardize(x, dims, o.eps);
    const { runningMean: rm, runningVar: rv } = o;
    if (rm || rv) {
      const m = o.momentum;
      const n = x.shape.slice(2).reduce((a, b) => a * b, 1);
      noGrad(() => {
        const xd = x.detach();
        if (rm) rm.assign(rm.mul(1 - m).add(xd.mean(dims).mean(0).mul(m)));
        if (rv)
          rv.assign(
            rv.mul(1 - m).add(
              xd
                .var(dims, false, n > 1 ? 1 : 0)
                .mean(0)
                .mul(m),
            ),
          );
      });
    }
  } else {
    if (!o.runningMean || !o.runningVar)
      throw new ValueError('instanceNorm: useInputStats false needs runningMean and runningVar');
    y = x.sub(perChannel(o.runningMean, x)).mul(perChannel(o.runningVar, x).add(o.eps).rsqrt());
  }
  if (o.weight) y = y.mul(perChannel(o.weight, x));
  if (o.bias) y = y.add(perChannel(o.bias, x));
  return y;
}

/** x / max(‖x‖_p, eps) along `dim` (defaults p = 2, dim = 1, eps = 1e-12). */
export function normalize(x: Tensor, opts: { p?: number; dim?: number; eps?: number } = {}): Tensor {
  const o = withDefaults('normalize', opts, { p: 'positive', dim: 'int', eps: nonneg }, { p: 2, dim: 1, eps: 1e-12 });
  checkTensor('normalize', x, 'the input');
  return x.div(x.norm(o.p, o.dim, true).clamp(o.eps, null));
}
