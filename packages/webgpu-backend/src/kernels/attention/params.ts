import type { Runtime } from '../../runtime';
import type { PooledBuffer } from '../../pool';
import { Uniforms } from '../program';
import type { AttnDims, AttnOperand } from './types';

/** A kernel's parameters by name: the layout (Uniforms) and this dispatch's values. */
export class Params {
  readonly layout = new Uniforms();
  readonly values: [string, number][] = [];
  add(name: string, kind: 'u' | 'i' | 'f', v: number): void {
    this.layout.add(name, kind === 'u' ? 'u32' : kind === 'i' ? 'i32' : 'f32');
    this.values.push([name, v]);
  }
  u(name: string): string {
    return this.layout.ref(name);
  }
  i(name: string): string {
    return this.layout.ref(name);
  }
  f(name: string): string {
    return this.layout.ref(name);
  }
  get words(): number {
    return this.layout.words;
  }
}

/** Every attention kernel's sizes: L, S, the batch count B, the scale, the batch shape. */
export function commonParams(dims: AttnDims, scale: number): Params {
  const p = new Params();
  p.add('L', 'u', dims.L);
  p.add('S', 'u', dims.S);
  p.add(
    'B',
    'u',
    dims.batch.reduce((a, c) => a * c, 1),
  );
  p.add('scale', 'f', scale);
  dims.batch.forEach((d, i) => p.add(`bs${i}`, 'u', d));
  return p;
}

/** An operand's offset and strides (batch dims, row, and the column stride when hasCol). */
export function operandParams(p: Params, name: string, x: AttnOperand, nb: number, hasCol: boolean): void {
  p.add(`${name}.off`, 'i', x.offset);
  for (let d = 0; d < nb; d++) p.add(`${name}.b${d}`, 'i', x.strides[d]);
  p.add(`${name}.rs`, 'i', x.strides[nb]);
  if (hasCol) p.add(`${name}.cs`, 'i', x.strides[nb + 1]);
}

/**
 * Runs an attention kernel as a Program (kernels/program.ts): the key names everything the
 * WGSL depends on (the parameter layout included), the values are written by name.
 */
export function launch(
  rt: Runtime,
  key: string,
  reads: number,
  writes: number,
  workgroupSize: number,
  p: Params,
  wgsl: () => string,
  bufs: readonly PooledBuffer[],
  groups: number,
): void {
  const k = rt.program({ key, reads, writes, workgroupSize, uniforms: () => p.layout, wgsl });
  const blk = rt.block(k);
  for (const [name, v] of p.values) blk.set(name, v);
  rt.dispatch(k, bufs, blk.base, groups);
}

/** WGSL: `let <name>B = offset + Σ digit_d · stride_d;` for the workgroup's batch index. */
export function batchBase(p: Params, name: string, nb: number): string {
  let e = p.i(`${name}.off`);
  for (let d = 0; d < nb; d++) e += ` + i32(bd${d}) * ${p.i(`${name}.b${d}`)}`;
  return `let ${name}B = ${e};`;
}

/** WGSL: the batch digits bd0.. of batch index `b` (row-major over the batch shape). */
export function batchDigits(p: Params, nb: number, b: string): string {
  const lines = [`var br = ${b};`];
  for (let d = nb - 1; d >= 0; d--) lines.push(`let bd${d} = br % ${p.u(`bs${d}`)}; br = br / ${p.u(`bs${d}`)};`);
  return lines.join('\n  ');
}
