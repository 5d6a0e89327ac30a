import type { DType } from '@surf/core';
import type { Runtime } from '../../runtime';
import type { PooledBuffer } from '../../pool';
import { FLOAT_HELPERS, LINEAR_WG, MAIN_ARGS, paramsDecl, storageType } from '../wgsl';
import { Program, Uniforms } from '../program';

/**
 * Bitonic sort of `rows` rows of length n (x contiguous, row-major). Each row is padded to
 * P = 2^ceil(log2 n) in scratch buffers K (keys) and V (original positions); every
 * compare-exchange stage of the network is one dispatch over all rows, so a row of n costs
 * log2(P)·(log2(P)+1)/2 dispatches. Bitonic networks are not stable, but comparing (key,
 * position) pairs is a total order, so the result is exactly the stable sort the CPU backend
 * computes. Padding entries (position >= n) sort after everything; NaN is the largest key.
 * Three programs: SortInitProgram, SortStepProgram per stage, SortOutProgram (encodeSort).
 */

/** Pads each row to P into K (keys) and V (positions); padding keys are 0, positions >= n. */
export class SortInitProgram implements Program {
  readonly key: string;
  readonly reads = 1;
  readonly writes = 2;

  constructor(
    readonly dtype: DType,
    readonly workgroupSize: number,
  ) {
    this.key = `sort-init|${dtype}|wg${workgroupSize}`;
  }

  uniforms(): Uniforms {
    return new Uniforms().u32('total').u32('P').u32('n');
  }

  wgsl(u: Uniforms): string {
    const ty = storageType(this.dtype);
    const wgSize = this.workgroupSize;
    return `${paramsDecl(u.words)}
@group(0) @binding(1) var<storage, read> X: array<${ty}>;
@group(0) @binding(2) var<storage, read_write> K: array<${ty}>;
@group(0) @binding(3) var<storage, read_write> V: array<i32>;
@compute @workgroup_size(${wgSize})
fn main(${MAIN_ARGS}) {
  ${LINEAR_WG}
  let i = wg * ${wgSize}u + lid;
  if (i >= ${u.ref('total')}) { return; }
  let r = i / ${u.ref('P')};
  let c = i % ${u.ref('P')};
  var v: ${ty} = ${ty}(0);
  if (c < ${u.ref('n')}) { v = X[r * ${u.ref('n')} + c]; }
  K[i] = v;
  V[i] = i32(c);
}`;
  }
}

/** One compare-exchange stage (partner distance j, bitonic block k) over every row. */
export class SortStepProgram implements Program {
  readonly key: string;
  readonly reads = 0;
  readonly writes = 2;

  constructor(
    readonly dtype: DType,
    readonly descending: boolean,
    readonly workgroupSize: number,
  ) {
    this.key = `sort-step|${dtype}|${descending ? 'desc' : 'asc'}|wg${workgroupSize}`;
  }

  uniforms(): Uniforms {
    return new Uniforms().u32('total').u32('P').u32('n').u32('j').u32('k');
  }

  wgsl(u: Uniforms): string {
    const { dtype, descending } = this;
    const ty = storageType(dtype);
    const wgSize = this.workgroupSize;
    // a "after" b in the final order (keys ascending or descending, then position).
    const keyAfter =
      dtype === 'float32'
        ? descending
          ? 'if (isnan_(ka) || isnan_(kb)) { if (isnan_(ka) != isnan_(kb)) { return isnan_(kb); } } else if (ka != kb) { return ka < kb; }'
          : 'if (isnan_(ka) || isnan_(kb)) { if (isnan_(ka) != isnan_(kb)) { return isnan_(ka); } } else if (ka != kb) { return ka > kb; }'
        : `if (ka != kb) { return ka ${descending ? '<' : '>'} kb; }`;
    return `${paramsDecl(u.words)}
${dtype === 'float32' ? FLOAT_HELPERS : ''}
@group(0) @binding(1) var<storage, read_write> K: array<${ty}>;
@group(0) @binding(2) var<storage, read_write> V: array<i32>;
fn after(ka: ${ty}, va: i32, kb: ${ty}, vb: i32) -> bool {
  let n = i32(${u.ref('n')});
  if (va >= n || vb >= n) { return va > vb; }
  ${keyAfter}
  return va > vb;
}
@compute @workgroup_size(${wgSize})
fn main(${MAIN_ARGS}) {
  ${LINEAR_WG}
  let i = wg * ${wgSize}u + lid;
  if (i >= ${u.ref('total')}) { return; }
  let l = i ^ ${u.ref('j')};
  if (l <= i) { return; }
  let up = ((i % ${u.ref('P')}) & ${u.ref('k')}) == 0u;
  let ka = K[i]; let va = V[i]; let kb = K[l]; let vb = V[l];
  if (after(ka, va, kb, vb) == up) {
    K[i] = kb; V[i] = vb; K[l] = ka; V[l] = va;
  }
}`;
  }
}

/** Copies each row's first n sorted entries out: values and their original positions. */
export class SortOutProgram implements Program {
  readonly key: string;
  readonly reads = 2;
  readonly writes = 2;

  constructor(
    readonly dtype: DType,
    readonly workgroupSize: number,
  ) {
    this.key = `sort-out|${dtype}|wg${workgroupSize}`;
  }

  uniforms(): Uniforms {
    return new Uniforms().u32('total').u32('P').u32('n');
  }

  wgsl(u: Uniforms): string {
    const ty = storageType(this.dtype);
    const wgSize = this.workgroupSize;
    return `${paramsDecl(u.words)}
@group(0) @binding(1) var<storage, read> K: array<${ty}>;
@group(0) @binding(2) var<storage, read> V: array<i32>;
@group(0) @binding(3) var<storage, read_write> Y: array<${ty}>;
@group(0) @binding(4) var<storage, read_write> J: array<i32>;
@compute @workgroup_size(${wgSize})
fn main(${MAIN_ARGS}) {
  ${LINEAR_WG}
  let i = wg * ${wgSize}u + lid;
  if (i >= ${u.ref('total')}) { return; }
  let r = i / ${u.ref('n')};
  let s = r * ${u.ref('P')} + i % ${u.ref('n')};
  Y[i] = K[s];
  J[i] = V[s];
}`;
  }
}

export function encodeSort(
  rt: Runtime,
  dtype: DType,
  x: PooledBuffer,
  n: number,
  rows: number,
  descending: boolean,
  scratchK: PooledBuffer,
  scratchV: PooledBuffer,
  values: PooledBuffer,
  indices: PooledBuffer,
  wgSize: number,
): void {
  if (n === 0 || rows === 0) return;
  const P = sortWidth(n);
  const total = rows * P;

  const init = rt.program(new SortInitProgram(dtype, wgSize));
  const pi = rt.block(init).set('total', total).set('P', P).set('n', n);
  rt.dispatch(init, [x, scratchK, scratchV], pi.base, Math.ceil(total / wgSize));

  const step = rt.program(new SortStepProgram(dtype, descending, wgSize));
  for (let kk = 2; kk <= P; kk *= 2) {
    for (let j = kk >> 1; j > 0; j >>= 1) {
      const ps = rt.block(step).set('total', total).set('P', P).set('n', n).set('j', j).set('k', kk);
      rt.dispatch(step, [scratchK, scratchV], ps.base, Math.ceil(total / wgSize));
    }
  }

  const fin = rt.program(new SortOutProgram(dtype, wgSize));
  const po = rt
    .block(fin)
    .set('total', rows * n)
    .set('P', P)
    .set('n', n);
  rt.dispatch(fin, [scratchK, scratchV, values, indices], po.base, Math.ceil((rows * n) / wgSize));
}

/** The padded row length of the network: the next power of two. */
export function sortWidth(n: number): number {
  let P = 1;
  while (P < n) P *= 2;
  return P;
}
