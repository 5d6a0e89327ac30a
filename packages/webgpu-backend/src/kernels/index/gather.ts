import type { DType } from '@surf/core';
import type { Runtime } from '../../runtime';
import type { PooledBuffer } from '../../pool';
import { Program, Uniforms } from '../program';
import { LINEAR_WG, MAIN_ARGS, paramsDecl, storageType } from '../wgsl';

/**
 * Row gather: one thread per output element. The output index is split into digits over the
 * output shape; the digit on `axis` picks an entry of the index vector, which replaces it
 * before the source offset is formed from the source's strides. An index outside
 * [0, rows) reads 0.
 */
export interface GatherSource {
  buf: PooledBuffer;
  dtype: DType;
  offset: number;
  strides: readonly number[];
  shape: readonly number[];
}

export interface GatherIndex {
  buf: PooledBuffer;
  offset: number;
  stride: number;
  length: number;
}

export class GatherProgram implements Program {
  readonly key: string;
  readonly reads: number;
  readonly writes = 1;
  /** Source and index share one int32 buffer: bound once. */
  readonly same: boolean;
  readonly rank: number;

  constructor(
    readonly dtype: DType,
    rank: number,
    readonly axis: number,
    same: boolean,
    readonly workgroupSize: number,
  ) {
    this.rank = rank;
    this.same = same;
    this.reads = same ? 1 : 2;
    this.key = `gather|${dtype}|r${rank}|a${axis}|${same ? 'same' : 'two'}|wg${workgroupSize}`;
  }

  uniforms(): Uniforms {
    return new Uniforms()
      .u32('total')
      .u32('rows')
      .i32('xOffset')
      .i32('iOffset')
      .i32('iStride')
      .u32('outShape', this.rank)
      .i32('xStrides', this.rank);
  }

  wgsl(u: Uniforms): string {
    const { rank, axis, same, workgroupSize: wgSize } = this;
    const ty = storageType(this.dtype);
    const I = same ? 'X' : 'I';
    const lines: string[] = [`var r = i;`, `var o = ${u.ref('xOffset')};`, `var ok = true;`];
    for (let d = rank - 1; d >= 0; d--) {
      lines.push(d > 0 ? `var d${d} = r % ${u.ref('outShape', d)}; r = r / ${u.ref('outShape', d)};` : `var d0 = r;`);
    }
    lines.push(`let row = ${I}[u32(${u.ref('iOffset')} + i32(d${axis}) * ${u.ref('iStride')})];`);
    lines.push(`ok = row >= 0 && row < i32(${u.ref('rows')});`);
    for (let d = 0; d < rank; d++)
      lines.push(d === axis ? `o += row * ${u.ref('xStrides', d)};` : `o += i32(d${d}) * ${u.ref('xStrides', d)};`);
    return `${paramsDecl(u.words)}
@group(0) @binding(1) var<storage, read> X: array<${ty}>;
${same ? '' : '@group(0) @binding(2) var<storage, read> I: array<i32>;'}
@group(0) @binding(${same ? 2 : 3}) var<storage, read_write> Y: array<${ty}>;
@compute @workgroup_size(${wgSize})
fn main(${MAIN_ARGS}) {
  ${LINEAR_WG}
  let i = wg * ${wgSize}u + lid;
  if (i >= ${u.ref('total')}) { return; }
  ${lines.join('\n  ')}
  var v: ${ty} = ${ty}(0);
  if (ok) { v = X[u32(o)]; }
  Y[i] = v;
}`;
  }
}

export function encodeGather(
  rt: Runtime,
  x: GatherSource,
  axis: number,
  idx: GatherIndex,
  out: PooledBuffer,
  wgSize: number,
): void {
  const rank = x.shape.length;
  const outShape = x.shape.slice();
  outShape[axis] = idx.length;
  const total = outShape.reduce((a, b) => a * b, 1);
  if (total === 0) return;
  const same = x.buf === idx.buf && x.dtype === 'int32';
  const k = rt.program(new GatherProgram(x.dtype, rank, axis, same, wgSize));
  const p = rt.block(k);
  p.set('total', total)
    .set('rows', x.shape[axis])
    .set('xOffset', x.offset)
    .set('iOffset', idx.offset)
    .set('iStride', idx.stride);
  p.setAll('outShape', outShape).setAll('xStrides', x.strides);
  rt.dispatch(k, same ? [x.buf, out] : [x.buf, idx.buf, out], p.base, Math.ceil(total / wgSize));
}
