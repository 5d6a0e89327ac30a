import seedrandom from 'seedrandom';
import type { DType } from '../dtype';
import { RefArray, refSize } from './reference';

/**
 * Seeded inputs. Every case names its seed, so a failure reproduces exactly on any backend
 * and machine. Floats are rounded to f32 here, so the reference sees what the backend stores.
 */
function rng(seed: string | number): () => number {
  return seedrandom(`surf-test-${seed}`);
}

/** Uniform f32 values in [lo, hi). */
export function randF32(shape: readonly number[], seed: string | number, lo = -1, hi = 1): RefArray {
  const r = rng(seed);
  const data = new Float64Array(refSize(shape));
  for (let i = 0; i < data.length; i++) data[i] = Math.fround(lo + (hi - lo) * r());
  return { shape: shape.slice(), dtype: 'float32', data };
}

/** Uniform f32 magnitudes in [lo, hi) with a random sign: keeps values away from 0. */
export function randF32Signed(shape: readonly number[], seed: string | number, lo: number, hi: number): RefArray {
  const r = rng(seed);
  const data = new Float64Array(refSize(shape));
  for (let i = 0; i < data.length; i++) data[i] = Math.fround((r() < 0.5 ? -1 : 1) * (lo + (hi - lo) * r()));
  return { shape: shape.slice(), dtype: 'float32', data };
}

/** Uniform int32 values in [lo, hi). */
export function randI32(shape: readonly number[], seed: string | number, lo: number, hi: number): RefArray {
  const r = rng(seed);
  const data = new Float64Array(refSize(shape));
  for (let i = 0; i < data.length; i++) data[i] = lo + Math.floor((hi - lo) * r());
  return { shape: shape.slice(), dtype: 'int32', data };
}

export function randBool(shape: readonly number[], seed: string | number, pTrue = 0.5): RefArray {
  const r = rng(seed);
  const data = new Float64Array(refSize(shape));
  for (let i = 0; i < data.length; i++) data[i] = r() < pTrue ? 1 : 0;
  return { shape: shape.slice(), dtype: 'bool', data };
}

/** 0, 1, 2, ... as the given dtype: easy to read in a failure message. */
export function iota(shape: readonly number[], dtype: DType = 'float32', start = 0): RefArray {
  const data = new Float64Array(refSize(shape));
  for (let i = 0; i < data.length; i++) data[i] = dtype === 'bool' ? (start + i) % 2 : start + i;
  return { shape: shape.slice(), dtype, data };
}
