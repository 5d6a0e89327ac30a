import { Access, DType, Expr, exprDType, exprInputs, exprKey, foldExpr, lowerViews } from '@surf/core';
import type { Runtime } from '../runtime';
import type { PooledBuffer } from '../pool';
import { WGSL_BINARY, WGSL_UNARY, opHelpersFor } from './wgsl-ops';
import { FLOAT_HELPERS, LINEAR_WG, MAIN_ARGS, pF, pI, pU, paramsDecl, storageType, valueType } from './wgsl';

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
export interface EwInput {
  buf: PooledBuffer;
  dtype: DType;
  offset: number;
  strides: readonly number[];
  mask: readonly (readonly [number, number])[] | null;
}

interface Plan {
  shape: number[];
  kinds: Access[];
  strides: number[][];
  masks: ([number, number][] | null)[];
}

function plan(shape: readonly number[], inputs: readonly EwInput[]): Plan {
  // The shared lowering (core ops/lower.ts): collapse, then classify each input's reads.
  const low = lowerViews(shape, inputs);
  return { shape: low.shape, kinds: low.ops.map((o) => o.access), strides: low.ops.map((o) => o.strides), masks: low.ops.map((o) => o.mask) };
}

/** Emits an expression as a sequence of `let` statements (shared subtrees computed once). */
export class Emitter {
  lines: string[] = [];
  private memo = new Map<string, string>();
  private n = 0;
  private counter = { next: 0 };
  constructor(private inDT: readonly DType[], private vals: readonly string[], private constBase: number) {}

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
    return foldExpr<R>(e, this.inDT, {
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
    }, this.counter).value;
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
export function encodeElementwise(rt: Runtime, outs: readonly Expr[], inputs: readonly EwInput[], shape: readonly number[], outBufs: readonly PooledBuffer[], wgSize: number): void {
  const total = shape.reduce((a, b) => a * b, 1);
  const p = plan(shape, inputs);
  const rank = p.shape.length;
  const used = new Set<number>();
  for (const e of outs) exprInputs(e, used);
  // Bind each distinct buffer once, however many inputs view it.
  const bindOf: number[] = [];
  const bound: PooledBuffer[] = [];
  const boundDT: DType[] = [];
  inputs.forEach((x, i) => {
    if (!used.has(i) || p.kinds[i] === 'z') return;
    let j = bound.findIndex((b, k) => b === x.buf && boundDT[k] === x.dtype);
    if (j < 0) {
      j = bound.length;
      bound.push(x.buf);
      boundDT.push(x.dtype);
    }
    bindOf[i] = j;
  });
  const inDT = inputs.map((x) => x.dtype);
  const outDT = outs.map((e) => exprDType(e, inDT));
  const consts: { value: number; dtype: DType }[] = [];
  const exprKeys = outs.map((e) => exprKey(e, consts)).join(';');
  const kindStr = inputs.map((x, i) => (used.has(i) ? `${p.kinds[i]}${bindOf[i] ?? ''}` : '_')).join('');

  // Parameter words: total, shape, then per read input offset [, strides [, lo, hi]], then constants.
  const layout: { off: number; st: number; lo: number; hi: number }[] = [];
  let w = 1 + rank;
  inputs.forEach((_, i) => {
    const k = used.has(i) ? p.kinds[i] : 'z';
    const l = { off: -1, st: -1, lo: -1, hi: -1 };
    if (k !== 'z') l.off = w++;
    if (k === 's' || k === 'm') { l.st = w; w += rank; }
    if (k === 'm') { l.lo = w; w += rank; l.hi = w; w += rank; }
    layout.push(l);
  });
  const constBase = w;
  w += consts.length;

  const key = `ew|${exprKeys}|${inDT.join(',')}|${kindStr}|${boundDT.join(',')}|r${rank}|wg${wgSize}`;
  const k = rt.kernel(key, bound.length, outBufs.length, w, () => {
    const decl: string[] = [];
    bound.forEach((_, j) => decl.push(`@group(0) @binding(${j + 1}) var<storage, read> b${j}: array<${storageType(boundDT[j])}>;`));
    outDT.forEach((dt, o) => decl.push(`@group(0) @binding(${bound.length + 1 + o}) var<storage, read_write> out${o}: array<${storageType(dt)}>;`));
    const body: string[] = [];
    const needDigits = inputs.some((_, i) => used.has(i) && (p.kinds[i] === 's' || p.kinds[i] === 'm'));
    if (needDigits && rank > 0) {
      body.push(`var r = i;`);
      for (let d = rank - 1; d > 0; d--) body.push(`let d${d} = r % ${pU(1 + d)}; r = r / ${pU(1 + d)};`);
      body.push(`let d0 = r;`);
    }
    const vals: string[] = [];
    inputs.forEach((x, i) => {
      const kind = used.has(i) ? p.kinds[i] : 'z';
      const l = layout[i];
      const ty = valueType(x.dtype);
      const load = (idx: string) => (x.dtype === 'bool' ? `(b${bindOf[i]}[${idx}] != 0u)` : `b${bindOf[i]}[${idx}]`);
      const zero = x.dtype === 'float32' ? '0.0' : x.dtype === 'int32' ? '0' : 'false';
      vals.push(`v${i}`);
      if (kind === 'z') body.push(`let v${i}: ${ty} = ${zero};`);
      else if (kind === 'c') body.push(`let v${i}: ${ty} = ${load(`${pU(l.off)} + i`)};`);
      else if (kind === 'b') body.push(`let v${i}: ${ty} = ${load(pU(l.off))};`);
      else {
        const terms = Array.from({ length: rank }, (_, d) => `i32(d${d}) * ${pI(l.st + d)}`);
        body.push(`let o${i} = u32(${pI(l.off)} + ${terms.join(' + ')});`);
        if (kind === 's') body.push(`let v${i}: ${ty} = ${load(`o${i}`)};`);
        else {
          const conds = Array.from({ length: rank }, (_, d) => `d${d} >= ${pU(l.lo + d)} && d${d} < ${pU(l.hi + d)}`);
          body.push(`var v${i}: ${ty} = ${zero};`);
          body.push(`if (${conds.join(' && ')}) { v${i} = ${load(`o${i}`)}; }`);
        }
      }
    });
    const em = new Emitter(inDT, vals, constBase);
    const results = outs.map((e) => em.emit(e).v);
    body.push(...em.lines);
    results.forEach((v, o) => body.push(outDT[o] === 'bool' ? `out${o}[i] = select(0u, 1u, ${v});` : `out${o}[i] = ${v};`));
    return `${paramsDecl(w)}
${decl.join('\n')}
${FLOAT_HELPERS}
${em.helpers()}
@compute @workgroup_size(${wgSize})
fn main(${MAIN_ARGS}) {
  ${LINEAR_WG}
  let i = wg * ${wgSize}u + lid;
  if (i >= ${pU(0)}) { return; }
  ${body.join('\n  ')}
}`;
  });

  const base = rt.params(k);
  const { u32, i32, f32 } = rt.words;
  u32[base] = total;
  for (let d = 0; d < rank; d++) u32[base + 1 + d] = p.shape[d];
  inputs.forEach((x, i) => {
    const l = layout[i];
    if (l.off >= 0) i32[base + l.off] = x.offset;
    if (l.st >= 0) for (let d = 0; d < rank; d++) i32[base + l.st + d] = p.strides[i][d];
    if (l.lo >= 0) {
      for (let d = 0; d < rank; d++) {
        u32[base + l.lo + d] = Math.max(0, p.masks[i]![d][0]);
        u32[base + l.hi + d] = Math.max(0, p.masks[i]![d][1]);
      }
    }
  });
  consts.forEach((c, j) => {
    if (c.dtype === 'float32') f32[base + constBase + j] = c.value;
    else if (c.dtype === 'int32') i32[base + constBase + j] = castInt(c.value);
    else u32[base + constBase + j] = c.value !== 0 ? 1 : 0;
  });
  rt.dispatch(k, [...bound, ...outBufs], base, Math.ceil(total / wgSize));
}

function castInt(v: number): number {
  if (Number.isNaN(v)) return 0;
  if (v >= 2147483647) return 2147483647;
  if (v <= -2147483648) return -2147483648;
  return Math.trunc(v);
}
