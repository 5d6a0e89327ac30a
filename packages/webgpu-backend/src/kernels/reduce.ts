import type { DType, ReduceOp } from '@surf/core';
import type { Runtime } from '../runtime';
import type { PooledBuffer } from '../pool';
import { LINEAR_WG, MAIN_ARGS, FLOAT_HELPERS, pI, pU, paramsDecl, storageType } from './wgsl';

/**
 * Reductions. The input is seen as [outputs, reduced] (kept dims, then reduced dims, each
 * group collapsed). T threads cooperate on one output: each folds a strided run of the
 * reduced elements into a register, then the T partials meet in a tree in workgroup memory
 * (log2 T barriers). A workgroup of WG threads serves WG/T outputs, so few large reductions
 * and many small ones both keep every thread busy. Threads of one output are adjacent when
 * the reduced dim is the one contiguous in memory (row layout) and interleaved when a kept
 * dim is (column layout), so neighbouring threads read neighbouring addresses either way.
 *
 * Few outputs with long reductions (16M elements to 1) would leave the GPU idle, so the
 * reduced range is first split into C chunks written as partials [outputs, C], which a
 * second pass (the same kernel) reduces.
 */
export interface ReduceDesc {
  buf: PooledBuffer;
  dtype: DType;
  offset: number;
  kept: { shape: number[]; strides: number[] };
  red: { shape: number[]; strides: number[] };
}

const PER_THREAD = 32;

function merge(shape: number[], strides: number[]): { shape: number[]; strides: number[] } {
  const sh: number[] = [];
  const st: number[] = [];
  shape.forEach((d, i) => {
    if (d === 1) return;
    const n = sh.length;
    if (n && st[n - 1] === strides[i] * d) {
      sh[n - 1] *= d;
      st[n - 1] = strides[i];
    } else {
      sh.push(d);
      st.push(strides[i]);
    }
  });
  return { shape: sh, strides: st };
}

/** The collapsed [kept, reduced] description of reducing a view over `axes`. */
export function describeReduce(buf: PooledBuffer, dtype: DType, shape: readonly number[], strides: readonly number[], offset: number, axes: readonly number[]): ReduceDesc {
  const keptIdx = shape.map((_, d) => d).filter((d) => !axes.includes(d));
  // Reduced dims in order of decreasing |stride|, so the innermost is the densest (sum and max do not care about order).
  const redIdx = axes.slice().sort((a, b) => Math.abs(strides[b]) - Math.abs(strides[a]));
  return {
    buf,
    dtype,
    offset,
    kept: merge(keptIdx.map((d) => shape[d]), keptIdx.map((d) => strides[d])),
    red: merge(redIdx.map((d) => shape[d]), redIdx.map((d) => strides[d])),
  };
}

export function encodeReduce(rt: Runtime, op: ReduceOp, x: ReduceDesc, out: PooledBuffer, wgSize: number): void {
  const outN = x.kept.shape.reduce((a, b) => a * b, 1);
  const redN = x.red.shape.reduce((a, b) => a * b, 1);
  if (outN === 0) return;
  let T = 1;
  while (T < redN && T < wgSize) T *= 2;
  let C = 1;
  if (Math.ceil(redN / T) > PER_THREAD && outN < 4096) {
    C = Math.min(Math.ceil(redN / (T * PER_THREAD)), Math.ceil(16384 / outN));
  }
  const L = Math.max(1, Math.ceil(redN / C));
  C = Math.max(1, Math.ceil(redN / L));
  if (C > 1) {
    const partial = rt.alloc(outN * C * 4);
    run(rt, op, x, partial, outN, redN, T, C, L, wgSize);
    const second: ReduceDesc = { buf: partial, dtype: x.dtype, offset: 0, kept: merge([outN], [C]), red: { shape: [C], strides: [1] } };
    encodeReduce(rt, op, second, out, wgSize);
    // Later dispatches that reuse the buffer run after this one (same queue order).
    rt.release(partial);
    return;
  }
  run(rt, op, x, out, outN, redN, T, 1, Math.max(redN, 1), wgSize);
}

function run(rt: Runtime, op: ReduceOp, x: ReduceDesc, out: PooledBuffer, outN: number, redN: number, T: number, C: number, L: number, wgSize: number): void {
  const kr = x.kept.shape.length;
  const rr = x.red.shape.length;
  const S = wgSize / T;
  const innerKept = kr ? Math.abs(x.kept.strides[kr - 1]) : Infinity;
  const innerRed = rr ? Math.abs(x.red.strides[rr - 1]) : Infinity;
  const col = S > 1 && innerKept < innerRed;
  const words = 5 + 2 * kr + 2 * rr;
  const key = `red|${op}|${x.dtype}|k${kr}|r${rr}|T${T}|S${S}|${col ? 'col' : 'row'}`;
  const k = rt.kernel(key, 1, 1, words, () => {
    const ty = storageType(x.dtype);
    const f = x.dtype === 'float32';
    const ident = op === 'sum' ? (f ? '0.0' : '0') : f ? '-inf_()' : 'bitcast<i32>(0x80000000u)';
    const comb = (a: string, b: string) => (op === 'sum' ? `${a} + ${b}` : f ? `fmax_(${a}, ${b})` : `max(${a}, ${b})`);
    const KS = 5, KT = 5 + kr, RS = 5 + 2 * kr, RT = 5 + 2 * kr + rr;
    const base: string[] = [`var base = ${pI(4)};`];
    if (kr) {
      base.push(`var q = o;`);
      for (let d = kr - 1; d >= 0; d--) {
        base.push(d > 0 ? `base += i32(q % ${pU(KS + d)}) * ${pI(KT + d)}; q = q / ${pU(KS + d)};` : `base += i32(q) * ${pI(KT)};`);
      }
    }
    let roff: string;
    const rlines: string[] = [];
    if (rr === 0) roff = '0';
    else if (rr === 1) roff = `i32(r) * ${pI(RT)}`;
    else {
      rlines.push(`var s = r; var ro = 0;`);
      for (let d = rr - 1; d >= 0; d--) {
        rlines.push(d > 0 ? `ro += i32(s % ${pU(RS + d)}) * ${pI(RT + d)}; s = s / ${pU(RS + d)};` : `ro += i32(s) * ${pI(RT)};`);
      }
      roff = 'ro';
    }
    const step = col ? S : 1;
    const tree: string[] = [];
    for (let s = T / 2; s >= 1; s /= 2) {
      tree.push(`if (lane < ${s}u) { sh[lid] = ${comb('sh[lid]', `sh[lid + ${s * step}u]`)}; }`);
      tree.push(`workgroupBarrier();`);
    }
    return `${paramsDecl(words)}
@group(0) @binding(1) var<storage, read> x: array<${ty}>;
@group(0) @binding(2) var<storage, read_write> y: array<${ty}>;
var<workgroup> sh: array<${ty}, ${wgSize}>;
${f ? FLOAT_HELPERS : ''}
@compute @workgroup_size(${wgSize})
fn main(${MAIN_ARGS}) {
  ${LINEAR_WG}
  let seg = ${col ? `lid % ${S}u` : `lid / ${T}u`};
  let lane = ${col ? `lid / ${S}u` : `lid % ${T}u`};
  let v = wg * ${S}u + seg;
  var acc: ${ty} = ${ident};
  if (v < ${pU(0)}) {
    let o = v / ${pU(1)};
    let c = v - o * ${pU(1)};
    ${base.join('\n    ')}
    let r1 = min(c * ${pU(2)} + ${pU(2)}, ${pU(3)});
    for (var r = c * ${pU(2)} + lane; r < r1; r += ${T}u) {
      ${rlines.join('\n      ')}
      acc = ${comb('acc', `x[u32(base + ${roff})]`)};
    }
  }
  sh[lid] = acc;
  workgroupBarrier();
  ${tree.join('\n  ')}
  if (lane == 0u && v < ${pU(0)}) { y[v] = sh[lid]; }
}`;
  });
  const b = rt.params(k);
  const { u32, i32 } = rt.words;
  u32[b] = outN * C;
  u32[b + 1] = C;
  u32[b + 2] = L;
  u32[b + 3] = redN;
  i32[b + 4] = x.offset;
  for (let d = 0; d < kr; d++) {
    u32[b + 5 + d] = x.kept.shape[d];
    i32[b + 5 + kr + d] = x.kept.strides[d];
  }
  for (let d = 0; d < rr; d++) {
    u32[b + 5 + 2 * kr + d] = x.red.shape[d];
    i32[b + 5 + 2 * kr + rr + d] = x.red.strides[d];
  }
  rt.dispatch(k, [x.buf, out], b, Math.ceil((outN * C) / S));
}
