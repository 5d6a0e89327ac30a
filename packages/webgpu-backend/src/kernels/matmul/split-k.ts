import type { Runtime } from '../../runtime';
import type { PooledBuffer } from '../../pool';
import { EpiloguePlan, MatmulEpilogueDesc, epiNames, planEpilogue } from './plan';
import { batchBases, epilogueBindings, epilogueFn } from './wgsl';
import { Program, Uniforms } from '../program';
import { LINEAR_WG, MAIN_ARGS, paramsDecl } from '../wgsl';

/**
 * The second kernel of a split-k matmul (MatmulConfig.splitK): sums the k-chunks' partial
 * products [splits, batch, m, n] in chunk order (so the result does not depend on which
 * workgroup ran first) and applies the epilogue to the sum, which a partial product could
 * not take (a ReLU of a partial sum is not the ReLU of the sum). One thread per output
 * element, or per 4 adjacent ones of a row when n is a multiple of 4. The chunk count is
 * compiled in, so a thread's loads are straight-line code, all in flight at once (a loop
 * over a parameter waited one load latency per chunk.
 */
export interface SplitSum {
  parts: PooledBuffer;
  splits: number;
  batchShape: number[];
  m: number;
  n: number;
  out: PooledBuffer;
  epi?: MatmulEpilogueDesc;
  /** vec4 loads and stores when n allows (the matmul config's vec4). */
  vec4: boolean;
}

const WG = 64;

class MatmulSumProgram implements Program {
  readonly key: string;
  readonly reads: number;
  readonly writes = 1;
  readonly workgroupSize = WG;

  constructor(
    readonly splits: number,
    readonly br: number,
    readonly vec: boolean,
    readonly epi: MatmulEpilogueDesc | undefined,
    readonly ep: EpiloguePlan,
  ) {
    this.key = `mmsum|s${splits}|b${br}${vec ? '|v' : ''}${ep.eKey}`;
    this.reads = 1 + ep.eBufs.length;
  }

  uniforms(): Uniforms {
    const u = new Uniforms().u32('threads').u32('n').u32('mn').u32('partStride').u32('batchShape', this.br);
    for (const j of this.ep.eIdx) {
      const e = epiNames(j);
      u.i32(e.Offset).i32(e.BatchStrides, this.br).i32(e.RowStride).i32(e.ColStride);
    }
    return u.u32('consts', this.ep.consts.length);
  }

  wgsl(u: Uniforms): string {
    const { vec, epi, ep } = this;
    const T = vec ? 'vec4<f32>' : 'f32';
    const W = vec ? 4 : 1;
    const L: string[] = [paramsDecl(u.words), `@group(0) @binding(1) var<storage, read> P: array<${T}>;`];
    L.push(...epilogueBindings(ep, 2));
    L.push(`@group(0) @binding(${2 + ep.eBufs.length}) var<storage, read_write> Y: array<${T}>;`);
    if (epi) L.push(...epilogueFn(epi, ep, u));
    const fin = !epi
      ? 'v'
      : vec
        ? 'vec4<f32>(epi_(v.x, r, c), epi_(v.y, r, c + 1u), epi_(v.z, r, c + 2u), epi_(v.w, r, c + 3u))'
        : 'epi_(v, r, c)';
    L.push(`@compute @workgroup_size(${WG})
fn main(${MAIN_ARGS}) {
  ${LINEAR_WG}
  let i = wg * ${WG}u + lid;
  if (i >= ${u.ref('threads')}) { return; }
  let e0 = i * ${W}u;
  let bt = e0 / ${u.ref('mn')};
  let rc = e0 % ${u.ref('mn')};
  let r = rc / ${u.ref('n')};
  let c = rc % ${u.ref('n')};
  ${epi ? batchBases(u, this.br, ep.eIdx, []).join('\n  ') : ''}
  let ps = ${u.ref('partStride')};
  ${Array.from({ length: this.splits }, (_, s) => `let p${s} = P[i${s ? ` + ${s}u * ps` : ''}];`).join('\n  ')}
  let v = ${Array.from({ length: this.splits }, (_, s) => `p${s}`).join(' + ')};
  Y[i] = ${fin};
}`);
    return L.join('\n');
  }
}

/** Records the sum of a split matmul's partial products (then its epilogue) into `out`. */
export function encodeSplitSum(rt: Runtime, s: SplitSum): void {
  const { m, n, batchShape, epi } = s;
  const batch = batchShape.reduce((x, y) => x * y, 1);
  const vec = s.vec4 && n % 4 === 0;
  const threads = (batch * m * n) / (vec ? 4 : 1);
  const ep = planEpilogue(epi);
  const kern = rt.program(new MatmulSumProgram(s.splits, batchShape.length, vec, epi, ep));
  const p = rt.block(kern);
  p.set('threads', threads)
    .set('n', n)
    .set('mn', m * n)
    .set('partStride', threads);
  p.setAll('batchShape', batchShape);
  if (epi) {
    for (const j of ep.eIdx) {
      const x = epi.inputs[j];
      const e = epiNames(j);
      p.set(e.Offset, x.offset)
        .setAll(e.BatchStrides, x.batchStrides)
        .set(e.RowStride, x.rowStride)
        .set(e.ColStride, x.colStride);
    }
  }
  p.setConsts('consts', ep.consts);
  rt.dispatch(kern, [s.parts, ...ep.eBufs, s.out], p.base, Math.ceil(threads / WG));
}
