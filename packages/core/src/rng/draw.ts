import type { TypedArray } from '../dtype';
import { ValueError } from '../errors';
import { cosTurnF32, logF32, sinTurnF32 } from './normal';

/**
 * What one random draw makes, element by element, on every backend (the CPU fill below and
 * the WGSL kernel compute the same words; the float math is spelled the same way in both).
 *
 * A draw's state is a key (k0, k1) and a 64-bit counter offset. Each Philox call gives four
 * 32-bit words, and a draw uses all of them: elements 4j .. 4j + 3 come from the words
 * w0 .. w3 of philox(counter = (offset + j) as 64 bits, 0, 0; key), so a draw of n elements
 * takes ceil(n / 4) counters. Then element 4j + m is:
 * - 'uniform': (w_m >> 8)·2^-24, float32 in [0, 1), exact on every backend;
 * - 'int': low + w_m mod range (int32; range = high − low in [1, 2^32]);
 * - 'normal': Box-Muller on the pair (w0, w1) for m = 0, 1 and (w2, w3) for m = 2, 3, with
 *   u1 = ((first >> 8) + 1)·2^-24 in (0, 1] and u2 = (second >> 8)·2^-24: sqrt(−2·ln u1) times
 *   cos(2π·u2) for even m, sin(2π·u2) for odd m. ln, cos and sin are float32 polynomials
 *   (normal.ts), so only sqrt is the platform's: equal across backends where sqrt is correctly
 *   rounded (the CPU, SwiftShader), within a few ulp elsewhere (and where a GPU compiler fuses
 *   a·b + c).
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

/** Counters a draw of n elements takes (four elements per Philox call). */
export function countersFor(n: number): number {
  return Math.ceil(n / 4);
}

/** Box-Muller's element from the word pair (a, b): the cos branch, or the sin branch when `odd`. */
export function normalOf(a: number, b: number, odd: boolean): number {
  const u1 = ((a >>> 8) + 1) * TWO_POW_M24;
  const u2 = (b >>> 8) * TWO_POW_M24;
  const r = F(Math.sqrt(F(-2 * logF32(u1))));
  return F(r * (odd ? sinTurnF32(u2) : cosTurnF32(u2)));
}

/**
 * Fills `out` with the draw of state `st` ([k0, k1, offset lo, offset hi] as u32 or int32
 * bits). Philox's ten rounds are inlined (the arithmetic of philox.ts, which the known-answer
 * test holds) so the loop stays in int32 registers: this is the CPU backend's kernel.
 */
export function fillRandom(out: TypedArray, st: ArrayLike<number>, p: RandomParams): void {
  const K0 = st[0] | 0;
  const K1 = st[1] | 0;
  const lo = st[2] >>> 0;
  const hi = st[3] >>> 0;
  const n = out.length;
  const dist = p.dist === 'uniform' ? 0 : p.dist === 'normal' ? 1 : 2;
  const low = p.low ?? 0;
  const range = p.range ?? 1;
  const full = range === 2 ** 32;
  const w = [0, 0, 0, 0];
  for (let j = 0; 4 * j < n; j++) {
    const c = lo + j;
    let c0 = c | 0;
    let c1 = (hi + (c >= 4294967296 ? 1 : 0)) | 0;
    let c2 = 0;
    let c3 = 0;
    let k0 = K0;
    let k1 = K1;
    for (let r = 0; r < 10; r++) {
      const hi0 = mulhiM0(c0);
      const lo0 = Math.imul(c0, M0);
      const hi1 = mulhiM1(c2);
      const lo1 = Math.imul(c2, M1);
      c0 = hi1 ^ c1 ^ k0;
      c1 = lo1;
      c2 = hi0 ^ c3 ^ k1;
      c3 = lo0;
      k0 = (k0 + W0) | 0;
      k1 = (k1 + W1) | 0;
    }
    w[0] = c0 >>> 0;
    w[1] = c1 >>> 0;
    w[2] = c2 >>> 0;
    w[3] = c3 >>> 0;
    const m = Math.min(4, n - 4 * j);
    for (let k = 0; k < m; k++) {
      const i = 4 * j + k;
      if (dist === 0) out[i] = (w[k] >>> 8) * TWO_POW_M24;
      else if (dist === 2) out[i] = (low + (full ? w[k] : w[k] % range)) | 0;
      else out[i] = normalOf(w[k & 2], w[(k & 2) + 1], (k & 1) === 1);
    }
  }
}

const M0 = 0xd2511f53;
const M1 = 0xcd9e8d57;
const W0 = 0x9e3779b9 | 0;
const W1 = 0xbb67ae85 | 0;

/** High 32 bits of a·M0 (a as int32 bits), from 16-bit halves: every partial product < 2^32. */
function mulhiM0(a: number): number {
  const a0 = a & 0xffff;
  const a1 = a >>> 16;
  const p01 = a0 * 0xd251;
  const p10 = a1 * 0x1f53;
  const mid = ((a0 * 0x1f53) >>> 16) + (p01 & 0xffff) + (p10 & 0xffff);
  return (a1 * 0xd251 + (p01 >>> 16) + (p10 >>> 16) + (mid >>> 16)) | 0;
}
/** The same for M1. */
function mulhiM1(a: number): number {
  const a0 = a & 0xffff;
  const a1 = a >>> 16;
  const p01 = a0 * 0xcd9e;
  const p10 = a1 * 0x8d57;
  const mid = ((a0 * 0x8d57) >>> 16) + (p01 & 0xffff) + (p10 & 0xffff);
  return (a1 * 0xcd9e + (p01 >>> 16) + (p10 >>> 16) + (mid >>> 16)) | 0;
}
