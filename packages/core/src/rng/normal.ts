/**
 * Box-Muller's log and cos spelled with float32 +, − and × only (Cephes' logf and sinf/cosf
 * polynomials), so the CPU and WGSL kernels round the same operations the same way instead of
 * trusting each platform's log and cos (WGSL allows cos an absolute error of 2^-11). The WGSL
 * twin is NORMAL_WGSL in webgpu-backend's kernels/random.ts: change both together.
 *
 * The angle needs no range reduction: it is 2π·u2 with u2 a 24-bit fraction, so the quadrant
 * (the top two bits) and the position in it are exact, and a position past half a quadrant is
 * reflected, leaving sin/cos polynomials on [0, π/4].
 */
const F = Math.fround;

/** The polynomials' float32 constants, exported so the WGSL twin prints the same values. */
export const SQRTHF = F(0.707106781186547524);
export const LOG_P = [
  7.0376836292e-2, -1.151461031e-1, 1.167699874e-1, -1.2420140846e-1, 1.4249322787e-1, -1.6668057665e-1,
  2.0000714765e-1, -2.4999993993e-1, 3.3333331174e-1,
].map(F);
export const LN2_LO = F(-2.1219444e-4);
export const LN2_HI = F(0.693359375);
export const PIO2 = F(Math.PI / 2);
export const SIN_P = [-1.9515295891e-4, 8.3321608736e-3, -1.6666654611e-1].map(F);
export const COS_P = [2.443315711809948e-5, -1.388731625493765e-3, 4.166664568298827e-2].map(F);

const F32 = new Float32Array(1);
const U32 = new Uint32Array(F32.buffer);

/** ln(x) for a normal positive float32 x (Cephes logf). */
export function logF32(x: number): number {
  // frexp: x = m·2^e with m in [0.5, 1).
  F32[0] = x;
  let e = ((U32[0] >>> 23) & 0xff) - 126;
  U32[0] = (U32[0] & 0x807fffff) | 0x3f000000;
  let m = F32[0];
  if (m < SQRTHF) {
    e -= 1;
    m = F(F(m + m) - 1);
  } else m = F(m - 1);
  const z = F(m * m);
  let y = LOG_P[0];
  for (let i = 1; i < LOG_P.length; i++) y = F(F(y * m) + LOG_P[i]);
  y = F(F(y * m) * z);
  y = F(y + F(LN2_LO * e));
  y = F(y + F(F(-0.5) * z));
  return F(F(m + y) + F(LN2_HI * e));
}

function sinPoly(x: number): number {
  const z = F(x * x);
  const p = F(F(F(F(SIN_P[0] * z) + SIN_P[1]) * z) + SIN_P[2]);
  return F(F(F(p * z) * x) + x);
}

function cosPoly(x: number): number {
  const z = F(x * x);
  const p = F(F(F(F(COS_P[0] * z) + COS_P[1]) * z) + COS_P[2]);
  return F(F(F(F(p * z) * z) - F(F(0.5) * z)) + 1);
}

/** cos(2π·u) for u = k·2^-24, k an integer in [0, 2^24). */
export function cosTurnF32(u: number): number {
  return turnF32(u, false);
}

/** sin(2π·u) for the same u. */
export function sinTurnF32(u: number): number {
  return turnF32(u, true);
}

function turnF32(u: number, sine: boolean): number {
  const v = u * 4; // exact
  const q = Math.floor(v);
  let t = v - q; // exact, in [0, 1): the position in quadrant q
  let swap = false;
  if (t > 0.5) {
    t = 1 - t; // exact
    swap = true;
  }
  const a = F(t * PIO2);
  const c = swap ? sinPoly(a) : cosPoly(a); // cos of the quadrant's angle
  const s = swap ? cosPoly(a) : sinPoly(a); // its sin
  // cos(2πu) by quadrant: c, −s, −c, s; sin(2πu): s, c, −s, −c.
  if (sine) return q === 0 ? s : q === 1 ? c : q === 2 ? -s : -c;
  return q === 0 ? c : q === 1 ? -s : q === 2 ? -c : s;
}
