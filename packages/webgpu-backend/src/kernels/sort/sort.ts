import type { DType } from '@surf/core';
import type { Runtime } from '../../runtime';
import type { PooledBuffer } from '../../pool';
import { FLOAT_HELPERS, LINEAR_WG, MAIN_ARGS, pU, paramsDecl, storageType } from '../wgsl';

/**
 * Bitonic sort of `rows` rows of length n (x contiguous, row-major). Each row is padded to
 * P = 2^ceil(log2 n) in scratch buffers K (keys) and V (original positions); every
 * compare-exchange stage of the network is one dispatch over all rows, so a row of n costs
 * log2(P)·(log2(P)+1)/2 dispatches. Bitonic networks are not stable, but comparing (key,
 * position) pairs is a total order, so the result is exactly the stable sort the CPU backend
 * computes. Padding entries (position >= n) sort after everything; NaN is the largest key.
 */
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
  const ty = storageType(dtype);
  const total = rows * P;
  const { u32 } = rt.words;

  const init = rt.kernel(
    `sort-init|${dtype}|wg${wgSize}`,
    1,
    2,
    3,
    () => `${paramsDecl(3)}
@group(0) @binding(1) var<storage, read> X: array<${ty}>;
@group(0) @binding(2) var<storage, read_write> K: array<${ty}>;
@group(0) @binding(3) var<storage, read_write> V: array<i32>;
@compute @workgroup_size(${wgSize})
fn main(${MAIN_ARGS}) {
  ${LINEAR_WG}
  let i = wg * ${wgSize}u + lid;
  if (i >= ${pU(0)}) { return; }
  let r = i / ${pU(1)};
  let c = i % ${pU(1)};
  var v: ${ty} = ${ty}(0);
  if (c < ${pU(2)}) { v = X[r * ${pU(2)} + c]; }
  K[i] = v;
  V[i] = i32(c);
}`,
  );
  let p = rt.params(init);
  u32[p] = total;
  u32[p + 1] = P;
  u32[p + 2] = n;
  rt.dispatch(init, [x, scratchK, scratchV], p, Math.ceil(total / wgSize));

  // a "after" b in the final order (keys ascending or descending, then position).
  const keyAfter =
    dtype === 'float32'
      ? descending
        ? 'if (isnan_(ka) || isnan_(kb)) { if (isnan_(ka) != isnan_(kb)) { return isnan_(kb); } } else if (ka != kb) { return ka < kb; }'
        : 'if (isnan_(ka) || isnan_(kb)) { if (isnan_(ka) != isnan_(kb)) { return isnan_(ka); } } else if (ka != kb) { return ka > kb; }'
      : `if (ka != kb) { return ka ${descending ? '<' : '>'} kb; }`;
  const step = rt.kernel(
    `sort-step|${dtype}|${descending ? 'desc' : 'asc'}|wg${wgSize}`,
    0,
    2,
    5,
    () => `${paramsDecl(5)}
${dtype === 'float32' ? FLOAT_HELPERS : ''}
@group(0) @binding(1) var<storage, read_write> K: array<${ty}>;
@group(0) @binding(2) var<storage, read_write> V: array<i32>;
fn after(ka: ${ty}, va: i32, kb: ${ty}, vb: i32) -> bool {
  let n = i32(${pU(2)});
  if (va >= n || vb >= n) { return va > vb; }
  ${keyAfter}
  return va > vb;
}
@compute @workgroup_size(${wgSize})
fn main(${MAIN_ARGS}) {
  ${LINEAR_WG}
  let i = wg * ${wgSize}u + lid;
  if (i >= ${pU(0)}) { return; }
  let l = i ^ ${pU(3)};
  if (l <= i) { return; }
  let up = ((i % ${pU(1)}) & ${pU(4)}) == 0u;
  let ka = K[i]; let va = V[i]; let kb = K[l]; let vb = V[l];
  if (after(ka, va, kb, vb) == up) {
    K[i] = kb; V[i] = vb; K[l] = ka; V[l] = va;
  }
}`,
  );
  for (let kk = 2; kk <= P; kk *= 2) {
    for (let j = kk >> 1; j > 0; j >>= 1) {
      p = rt.params(step);
      u32[p] = total;
      u32[p + 1] = P;
      u32[p + 2] = n;
      u32[p + 3] = j;
      u32[p + 4] = kk;
      rt.dispatch(step, [scratchK, scratchV], p, Math.ceil(total / wgSize));
    }
  }

  const fin = rt.kernel(
    `sort-out|${dtype}|wg${wgSize}`,
    2,
    2,
    3,
    () => `${paramsDecl(3)}
@group(0) @binding(1) var<storage, read> K: array<${ty}>;
@group(0) @binding(2) var<storage, read> V: array<i32>;
@group(0) @binding(3) var<storage, read_write> Y: array<${ty}>;
@group(0) @binding(4) var<storage, read_write> J: array<i32>;
@compute @workgroup_size(${wgSize})
fn main(${MAIN_ARGS}) {
  ${LINEAR_WG}
  let i = wg * ${wgSize}u + lid;
  if (i >= ${pU(0)}) { return; }
  let r = i / ${pU(2)};
  let s = r * ${pU(1)} + i % ${pU(2)};
  Y[i] = K[s];
  J[i] = V[s];
}`,
  );
  p = rt.params(fin);
  u32[p] = rows * n;
  u32[p + 1] = P;
  u32[p + 2] = n;
  rt.dispatch(fin, [scratchK, scratchV, values, indices], p, Math.ceil((rows * n) / wgSize));
}

/** The padded row length of the network: the next power of two. */
export function sortWidth(n: number): number {
  let P = 1;
  while (P < n) P *= 2;
  return P;
}
