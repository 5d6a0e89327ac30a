import type { PoolParams } from '@surf/core';
import type { Runtime } from '../../runtime';
import type { PooledBuffer } from '../../pool';
import { Program, Uniforms } from '../program';
import { FLOAT_HELPERS, LINEAR_WG, MAIN_ARGS, paramsDecl } from '../wgsl';
import { encodeFastPool, encodeFastPoolBackward, fastPool2x2, plainRows } from './pool2d-fast';
import type { PoolOperand } from './operand';

export type { PoolOperand } from './operand';

/**
 * Windowed pooling (the contract's pool2d) as two one-pass kernels. Forward: one thread per
 * output cell walks its window's in-range taps (max keeps the first largest, NaN counting as
 * largest, and its tap index). Backward: one thread per input element gathers from the
 * windows whose taps land on it, so nothing is written twice (no atomics, a fixed order).
 * The window geometry and the shapes are part of the key (a model has a handful of each), so
 * the index arithmetic divides by constants (a multiply and shift, not a division loop: the
 * index math otherwise costs about as much as the memory traffic); strides are parameters.
 */
function geometryKey(p: PoolParams): string {
  return `${p.kind}|k${p.kernel.join('x')}|s${p.stride.join('x')}|p${p.padding.join('x')}|d${p.dilation.join('x')}${p.kind === 'avg' ? (p.countIncludePad ? '|incl' : '|excl') : ''}`;
}

/** WGSL for PyTorch's average-pool divisor of output (oh, ow) (see core's avgPoolDivisors). */
function countFn(p: PoolParams, inShape: readonly number[]): string {
  const dim = (o: string, d: number, len: string) => `
  var st${d} = ${o} * ${p.stride[d]} - ${p.padding[d]};
  var en${d} = min(st${d} + ${p.kernel[d]}, ${len} + ${p.padding[d]});
  let full${d} = en${d} - st${d};
  st${d} = max(st${d}, 0);
  en${d} = min(en${d}, ${len});
  let n${d} = ${p.countIncludePad ? `full${d}` : `en${d} - st${d}`};`;
  return `fn count_(oh: i32, ow: i32) -> f32 {${dim('oh', 0, `${inShape[2]}`)}${dim('ow', 1, `${inShape[3]}`)}
  return f32(n0 * n1);
}`;
}

export class PoolProgram implements Program {
  readonly key: string;
  readonly reads = 1;
  readonly writes: number;

  constructor(
    readonly p: PoolParams,
    readonly inShape: readonly number[],
    readonly workgroupSize: number,
  ) {
    this.key = `pool2d|${geometryKey(p)}|${inShape.join('x')}|wg${workgroupSize}`;
    this.writes = p.kind === 'max' ? 2 : 1;
  }

  uniforms(): Uniforms {
    return new Uniforms().i32('xOffset').i32('xStrides', 4);
  }

  wgsl(u: Uniforms): string {
    const p = this.p;
    const max = p.kind === 'max';
    const [kH, kW] = p.kernel;
    const [n, c, h, w] = this.inShape;
    const tap = max
      ? `if (best < 0 || v > acc || (isnan_(v) && !isnan_(acc))) { acc = v; best = ${kW} * ki + kj; }`
      : 'acc += v;';
    return `${paramsDecl(u.words)}
@group(0) @binding(1) var<storage, read> X: array<f32>;
@group(0) @binding(2) var<storage, read_write> Y: array<f32>;
${max ? '@group(0) @binding(3) var<storage, read_write> A: array<i32>;' : ''}
${FLOAT_HELPERS}
${max ? '' : countFn(p, this.inShape)}
@compute @workgroup_size(${this.workgroupSize})
fn main(${MAIN_ARGS}) {
  ${LINEAR_WG}
  let i = wg * ${this.workgroupSize}u + lid;
  if (i >= ${n * c * p.out[0] * p.out[1]}u) { return; }
  let ow = i32(i % ${p.out[1]}u);
  let r = i / ${p.out[1]}u;
  let oh = i32(r % ${p.out[0]}u);
  let pl = r / ${p.out[0]}u;
  let C = ${c}u;
  let H = ${h};
  let W = ${w};
  let base = ${u.ref('xOffset')} + i32(pl / C) * ${u.ref('xStrides', 0)} + i32(pl % C) * ${u.ref('xStrides', 1)};
  let sh = ${u.ref('xStrides', 2)};
  let sw = ${u.ref('xStrides', 3)};
  let h0 = oh * ${p.stride[0]} - ${p.padding[0]};
  let w0 = ow * ${p.stride[1]} - ${p.padding[1]};
  var acc = ${max ? '-inf_()' : '0.0'};
  var best = -1;
  for (var ki = 0; ki < ${kH}; ki++) {
    let y = h0 + ki * ${p.dilation[0]};
    if (y < 0 || y >= H) { continue; }
    for (var kj = 0; kj < ${kW}; kj++) {
      let x = w0 + kj * ${p.dilation[1]};
      if (x < 0 || x >= W) { continue; }
      let v = X[u32(base + y * sh + x * sw)];
      ${tap}
    }
  }
  ${max ? 'Y[i] = acc;\n  A[i] = best;' : 'Y[i] = acc / count_(oh, ow);'}
}`;
  }
}

export class PoolBackwardProgram implements Program {
  readonly key: string;
  readonly reads: number;
  readonly writes = 1;

  constructor(
    readonly p: PoolParams,
    readonly inShape: readonly number[],
    readonly workgroupSize: number,
  ) {
    this.key = `pool2d-bwd|${geometryKey(p)}|${inShape.join('x')}|wg${workgroupSize}`;
    this.reads = p.kind === 'max' ? 2 : 1;
  }

  uniforms(): Uniforms {
    return new Uniforms().i32('gOffset').i32('gStrides', 4).i32('aOffset').i32('aStrides', 4);
  }

  wgsl(u: Uniforms): string {
    const p = this.p;
    const max = p.kind === 'max';
    const [kH, kW] = p.kernel;
    const [n, c, h, w] = this.inShape;
    const add = max
      ? `if (A[u32(abase + oh * ${u.ref('aStrides', 2)} + ow * ${u.ref('aStrides', 3)})] == ${kW} * ki + kj) { acc += g; }`
      : 'acc += g / count_(oh, ow);';
    return `${paramsDecl(u.words)}
@group(0) @binding(1) var<storage, read> G: array<f32>;
${max ? '@group(0) @binding(2) var<storage, read> A: array<i32>;' : ''}
@group(0) @binding(${max ? 3 : 2}) var<storage, read_write> DX: array<f32>;
${max ? '' : countFn(p, this.inShape)}
@compute @workgroup_size(${this.workgroupSize})
fn main(${MAIN_ARGS}) {
  ${LINEAR_WG}
  let i = wg * ${this.workgroupSize}u + lid;
  if (i >= ${n * c * h * w}u) { return; }
  let W = ${w}u;
  let H = ${h}u;
  let C = ${c}u;
  let x = i32(i % W);
  let r = i / W;
  let y = i32(r % H);
  let pl = r / H;
  let b = i32(pl / C);
  let ch = i32(pl % C);
  let gbase = ${u.ref('gOffset')} + b * ${u.ref('gStrides', 0)} + ch * ${u.ref('gStrides', 1)};
  let abase = ${u.ref('aOffset')} + b * ${u.ref('aStrides', 0)} + ch * ${u.ref('aStrides', 1)};
  let oH = ${p.out[0]};
  let oW = ${p.out[1]};
  var acc = 0.0;
  for (var ki = 0; ki < ${kH}; ki++) {
    let ty = y + ${p.padding[0]} - ki * ${p.dilation[0]};
    if (ty < 0 || ty % ${p.stride[0]} != 0) { continue; }
    let oh = ty / ${p.stride[0]};
    if (oh >= oH) { continue; }
    for (var kj = 0; kj < ${kW}; kj++) {
      let tx = x + ${p.padding[1]} - kj * ${p.dilation[1]};
      if (tx < 0 || tx % ${p.stride[1]} != 0) { continue; }
      let ow = tx / ${p.stride[1]};
      if (ow >= oW) { continue; }
      let g = G[u32(gbase + oh * ${u.ref('gStrides', 2)} + ow * ${u.ref('gStrides', 3)})];
      ${add}
    }
  }
  DX[i] = acc;
}`;
  }
}

export function encodePool(
  rt: Runtime,
  x: PoolOperand,
  inShape: readonly number[],
  p: PoolParams,
  out: PooledBuffer,
  arg: PooledBuffer | null,
  wgSize: number,
): void {
  const total = inShape[0] * inShape[1] * p.out[0] * p.out[1];
  if (total === 0) return;
  const [n, c, h, w] = inShape;
  // The vector kernels read x as vec4s (the outputs are fresh and plain).
  if (fastPool2x2(p, inShape) && plainRows(x, n, c, h, w, 4))
    return encodeFastPool(rt, x, inShape, p.kind === 'max', out, arg, wgSize);
  const k = rt.program(new PoolProgram(p, inShape, wgSize));
  const b = rt.block(k);
  b.set('xOffset', x.offset).setAll('xStrides', x.strides);
  rt.dispatch(k, arg ? [x.buf, out, arg] : [x.buf, out], b.base, Math.ceil(total / wgSize));
}

export function encodePoolBackward(
  rt: Runtime,
  gy: PoolOperand,
  arg: PoolOperand | null,
  inShape: readonly number[],
  p: PoolParams,
  out: PooledBuffer,
  wgSize: number,
): void {
  const total = inShape.reduce((a, v) => a * v, 1);
  if (total === 0) return;
  const [n, c, h, w] = inShape;
  // The vector kernels read the gradient and taps as vec2s (dx is fresh and plain).
  const plainOut = (o: PoolOperand) => plainRows(o, n, c, h / 2, w / 2, 2);
  if (fastPool2x2(p, inShape) && plainOut(gy) && (!arg || plainOut(arg)))
    return encodeFastPoolBackward(rt, gy, arg, inShape, out, wgSize);
  const k = rt.program(new PoolBackwardProgram(p, inShape, wgSize));
  const b = rt.block(k);
  b.set('gOffset', gy.offset).setAll('gStrides', gy.strides);
  b.set('aOffset', arg ? arg.offset : 0).setAll('aStrides', arg ? arg.strides : [0, 0, 0, 0]);
  rt.dispatch(k, arg ? [gy.buf, arg.buf, out] : [gy.buf, out], b.base, Math.ceil(total / wgSize));
}
