import { Access, DType, Expr, exprDType, foldExpr, lowerViews } from '@surf/core';
import type { Runtime } from '../../runtime';
import type { PooledBuffer } from '../../pool';
import { WGSL_BINARY, WGSL_UNARY, opHelpersFor } from '../wgsl-ops';
import { FLOAT_HELPERS, LINEAR_WG, MAIN_ARGS, pF, pI, pU, paramsDecl, storageType, valueType } from '../wgsl';
import { Program, Uniforms, operandNames } from '../program';
import { transposeGroups, transposeTiles, transposeWgsl } from './transpose';
import { exprsInfo, findPlan, replayPlan, storePlan } from './plan-cache';
import type { EwInput } from './operand';

export type { EwInput } from './operand';

/**
 * Elementwise kernels: an expression tree over strided inputs compiled to one WGSL kernel.
 * One thread per output element. Each input is read in one of five ways, chosen on the host
 * by core's shared lowering (ops/lower.ts) after dims are collapsed:
 *   c  contiguous: buffer[offset + i], no index arithmetic (the fast path)
 *   b  broadcast scalar (every stride 0): buffer[offset]
 *   s  strided: offset + Σ digit[d]·stride[d] (negative strides are flips, 0 is broadcast)
 *   m  strided and masked: outside [lo, hi) on any dim reads 0 (pad)
 *   z  masked away entirely: the constant 0
 * The output index is split into digits once, shared by all s/m inputs.
 */
interface Plan {
  shape: number[];
  kinds: Access[];
  strides: number[][];
  masks: ([number, number][] | null)[];
}

function plan(shape: readonly number[], inputs: readonly EwInput[]): Plan {
  // The shared lowering (core ops/lower.ts): collapse, then classify each input's reads.
  const low = lowerViews(shape, inputs);
  return {
    shape: low.shape,
    kinds: low.ops.map((o) => o.access),
    strides: low.ops.map((o) => o.strides),
    masks: low.ops.map((o) => o.mask),
  };
}

/** Emits an expression as a sequence of `let` statements (shared subtrees computed once). */
export class Emitter {
  lines: string[] = [];
  private memo = new Map<string, string>();
  private n = 0;
  private counter = { next: 0 };
  constructor(
    private inDT: readonly DType[],
    private vals: readonly string[],
    private constBase: number,
  ) {}

  /** The op helpers (wgsl-ops.ts) the emitted lines call: put them next to FLOAT_HELPERS. */
  helpers(): string {
    return opHelpersFor(this.lines.join('\n'));
  }

  /** Folds the tree (core's foldExpr), spelling each op from wgsl-ops.ts. */
  emit(e: Expr): { v: string; key: string } {
    type R = { v: string; key: string };
    const line = (key: string, code: string, dt: DType): R => {
      const hit = this.memo.get(key);
      if (hit) return { v: hit, key };
      const v = `t${this.n++}`;
      this.lines.push(`let ${v}: ${valueType(dt)} = ${code};`);
      this.memo.set(key, v);
      return { v, key };
    };
    const cmp = (op: string) => op === 'eq' || op === 'lt';
    return foldExpr<R>(
      e,
      this.inDT,
      {
        input: (i) => ({ v: this.vals[i], key: `i${i}` }),
        const: (_, dtype, slot) => {
          const w = this.constBase + slot;
          return line(`c${w}`, dtype === 'float32' ? pF(w) : dtype === 'int32' ? pI(w) : `(${pU(w)} != 0u)`, dtype);
        },
        cast: (a, from, to) => line(`cast_${to}(${a.key})`, castCode(a.v, from, to), to),
        unary: (op, a, dt) => line(`${op}(${a.key})`, WGSL_UNARY[op](a.v, dt), dt),
        binary: (op, a, b, dt) => {
          // x - x and x / x of one value: drivers fold them to 0 and 1 (NVIDIA does), which
          // loses the NaN that Inf/NaN (and 0/0) give; decide from the bits instead.
          const self = a.key === b.key && dt === 'float32' && (op === 'sub' || op === 'div');
          const code = self ? `${op === 'sub' ? 'fsubself_' : 'fdivself_'}(${a.v})` : WGSL_BINARY[op](a.v, b.v, dt);
          return line(`${op}(${a.key},${b.key})`, code, cmp(op) ? 'bool' : dt);
        },
        where: (c, a, b, dt) => line(`where(${c.key},${a.key},${b.key})`, `select(${b.v}, ${a.v}, ${c.v})`, dt),
      },
      this.counter,
    ).value;
  }
}

function castCode(a: string, from: DType, to: DType): string {
  if (from === to) return a;
  if (to === 'bool') return from === 'float32' ? `fbool_(${a})` : `(${a} != 0)`;
  if (from === 'bool') return to === 'float32' ? `select(0.0, 1.0, ${a})` : `select(0, 1, ${a})`;
  if (to === 'int32') return `ftoi_(${a})`;
  return `f32(${a})`;
}

/**
 * Records one elementwise dispatch writing every expression of `outs` to `outBufs`.
 * `inputs` are all the expression's inputs (unused ones are not bound).
 */
export function encodeElementwise(
  rt: Runtime,
  outs: readonly Expr[],
  inputs: readonly EwInput[],
  shape: readonly number[],
  outBufs: readonly PooledBuffer[],
  wgSize: number,
  allowVec4 = true,
): void {
  const info = exprsInfo(outs);
  // A signature seen before: its block with this call's offsets and constants (elementwise/plan-cache.ts).
  const hit = findPlan(rt, info.key, inputs, shape, wgSize, allowVec4);
  if (hit) return replayPlan(rt, hit, info.consts, inputs, outBufs);
  const total = shape.reduce((a, b) => a * b, 1);
  const p = plan(shape, inputs);
  const rank = p.shape.length;
  const used = new Set<number>();
  info.used.forEach((u, i) => {
    if (u) used.add(i);
  });
  // Bind each distinct buffer once, however many inputs view it.
  const bindOf: number[] = [];
  const bound: PooledBuffer[] = [];
  const boundDT: DType[] = [];
  const firstOf: number[] = [];
  inputs.forEach((x, i) => {
    if (!used.has(i) || p.kinds[i] === 'z') return;
    let j = bound.findIndex((b, k) => b === x.buf && boundDT[k] === x.dtype);
    if (j < 0) {
      j = bound.length;
      bound.push(x.buf);
      boundDT.push(x.dtype);
      firstOf.push(i);
    }
    bindOf[i] = j;
  });
  const inDT = inputs.map((x) => x.dtype);
  const outDT = outs.map((e) => exprDType(e, inDT));
  const consts = info.consts;
  const exprKeys = info.key;
  const kindStr = inputs.map((x, i) => (used.has(i) ? `${p.kinds[i]}${bindOf[i] ?? ''}` : '_')).join('');
  // Four elements per thread through vec4 loads and stores (see vec4Plan).
  const vec = allowVec4 && vec4Plan(total, inputs, p, used);
  // A transposed input staged through workgroup tiles (elementwise/transpose.ts).
  const tiled =
    vec || !allowVec4
      ? null
      : transposeTiles(
          p.shape,
          inputs.map((x, i) => ({ dtype: x.dtype, kind: p.kinds[i], strides: p.strides[i], used: used.has(i) })),
          wgSize,
        );

  // Parameters: total, shape, then per read input its offset [, strides [, mask lo, hi]], then constants.
  const readKind = (i: number): Access => (used.has(i) ? p.kinds[i] : 'z');
  const key = `ew|${exprKeys}|${inDT.join(',')}|${kindStr}|${boundDT.join(',')}|r${rank}|wg${wgSize}${vec ? '|v4' : ''}${tiled ? `|t${tiled.join(',')}` : ''}`;
  const prog: Program = {
    key,
    workgroupSize: wgSize,
    reads: bound.length,
    writes: outBufs.length,
    uniforms: () => {
      const u = new Uniforms().u32('total').u32('shape', rank);
      inputs.forEach((_, i) => {
        const kind = readKind(i);
        if (kind !== 'z') u.i32(inNames(i).Offset);
        if (kind === 's' || kind === 'm') u.i32(inNames(i).Strides, rank);
        if (kind === 'm') u.u32(inNames(i).Lo, rank).u32(inNames(i).Hi, rank);
      });
      return u.u32('consts', consts.length);
    },
    wgsl: (u) => {
      if (vec) return vec4Wgsl(u, outs, inputs, used, p.kinds, bindOf, boundDT, outDT, wgSize);
      if (tiled) {
        return transposeWgsl({
          u,
          tiled,
          bindOf,
          boundDT,
          outDT,
          names: inNames,
          inputs: inputs.map((x, i) => ({
            dtype: x.dtype,
            kind: p.kinds[i],
            strides: p.strides[i],
            used: used.has(i),
          })),
          emit: (vals) => {
            const em = new Emitter(inDT, vals, u.slot('consts').at);
            const results = outs.map((e) => em.emit(e).v);
            return { lines: em.lines, results, helpers: em.helpers() };
          },
        });
      }
      const decl: string[] = [];
      bound.forEach((_, j) =>
        decl.push(`@group(0) @binding(${j + 1}) var<storage, read> b${j}: array<${storageType(boundDT[j])}>;`),
      );
      outDT.forEach((dt, o) =>
        decl.push(
          `@group(0) @binding(${bound.length + 1 + o}) var<storage, read_write> out${o}: array<${storageType(dt)}>;`,
        ),
      );
      const body: string[] = [];
      const needDigits = inputs.some((_, i) => used.has(i) && (p.kinds[i] === 's' || p.kinds[i] === 'm'));
      if (needDigits && rank > 0) {
        body.push(`var r = i;`);
        for (let d = rank - 1; d > 0; d--)
          body.push(`let d${d} = r % ${u.ref('shape', d)}; r = r / ${u.ref('shape', d)};`);
        body.push(`let d0 = r;`);
      }
      const vals: string[] = [];
      inputs.forEach((x, i) => {
        const kind = readKind(i);
        const ty = valueType(x.dtype);
        const load = (idx: string) => (x.dtype === 'bool' ? `(b${bindOf[i]}[${idx}] != 0u)` : `b${bindOf[i]}[${idx}]`);
        const zero = x.dtype === 'float32' ? '0.0' : x.dtype === 'int32' ? '0' : 'false';
        vals.push(`v${i}`);
        if (kind === 'z') body.push(`let v${i}: ${ty} = ${zero};`);
        // (a contiguous input's offset is non-negative: read as u32 to index without a cast)
        else if (kind === 'c') body.push(`let v${i}: ${ty} = ${load(`${pU(u.word(inNames(i).Offset))} + i`)};`);
        else if (kind === 'b') body.push(`let v${i}: ${ty} = ${load(pU(u.word(inNames(i).Offset)))};`);
        else {
          const terms = Array.from({ length: rank }, (_, d) => `i32(d${d}) * ${u.ref(inNames(i).Strides, d)}`);
          body.push(`let o${i} = u32(${u.ref(inNames(i).Offset)} + ${terms.join(' + ')});`);
          if (kind === 's') body.push(`let v${i}: ${ty} = ${load(`o${i}`)};`);
          else {
            const conds = Array.from(
              { length: rank },
              (_, d) => `d${d} >= ${u.ref(inNames(i).Lo, d)} && d${d} < ${u.ref(inNames(i).Hi, d)}`,
            );
            body.push(`var v${i}: ${ty} = ${zero};`);
            body.push(`if (${conds.join(' && ')}) { v${i} = ${load(`o${i}`)}; }`);
          }
        }
      });
      const em = new Emitter(inDT, vals, u.slot('consts').at);
      const results = outs.map((e) => em.emit(e).v);
      body.push(...em.lines);
      results.forEach((v, o) =>
        body.push(outDT[o] === 'bool' ? `out${o}[i] = select(0u, 1u, ${v});` : `out${o}[i] = ${v};`),
      );
      return `${paramsDecl(u.words)}
${decl.join('\n')}
${FLOAT_HELPERS}
${em.helpers()}
@compute @workgroup_size(${wgSize})
fn main(${MAIN_ARGS}) {
  ${LINEAR_WG}
  let i = wg * ${wgSize}u + lid;
  if (i >= ${u.ref('total')}) { return; }
  ${body.join('\n  ')}
}`;
    },
  };
  const k = rt.program(prog);
  const w = rt.block(k);
  w.set('total', total).setAll('shape', p.shape);
  inputs.forEach((x, i) => {
    const kind = readKind(i);
    if (kind !== 'z') w.set(inNames(i).Offset, x.offset);
    if (kind === 's' || kind === 'm') w.setAll(inNames(i).Strides, p.strides[i]);
    if (kind === 'm') {
      for (let d = 0; d < rank; d++)
        w.set(inNames(i).Lo, Math.max(0, p.masks[i]![d][0]), d).set(inNames(i).Hi, Math.max(0, p.masks[i]![d][1]), d);
    }
  });
  w.setConsts('consts', consts);
  const groups = tiled ? transposeGroups(p.shape) : Math.ceil(total / (vec ? 4 * wgSize : wgSize));
  const offsetWords: number[] = [];
  inputs.forEach((_, i) => {
    if (readKind(i) !== 'z') offsetWords.push(k.uniforms.word(inNames(i).Offset), i);
  });
  storePlan(rt, info.key, {
    kernel: k,
    groups,
    shape: shape.slice(),
    wgSize,
    allowVec4,
    dtypes: inDT,
    strides: inputs.map((x) => x.strides.slice()),
    masks: inputs.map((x) => x.mask && x.mask.map(([lo, hi]) => [lo, hi] as const)),
    off4: inputs.map((x) => x.offset % 4 === 0),
    bindOf: inputs.map((_, i) => bindOf[i] ?? -1),
    firstOf,
    template: rt.words.u32.slice(w.base, w.base + k.uniforms.words),
    offsetWords,
    constBase: k.uniforms.slot('consts').at,
  });
  rt.dispatch(k, [...bound, ...outBufs], w.base, groups);
}

/**
 * Whether every thread may take four consecutive elements with vec4 loads and stores: each
 * read input contiguous ('c', offset a multiple of 4) or a broadcast scalar ('b'), and the
 * element count a multiple of 4. The expression itself stays scalar (emitted once per lane),
 * so any op and dtype works; the gain is 16-byte memory transactions and a quarter of the
 * threads' index arithmetic (a*b+c over 16M elements trailed PyTorch with scalar loads).
 */
function vec4Plan(total: number, inputs: readonly EwInput[], p: Plan, used: ReadonlySet<number>): boolean {
  if (total % 4 !== 0) return false;
  return inputs.every(
    (x, i) => !used.has(i) || p.kinds[i] === 'b' || p.kinds[i] === 'z' || (p.kinds[i] === 'c' && x.offset % 4 === 0),
  );
}

/** The vec4 kernel: thread t owns elements 4t..4t+3; every bound buffer is seen as vec4s. */
function vec4Wgsl(
  u: Uniforms,
  outs: readonly Expr[],
  inputs: readonly EwInput[],
  used: ReadonlySet<number>,
  kinds: readonly Access[],
  bindOf: readonly number[],
  boundDT: readonly DType[],
  outDT: readonly DType[],
  wgSize: number,
): string {
  const decl: string[] = [];
  const vty = (dt: DType) => `vec4<${storageType(dt)}>`;
  boundDT.forEach((dt, j) => decl.push(`@group(0) @binding(${j + 1}) var<storage, read> b${j}: array<${vty(dt)}>;`));
  outDT.forEach((dt, o) =>
    decl.push(`@group(0) @binding(${boundDT.length + 1 + o}) var<storage, read_write> out${o}: array<${vty(dt)}>;`),
  );
  const body: string[] = [];
  const inDT = inputs.map((x) => x.dtype);
  inputs.forEach((x, i) => {
    if (!used.has(i) || kinds[i] === 'z') return;
    const off = pU(u.word(inNames(i).Offset));
    if (kinds[i] === 'c') body.push(`let q${i} = b${bindOf[i]}[${off} / 4u + i];`);
    else body.push(`let s${i} = b${bindOf[i]}[${off} / 4u][${off} % 4u];`);
  });
  outDT.forEach((dt, o) => body.push(`var r${o}: ${vty(dt)};`));
  let helpers = '';
  for (let lane = 0; lane < 4; lane++) {
    const lines: string[] = [];
    const vals: string[] = [];
    inputs.forEach((x, i) => {
      const ty = valueType(x.dtype);
      vals.push(`v${i}`);
      const raw = kinds[i] === 'c' ? `q${i}[${lane}]` : `s${i}`;
      const zero = x.dtype === 'float32' ? '0.0' : x.dtype === 'int32' ? '0' : 'false';
      if (!used.has(i) || kinds[i] === 'z') lines.push(`let v${i}: ${ty} = ${zero};`);
      else lines.push(`let v${i}: ${ty} = ${x.dtype === 'bool' ? `(${raw} != 0u)` : raw};`);
    });
    const em = new Emitter(inDT, vals, u.slot('consts').at);
    const results = outs.map((e) => em.emit(e).v);
    lines.push(...em.lines);
    helpers = em.helpers();
    results.forEach((v, o) => lines.push(`r${o}[${lane}] = ${outDT[o] === 'bool' ? `select(0u, 1u, ${v})` : v};`));
    // A block per lane: the emitter's temporaries repeat their names in each.
    body.push(`{\n    ${lines.join('\n    ')}\n  }`);
  }
  outDT.forEach((_, o) => body.push(`out${o}[i] = r${o};`));
  return `${paramsDecl(u.words)}
${decl.join('\n')}
${FLOAT_HELPERS}
${helpers}
@compute @workgroup_size(${wgSize})
fn main(${MAIN_ARGS}) {
  ${LINEAR_WG}
  let i = wg * ${wgSize}u + lid;
  if (i >= ${u.ref('total')} / 4u) { return; }
  ${body.join('\n  ')}
}`;
}

/** Parameter names of input i's offset, strides and mask bounds. */
const inNames = operandNames('in', ['Offset', 'Strides', 'Lo', 'Hi'] as const);
