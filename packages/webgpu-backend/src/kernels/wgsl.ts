import type { DType } from '@surf/core';

/**
 * WGSL fragments every kernel shares. Tensors live in storage buffers as f32, i32 or (bool)
 * u32 0/1. Kernel parameters (shapes, strides, offsets, constants) travel in one uniform
 * block per dispatch, read as `U[q][c]` words; the generators know every word's index at
 * code-generation time, so no parameter access is dynamic.
 */

/** The element type a dtype has in a storage buffer. */
export function storageType(dt: DType): string {
  return dt === 'float32' ? 'f32' : dt === 'int32' ? 'i32' : 'u32';
}

/** The type a dtype has inside an expression (bool is a real WGSL bool there). */
export function valueType(dt: DType): string {
  return dt === 'float32' ? 'f32' : dt === 'int32' ? 'i32' : 'bool';
}

/** A u32 parameter word. */
export function pU(i: number): string {
  return `U[${i >> 2}][${i & 3}]`;
}
export function pI(i: number): string {
  return `bitcast<i32>(${pU(i)})`;
}
export function pF(i: number): string {
  return `bitcast<f32>(${pU(i)})`;
}

/** Declares the parameter block of `words` u32s (binding 0, dynamic offset). */
export function paramsDecl(words: number): string {
  return `@group(0) @binding(0) var<uniform> U: array<vec4<u32>, ${Math.max(1, Math.ceil(words / 4))}>;`;
}

/** Bytes of a parameter block: a multiple of 16 (uniform array stride). */
export function paramBytes(words: number): number {
  return Math.max(1, Math.ceil(words / 4)) * 16;
}

/**
 * The workgroup's linear index. Dispatches wider than maxComputeWorkgroupsPerDimension fold
 * into a 2-D grid; every kernel unfolds it here and drops the surplus groups of the last row.
 */
export const LINEAR_WG = `let wg = wid.x + wid.y * nwg.x;`;
export const MAIN_ARGS = `@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>, @builtin(local_invocation_index) lid: u32`;

/**
 * Our float semantics where WGSL leaves them open. NaN and infinity are built from runtime
 * bits (a private var), because a NaN in a const-expression is a shader-creation error.
 * NaN tests use the bits, not `x != x`, which a compiler may fold away.
 */
export const FLOAT_HELPERS = /* wgsl */ `
var<private> NAN_BITS: u32 = 0x7fc00000u;
var<private> INF_BITS: u32 = 0x7f800000u;
fn nan_() -> f32 { return bitcast<f32>(NAN_BITS); }
fn inf_() -> f32 { return bitcast<f32>(INF_BITS); }
fn isnan_(x: f32) -> bool { return (bitcast<u32>(x) & 0x7fffffffu) > 0x7f800000u; }
fn isinf_(x: f32) -> bool { return (bitcast<u32>(x) & 0x7fffffffu) == 0x7f800000u; }
fn signbit_(x: f32) -> bool { return (bitcast<u32>(x) & 0x80000000u) != 0u; }
// x - x and x / x by the bits (a compiler may fold the arithmetic to 0 and 1).
fn fsubself_(x: f32) -> f32 { if ((bitcast<u32>(x) & 0x7f800000u) == 0x7f800000u) { return nan_(); } return 0.0; }
fn fdivself_(x: f32) -> f32 { let m = bitcast<u32>(x) & 0x7fffffffu; if (m >= 0x7f800000u || m == 0u) { return nan_(); } return 1.0; }
fn fmax_(a: f32, b: f32) -> f32 { if (isnan_(a) || isnan_(b)) { return nan_(); } return max(a, b); }
fn flog_(x: f32) -> f32 { if (x < 0.0 || isnan_(x)) { return nan_(); } if (x == 0.0) { return -inf_(); } return log(x); }
fn fsqrt_(x: f32) -> f32 { if (x < 0.0 || isnan_(x)) { return nan_(); } return sqrt(x); }
fn fexp_(x: f32) -> f32 { if (isnan_(x)) { return x; } return exp(x); }
// Vulkan lets sin() be off by 2^-11 absolutely; this one is within a few ulp for |x| < 1e5:
// Cody-Waite reduction by pi/2 in three parts, then minimax polynomials on [-pi/4, pi/4].
// shift moves the quadrant: 0 gives sin, 1 gives cos (cos x = sin(x + pi/2), exactly).
fn fsinq_(x: f32, shift: i32) -> f32 {
  if (isnan_(x) || isinf_(x)) { return nan_(); }
  let k = round(x * 0.636619772367581);
  var r = x - k * 1.5703125;
  r = r - k * 4.837512969970703125e-4;
  r = r - k * 7.54978995489188216e-8;
  let z = r * r;
  let s = r + r * z * (-1.6666654611e-1 + z * (8.3321608736e-3 + z * -1.9515295891e-4));
  let c = 1.0 - 0.5 * z + z * z * (4.166664568298827e-2 + z * (-1.388731625493765e-3 + z * 2.443315711809948e-5));
  let q = (i32(k - 4.0 * floor(k * 0.25)) + shift) & 3;
  if (q == 0) { return s; }
  if (q == 1) { return c; }
  if (q == 2) { return -s; }
  return -c;
}
fn fsin_(x: f32) -> f32 { return fsinq_(x, 0); }
fn feq_(a: f32, b: f32) -> bool { return a == b && !isnan_(a) && !isnan_(b); }
fn flt_(a: f32, b: f32) -> bool { return a < b && !isnan_(a) && !isnan_(b); }
fn fbool_(x: f32) -> bool { return (bitcast<u32>(x) & 0x7fffffffu) != 0u; }
fn idiv_(a: i32, b: i32) -> i32 { if (b == 0) { return 0; } return a / b; }
// float -> int32: truncate toward zero, saturate, NaN -> 0 (WGSL clamps to 2^31-128 and leaves NaN open).
fn ftoi_(x: f32) -> i32 {
  if (isnan_(x)) { return 0; }
  if (x >= 2147483648.0) { return 2147483647; }
  if (x < -2147483648.0) { return bitcast<i32>(0x80000000u); }
  return i32(x);
}
// JavaScript's Math.pow, case by case (WGSL's pow is undefined for x < 0 and x = 0).
fn fpow_(x: f32, y: f32) -> f32 {
  if (y == 0.0) { return 1.0; }
  if (isnan_(x) || isnan_(y)) { return nan_(); }
  let ax = abs(x);
  if (isinf_(y)) {
    if (ax == 1.0) { return nan_(); }
    if ((ax > 1.0) == (y > 0.0)) { return inf_(); }
    return 0.0;
  }
  let yint = floor(y) == y;
  if (x < 0.0 && !yint) { return nan_(); }
  let odd = yint && abs(y) < 16777216.0 && fract(y * 0.5) != 0.0;
  var r: f32;
  if (ax == 0.0) { r = select(inf_(), 0.0, y > 0.0); }
  else if (isinf_(ax)) { r = select(0.0, inf_(), y > 0.0); }
  else if (yint && abs(y) <= 4.0) {
    // Small integer powers by multiplication: exact where Math.pow is exact (x*x, 1/x).
    let n = u32(abs(y));
    r = ax;
    for (var k = 1u; k < n; k++) { r = r * ax; }
    if (y < 0.0) { r = 1.0 / r; }
  }
  else { r = exp2(y * log2(ax)); }
  if (odd && signbit_(x)) { return -r; }
  return r;
}
`;

/** Splits a workgroup count over x and y so neither exceeds the per-dimension limit. */
export function grid(groups: number, maxPerDim: number): [number, number] {
  if (groups <= maxPerDim) return [Math.max(groups, 1), 1];
  const y = Math.ceil(groups / maxPerDim);
  return [Math.ceil(groups / y), y];
}
