/**
 * Scalar math the JS runtime lacks, for the CPU kernels. The op table's reference functions do
 * not use these: they have their own definitions (ops/ref-scalar.ts), so a slip here makes the
 * CPU disagree with the reference. Each is also checked against published values in
 * core/test/op-table.test.ts.
 */

/**
 * erf in float64: the Maclaurin series while it converges without losing more than a few
 * digits (|x| < 4: terms peak near 1e5, so ~1e-11 absolute), and ±1 beyond, where
 * 1 - erf(4) = 1.5e-8 already rounds to 1 in float32.
 */
export function erf(x: number): number {
  if (Number.isNaN(x)) return NaN;
  const a = Math.abs(x);
  if (a >= 4) return x > 0 ? 1 : -1;
  let sum = 0,
    term = x;
  const z = -x * x;
  for (let n = 0; n < 120; n++) {
    const t = term / (2 * n + 1);
    sum += t;
    if (Math.abs(t) < 1e-17 * Math.abs(sum)) break;
    term *= z / (n + 1);
  }
  return sum * 1.1283791670955126; // 2/√π
}

/** Round half to even (PyTorch's round, WGSL's round(), wasm's f32x4.nearest). */
export function rint(x: number): number {
  const r = Math.round(x); // half up
  return r - x === 0.5 && r % 2 !== 0 ? r - 1 : r;
}

/** PyTorch's remainder for floats: fmod, moved to the divisor's sign; x mod 0 is NaN. */
export function fmodFloor(a: number, b: number): number {
  let m = a % b; // JS % is the exact C fmod
  if (m !== 0 && m < 0 !== b < 0) m += b;
  return m;
}

/** The same for int32: the divisor's sign, and x mod 0 = 0 (as x / 0 = 0 in this language). */
export function imod(a: number, b: number): number {
  if (b === 0) return 0;
  let m = a % b;
  if (m !== 0 && m < 0 !== b < 0) m += b;
  return m | 0;
}

/** sign with NaN giving 0 (PyTorch: (0 < x) - (x < 0)). */
export function sign(x: number): number {
  return x > 0 ? 1 : x < 0 ? -1 : 0;
}
