/**
 * The op table's reference scalar math, written independently of the kernels' helpers
 * (ops/scalar.ts, which the CPU kernels use): different algorithms for the same definitions, so
 * a slip in either one makes the backends disagree with the reference instead of agreeing with
 * it. Float64 throughout; the table rounds to float32 where the op does.
 */

/**
 * erf(x) = 2/√π ∫₀ˣ e^(-t²) dt by composite Simpson's rule (400 panels: h ≤ 0.0125 on |x| < 5,
 * error under 1e-9), ±1 beyond 5 (1 - erf(5) = 1.5e-12).
 */
export function refErf(x: number): number {
  if (x !== x) return NaN;
  if (x === 0) return x;
  if (x >= 5) return 1;
  if (x <= -5) return -1;
  const n = 400;
  const h = x / n;
  let s = 1 + Math.exp(-x * x);
  for (let i = 1; i < n; i++) {
    const t = i * h;
    s += (i % 2 === 1 ? 4 : 2) * Math.exp(-t * t);
  }
  return ((s * h) / 3) * (2 / Math.sqrt(Math.PI));
}

/** Round to nearest, ties to the even neighbour, from floor and the fractional part. */
export function refRint(x: number): number {
  if (!Number.isFinite(x)) return x;
  const lo = Math.floor(x);
  const frac = x - lo; // exact for float32 inputs
  let r: number;
  if (frac < 0.5) r = lo;
  else if (frac > 0.5) r = lo + 1;
  else r = lo % 2 === 0 ? lo : lo + 1;
  // Keep the sign of zero as the input had it (round(-0.4) is -0).
  return r === 0 && (x < 0 || Object.is(x, -0)) ? -0 : r;
}

/** Float remainder with the divisor's sign (PyTorch's remainder): a - b·⌊a/b⌋ done exactly. */
export function refRemainder(a: number, b: number): number {
  if (b === 0 || !Number.isFinite(a) || b !== b) return NaN;
  if (!Number.isFinite(b)) return a === 0 || a < 0 === b < 0 ? a : b;
  const t = a % b; // the exact truncated remainder (C fmod)
  return t === 0 || t < 0 === b < 0 ? t : t + b;
}

/** int32 remainder with the divisor's sign, in BigInt; x mod 0 is 0 in this language. */
export function refIntRemainder(a: number, b: number): number {
  if (b === 0) return 0;
  const bb = BigInt(b);
  return Number((((BigInt(a) % bb) + bb) % bb) | 0n) | 0;
}

/** -1, 0 or 1; NaN and ±0 give 0. */
export function refSign(x: number): number {
  if (x !== x || x === 0) return 0;
  return Math.sign(x);
}
