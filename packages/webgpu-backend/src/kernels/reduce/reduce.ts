import { BackendError } from '@surf/core';
import type { DType, ReduceOp } from '@surf/core';
import type { Runtime } from '../../runtime';
import type { PooledBuffer } from '../../pool';
import { Program, Uniforms } from '../program';
import { LINEAR_WG, MAIN_ARGS, FLOAT_HELPERS, paramsDecl, storageType } from '../wgsl';
import { MAX_ONE_OUTPUTS, MAX_ONE_SLOTS, oneDispatchScratch, takeSlot } from './one-dispatch';

/**
 * Reductions. The input is seen as [outputs, reduced] (kept dims, then reduced dims, each
 * group collapsed). T threads cooperate on one output: each folds a strided run of the
 * reduced elements into a register, then the T partials meet in a tree in workgroup memory
 * (log2 T barriers). A workgroup of WG threads serves WG/T outputs, so few large reductions
 * and many small ones both keep every thread busy. Threads of one output are adjacent when
 * the reduced dim is the one contiguous in memory (row layout) and interleaved when a kept
 * dim is (column layout), so neighbouring threads read neighbouring addresses either way.
 *
 * Few outputs with long reductions (16M elements to 1) would leave the GPU idle, so the
 * reduced range is first split into C chunks written as partials [outputs, C], which a
 * second pass (the same kernel) reduces. When a kept dim is the densest (a first-axis sum),
 * a workgroup serves 32 adjacent outputs with 8 threads each, so a warp reads 128
 * contiguous bytes per row. A contiguous reduced range is read as vec4s, and the fold keeps
 * four independent accumulators so that several loads are in flight per thread.
 */
export interface ReduceDesc {
  buf: PooledBuffer;
  dtype: DType;
  offset: number;
  kept: { shape: number[]; strides: number[] };
  red: { shape: number[]; strides: number[] };
}

/** Knobs of the reduction plan (defaults below; the probe compares them on real GPUs). */
export interface ReduceTuning {
  /** Fewest elements a thread folds before the reduced range is split into chunks. */
  perThread: number;
  /** Split long reductions until about this many workgroups run (enough to fill a big GPU). */
  targetGroups: number;
  /** Outputs a workgroup serves side by side in the column layout (one warp's 128-byte row); 0: off. */
  colOutputs: number;
  /** vec4 loads of a contiguous reduced range. */
  vec4: boolean;
  /** Four independent accumulators per thread. */
  unroll: boolean;
  /**
   * A chunked float reduction in one dispatch: the last workgroup of each output to finish
   * folds the partials (see `oneDispatchFits`); false: a second pass reduces them.
   */
  oneDispatch: boolean;
  /** perThread for the one-dispatch plan (more, shorter chunks: the final fold is cheap). */
  onePerThread: number;
  /**
   * targetGroups for the one-dispatch plan: a full sum of 16M-64M runs about one wave of
   * workgroups, each thread folding 16-64 vec4s (fewer partials for the last workgroup).
   */
  oneGroups: number;
}

export const DEFAULT_REDUCE: ReduceTuning = {
  perThread: 32,
  targetGroups: 2048,
  colOutputs: 32,
  vec4: true,
  unroll: true,
  oneDispatch: true,
  onePerThread: 4,
  oneGroups: 1024,
};

/**
 * Whether a chunked pass may finish in the same dispatch: float32 (the sentinel is a float
 * bit pattern), one workgroup per (output, chunk) slot, and the slots fit the scratch.
 */
function oneDispatchFits(x: ReduceDesc, outN: number, C: number, T: number, wgSize: number, col: boolean): boolean {
  return x.dtype === 'float32' && T === wgSize && !col && outN <= MAX_ONE_OUTPUTS && outN * C <= MAX_ONE_SLOTS;
}

function merge(shape: number[], strides: number[]): { shape: number[]; strides: number[] } {
  const sh: number[] = [];
  const st: number[] = [];
  shape.forEach((d, i) => {
    if (d === 1) return;
    const n = sh.length;
    if (n && st[n - 1] === strides[i] * d) {
      sh[n - 1] *= d;
      st[n - 1] = strides[i];
    } else {
      sh.push(d);
      st.push(strides[i]);
    }
  });
  return { shape: sh, strides: st };
}

/** The collapsed [kept, reduced] description of reducing a view over `axes`. */
export function describeReduce(
  buf: PooledBuffer,
  dtype: DType,
  shape: readonly number[],
  strides: readonly number[],
  offset: number,
  axes: readonly number[],
): ReduceDesc {
  const keptIdx = shape.map((_, d) => d).filter((d) => !axes.includes(d));
  // Reduced dims in order of decreasing |stride|, so the innermost is the densest (sum and max do not care about order).
  const redIdx = axes.slice().sort((a, b) => Math.abs(strides[b]) - Math.abs(strides[a]));
  return {
    buf,
    dtype,
    offset,
    kept: merge(
      keptIdx.map((d) => shape[d]),
      keptIdx.map((d) => strides[d]),
    ),
    red: merge(
      redIdx.map((d) => shape[d]),
      redIdx.map((d) => strides[d]),
    ),
  };
}

/**
 * One pass of the plan: T threads per output, the reduced range in C chunks of L elements
 * (C > 1 writes partials that a second pass reduces), `vec` for vec4 loads.
 */
export interface ReducePass {
  op: ReduceOp;
  x: ReduceDesc;
  out: PooledBuffer;
  outN: number;
  redN: number;
  T: number;
  C: number;
  L: number;
  wgSize: number;
  vec: boolean;
  /** Four accumulators per thread are allowed (the tuning knob; used when an offset is one multiply). */
  unroll: boolean;
  /** With C > 1: the last workgroup of each output folds the partials (bound after `out`). */
  one?: PooledBuffer;
}

export function encodeReduce(
  rt: Runtime,
  op: ReduceOp,
  x: ReduceDesc,
  out: PooledBuffer,
  wgSize: number,
  tune: ReduceTuning = DEFAULT_REDUCE,
): void {
  const { perThread: PER_THREAD, targetGroups: TARGET_GROUPS, colOutputs: COL_OUTPUTS } = tune;
  const outN = x.kept.shape.reduce((a, b) => a * b, 1);
  const redN = x.red.shape.reduce((a, b) => a * b, 1);
  if (outN === 0) return;
  // Element indices are u32 in the kernel: a range past them would wrap silently.
  if (outN * redN > 0xffffffff)
    throw new BackendError(
      `reduce: ${outN * redN} elements read, more than the 2^32 - 1 a WebGPU reduction indexes; reduce in parts`,
    );
  const kr = x.kept.shape.length;
  const rr = x.red.shape.length;
  const innerKept = kr ? Math.abs(x.kept.strides[kr - 1]) : Infinity;
  const innerRed = rr ? Math.abs(x.red.strides[rr - 1]) : Infinity;
  let T = 1;
  const colCase = COL_OUTPUTS > 0 && innerKept < innerRed && outN >= COL_OUTPUTS / 2 && wgSize >= 2 * COL_OUTPUTS;
  if (colCase) T = wgSize / COL_OUTPUTS;
  else while (T < redN && T < wgSize) T *= 2;
  const S = wgSize / T;
  // vec4 reads: one contiguous reduced dim, 4-aligned everywhere.
  const vec =
    tune.vec4 &&
    rr === 1 &&
    x.red.strides[0] === 1 &&
    redN % 4 === 0 &&
    x.offset % 4 === 0 &&
    x.kept.strides.every((st) => st % 4 === 0);
  const vw = vec ? 4 : 1;
  const chunking = (per: number, groups: number) => {
    let c = 1;
    if (Math.ceil(redN / (T * vw)) > per) {
      c = Math.min(Math.ceil(redN / (T * vw * per)), Math.max(1, Math.ceil(groups / Math.ceil(outN / S))));
    }
    let l = Math.max(1, Math.ceil(redN / c));
    if (vec) l = Math.ceil(l / 4) * 4;
    return { C: Math.max(1, Math.ceil(redN / l)), L: l };
  };
  const col = S > 1 && innerKept < innerRed;
  if (tune.oneDispatch) {
    const { C, L } = chunking(tune.onePerThread, tune.oneGroups);
    if (C > 1 && oneDispatchFits(x, outN, C, T, wgSize, col)) {
      new ReduceProgram({
        op,
        x,
        out,
        outN,
        redN,
        T,
        C,
        L,
        wgSize,
        vec,
        unroll: tune.unroll,
        one: oneDispatchScratch(rt),
      }).record(rt);
      return;
    }
  }
  const { C, L } = chunking(PER_THREAD, TARGET_GROUPS);
  if (C > 1) {
    const partial = rt.alloc(outN * C * 4);
    const first = new ReduceProgram({ op, x, out: partial, outN, redN, T, C, L, wgSize, vec, unroll: tune.unroll });
    first.record(rt);
    // Column layout: partials are chunk-major [C, outputs] (see ReduceProgram), else [outputs, C].
    const second: ReduceDesc = first.col
      ? { buf: partial, dtype: x.dtype, offset: 0, kept: merge([outN], [1]), red: { shape: [C], strides: [outN] } }
      : { buf: partial, dtype: x.dtype, offset: 0, kept: merge([outN], [C]), red: { shape: [C], strides: [1] } };
    encodeReduce(rt, op, second, out, wgSize, tune);
    // Later dispatches that reuse the buffer run after this one (same queue order).
    rt.release(partial);
    return;
  }
  new ReduceProgram({ op, x, out, outN, redN, T, C: 1, L: Math.max(redN, 1), wgSize, vec, unroll: tune.unroll }).record(
    rt,
  );
}

/** Bindings of the one-dispatch scratch: counters, then partial slots, as atomic words. */
const ONE_DECL = `@group(0) @binding(3) var<storage, read_write> sc: array<atomic<u32>>;
var<workgroup> lastArrival: u32;`;

/** The kernel of one reduction pass. */
export class ReduceProgram implements Program {
  readonly key: string;
  readonly reads = 1;
  readonly writes: number;
  readonly workgroupSize: number;
  /** Outputs served per workgroup. */
  readonly S: number;
  /** Column layout: a workgroup's segments are adjacent outputs, threads of one output interleaved. */
  readonly col: boolean;
  /** With chunks in the column layout, the segment index runs over outputs first: v = chunk·outputs + o. */
  readonly chunkMajor: boolean;
  /** Four accumulators (when an element's offset is one multiply: the common cases). */
  readonly unroll: boolean;
  private readonly kr: number;
  private readonly rr: number;

  constructor(readonly pass: ReducePass) {
    const { x, T, C, wgSize, vec, op } = pass;
    this.workgroupSize = wgSize;
    this.kr = x.kept.shape.length;
    this.rr = x.red.shape.length;
    this.S = wgSize / T;
    const innerKept = this.kr ? Math.abs(x.kept.strides[this.kr - 1]) : Infinity;
    const innerRed = this.rr ? Math.abs(x.red.strides[this.rr - 1]) : Infinity;
    this.col = this.S > 1 && innerKept < innerRed;
    this.chunkMajor = this.col && C > 1;
    this.unroll = pass.unroll && this.rr <= 1;
    this.writes = pass.one ? 2 : 1;
    this.key = `red|${op}|${x.dtype}|k${this.kr}|r${this.rr}|T${T}|S${this.S}|${this.col ? 'col' : 'row'}${this.chunkMajor ? '|cm' : ''}${vec ? '|v4' : ''}${this.unroll ? '|u4' : ''}${pass.one ? '|one' : ''}`;
  }

  uniforms(): Uniforms {
    return new Uniforms()
      .u32('slots')
      .u32('chunks')
      .u32('chunkLen')
      .u32('redN')
      .i32('offset')
      .u32('keptShape', this.kr)
      .i32('keptStrides', this.kr)
      .u32('redShape', this.rr)
      .i32('redStrides', this.rr);
  }

  /** Writes the parameters and records the dispatch. */
  record(rt: Runtime): void {
    const { x, out, outN, C, L, redN } = this.pass;
    const k = rt.program(this);
    const p = rt.block(k);
    p.set('slots', outN * C)
      .set('chunks', C)
      .set('chunkLen', L)
      .set('redN', redN)
      .set('offset', x.offset);
    p.setAll('keptShape', x.kept.shape).setAll('keptStrides', x.kept.strides);
    p.setAll('redShape', x.red.shape).setAll('redStrides', x.red.strides);
    rt.dispatch(k, this.pass.one ? [x.buf, out, this.pass.one] : [x.buf, out], p.base, Math.ceil((outN * C) / this.S));
  }

  /**
   * The one-dispatch ending (S = 1: the workgroup is one (output, chunk) slot): thread 0
   * publishes the partial in its scratch slot and counts the arrival on the output's
   * counter; the workgroup that arrives last folds the output's partials in chunk order (so
   * the result does not depend on which one was last) and resets slots and counter (each
   * slot read as reduce/one-dispatch.ts's takeSlot says).
   */
  private finish(u: Uniforms, tree: string[]): string {
    const { op, wgSize } = this.pass;
    const comb = (a: string, b: string) => (op === 'sum' ? `${a} + ${b}` : `fmax_(${a}, ${b})`);
    const ident = op === 'sum' ? '0.0' : '-inf_()';
    const slots = u.ref('slots'),
      chunks = u.ref('chunks');
    const P = MAX_ONE_OUTPUTS;
    return `if (lid == 0u) {
    var last = 0u;
    if (v < ${slots}) {
      atomicStore(&sc[${P}u + v], bitcast<u32>(sh[0]));
      last = select(0u, 1u, atomicAdd(&sc[v / ${chunks}], 1u) == ${chunks} - 1u);
    }
    lastArrival = last;
  }
  if (workgroupUniformLoad(&lastArrival) == 0u) { return; }
  let o = v / ${chunks};
  let p0 = ${P}u + o * ${chunks};
  var acc2 = ${ident};
  for (var i = lid; i < ${chunks}; i += ${wgSize}u) {
    ${takeSlot('p0 + i')}
    acc2 = ${comb('acc2', 'bitcast<f32>(b)')};
  }
  sh[lid] = acc2;
  workgroupBarrier();
  ${tree.join('\n  ')}
  if (lid == 0u) { y[o] = sh[0]; atomicStore(&sc[o], 0u); }`;
  }

  wgsl(u: Uniforms): string {
    const { op, x, T, wgSize, vec } = this.pass;
    const { kr, rr, S, col, chunkMajor, unroll } = this;
    const one = !!this.pass.one;
    const ty = storageType(x.dtype);
    const f = x.dtype === 'float32';
    const ident = op === 'sum' ? (f ? '0.0' : '0') : f ? '-inf_()' : 'bitcast<i32>(0x80000000u)';
    const comb = (a: string, b: string) => (op === 'sum' ? `${a} + ${b}` : f ? `fmax_(${a}, ${b})` : `max(${a}, ${b})`);
    // vec4 lanes: the accumulators are vec4s, combined component-wise, folded at the end.
    const combV = (a: string, b: string) =>
      !vec || op === 'sum' || !f
        ? comb(a, b)
        : `vec4<f32>(fmax_(${a}.x, ${b}.x), fmax_(${a}.y, ${b}.y), fmax_(${a}.z, ${b}.z), fmax_(${a}.w, ${b}.w))`;
    const accT = vec ? `vec4<${ty}>` : ty;
    const slots = u.ref('slots'),
      chunks = u.ref('chunks'),
      len = u.ref('chunkLen'),
      redN = u.ref('redN');
    const base: string[] = [`var base = ${u.ref('offset')};`];
    if (kr) {
      base.push(`var q = o;`);
      for (let d = kr - 1; d >= 0; d--) {
        base.push(
          d > 0
            ? `base += i32(q % ${u.ref('keptShape', d)}) * ${u.ref('keptStrides', d)}; q = q / ${u.ref('keptShape', d)};`
            : `base += i32(q) * ${u.ref('keptStrides', 0)};`,
        );
      }
    }
    let fold: string;
    if (vec) {
      // Elements [r0, r1) of a stride-1 range: vec4 index (base + r) / 4 (all 4-aligned).
      const ld = (r: string) => `x4[u32(base + i32(${r}) * 4) / 4u]`;
      fold = `let q0 = (c * ${len}) / 4u; let q1 = min(c * ${len} + ${len}, ${redN}) / 4u;
    var a0 = ${accT}(${ident}); var a1 = a0; var a2 = a0; var a3 = a0;
    var r = q0 + lane;
    for (; r + ${3 * T}u < q1; r += ${4 * T}u) {
      a0 = ${combV('a0', ld('r'))}; a1 = ${combV('a1', ld(`r + ${T}u`))}; a2 = ${combV('a2', ld(`r + ${2 * T}u`))}; a3 = ${combV('a3', ld(`r + ${3 * T}u`))};
    }
    for (; r < q1; r += ${T}u) { a0 = ${combV('a0', ld('r'))}; }
    let av = ${combV(`(${combV('a0', 'a1')})`, `(${combV('a2', 'a3')})`)};
    acc = ${comb(`(${comb('av.x', 'av.y')})`, `(${comb('av.z', 'av.w')})`)};`;
    } else if (unroll) {
      const off = (r: string) => (rr === 0 ? '0' : `i32(${r}) * ${u.ref('redStrides', 0)}`);
      const ld = (r: string) => `x[u32(base + ${off(r)})]`;
      fold = `let r1 = min(c * ${len} + ${len}, ${redN});
    var a0 = ${ident}; var a1 = a0; var a2 = a0; var a3 = a0;
    var r = c * ${len} + lane;
    for (; r + ${3 * T}u < r1; r += ${4 * T}u) {
      a0 = ${comb('a0', ld('r'))}; a1 = ${comb('a1', ld(`r + ${T}u`))}; a2 = ${comb('a2', ld(`r + ${2 * T}u`))}; a3 = ${comb('a3', ld(`r + ${3 * T}u`))};
    }
    for (; r < r1; r += ${T}u) { a0 = ${comb('a0', ld('r'))}; }
    acc = ${comb(`(${comb('a0', 'a1')})`, `(${comb('a2', 'a3')})`)};`;
    } else {
      const rlines: string[] = [`var s = r; var ro = 0;`];
      for (let d = rr - 1; d >= 0; d--) {
        rlines.push(
          d > 0
            ? `ro += i32(s % ${u.ref('redShape', d)}) * ${u.ref('redStrides', d)}; s = s / ${u.ref('redShape', d)};`
            : `ro += i32(s) * ${u.ref('redStrides', 0)};`,
        );
      }
      fold = `let r1 = min(c * ${len} + ${len}, ${redN});
    for (var r = c * ${len} + lane; r < r1; r += ${T}u) {
      ${rlines.join('\n      ')}
      acc = ${comb('acc', 'x[u32(base + ro)]')};
    }`;
    }
    const step = col ? S : 1;
    const tree: string[] = [];
    for (let s = T / 2; s >= 1; s /= 2) {
      tree.push(`if (lane < ${s}u) { sh[lid] = ${comb('sh[lid]', `sh[lid + ${s * step}u]`)}; }`);
      tree.push(`workgroupBarrier();`);
    }
    return `${paramsDecl(u.words)}
@group(0) @binding(1) var<storage, read> ${vec ? `x4: array<vec4<${ty}>>` : `x: array<${ty}>`};
@group(0) @binding(2) var<storage, read_write> y: array<${ty}>;
${one ? ONE_DECL : ''}
var<workgroup> sh: array<${ty}, ${wgSize}>;
${f ? FLOAT_HELPERS : ''}
@compute @workgroup_size(${wgSize})
fn main(${MAIN_ARGS}) {
  ${LINEAR_WG}
  let seg = ${col ? `lid % ${S}u` : `lid / ${T}u`};
  let lane = ${col ? `lid / ${S}u` : `lid % ${T}u`};
  let v = wg * ${S}u + seg;
  var acc: ${ty} = ${ident};
  if (v < ${slots}) {
    ${chunkMajor ? `let nO = ${slots} / ${chunks}; let c = v / nO; let o = v - c * nO;` : `let o = v / ${chunks}; let c = v - o * ${chunks};`}
    ${base.join('\n    ')}
    ${fold}
  }
  sh[lid] = acc;
  workgroupBarrier();
  ${tree.join('\n  ')}
  ${one ? this.finish(u, tree) : `if (lane == 0u && v < ${slots}) { y[v] = sh[lid]; }`}
}`;
  }
}
