import { DTypeError, E, NDArray, ShapeError, ValueError, fmtShape, parseOptions } from '@surf/core';
import { alias, fromOp } from '../node';
import { Tensor, checkTensor } from '../tensor';

export interface BatchNormOptions {
  training?: boolean;
  momentum?: number;
  eps?: number;
}

/**
 * torch.nn.functional.batch_norm over x [N, C, ...]: per channel, (x - mean) / sqrt(var + eps)
 * · weight + bias. In training the batch's mean and biased variance normalise, and the
 * running stats (when given) are updated in place with the unbiased variance, as PyTorch:
 * r = (1 - momentum)·r + momentum·stat. Otherwise the running stats normalise (the batch's if
 * none are given). With batch statistics it is a few fused kernels (batchStatsNorm below);
 * with running stats it is written with Tensor ops, so its gradient is theirs (gradchecked).
 */
export function batchNorm(
  x: Tensor,
  runningMean: Tensor | null,
  runningVar: Tensor | null,
  weight: Tensor | null = null,
  bias: Tensor | null = null,
  opts: BatchNormOptions = {},
): Tensor {
  const op = 'batchNorm';
  checkTensor(op, x, 'the input');
  parseOptions(op, opts, { training: 'boolean', momentum: 'probability', eps: 'nonnegative' });
  const training = opts.training ?? false;
  const momentum = opts.momentum ?? 0.1;
  const eps = opts.eps ?? 1e-5;
  if (typeof momentum !== 'number' || !(momentum >= 0 && momentum <= 1))
    throw new ValueError(`${op}: momentum ${JSON.stringify(momentum)}; expected a number in [0, 1]`);
  if (typeof eps !== 'number' || !(eps >= 0))
    throw new ValueError(`${op}: eps ${JSON.stringify(eps)}; expected a non-negative number`);
  if (x.dtype !== 'float32') throw new DTypeError(`${op}: input has dtype ${x.dtype}; expected float32`);
  if (x.ndim < 2) throw new ShapeError(`${op}: input has shape ${fmtShape(x.shape)}; expected [N, C, ...]`);
  const c = x.shape[1];
  for (const [name, t] of [
    ['runningMean', runningMean],
    ['runningVar', runningVar],
    ['weight', weight],
    ['bias', bias],
  ] as const) {
    if (t === null || t === undefined) continue;
    checkTensor(op, t, `the ${name}`);
    if (t.ndim !== 1 || t.shape[0] !== c)
      throw new ShapeError(
        `${op}: ${name} has shape ${fmtShape(t.shape)}; expected [${c}] for input ${fmtShape(x.shape)}`,
      );
  }
  const axes = [0, ...Array.from({ length: x.ndim - 2 }, (_, i) => i + 2)];
  const count = axes.reduce((a, d) => a * x.shape[d], 1);
  const bshape = [1, c, ...new Array<number>(x.ndim - 2).fill(1)];
  const useBatch = training || !runningMean || !runningVar;
  if (useBatch && training && count <= 1)
    throw new ValueError(`${op}: expected more than 1 value per channel when training; got input ${fmtShape(x.shape)}`);
  if (useBatch)
    return batchStatsNorm(
      x,
      training ? runningMean : null,
      training ? runningVar : null,
      weight,
      bias,
      momentum,
      eps,
      axes,
      count,
    );
  const xhat = x.sub(runningMean!.detach().reshape(bshape)).mul(runningVar!.detach().reshape(bshape).add(eps).rsqrt());
  let y = xhat;
  if (weight) y = y.mul(weight.reshape(bshape));
  if (bias) y = y.add(bias.reshape(bshape));
  return y;
}

/**
 * Normalisation by the batch's statistics as 2 reductions and 2 passes over x forward, and
 * 2 reductions and 2 passes backward, instead of the ~10 kernels its Tensor-op spelling
 * costs (on the CPU, batch norm cost more than the convs). Forward: s1 = Σx, s2 = Σ(x - s1/M)²
 * (two-pass variance: no cancellation when |mean| ≫ std), then per channel mean, rstd =
 * 1/√(s2/M + eps), scale = rstd·w, and y = (x - mean)·scale + b. Backward with ĝ = Σgy and
 * ĥ = Σgy·(x - mean): dx = gy·scale - (x - mean)·scale·rstd²·ĥ/M - scale·ĝ/M, dw = ĥ·rstd,
 * db = ĝ. The backward is written on NDArrays (first derivatives only, like conv's).
 */
function batchStatsNorm(
  x: Tensor,
  runningMean: Tensor | null,
  runningVar: Tensor | null,
  weight: Tensor | null,
  bias: Tensor | null,
  momentum: number,
  eps: number,
  axes: number[],
  count: number,
): Tensor {
  const op = 'batchNorm';
  const xn = x.nd(op);
  const c = x.shape[1];
  const inv = 1 / count;
  const cshape = [1, c, ...new Array<number>(x.ndim - 2).fill(1)];
  const perChannel = (t: Tensor) => t.nd(op).reshape(cshape);
  const s1 = xn.sum(axes, true);
  const d = E.sub(E.in(0), E.mul(E.in(1), E.f(inv)));
  const sq = NDArray.elementwise([E.mul(d, d)], [xn, s1], op)[0];
  const s2 = sq.sum(axes, true);
  sq.dispose();
  const w = weight ? perChannel(weight) : null;
  const b = bias ? perChannel(bias) : null;
  // Per channel, one kernel: mean, rstd and scale (inputs: s1, s2, w?).
  const rstdE = E.recip(E.sqrt(E.add(E.mul(E.in(1), E.f(inv)), E.f(eps))));
  const [mean, rstd, scale] = NDArray.elementwise(
    [E.mul(E.in(0), E.f(inv)), rstdE, w ? E.mul(rstdE, E.in(2)) : rstdE],
    w ? [s1, s2, w] : [s1, s2],
    op,
  );
  if (runningMean || runningVar) {
    // In place, as PyTorch: r = (1 - momentum)·r + momentum·stat, with the unbiased variance.
    const upd = (r: Tensor, stat: NDArray, k: number) => {
      const [nr] = NDArray.elementwise(
        [E.add(E.mul(E.in(0), E.f(1 - momentum)), E.mul(E.in(1), E.f(momentum * k)))],
        [r.nd(op), stat.reshape([c])],
        op,
      );
      r.assign(nr);
      nr.dispose();
    };
    if (runningMean) upd(runningMean, s1, inv);
    if (runningVar) upd(runningVar, s2, 1 / (count - 1));
  }
  s1.dispose();
  s2.dispose();
  w?.dispose();
  const yE = E.mul(E.sub(E.in(0), E.in(1)), E.in(2));
  const [y] = NDArray.elementwise([b ? E.add(yE, E.in(3)) : yE], b ? [xn, mean, scale, b] : [xn, mean, scale], op);
  b?.dispose();
  const parents = [x, ...(weight ? [weight] : []), ...(bias ? [bias] : [])];
  const xa = alias(xn);
  return fromOp(
    op,
    y,
    parents,
    (gy) => {
      const sgy = gy.sum(axes, true);
      const [t] = NDArray.elementwise([E.mul(E.in(0), E.sub(E.in(1), E.in(2)))], [gy, xa, mean], op);
      const sgyx = t.sum(axes, true);
      t.dispose();
      // Per channel (inputs: scale, rstd, ĥ, ĝ): k = scale·rstd²·ĥ/M, q = scale·ĝ/M, dw = ĥ·rstd.
      const [k, q, dw] = NDArray.elementwise(
        [
          E.mul(E.mul(E.in(0), E.mul(E.in(1), E.in(1))), E.mul(E.in(2), E.f(inv))),
          E.mul(E.in(0), E.mul(E.in(3), E.f(inv))),
          E.mul(E.in(2), E.in(1)),
        ],
        [scale, rstd, sgyx, sgy],
        op,
      );
      sgyx.dispose();
      const res: (NDArray | null)[] = [null];
      if (x.requiresGrad) {
        [res[0]] = NDArray.elementwise(
          [E.sub(E.sub(E.mul(E.in(0), E.in(3)), E.mul(E.sub(E.in(1), E.in(2)), E.in(4))), E.in(5))],
          [gy, xa, mean, scale, k, q],
          op,
        );
      }
      k.dispose();
      q.dispose();
      if (weight) res.push(weight.requiresGrad ? dw.reshape([c]) : null);
      dw.dispose();
      if (bias) res.push(bias.requiresGrad ? sgy.reshape([c]) : null);
      sgy.dispose();
      return res;
    },
    [xa, mean, rstd, scale],
  );
}
