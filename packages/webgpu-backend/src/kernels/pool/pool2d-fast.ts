import type { PoolParams } from '@surf/core';
import type { Runtime } from '../../runtime';
import type { PooledBuffer } from '../../pool';
import { Program, Uniforms } from '../program';
import { FLOAT_HELPERS, LINEAR_WG, MAIN_ARGS, paramsDecl } from '../wgsl';
import type { PoolOperand } from './operand';

/**
 * The CNN's pooling, 2x2 windows at stride 2 without padding over contiguous rows whose width
 * divides by 4, as vector kernels: a forward thread reads a vec4 from each of its two rows and
 * writes two outputs (and their taps) as vec2s; a backward thread writes four gradients as one
 * vec4 from two outputs' gradients and taps. A quarter of the threads and index arithmetic of
 * the general kernels (pool2d.ts), the same results: taps in row-major window order, the first
 * largest kept, NaN counting as largest.
 */
export function fastPool2x2(p: PoolParams, inShape: readonly number[]): boolean {
  const [, , h, w] = inShape;
  const geometry =
    p.kernel[0] === 2 &&
    p.kernel[1] === 2 &&
    p.stride[0] === 2 &&
    p.stride[1] === 2 &&
    p.padding[0] === 0 &&
    p.padding[1] === 0 &&
    p.dilation[0] === 1 &&
    p.dilation[1] === 1;
  return geometry && h % 2 === 0 && w % 4 === 0 && p.out[0] === h / 2 && p.out[1] === w / 2;
}

/** True when `o` holds [N, C, rows, cols] as plain row-major planes with its offset on a multiple of `align` elements. */
export function plainRows(o: PoolOperand, n: number, c: number, rows: number, cols: number, align: number): boolean {
  const s = o.strides;
  return (
    s[3] === 1 && s[2] === cols && s[1] === rows * cols && (n === 1 || s[0] === c * s[1]) && o.offset % align === 0
  );
}

// One window's max over taps a, b, c, d (row-major order): the first largest and its tap,
// NaN counting as largest. (avg sums in the same order and divides by 4: no padding, no count.)
const MAX_FN = `
fn win(a: f32, b: f32, c: f32, d: f32) -> vec2<f32> {
  var acc = a;
  var t = 0;
  if (b > acc || (isnan_(b) && !isnan_(acc))) { acc = b; t = 1; }
  if (c > acc || (isnan_(c) && !isnan_(acc))) { acc = c; t = 2; }
  if (d > acc || (isnan_(d) && !isnan_(acc))) { acc = d; t = 3; }
  return vec2<f32>(acc, f32(t));
}`;

export class FastPoolProgram implements Program {
  readonly key: string;
  readonly reads = 1;
  readonly writes: number;

  constructor(
    readonly max: boolean,
    readonly inShape: readonly number[],
    readonly workgroupSize: number,
  ) {
    this.key = `pool2x2|${max ? 'max' : 'avg'}|${inShape.join('x')}|wg${workgroupSize}`;
    this.writes = max ? 2 : 1;
  }

  uniforms(): Uniforms {
    return new Uniforms().i32('xOffset4').i32('plane4');
  }

  wgsl(u: Uniforms): string {
    const [n, c, h, w] = this.inShape;
    const q = w / 4;
    const oh = h / 2;
    const body = this.max
      ? `let m0 = win(r0.x, r0.y, r1.x, r1.y);
  let m1 = win(r0.z, r0.w, r1.z, r1.w);
  Y[i] = vec2<f32>(m0.x, m1.x);
  A[i] = vec2<i32>(i32(m0.y), i32(m1.y));`
      : `Y[i] = vec2<f32>((r0.x + r0.y + r1.x + r1.y) / 4.0, (r0.z + r0.w + r1.z + r1.w) / 4.0);`; // the general kernel's order
    return `${paramsDecl(u.words)}
@group(0) @binding(1) var<storage, read> X: array<vec4<f32>>;
@group(0) @binding(2) var<storage, read_write> Y: array<vec2<f32>>;
${this.max ? '@group(0) @binding(3) var<storage, read_write> A: array<vec2<i32>>;' : ''}
${FLOAT_HELPERS}
${this.max ? MAX_FN : ''}
@compute @workgroup_size(${this.workgroupSize})
fn main(${MAIN_ARGS}) {
  ${LINEAR_WG}
  // i: the output pair (plane, oh, column pair); its two input rows are 2*oh and 2*oh + 1.
  let i = wg * ${this.workgroupSize}u + lid;
  if (i >= ${n * c * oh * q}u) { return; }
  let g = i % ${q}u;
  let r = i / ${q}u;
  let y = r % ${oh}u;
  let pl = r / ${oh}u;
  let row0 = u32(${u.ref('xOffset4')}) + pl * u32(${u.ref('plane4')}) + 2u * y * ${q}u + g;
  let r0 = X[row0];
  let r1 = X[row0 + ${q}u];
  ${body}
}`;
  }
}

export class FastPoolBackwardProgram implements Program {
  readonly key: string;
  readonly reads: number;
  readonly writes = 1;

  constructor(
    readonly max: boolean,
    readonly inShape: readonly number[],
    readonly workgroupSize: number,
  ) {
    this.key = `pool2x2-bwd|${max ? 'max' : 'avg'}|${inShape.join('x')}|wg${workgroupSize}`;
    this.reads = max ? 2 : 1;
  }

  uniforms(): Uniforms {
    return new Uniforms().i32('gOffset2').i32('gPlane2').i32('aOffset2').i32('aPlane2');
  }

  wgsl(u: Uniforms): string {
    const [n, c, h, w] = this.inShape;
    const q = w / 4;
    const oh = h / 2;
    // Tap of input (row parity k, column parity j) in its window: 2k + j.
    const body = this.max
      ? `let a = A[u32(${u.ref('aOffset2')}) + pl * u32(${u.ref('aPlane2')}) + o];
  let t0 = 2 * k;
  DX[i] = vec4<f32>(select(0.0, gv.x, a.x == t0), select(0.0, gv.x, a.x == t0 + 1), select(0.0, gv.y, a.y == t0), select(0.0, gv.y, a.y == t0 + 1));`
      : `let s = gv * 0.25;
  DX[i] = vec4<f32>(s.x, s.x, s.y, s.y);`;
    return `${paramsDecl(u.words)}
@group(0) @binding(1) var<storage, read> G: array<vec2<f32>>;
${this.max ? '@group(0) @binding(2) var<storage, read> A: array<vec2<i32>>;' : ''}
@group(0) @binding(${this.max ? 3 : 2}) var<storage, read_write> DX: array<vec4<f32>>;
@compute @workgroup_size(${this.workgroupSize})
fn main(${MAIN_ARGS}) {
  ${LINEAR_WG}
  // i: four input columns of one row (plane, y, group); their outputs are row y / 2, columns 2g, 2g + 1.
  let i = wg * ${this.workgroupSize}u + lid;
  if (i >= ${n * c * h * q}u) { return; }
  let g = i % ${q}u;
  let r = i / ${q}u;
  let y = r % ${h}u;
  let pl = r / ${h}u;
  let k = i32(y & 1u);
  let o = (y / 2u) * ${q}u + g;
  let gv = G[u32(${u.ref('gOffset2')}) + pl * u32(${u.ref('gPlane2')}) + o];
  ${body}
}`;
  }
}

export function encodeFastPool(
  rt: Runtime,
  x: PoolOperand,
  inShape: readonly number[],
  max: boolean,
  out: PooledBuffer,
  arg: PooledBuffer | null,
  wgSize: number,
): void {
  const [n, c, h, w] = inShape;
  const total = n * c * (h / 2) * (w / 4);
  if (total === 0) return;
  const k = rt.program(new FastPoolProgram(max, inShape, wgSize));
  const b = rt.block(k);
  b.set('xOffset4', x.offset / 4).set('plane4', x.strides[1] / 4);
  rt.dispatch(k, arg ? [x.buf, out, arg] : [x.buf, out], b.base, Math.ceil(total / wgSize));
}

export function encodeFastPoolBackward(
  rt: Runtime,
  gy: PoolOperand,
  arg: PoolOperand | null,
  inShape: readonly number[],
  out: PooledBuffer,
  wgSize: number,
): void {
  const [n, c, h, w] = inShape;
  const total = n * c * h * (w / 4);
  if (total === 0) return;
  const k = rt.program(new FastPoolBackwardProgram(arg !== null, inShape, wgSize));
  const b = rt.block(k);
  b.set('gOffset2', gy.offset / 2).set('gPlane2', gy.strides[1] / 2);
  b.set('aOffset2', arg ? arg.offset / 2 : 0).set('aPlane2', arg ? arg.strides[1] / 2 : 0);
  rt.dispatch(k, arg ? [gy.buf, arg.buf, out] : [gy.buf, out], b.base, Math.ceil(total / wgSize));
}
