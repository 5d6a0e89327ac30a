import type { Runtime } from '../../runtime';
import type { PooledBuffer } from '../../pool';
import { Program, Uniforms } from '../program';
import { FLOAT_HELPERS, LINEAR_WG, MAIN_ARGS, paramsDecl } from '../wgsl';
import { FLAG_FAIL } from './index-check';
import { MAX_ONE_OUTPUTS, MAX_ONE_SLOTS, takeSlot } from '../reduce/one-dispatch';

/**
 * Softmax cross-entropy's forward rows (the contract's crossEntropyRows) in one kernel: a
 * workgroup per row takes the row max, the sum of exp(z − m̃) and the row's weighted loss terms
 * by tree reductions in workgroup memory, and checks the row's class index itself (a bad one
 * sets the error flag's slot as kernels/index/index-check.ts does, and makes the row NaN). The
 * composite it replaces ran five kernels and the index check (max, exp, sum, terms and the
 * check). With `total` it also sums the rows in the same dispatch (the mean or sum reduction:
 * one dispatch fewer per training step): each workgroup publishes its row in a slot of the
 * one-dispatch scratch and counts its arrival, and the last to arrive folds the slots in row
 * order (reduce/one-dispatch.ts), so the total does not depend on the order rows finished in.
 */
export class CrossEntropyRowsProgram implements Program {
  readonly key: string;
  readonly reads = 2;
  readonly writes: number;

  constructor(
    readonly smoothed: boolean,
    readonly workgroupSize: number,
    readonly total = false,
    /** The total is divided by the number of rows not ignored (a mean with ignoreIndex). */
    readonly meanOverKept = false,
  ) {
    this.writes = total ? 6 : 4;
    this.key = `ceRows|${smoothed ? 'smooth' : 'plain'}|wg${workgroupSize}${total ? '|total' : ''}${meanOverKept ? '|kept' : ''}`;
  }

  uniforms(): Uniforms {
    return new Uniforms()
      .u32('n')
      .i32('c')
      .i32('zOffset')
      .i32('zRow')
      .i32('zCol')
      .i32('yOffset')
      .i32('yStride')
      .u32('slot')
      .f32('eps')
      .f32('scale')
      .u32('useIgnore')
      .i32('ignore');
  }

  wgsl(u: Uniforms): string {
    const wg = this.workgroupSize;
    const z = (j: string) => `Z[u32(zb + (${j}) * ${u.ref('zCol')})]`;
    const tree = (op: string) => `
  for (var w = ${wg / 2}u; w > 0u; w = w / 2u) {
    workgroupBarrier();
    if (lid < w) { red[lid] = ${op}; }
  }
  workgroupBarrier();`;
    // Without smoothing only the target column counts (a select: an infinite logit elsewhere
    // must not turn 0·inf into NaN); with it every column, weighted.
    const terms = this.smoothed
      ? `var acc = 0.0;
  let wOff = ${u.ref('eps')} / f32(C);
  let wHit = 1.0 - ${u.ref('eps')} + wOff;
  for (var j = i32(lid); j < C; j += ${wg}) {
    let wj = select(wOff, wHit, j == t);
    acc += (wj * (lse - ${z('j')})) * ${u.ref('scale')};
  }
  red[lid] = acc;${tree('red[lid] + red[lid + w]')}
  let total = red[0];`
      : `let total = select(0.0, (lse - ${z('select(0, t, valid)')}) * ${u.ref('scale')}, valid);`;
    return `${paramsDecl(u.words)}
@group(0) @binding(1) var<storage, read> Z: array<f32>;
@group(0) @binding(2) var<storage, read> Y: array<i32>;
@group(0) @binding(3) var<storage, read_write> M: array<f32>;
@group(0) @binding(4) var<storage, read_write> S: array<f32>;
@group(0) @binding(5) var<storage, read_write> R: array<f32>;
@group(0) @binding(6) var<storage, read_write> F: array<atomic<u32>>;${
      this.total
        ? `
@group(0) @binding(7) var<storage, read_write> Tot: array<f32>;
@group(0) @binding(8) var<storage, read_write> sc: array<atomic<u32>>;
var<workgroup> lastArrival: u32;`
        : ''
    }
${FLOAT_HELPERS}
var<workgroup> red: array<f32, ${wg}>;
@compute @workgroup_size(${wg})
fn main(${MAIN_ARGS}) {
  ${LINEAR_WG}
  // One row per workgroup: every branch below on row values is uniform across it.
  let row = wg;
  if (row >= ${u.ref('n')}) { return; }
  let C = ${u.ref('c')};
  let zb = ${u.ref('zOffset')} + i32(row) * ${u.ref('zRow')};
  var mx = -inf_();
  for (var j = i32(lid); j < C; j += ${wg}) { mx = fmax_(mx, ${z('j')}); }
  red[lid] = mx;${tree('fmax_(red[lid], red[lid + w])')}
  let m = red[0];
  workgroupBarrier();
  // A max of ±inf (or NaN) would make z − m NaN: shift by 0 instead (the composite's finiteOr0).
  let sh = select(0.0, m, !isnan_(m) && !isinf_(m));
  var se = 0.0;
  for (var j = i32(lid); j < C; j += ${wg}) { se += exp(${z('j')} - sh); }
  red[lid] = se;${tree('red[lid] + red[lid + w]')}
  let s = red[0];
  workgroupBarrier();
  // exp(NaN) is not NaN on every GPU: a row with a NaN (its max is NaN) is NaN explicitly.
  let lse = select(flog_(s) + sh, nan_(), isnan_(m));
  let t = Y[u32(${u.ref('yOffset')} + i32(row) * ${u.ref('yStride')})];
  let valid = t >= 0 && t < C;
  // A row left out (ignoreIndex, which may also be a class) adds 0 and is not an error.
  let ignored = ${u.ref('useIgnore')} != 0u && t == ${u.ref('ignore')};
  ${terms}
  let rowLoss = select(select(nan_(), total, valid), 0.0, ignored);
  if (lid == 0u) {
    M[row] = m;
    S[row] = s;
    R[row] = rowLoss;
    if (!valid && !ignored) { flagFail_(${u.ref('slot')}, row, t); }
  }${this.total ? this.fold(u, tree('red[lid] + red[lid + w]')) : ''}
}
${FLAG_FAIL}`;
  }

  /** The total's ending: publish the row, count it, and the last workgroup sums every slot (`sumTree`: the rows' own tree). */
  private fold(u: Uniforms, sumTree: string): string {
    const wg = this.workgroupSize;
    const P = MAX_ONE_OUTPUTS;
    const n = u.ref('n');
    return `
  if (lid == 0u) {
    atomicStore(&sc[${P}u + row], bitcast<u32>(rowLoss));
    lastArrival = select(0u, 1u, atomicAdd(&sc[0], 1u) == ${n} - 1u);
  }
  if (workgroupUniformLoad(&lastArrival) == 0u) { return; }
  var tacc = 0.0;
  var kept = 0.0;
  for (var i = lid; i < ${n}; i += ${wg}u) {
    ${takeSlot(`${P}u + i`)}
    tacc += bitcast<f32>(b);${
      this.meanOverKept
        ? `
    let ti = Y[u32(${u.ref('yOffset')} + i32(i) * ${u.ref('yStride')})];
    kept += select(1.0, 0.0, ${u.ref('useIgnore')} != 0u && ti == ${u.ref('ignore')});`
        : ''
    }
  }
  red[lid] = tacc;${sumTree}${
    this.meanOverKept
      ? `
  let tsum = red[0];
  workgroupBarrier();
  red[lid] = kept;${sumTree}
  if (lid == 0u) { Tot[0] = tsum / red[0]; S[${n}] = red[0]; atomicStore(&sc[0], 0u); }`
      : `
  if (lid == 0u) { Tot[0] = red[0]; atomicStore(&sc[0], 0u); }`
  }`;
  }
}

/** Whether the rows kernel can also sum its rows (the scratch has a slot per row). */
export const ceTotalFits = (n: number): boolean => n > 0 && n <= MAX_ONE_SLOTS;

export interface CeRowsOperands {
  z: { buf: PooledBuffer; offset: number; rowStride: number; colStride: number };
  y: { buf: PooledBuffer; offset: number; stride: number };
  n: number;
  c: number;
}

/** `total`: the rows' sum's buffer and the one-dispatch scratch (only where ceTotalFits(n)). */
export function encodeCrossEntropyRows(
  rt: Runtime,
  x: CeRowsOperands,
  o: { eps: number; scale: number; ignoreIndex?: number; meanOverKept: boolean },
  outs: [PooledBuffer, PooledBuffer, PooledBuffer],
  flag: PooledBuffer,
  slot: number,
  wgSize: number,
  total?: { out: PooledBuffer; scratch: PooledBuffer },
): void {
  if (x.n === 0) return;
  const k = rt.program(new CrossEntropyRowsProgram(o.eps !== 0, wgSize, !!total, !!total && o.meanOverKept));
  const p = rt.block(k);
  p.set('n', x.n).set('c', x.c).set('zOffset', x.z.offset).set('zRow', x.z.rowStride).set('zCol', x.z.colStride);
  p.set('yOffset', x.y.offset).set('yStride', x.y.stride).set('slot', slot).set('eps', o.eps).set('scale', o.scale);
  p.set('useIgnore', o.ignoreIndex === undefined ? 0 : 1).set('ignore', o.ignoreIndex ?? 0);
  rt.dispatch(
    k,
    total ? [x.z.buf, x.y.buf, ...outs, flag, total.out, total.scratch] : [x.z.buf, x.y.buf, ...outs, flag],
    p.base,
    x.n,
  );
}
