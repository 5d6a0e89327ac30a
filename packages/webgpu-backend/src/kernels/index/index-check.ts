import type { Runtime } from '../../runtime';
import type { PooledBuffer } from '../../pool';
import { Program, Uniforms } from '../program';
import { LINEAR_WG, MAIN_ARGS, paramsDecl } from '../wgsl';

/**
 * A device-side assert on int32 indices: one thread per index; an index outside [lo, hi)
 * sets its check's slot in the backend's error-flag buffer (device-flag.ts) with atomics:
 * word 0 marks the failure, word 1 keeps the first bad position (as the max of its
 * complement, so a cleared slot of zeros is the identity), words 2 and 3 the largest and
 * smallest bad value (order-preserving u32 images of the i32). A valid index writes
 * nothing, so the check costs one small read-only pass over the indices.
 */
/**
 * WGSL: records a failed index `v` at position `at` in flag slot `slot` of the storage array
 * `F` of atomic u32 (the encoding above; shared by every kernel with a device-side check).
 */
export const FLAG_FAIL = `fn flagFail_(slot: u32, at: u32, v: i32) {
  let s = slot * 4u;
  let o = bitcast<u32>(v) ^ 0x80000000u;
  atomicMax(&F[s], 1u);
  atomicMax(&F[s + 1u], ~at);
  atomicMax(&F[s + 2u], o);
  atomicMax(&F[s + 3u], ~o);
}`;

export class IndexCheckProgram implements Program {
  readonly key: string;
  readonly reads = 1;
  readonly writes = 1;

  constructor(readonly workgroupSize: number) {
    this.key = `indexCheck|wg${workgroupSize}`;
  }

  uniforms(): Uniforms {
    return new Uniforms().u32('total').i32('iOffset').i32('iStride').i32('lo').i32('hi').u32('slot');
  }

  wgsl(u: Uniforms): string {
    const wg = this.workgroupSize;
    return `${paramsDecl(u.words)}
@group(0) @binding(1) var<storage, read> I: array<i32>;
@group(0) @binding(2) var<storage, read_write> F: array<atomic<u32>>;
@compute @workgroup_size(${wg})
fn main(${MAIN_ARGS}) {
  ${LINEAR_WG}
  let i = wg * ${wg}u + lid;
  if (i >= ${u.ref('total')}) { return; }
  let v = I[u32(${u.ref('iOffset')} + i32(i) * ${u.ref('iStride')})];
  if (v < ${u.ref('lo')} || v >= ${u.ref('hi')}) { flagFail_(${u.ref('slot')}, i, v); }
}
${FLAG_FAIL}`;
  }
}

export interface IndexOperand {
  buf: PooledBuffer;
  offset: number;
  stride: number;
  length: number;
}

export function encodeIndexCheck(
  rt: Runtime,
  idx: IndexOperand,
  lo: number,
  hi: number,
  flag: PooledBuffer,
  slot: number,
  wgSize: number,
): void {
  if (idx.length === 0) return;
  const k = rt.program(new IndexCheckProgram(wgSize));
  const p = rt.block(k);
  p.set('total', idx.length)
    .set('iOffset', idx.offset)
    .set('iStride', idx.stride)
    .set('lo', lo)
    .set('hi', hi)
    .set('slot', slot);
  rt.dispatch(k, [idx.buf, flag], p.base, Math.ceil(idx.length / wgSize));
}
