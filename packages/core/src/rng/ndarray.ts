import type { Backend, Strided } from '../backend';
import { DTypeError, ShapeError, fmtShape } from '../errors';
import { NDArray } from '../ndarray';
import { assertShape, numel } from '../shape';
import { RANDOM_STATE_WORDS, RandomParams, checkRandomParams } from './draw';

/**
 * A random array of `shape` drawn on `backend` (Backend.random): `state` is the draw's int32
 * [4] Philox state (key, 64-bit offset) as an array on the device, a kernel argument rather
 * than a compiled-in constant, so a jit replay that uploads a new state draws fresh values.
 */
export function randomDraw(backend: Backend, shape: readonly number[], params: RandomParams, state: NDArray): NDArray {
  const sh = assertShape('random', shape);
  checkRandomParams(params);
  checkRandomState(state.dtype, state.shape);
  const st = state.view.isPlain ? state : state.contiguous();
  const out = backend.random(st.strided, sh, params);
  if (st !== state) st.dispose();
  return NDArray.fromStorage(out, sh);
}

export function checkRandomState(dtype: string, shape: readonly number[]): void {
  if (dtype !== 'int32') throw new DTypeError(`random: the state has dtype ${dtype}; expected int32`);
  if (shape.length !== 1 || shape[0] !== RANDOM_STATE_WORDS)
    throw new ShapeError(`random: the state has shape ${fmtShape(shape)}; expected [${RANDOM_STATE_WORDS}]`);
}

/** Checks a backend's `random` arguments (the state a plain int32 [4] view). */
export function checkRandomArgs(state: Strided, shape: readonly number[], params: RandomParams): number {
  checkRandomParams(params);
  checkRandomState(state.storage.dtype, state.view.shape);
  if (state.view.mask || state.view.strides[0] !== 1)
    throw new ShapeError('random: the state must be a contiguous view; copy it first');
  return numel(shape);
}
