import { COS_P, LN2_HI, LN2_LO, LOG_P, PIO2, SIN_P, SQRTHF, RandomParams } from '@surf/core';
import type { Runtime } from '../runtime';
import type { PooledBuffer } from '../pool';
import { LINEAR_WG, MAIN_ARGS, pI, pU, paramsDecl } from './wgsl';

/**
 * Philox4x32-10 in WGSL: the twin of core's rng/philox.ts, element for element (core's
 * rng/draw.ts says what each distribution makes of the words). WGSL has no 64-bit integers,
 * so the high half of each 32x32 product is built from 16-bit partial products.
 */
export const PHILOX_WGSL = /* wgsl */ `
fn mulhi_(a: u32, b: u32) -> u32 {
  let a0 = a & 0xffffu; let a1 = a >> 16u; let b0 = b & 0xffffu; let b1 = b >> 16u;
  let p01 = a0 * b1; let p10 = a1 * b0;
  let mid = ((a0 * b0) >> 16u) + (p01 & 0xffffu) + (p10 & 0xffffu);
  return a1 * b1 + (p01 >> 16u) + (p10 >> 16u) + (mid >> 16u);
}
fn philox_(ctr: vec4<u32>, key: vec2<u32>) -> vec4<u32> {
  var c = ctr;
  var k = key;
  for (var r = 0u; r < 10u; r++) {
    let hi0 = mulhi_(0xd2511f53u, c.x); let lo0 = 0xd2511f53u * c.x;
    let hi1 = mulhi_(0xcd9e8d57u, c.z); let lo1 = 0xcd9e8d57u * c.z;
    c = vec4<u32>(hi1 ^ c.y ^ k.x, lo1, hi0 ^ c.w ^ k.y, lo0);
    k = k + vec2<u32>(0x9e3779b9u, 0xbb67ae85u);
  }
  return c;
}`;

const lit = (v: number) => {
  const s = String(v);
  return /[.e]/.test(s) ? s : `${s}.0`;
};

/**
 * Box-Muller with core's float32 polynomials for ln and cos (rng/normal.ts, operation for
 * operation: the same roundings give the same values), not WGSL's log and cos, which may be
 * off by 2^-11.
 */
const NORMAL_WGSL = /* wgsl */ `
fn log_(x: f32) -> f32 {
  let b = bitcast<u32>(x);
  var e = f32(i32((b >> 23u) & 0xffu) - 126);
  var m = bitcast<f32>((b & 0x807fffffu) | 0x3f000000u);
  if (m < ${lit(SQRTHF)}) { e = e - 1.0; m = (m + m) - 1.0; } else { m = m - 1.0; }
  let z = m * m;
  var y = ${lit(LOG_P[0])};
  ${LOG_P.slice(1)
    .map((c) => `y = y * m + ${lit(c)};`)
    .join(' ')}
  y = (y * m) * z;
  y = y + ${lit(LN2_LO)} * e;
  y = y + -0.5 * z;
  return (m + y) + ${lit(LN2_HI)} * e;
}
fn sinp_(x: f32) -> f32 {
  let z = x * x;
  let p = (${lit(SIN_P[0])} * z + ${lit(SIN_P[1])}) * z + ${lit(SIN_P[2])};
  return (p * z) * x + x;
}
fn cosp_(x: f32) -> f32 {
  let z = x * x;
  let p = (${lit(COS_P[0])} * z + ${lit(COS_P[1])}) * z + ${lit(COS_P[2])};
  return ((p * z) * z - 0.5 * z) + 1.0;
}
fn turn_(u: f32, sine: bool) -> f32 {
  let v = u * 4.0;
  let q = floor(v);
  var t = v - q;
  let swap = t > 0.5;
  if (swap) { t = 1.0 - t; }
  let a = t * ${lit(PIO2)};
  let c = select(cosp_(a), sinp_(a), swap);
  let s = select(sinp_(a), cosp_(a), swap);
  // cos(2πu) by quadrant: c, −s, −c, s; sin(2πu): s, c, −s, −c.
  if (sine) { return select(select(select(-c, -s, q == 2.0), c, q == 1.0), s, q == 0.0); }
  return select(select(select(s, -c, q == 2.0), -s, q == 1.0), c, q == 0.0);
}
fn normal_(a: u32, b: u32, odd: bool) -> f32 {
  let u1 = f32((a >> 8u) + 1u) * 5.9604644775390625e-8;
  let u2 = f32(b >> 8u) * 5.9604644775390625e-8;
  return sqrt(-2.0 * log_(u1)) * turn_(u2, odd);
}`;

/**
 * One thread per Philox call: counter offset + j gives elements 4j .. 4j + 3 (core's
 * rng/draw.ts), each stored while inside the draw.
 */
export function encodeRandom(
  rt: Runtime,
  p: RandomParams,
  n: number,
  st: { buf: PooledBuffer; offset: number },
  out: PooledBuffer,
  wgSize: number,
): void {
  if (n === 0) return;
  // Words: n, state offset, low, range (0 stands for 2^32)
  const words = 4;
  const key = `random|${p.dist}|wg${wgSize}`;
  const k = rt.kernel(key, 1, 1, words, () => {
    const outTy = p.dist === 'int' ? 'i32' : 'f32';
    const value = (m: number) =>
      p.dist === 'uniform'
        ? `f32(w[${m}] >> 8u) * 5.9604644775390625e-8`
        : p.dist === 'int'
          ? `${pI(2)} + bitcast<i32>(select(w[${m}] % ${pU(3)}, w[${m}], ${pU(3)} == 0u))`
          : `normal_(w[${m & 2}], w[${(m & 2) + 1}], ${m & 1 ? 'true' : 'false'})`;
    return `${paramsDecl(words)}
@group(0) @binding(1) var<storage, read> St: array<u32>;
@group(0) @binding(2) var<storage, read_write> Y: array<${outTy}>;
${PHILOX_WGSL}
${p.dist === 'normal' ? NORMAL_WGSL : ''}
@compute @workgroup_size(${wgSize})
fn main(${MAIN_ARGS}) {
  ${LINEAR_WG}
  let j = wg * ${wgSize}u + lid;
  let n = ${pU(0)};
  if (j >= (n + 3u) / 4u) { return; }
  let o = ${pU(1)};
  let lo = St[o + 2u] + j;
  let hi = St[o + 3u] + select(0u, 1u, lo < j);
  let w = philox_(vec4<u32>(lo, hi, 0u, 0u), vec2<u32>(St[o], St[o + 1u]));
  let i = 4u * j;
  Y[i] = ${value(0)};
  if (i + 1u < n) { Y[i + 1u] = ${value(1)}; }
  if (i + 2u < n) { Y[i + 2u] = ${value(2)}; }
  if (i + 3u < n) { Y[i + 3u] = ${value(3)}; }
}`;
  });
  const q = rt.params(k);
  const { u32, i32 } = rt.words;
  u32[q] = n;
  u32[q + 1] = st.offset;
  i32[q + 2] = p.low ?? 0;
  u32[q + 3] = p.dist === 'int' ? p.range! % 2 ** 32 : 0;
  rt.dispatch(k, [st.buf, out], q, Math.ceil(Math.ceil(n / 4) / wgSize));
}
