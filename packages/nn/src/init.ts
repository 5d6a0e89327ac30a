import { E, NDArray, ShapeError, ValueError, fmtShape, parseOptions } from '@surf/core';
import { Tensor, rand, randn } from '@surf/autograd';

/**
 * In-place initialisers (PyTorch's nn.init.*_), drawing from the global seed (manualSeed),
 * so a seeded model is the same on every backend. Each replaces the tensor's data without
 * recording a graph and returns the tensor.
 */

function fill(t: Tensor, nd: NDArray): Tensor {
  t.assign(nd);
  nd.dispose();
  return t;
}

/** Samples from U(low, high). */
export function uniform(t: Tensor, low = 0, high = 1): Tensor {
  if (!(high >= low)) throw new ValueError(`init.uniform: got low ${low} and high ${high}; expected low <= high`);
  const r = rand(t.shape);
  const [nd] = NDArray.elementwise([E.add(E.mul(E.in(0), E.f(high - low)), E.f(low))], [r.ndarray], 'init.uniform');
  r.dispose();
  return fill(t, nd);
}

/** Samples from N(mean, std²). */
export function normal(t: Tensor, mean = 0, std = 1): Tensor {
  if (!(std >= 0)) throw new ValueError(`init.normal: std ${std} is negative`);
  const r = randn(t.shape);
  const [nd] = NDArray.elementwise([E.add(E.mul(E.in(0), E.f(std)), E.f(mean))], [r.ndarray], 'init.normal');
  r.dispose();
  return fill(t, nd);
}

export function constant(t: Tensor, value: number): Tensor {
  return fill(t, NDArray.full(t.ndarray.backend, t.shape, value, t.dtype));
}
export const zeros = (t: Tensor) => constant(t, 0);
export const ones = (t: Tensor) => constant(t, 1);

/** (fanIn, fanOut) as PyTorch computes them: dims 1 and 0 times the receptive field. */
export function fans(shape: readonly number[]): [number, number] {
  if (shape.length < 2)
    throw new ShapeError(`init: fan in and fan out need a tensor with at least 2 dims; got shape ${fmtShape(shape)}`);
  const field = shape.slice(2).reduce((a, b) => a * b, 1);
  return [shape[1] * field, shape[0] * field];
}

export type Nonlinearity =
  | 'linear'
  | 'conv1d'
  | 'conv2d'
  | 'conv3d'
  | 'convTranspose1d'
  | 'convTranspose2d'
  | 'convTranspose3d'
  | 'sigmoid'
  | 'tanh'
  | 'relu'
  | 'leakyRelu'
  | 'selu';

/** The recommended gain for a nonlinearity (nn.init.calculate_gain). */
export function calculateGain(nonlinearity: Nonlinearity, param?: number): number {
  switch (nonlinearity) {
    case 'linear':
    case 'conv1d':
    case 'conv2d':
    case 'conv3d':
    case 'convTranspose1d':
    case 'convTranspose2d':
    case 'convTranspose3d':
    case 'sigmoid':
      return 1;
    case 'selu':
      return 3 / 4;
    case 'tanh':
      return 5 / 3;
    case 'relu':
      return Math.SQRT2;
    case 'leakyRelu': {
      const slope = param ?? 0.01;
      return Math.sqrt(2 / (1 + slope * slope));
    }
    default:
      throw new ValueError(`calculateGain: unknown nonlinearity ${JSON.stringify(nonlinearity)}`);
  }
}

/** U(-b, b) with b = gain·√(3/fan): He initialisation. Linear uses a = √5, giving b = 1/√fanIn. */
export function kaimingUniform(
  t: Tensor,
  opts: { a?: number; mode?: 'fanIn' | 'fanOut'; nonlinearity?: Nonlinearity } = {},
): Tensor {
  parseOptions('init.kaimingUniform', opts, { a: 'number', mode: ['fanIn', 'fanOut'], nonlinearity: 'string' });
  const [fanIn, fanOut] = fans(t.shape);
  const fan = (opts.mode ?? 'fanIn') === 'fanIn' ? fanIn : fanOut;
  const gain = calculateGain(opts.nonlinearity ?? 'leakyRelu', opts.a ?? 0);
  const bound = fan === 0 ? 0 : gain * Math.sqrt(3 / fan);
  return uniform(t, -bound, bound);
}

/** U(-b, b) with b = gain·√(6/(fanIn + fanOut)): Glorot initialisation. */
export function xavierUniform(t: Tensor, gain = 1): Tensor {
  const [fanIn, fanOut] = fans(t.shape);
  const bound = gain * Math.sqrt(6 / (fanIn + fanOut));
  return uniform(t, -bound, bound);
}
// the normal family and orthogonal
export { kaimingNormal, xavierNormal, truncNormal, orthogonal } from './init-normal';
