/**
 * Seeded f32 test values in [-4, 4) with IEEE specials (NaN, ±Inf, ±0, ±1, the largest finite,
 * the smallest subnormal) every `period` elements: the inputs for bit-exact kernel tests.
 */
export function f32Values(n: number, seed: number, period: number): Float32Array {
  const out = new Float32Array(n);
  let s = seed;
  const special = [NaN, Infinity, -Infinity, 0, -0, 1, -1, 3.4e38, 1e-45];
  for (let i = 0; i < n; i++) {
    s = (s * 1103515245 + 12345) % 2147483648;
    out[i] = i % period === 0 ? special[(i / period) % special.length] : (s / 1073741824 - 1) * 4;
  }
  return out;
}
