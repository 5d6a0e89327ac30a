import { DTypeError, ShapeError, ValueError, fmtShape } from '@surf/core';
import { noGrad } from '../grad-mode';
import { Tensor, checkTensor } from '../tensor';
import { checkOptions } from './conv';

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
 * none are given). Written with Tensor ops, so its gradient is theirs (gradchecked).
 */
export function batchNorm(
  x: Tensor, runningMean: Tensor | null, runningVar: Tensor | null, weight: Tensor | null = null, bias: Tensor | null = null, opts: BatchNormOptions = {},
): Tensor {
  const op = 'batchNorm';
  checkTensor(op, x, 'the input');
  checkOptions(op, opts, ['training', 'momentum', 'eps']);
  const training = opts.training ?? false;
  const momentum = opts.momentum ?? 0.1;
  const eps = opts.eps ?? 1e-5;
  if (typeof momentum !== 'number' || !(momentum >= 0 && momentum <= 1)) throw new ValueError(`${op}: momentum ${JSON.stringify(momentum)}; expected a number in [0, 1]`);
  if (typeof eps !== 'number' || !(eps >= 0)) throw new ValueError(`${op}: eps ${JSON.stringify(eps)}; expected a non-negative number`);
  if (x.dtype !== 'float32') throw new DTypeError(`${op}: input has dtype ${x.dtype}; expected float32`);
  if (x.ndim < 2) throw new ShapeError(`${op}: input has shape ${fmtShape(x.shape)}; expected [N, C, ...]`);
  const c = x.shape[1];
  for (const [name, t] of [['runningMean', runningMean], ['runningVar', runningVar], ['weight', weight], ['bias', bias]] as const) {
    if (t === null || t === undefined) continue;
    checkTensor(op, t, `the ${name}`);
    if (t.ndim !== 1 || t.shape[0] !== c) throw new ShapeError(`${op}: ${name} has shape ${fmtShape(t.shape)}; expected [${c}] for input ${fmtShape(x.shape)}`);
  }
  const axes = [0, ...Array.from({ length: x.ndim - 2 }, (_, i) => i + 2)];
  const count = axes.reduce((a, d) => a * x.shape[d], 1);
  const bshape = [1, c, ...new Array<number>(x.ndim - 2).fill(1)];
  const useBatch = training || !runningMean || !runningVar;
  if (useBatch && training && count <= 1) throw new ValueError(`${op}: expected more than 1 value per channel when training; got input ${fmtShape(x.shape)}`);
  let xhat: Tensor;
  if (useBatch) {
    const mean = x.mean(axes, true);
    const centered = x.sub(mean);
    const v = centered.mul(centered).mean(axes, true);
    xhat = centered.mul(v.add(eps).rsqrt());
    if (training) {
      noGrad(() => {
        const m = mean.detach().reshape([c]);
        const uv = v.detach().reshape([c]).mul(count / (count - 1));
        if (runningMean) runningMean.assign(runningMean.mul(1 - momentum).add(m.mul(momentum)));
        if (runningVar) runningVar.assign(runningVar.mul(1 - momentum).add(uv.mul(momentum)));
      });
    }
  } else {
    xhat = x.sub(runningMean!.detach().reshape(bshape)).mul(runningVar!.detach().reshape(bshape).add(eps).rsqrt());
  }
  let y = xhat;
  if (weight) y = y.mul(weight.reshape(bshape));
  if (bias) y = y.add(bias.reshape(bshape));
  return y;
}
