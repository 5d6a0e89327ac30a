import type { TypedArray } from '../dtype';
import { ValueError } from '../errors';
import { philox4x32 } from './philox';
import { cosTurnF32, logF32 } from './normal';

/**
 * What one random draw makes, element by element, on every backend (the CPU fill below and
 * the WGSL kernel compute the same words; the float math is spelled the same way in both).
 *
 * Element i of a draw whose state is (key k0, k1; 64-bit offset lo, hi) takes the Philox words
 * w = philox(counter = (offset + i) as 64 bits, 0, 0; key). Then:
 * - 'uniform': (w0 >> 8)·2^-24, float32 in [0, 1), exact on every backend;
 * - 'normal': Box-Muller with u1 = ((w0 >> 8) + 1)·2^-24 in (0, 1] and u2 = (w1 >> 8)·2^-24:
 *   sqrt(−2·ln u1)·cos(2π·u2), with ln and cos written as float32 polynomials (normal.ts), so
 *   only sqrt is the platform's: equal across backends where sqrt is correctly rounded (the
 *   CPU, SwiftShader), within a few ulp elsewhere (and where a GPU compiler fuses a·b + c);
 * - 'int': low + w0 mod range (int32; range = high − low in [1, 2^32]).
 */
export type RandomDist = 'uniform' | 'normal' | 'int';

export interface RandomParams {
  readonly dist: RandomDist;
  /** 'int' only: the lowest value and the number of values (1 to 2^32). */
  readonly low?: number;
  readonly range?: number;
}

/** The Philox state words of one draw: key (2 words) and the 64-bit offset of its element 0. */
export const RANDOM_STATE_WORDS = 4;

export const TWO_POW_M24 = 5.9604644775390625e-8;
const F = Math.fround;

/** Validates a draw's parameters (shared by every backend's `random`). */
export function checkRandomParams(p: RandomParams): void {
  if (p.dist !== 'uniform' && p.dist !== 'normal' && p.dist !== 'int')
    throw new ValueError(`random: unknown distribution ${JSON.stringify(p.dist)}; expected uniform, normal or int`);
  if (p.dist === 'int') {
    const { low, range } = p;
    if (!Number.isInteger(low) || low! < -(2 ** 31) || low! >= 2 ** 31)
      throw new ValueError(`random: low ${low} is not an int32; pass an integer in [-2^31, 2^31)`);
    if (!Number.isInteger(range) || range! < 1 || range! > 2 ** 32 || low! + range! > 2 ** 31)
      throw new ValueError(
        `random: range ${range} from low ${low} does not fit int32; pass 1 <= high - low <= 2^32 with high <= 2^31`,
      );
  }
}

/** The value of word pair (w0, w1) under `p` (the CPU backend's kernel; the WGSL kernel mirrors it). */
export function wordsToValue(w0: number, w1: number, p: RandomParams): number {
  if (p.dist === 'uniform') return (w0 >>> 8) * TWO_POW_M24;
  if (p.dist === 'int') return (p.low! + (p.range === 2 ** 32 ? w0 : w0 % p.range!)) | 0;
  const u1 = ((w0 >>> 8) + 1) * TWO_POW_M24;
  const u2 = (w1 >>> 8) * TWO_POW_M24;
  const r = F(Math.sqrt(F(-2 * logF32(u1))));
  return F(r * cosTurnF32(u2));
}

/**
 * Fills `out` with the draw of state `st` ([k0, k1, offset lo, offset hi] as u32 or int32
 * bits): element i uses counter offset + i.
 */
export function fillRandom(out: TypedArray, st: ArrayLike<number>, p: RandomParams): void {
  const k0 = st[0] >>> 0;
  const k1 = st[1] >>> 0;
  const lo = st[2] >>> 0;
  const hi = st[3] >>> 0;
  const w = new Uint32Array(4);
  for (let i = 0; i < out.length; i++) {
    const c = lo + i;
    const c0 = c >>> 0;
    const c1 = (hi + Math.floor(c / 4294967296)) >>> 0;
    philox4x32(c0, c1, 0, 0, k0, k1, w);
    out[i] = wordsToValue(w[0], w[1], p);
  }
}
