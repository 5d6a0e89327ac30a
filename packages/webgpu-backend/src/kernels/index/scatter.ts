import type { DType, ScatterMode } from '@surf/core';
import type { Runtime } from '../../runtime';
import type { PooledBuffer } from '../../pool';
import { LINEAR_WG, MAIN_ARGS, paramsDecl, storageType } from '../wgsl';
import { Program, Uniforms } from '../program';

/** A 1-d operand of scatter: a buffer read at offset + i * stride. */
export interface ScatterOperand {
  buf: PooledBuffer;
  offset: number;
  stride: number;
}

/**
 * Scatter into `out`, which already holds a copy of the base: one thread per source element.
 * 'set' is a plain store (duplicates race; one wins). 'add' must not lose updates from other
 * threads: int32 uses atomicAdd; float32 has no atomic add in WGSL, so it is a compare-and-swap
 * loop on the bits (atomic<u32>), retrying with the value another thread just wrote.
 */
export class ScatterProgram implements Program {
  readonly key: string;
  readonly reads = 2;
  readonly writes = 1;

  constructor(
    readonly mode: ScatterMode,
    readonly dtype: DType,
    readonly workgroupSize: number,
  ) {
    this.key = `scatter|${mode}|${dtype}|wg${workgroupSize}`;
  }

  uniforms(): Uniforms {
    return new Uniforms().u32('n').u32('size').i32('iOffset').i32('iStride').i32('sOffset').i32('sStride');
  }

  wgsl(u: Uniforms): string {
    const { mode, dtype, workgroupSize: wgSize } = this;
    const ty = storageType(dtype);
    const outTy = mode === 'set' ? ty : dtype === 'float32' ? 'atomic<u32>' : 'atomic<i32>';
    let store: string;
    if (mode === 'set') store = 'Y[p] = v;';
    else if (dtype === 'int32') store = 'atomicAdd(&Y[p], v);';
    else {
      store = `var old = atomicLoad(&Y[p]);
  loop {
    let r = atomicCompareExchangeWeak(&Y[p], old, bitcast<u32>(bitcast<f32>(old) + v));
    if (r.exchanged) { break; }
    old = r.old_value;
  }`;
    }
    return `${paramsDecl(u.words)}
@group(0) @binding(1) var<storage, read> I: array<i32>;
@group(0) @binding(2) var<storage, read> S: array<${ty}>;
@group(0) @binding(3) var<storage, read_write> Y: array<${outTy}>;
@compute @workgroup_size(${wgSize})
fn main(${MAIN_ARGS}) {
  ${LINEAR_WG}
  let i = wg * ${wgSize}u + lid;
  if (i >= ${u.ref('n')}) { return; }
  let q = I[u32(${u.ref('iOffset')} + i32(i) * ${u.ref('iStride')})];
  if (q < 0 || u32(q) >= ${u.ref('size')}) { return; }
  let p = u32(q);
  let v = S[u32(${u.ref('sOffset')} + i32(i) * ${u.ref('sStride')})];
  ${store}
}`;
  }
}

export function encodeScatter(
  rt: Runtime,
  mode: ScatterMode,
  dtype: DType,
  n: number,
  size: number,
  idx: ScatterOperand,
  src: ScatterOperand,
  out: PooledBuffer,
  wgSize: number,
): void {
  if (n === 0 || size === 0) return;
  const k = rt.program(new ScatterProgram(mode, dtype, wgSize));
  const p = rt.block(k);
  p.set('n', n)
    .set('size', size)
    .set('iOffset', idx.offset)
    .set('iStride', idx.stride)
    .set('sOffset', src.offset)
    .set('sStride', src.stride);
  rt.dispatch(k, [idx.buf, src.buf, out], p.base, Math.ceil(n / wgSize));
}
