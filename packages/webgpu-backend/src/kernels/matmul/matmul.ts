import type { Runtime } from '../../runtime';
import { MatmulConfig, MatmulPlan, MatmulProblem, epiNames, planMatmul } from './plan';
import { encodeSplitSum } from './split-k';
import { matmulWgsl } from './wgsl';
import { Program, Uniforms } from '../program';

/**
 * Tiled matmul as a program: the plan (matmul/plan.ts) decides the tiling, vector widths and
 * epilogue bindings, the shader is generated from it (matmul/wgsl.ts), and each dispatch
 * writes its shapes and strides by name.
 */
export type { MatmulConfig, MatmulEpilogueDesc, MatmulEpilogueInput, MatmulOperand, MatmulProblem } from './plan';
export { collapseBatch } from './plan';
export { DEFAULT_MATMUL, chooseMatmulConfig, validateMatmulConfig } from '../../tune/choose';
import { workgroupBytes } from '../../tune/choose';
export type { MatmulConfigOption } from '../../tune/choose';

export class MatmulProgram implements Program {
  readonly key: string;
  readonly reads: number;
  readonly writes = 1;
  readonly workgroupSize: number;

  constructor(readonly plan: MatmulPlan) {
    this.key = plan.key;
    this.workgroupSize = plan.NT;
    this.reads = 2 + plan.eBufs.length;
  }

  uniforms(): Uniforms {
    const { br, eIdx, consts } = this.plan;
    const u = new Uniforms()
      .u32('m')
      .u32('n')
      .u32('k')
      .u32('tilesN')
      .u32('tilesM')
      .u32('total')
      .i32('aOffset')
      .i32('aRowStride')
      .i32('aColStride')
      .i32('bOffset')
      .i32('bRowStride')
      .i32('bColStride')
      .u32('batchShape', br)
      .i32('aBatchStrides', br)
      .i32('bBatchStrides', br);
    if (this.plan.splits > 1) u.u32('batchN').u32('kChunk');
    for (const j of eIdx) {
      const e = epiNames(j);
      u.i32(e.Offset).i32(e.BatchStrides, br).i32(e.RowStride).i32(e.ColStride);
    }
    return u.u32('consts', consts.length);
  }

  wgsl(u: Uniforms): string {
    return matmulWgsl(this.plan, u);
  }
}

/** Workgroup memory and the largest storage binding per device, read once (reading a GPUDevice's limits per op is slow). */
const sharedBytes = new WeakMap<GPUDevice, number>();
const bindingBytes = new WeakMap<GPUDevice, number>();

/**
 * The double-buffered bucket for large aligned problems needs 33 KB of workgroup memory; on
 * an adapter with less (32 KB is common) it gives way to the same tile staged flat, once.
 */
export function fitted(rt: Pick<Runtime, 'device'>, cfg: MatmulConfig): MatmulConfig {
  if (!cfg.doubleBuffer) return cfg;
  let max = sharedBytes.get(rt.device);
  if (max === undefined) sharedBytes.set(rt.device, (max = rt.device.limits.maxComputeWorkgroupStorageSize));
  // Flat staging wants interleaved columns (the large flat bucket's knobs; the rows layout does not).
  return workgroupBytes(cfg) <= max
    ? cfg
    : { ...cfg, rows: false, doubleBuffer: false, padA: cfg.padA ?? 4, interleave: true };
}

/** Records C = A·B (then the epilogue) with tiling `cfg`. */
export function encodeMatmul(rt: Runtime, cfg0: MatmulConfig, pr: MatmulProblem): void {
  const { a, b, m, n, k, batchShape, epi } = pr;
  const batch = batchShape.reduce((x, y) => x * y, 1);
  if (batch * m * n === 0) return;
  const cfg = fitted(rt, cfg0);
  let plan = planMatmul(cfg, pr);
  if (plan.splits > 1) {
    // A split whose partial products would not fit one storage binding runs whole.
    let max = bindingBytes.get(rt.device);
    if (max === undefined) bindingBytes.set(rt.device, (max = rt.device.limits.maxStorageBufferBindingSize));
    if (plan.splits * batch * m * n * 4 > max) plan = planMatmul({ ...cfg, splitK: undefined }, pr);
  }
  const kern = rt.program(new MatmulProgram(plan));
  const tilesN = Math.ceil(n / plan.TN);
  const tilesM = Math.ceil(m / plan.TM);
  const total = tilesN * tilesM * batch * plan.splits;
  // Split k: the partial sums go to scratch, [splits, batch, m, n]; the sum kernel writes out.
  const target = plan.splits > 1 ? rt.alloc(plan.splits * batch * m * n * 4) : pr.out;
  const p = rt.block(kern);
  p.set('m', m).set('n', n).set('k', k).set('tilesN', tilesN).set('tilesM', tilesM).set('total', total);
  p.set('aOffset', a.offset).set('aRowStride', a.rowStride).set('aColStride', a.colStride);
  p.set('bOffset', b.offset).set('bRowStride', b.rowStride).set('bColStride', b.colStride);
  p.setAll('batchShape', batchShape).setAll('aBatchStrides', a.batchStrides).setAll('bBatchStrides', b.batchStrides);
  if (epi) {
    for (const j of plan.eIdx) {
      const x = epi.inputs[j];
      const e = epiNames(j);
      p.set(e.Offset, x.offset)
        .setAll(e.BatchStrides, x.batchStrides)
        .set(e.RowStride, x.rowStride)
        .set(e.ColStride, x.colStride);
    }
  }
  if (plan.splits > 1) p.set('batchN', batch).set('kChunk', plan.chunkSteps * plan.TK);
  p.setConsts('consts', plan.consts);
  rt.dispatch(kern, [a.buf, b.buf, ...plan.eBufs, target], p.base, total);
  if (plan.splits > 1) {
    encodeSplitSum(rt, {
      parts: target,
      splits: plan.splits,
      batchShape,
      m,
      n,
      out: pr.out,
      epi: plan.splitEpi,
      vec4: cfg.vec4,
    });
    // Later dispatches that reuse the buffer run after these (same queue order).
    rt.release(target);
  }
}
