import type { DType, ScatterMode } from '@surf/core';
import type { Runtime } from '../../runtime';
import type { PooledBuffer } from '../../pool';
import { LINEAR_WG, MAIN_ARGS, pI, pU, paramsDecl, storageType } from '../wgsl';

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
  // Words: n, size, iOff, iStride, sOff, sStride
  const words = 6;
  const key = `scatter|${mode}|${dtype}|wg${wgSize}`;
  const k = rt.kernel(key, 2, 1, words, () => {
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
    return `${paramsDecl(words)}
@group(0) @binding(1) var<storage, read> I: array<i32>;
@group(0) @binding(2) var<storage, read> S: array<${ty}>;
@group(0) @binding(3) var<storage, read_write> Y: array<${outTy}>;
@compute @workgroup_size(${wgSize})
fn main(${MAIN_ARGS}) {
  ${LINEAR_WG}
  let i = wg * ${wgSize}u + lid;
  if (i >= ${pU(0)}) { return; }
  let q = I[u32(${pI(2)} + i32(i) * ${pI(3)})];
  if (q < 0 || u32(q) >= ${pU(1)}) { return; }
  let p = u32(q);
  let v = S[u32(${pI(4)} + i32(i) * ${pI(5)})];
  ${store}
}`;
  });
  const p = rt.params(k);
  const { u32, i32 } = rt.words;
  u32[p] = n;
  u32[p + 1] = size;
  i32[p + 2] = idx.offset;
  i32[p + 3] = idx.stride;
  i32[p + 4] = src.offset;
  i32[p + 5] = src.stride;
  rt.dispatch(k, [idx.buf, src.buf, out], p, Math.ceil(n / wgSize));
}
