import type { DType } from '@surf/core';
import type { Runtime } from '../runtime';
import type { PooledBuffer } from '../pool';
import { LINEAR_WG, MAIN_ARGS, pI, pU, paramsDecl, storageType } from './wgsl';

/**
 * Row gather: one thread per output element. The output index is split into digits over the
 * output shape; the digit on `axis` picks an entry of the index vector, which replaces it
 * before the source offset is formed from the source's strides. An index outside
 * [0, rows) reads 0.
 */
export function encodeGather(
  rt: Runtime, x: { buf: PooledBuffer; dtype: DType; offset: number; strides: readonly number[]; shape: readonly number[] },
  axis: number, idx: { buf: PooledBuffer; offset: number; stride: number; length: number }, out: PooledBuffer, wgSize: number,
): void {
  const rank = x.shape.length;
  const outShape = x.shape.slice();
  outShape[axis] = idx.length;
  const total = outShape.reduce((a, b) => a * b, 1);
  if (total === 0) return;
  // Words: total, rows, xOff, iOff, iStride, shape[rank], strides[rank]
  const words = 5 + 2 * rank;
  const same = x.buf === idx.buf && x.dtype === 'int32';
  const key = `gather|${x.dtype}|r${rank}|a${axis}|${same ? 'same' : 'two'}|wg${wgSize}`;
  const k = rt.kernel(key, same ? 1 : 2, 1, words, () => {
    const ty = storageType(x.dtype);
    const lines: string[] = [`var r = i;`, `var o = ${pI(2)};`, `var ok = true;`];
    for (let d = rank - 1; d >= 0; d--) {
      lines.push(d > 0 ? `var d${d} = r % ${pU(5 + d)}; r = r / ${pU(5 + d)};` : `var d0 = r;`);
    }
    lines.push(`let row = I[u32(${pI(3)} + i32(d${axis}) * ${pI(4)})];`);
    lines.push(`ok = row >= 0 && row < i32(${pU(1)});`);
    for (let d = 0; d < rank; d++) lines.push(d === axis ? `o += row * ${pI(5 + rank + d)};` : `o += i32(d${d}) * ${pI(5 + rank + d)};`);
    return `${paramsDecl(words)}
@group(0) @binding(1) var<storage, read> X: array<${ty}>;
${same ? '' : '@group(0) @binding(2) var<storage, read> I: array<i32>;'}
@group(0) @binding(${same ? 2 : 3}) var<storage, read_write> Y: array<${ty}>;
@compute @workgroup_size(${wgSize})
fn main(${MAIN_ARGS}) {
  ${LINEAR_WG}
  let i = wg * ${wgSize}u + lid;
  if (i >= ${pU(0)}) { return; }
  ${lines.join('\n  ').replace(/\bI\[/g, same ? 'X[' : 'I[')}
  var v: ${ty} = ${ty}(0);
  if (ok) { v = X[u32(o)]; }
  Y[i] = v;
}`;
  });
  const p = rt.params(k);
  const { u32, i32 } = rt.words;
  u32[p] = total;
  u32[p + 1] = x.shape[axis];
  i32[p + 2] = x.offset;
  i32[p + 3] = idx.offset;
  i32[p + 4] = idx.stride;
  for (let d = 0; d < rank; d++) {
    u32[p + 5 + d] = outShape[d];
    i32[p + 5 + rank + d] = x.strides[d];
  }
  rt.dispatch(k, same ? [x.buf, out] : [x.buf, idx.buf, out], p, Math.ceil(total / wgSize));
}
