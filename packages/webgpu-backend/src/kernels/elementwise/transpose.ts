import type { DType } from '@surf/core';
import { FLOAT_HELPERS, LINEAR_WG, MAIN_ARGS, paramsDecl, pU, storageType, valueType } from '../wgsl';
import type { Uniforms } from '../program';

/**
 * Elementwise kernels over a transposed view (`a.T * b + c` read the transposed
 * input one element per thread along its strided dim, 0.84x PyTorch). When the collapsed
 * shape is [R, C] and every strided input walks R contiguously (stride 1 along rows), a
 * workgroup of 256 threads takes a 32x32 tile: it stages each such input's tile in
 * workgroup memory reading along R (coalesced), then every thread produces 4 outputs along C
 * (coalesced stores and contiguous reads of the other inputs), taking the transposed values
 * from the staged tile. The tile's pitch is 33 so that the column reads fall in distinct banks.
 */
export const TILE = 32;
const PITCH = TILE + 1;
const ROWS_PER_PASS = 256 / TILE;

export interface TransposeInput {
  dtype: DType;
  kind: 'c' | 'b' | 's' | 'm' | 'z';
  strides: readonly number[];
  used: boolean;
}

/** Indices of the inputs to stage through the tile, or null when the tiled kernel does not apply. */
export function transposeTiles(
  shape: readonly number[],
  inputs: readonly TransposeInput[],
  wgSize: number,
): number[] | null {
  if (wgSize !== 256 || shape.length !== 2 || shape[0] < TILE || shape[1] < TILE) return null;
  const t: number[] = [];
  for (let i = 0; i < inputs.length; i++) {
    const x = inputs[i];
    if (!x.used || x.kind === 'z' || x.kind === 'c' || x.kind === 'b') continue;
    if (x.kind !== 's' || x.strides[0] !== 1 || Math.abs(x.strides[1]) < 2) return null;
    t.push(i);
  }
  return t.length > 0 && t.length <= 4 ? t : null;
}

export interface TransposeWgslArgs {
  u: Uniforms;
  inputs: readonly TransposeInput[];
  tiled: readonly number[];
  bindOf: readonly number[];
  boundDT: readonly DType[];
  outDT: readonly DType[];
  /** Names of input i's parameter words (offset, strides). */
  names: (i: number) => { Offset: string; Strides: string };
  /** Emits the expressions over values v0..vn; returns the statements and each output's value. */
  emit: (vals: string[]) => { lines: string[]; results: string[]; helpers: string };
}

/** Workgroups of the tiled kernel for collapsed shape [R, C]. */
export function transposeGroups(shape: readonly number[]): number {
  return Math.ceil(shape[0] / TILE) * Math.ceil(shape[1] / TILE);
}

export function transposeWgsl(a: TransposeWgslArgs): string {
  const { u, inputs, tiled, bindOf, boundDT, outDT, names } = a;
  const decl: string[] = [];
  boundDT.forEach((dt, j) =>
    decl.push(`@group(0) @binding(${j + 1}) var<storage, read> b${j}: array<${storageType(dt)}>;`),
  );
  outDT.forEach((dt, o) =>
    decl.push(
      `@group(0) @binding(${boundDT.length + 1 + o}) var<storage, read_write> out${o}: array<${storageType(dt)}>;`,
    ),
  );
  for (const i of tiled) decl.push(`var<workgroup> tile${i}: array<${storageType(inputs[i].dtype)}, ${TILE * PITCH}>;`);
  const R = u.ref('shape', 0),
    C = u.ref('shape', 1);
  const stage: string[] = [];
  for (let j = 0; j < TILE / ROWS_PER_PASS; j++) {
    const loads = tiled.map((i) => {
      const n = names(i);
      return `tile${i}[(ly + ${j * ROWS_PER_PASS}u) * ${PITCH}u + lx] = b${bindOf[i]}[u32(${u.ref(n.Offset)} + i32(r) * ${u.ref(n.Strides, 0)} + i32(c) * ${u.ref(n.Strides, 1)})];`;
    });
    stage.push(
      `{ let r = r0 + lx; let c = c0 + ly + ${j * ROWS_PER_PASS}u; if (r < ${R} && c < ${C}) { ${loads.join(' ')} } }`,
    );
  }
  const produce: string[] = [];
  let helpers = '';
  for (let j = 0; j < TILE / ROWS_PER_PASS; j++) {
    const lines: string[] = [];
    const vals: string[] = [];
    inputs.forEach((x, i) => {
      const ty = valueType(x.dtype);
      const zero = x.dtype === 'float32' ? '0.0' : x.dtype === 'int32' ? '0' : 'false';
      vals.push(`v${i}`);
      let raw: string | null = null;
      if (x.used && x.kind !== 'z') {
        const off = pU(u.word(names(i).Offset));
        raw = tiled.includes(i)
          ? `tile${i}[lx * ${PITCH}u + ly + ${j * ROWS_PER_PASS}u]`
          : x.kind === 'c'
            ? `b${bindOf[i]}[${off} + i]`
            : `b${bindOf[i]}[${off}]`;
      }
      lines.push(`let v${i}: ${ty} = ${raw === null ? zero : x.dtype === 'bool' ? `(${raw} != 0u)` : raw};`);
    });
    const em = a.emit(vals);
    helpers = em.helpers;
    lines.push(...em.lines);
    em.results.forEach((v, o) => lines.push(`out${o}[i] = ${outDT[o] === 'bool' ? `select(0u, 1u, ${v})` : v};`));
    produce.push(`{ let r = r0 + ly + ${j * ROWS_PER_PASS}u; let c = c0 + lx; if (r < ${R} && c < ${C}) {
    let i = r * ${C} + c;
    ${lines.join('\n    ')}
  } }`);
  }
  return `${paramsDecl(u.words)}
${decl.join('\n')}
${FLOAT_HELPERS}
${helpers}
@compute @workgroup_size(256)
fn main(${MAIN_ARGS}) {
  ${LINEAR_WG}
  let tilesC = (${C} + ${TILE - 1}u) / ${TILE}u;
  if (wg >= ((${R} + ${TILE - 1}u) / ${TILE}u) * tilesC) { return; }
  let r0 = (wg / tilesC) * ${TILE}u;
  let c0 = (wg % tilesC) * ${TILE}u;
  let lx = lid % ${TILE}u;
  let ly = lid / ${TILE}u;
  ${stage.join('\n  ')}
  workgroupBarrier();
  ${produce.join('\n  ')}
}`;
}
