import { checkSize } from './creation-limits';
import {
  DTypeError,
  NDArray,
  RandomParams,
  ValueError,
  assertShape,
  fillRandom,
  numel,
  parseOptions,
  randomDraw,
} from '@surf/core';
import { getBackend } from './context';
import { dynamicData } from './jit/hooks';
import { takeRandomState } from './seed';
import { tidy } from './scope';
import { Tensor, checkTensor } from './tensor';

/**
 * Random tensors drawn on the device from the global Philox stream (seed.ts): each draw
 * uploads only its 16-byte state (key and counter offset), and the backend's kernel makes the
 * values. Under jit the state is dynamic data: every replay takes fresh counters (advancing the
 * stream as the eager call would) and uploads them, with no values made on the host.
 */

type ShapeArg = number | readonly number[];

const toShape = (op: string, s: ShapeArg): number[] => assertShape(op, typeof s === 'number' ? [s] : s);

/** An NDArray of `shape` drawn on `backend` from the global stream. */
export function drawRandom(
  op: string,
  shape: readonly number[],
  params: RandomParams,
  backend = getBackend(),
): NDArray {
  const n = numel(shape);
  // Past the size limits nothing is drawn or allocated (a 2^31-element draw would fill GBs first).
  checkSize(op, n, params.dist === 'int' ? 'int32' : 'float32', backend);
  const state = NDArray.fromData(
    backend,
    dynamicData(() => takeRandomState(n)),
    [4],
    'int32',
  );
  try {
    return randomDraw(backend, shape, params, state);
  } catch (e) {
    if (e instanceof ValueError) throw new ValueError(e.message.replace(/^random:/, `${op}:`));
    throw e;
  } finally {
    state.dispose();
  }
}

export interface RandomOptions {
  /** float32 (the only float dtype); anything else is a DTypeError. */
  dtype?: 'float32';
  requiresGrad?: boolean;
}

function floatOpts(op: string, opts: unknown): { requiresGrad?: boolean } {
  const o = parseOptions<{ dtype: string; requiresGrad: boolean }>(op, opts, {
    dtype: 'string',
    requiresGrad: 'boolean',
  });
  if (o.dtype !== undefined && o.dtype !== 'float32')
    throw new DTypeError(
      `${op}: dtype ${JSON.stringify(o.dtype)}; ${op} makes float32 only (use randint for int32, or cast the result)`,
    );
  return o;
}

/** Uniform [0, 1) of t's shape, drawn on t's backend (which need not be the current one). */
function uniformLike(op: string, t: Tensor): Tensor {
  return new Tensor(drawRandom(op, t.shape, { dist: 'uniform' }, t.nd(op).backend));
}

/** Uniform [0, 1) float32 from the global stream (manualSeed): the same values on every backend. */
export function rand(shape: ShapeArg, opts: RandomOptions = {}): Tensor {
  const o = floatOpts('rand', opts);
  return new Tensor(drawRandom('rand', toShape('rand', shape), { dist: 'uniform' }), o);
}

/** Standard normal float32 (Box-Muller on two Philox words per element, on the device). */
export function randn(shape: ShapeArg, opts: RandomOptions = {}): Tensor {
  const o = floatOpts('randn', opts);
  return new Tensor(drawRandom('randn', toShape('randn', shape), { dist: 'normal' }), o);
}

/** Uniform int32 integers in [low, high) (torch.randint): low + a Philox word mod (high − low). */
export function randint(low: number, high: number, shape: ShapeArg, opts: { dtype?: 'int32' } = {}): Tensor {
  const o = parseOptions<{ dtype: string }>('randint', opts, { dtype: 'string' });
  if (o.dtype !== undefined && o.dtype !== 'int32')
    throw new DTypeError(`randint: dtype ${JSON.stringify(o.dtype)}; randint makes int32 only (cast the result)`);
  if (!(Number.isInteger(low) && Number.isInteger(high) && high > low))
    throw new ValueError(`randint: bad range [${low}, ${high}); pass integers with high > low`);
  if (low < -(2 ** 31) || high > 2 ** 31)
    throw new ValueError(`randint: range [${low}, ${high}) leaves int32; keep -2^31 <= low < high <= 2^31`);
  return new Tensor(drawRandom('randint', toShape('randint', shape), { dist: 'int', low, range: high - low }));
}

/**
 * torch.bernoulli: 1 where a uniform draw falls below the probability, else 0, per element of
 * `probs` (float32 in [0, 1]; its dtype and shape). No gradient, as PyTorch.
 */
export function bernoulli(probs: Tensor | number, shape?: ShapeArg): Tensor {
  if (typeof probs === 'number') {
    if (!(probs >= 0 && probs <= 1)) throw new ValueError(`bernoulli: p = ${probs}; expected a probability in [0, 1]`);
    if (shape === undefined) throw new ValueError('bernoulli: a number p needs a shape: bernoulli(0.3, [2, 3])');
    return tidy(() => rand(shape).lt(probs).float());
  }
  checkTensor('bernoulli', probs, 'probs');
  if (probs.dtype !== 'float32') throw new DTypeError(`bernoulli: probs have dtype ${probs.dtype}; expected float32`);
  if (shape !== undefined) throw new ValueError('bernoulli: a tensor of probabilities gives the shape; drop the shape');
  return tidy(() => uniformLike('bernoulli', probs).lt(probs.detach()).float());
}

/**
 * Inverted dropout (torch.nn.functional.dropout): each element is zeroed with probability p
 * and the rest scaled by 1/(1 − p) while `training`; the identity otherwise. The mask is one
 * random kernel; the compare, scale and multiply fuse into one elementwise pass, and backward
 * reuses the same scaled mask (the product's saved operand). Drawn on x's backend.
 */
export function dropout(x: Tensor, p = 0.5, training = true): Tensor {
  checkTensor('dropout', x, 'x');
  if (typeof p !== 'number' || !(p >= 0 && p <= 1))
    throw new ValueError(`dropout: p must be a probability in [0, 1]; got ${p}`);
  if (typeof training !== 'boolean')
    throw new ValueError(`dropout: training must be a boolean; got ${typeof training}`);
  if (!training || p === 0) return x;
  if (p === 1) return x.mul(0);
  // x·(mask/(1 − p)), as PyTorch: a dropped NaN stays NaN, and the gradient is g·mask/(1 − p).
  return tidy(() =>
    x.mul(
      uniformLike('dropout', x)
        .ge(p)
        .float()
        .mul(1 / (1 - p)),
    ),
  );
}

/**
 * torch.randperm: a random permutation of 0..n-1 (int32). It is made on the host (a
 * Fisher-Yates shuffle driven by Philox words of the global stream, the same function as
 * the kernels), then uploaded: a shuffle is sequential, n is a dataset's size rather than an
 * activation's, and its reader (a data loader) wants the order on the host anyway.
 */
export function randperm(n: number): Tensor {
  if (!Number.isSafeInteger(n) || n < 0 || n >= 2 ** 31)
    throw new ValueError(`randperm: n = ${n}; expected an integer in [0, 2^31)`);
  return new Tensor(
    NDArray.fromData(
      getBackend(),
      dynamicData(() => permutation(n)),
      [n],
      'int32',
    ),
  );
}

/** The permutation randperm uploads (exported for host users: the data loader's shuffle). */
export function permutation(n: number): Int32Array {
  const st = takeRandomState(n);
  const u = new Float32Array(n);
  fillRandom(u, st, { dist: 'uniform' });
  const out = new Int32Array(n);
  for (let i = 0; i < n; i++) out[i] = i;
  for (let i = n - 1; i > 0; i--) {
    const j = Math.min(i, Math.floor(u[i] * (i + 1)));
    const t = out[i];
    out[i] = out[j];
    out[j] = t;
  }
  return out;
}
