/**
 * Philox4x32-10 (Salmon et al., "Parallel random numbers: as easy as 1, 2, 3", SC 2011), the
 * counter-based generator of PyTorch's CUDA backend and JAX: a bijection of a 128-bit counter
 * keyed by 64 bits, so element i of a draw is a pure function of (key, counter i) and every
 * backend computes the same words in any order. The WGSL twin is in webgpu-backend's
 * kernels/random.ts; core/test/rng-philox.test.ts holds both to Random123's published vectors.
 */

const M0 = 0xd2511f53;
const M1 = 0xcd9e8d57;
const W0 = 0x9e3779b9;
const W1 = 0xbb67ae85;
const M0_HI = M0 >>> 16;
const M0_LO = M0 & 0xffff;
const M1_HI = M1 >>> 16;
const M1_LO = M1 & 0xffff;

/**
 * The high 32 bits of a·m for u32 a and m = mHi·2^16 + mLo: each partial product stays under
 * 2^48, so float64 holds it exactly.
 */
function mulhi(a: number, mHi: number, mLo: number): number {
  return Math.floor((a * mHi + Math.floor((a * mLo) / 65536)) / 65536) >>> 0;
}

/**
 * The four output words for counter (c0, c1, c2, c3) and key (k0, k1), all u32, written into
 * `out` (a reused array, so a hot loop allocates nothing).
 */
export function philox4x32(
  c0: number,
  c1: number,
  c2: number,
  c3: number,
  k0: number,
  k1: number,
  out: Uint32Array,
): Uint32Array {
  for (let r = 0; r < 10; r++) {
    const hi0 = mulhi(c0, M0_HI, M0_LO);
    const lo0 = Math.imul(c0, M0) >>> 0;
    const hi1 = mulhi(c2, M1_HI, M1_LO);
    const lo1 = Math.imul(c2, M1) >>> 0;
    c0 = (hi1 ^ c1 ^ k0) >>> 0;
    c1 = lo1;
    c2 = (hi0 ^ c3 ^ k1) >>> 0;
    c3 = lo0;
    k0 = (k0 + W0) >>> 0;
    k1 = (k1 + W1) >>> 0;
  }
  out[0] = c0;
  out[1] = c1;
  out[2] = c2;
  out[3] = c3;
  return out;
}
