import type { DType } from '@surf/core';
import { pF, pI, pU } from './wgsl';

/**
 * Kernels as program objects (the TF.js WebGPU backend's idea): a kernel kind is a small
 * object holding what its WGSL depends on. Its `key` names a pipeline in the runtime's cache;
 * on a miss the runtime asks it for its parameter layout (`uniforms`, once per key) and its
 * WGSL text. Each dispatch then writes its parameters by name through a ParamBlock, so the
 * host side and the shader agree on every word by construction (no `pI(7)` that must match
 * `i32[p + 7]`).
 */
export interface Program {
  /** Everything the WGSL depends on (never a shape or constant that travels as a parameter). */
  readonly key: string;
  /** Threads per workgroup (the shader's @workgroup_size; dispatches count workgroups). */
  readonly workgroupSize: number;
  /** Storage buffers the kernel reads, then writes (bindings 1.., after the parameter block). */
  readonly reads: number;
  readonly writes: number;
  /** The named parameter words; called once per key, on a pipeline-cache miss. */
  uniforms(): Uniforms;
  /** The shader (entry point `main`), reading its parameters through `u`. */
  wgsl(u: Uniforms): string;
}

export type WordType = 'u32' | 'i32' | 'f32';

interface Slot {
  readonly at: number;
  readonly n: number;
  readonly type: WordType;
}

/**
 * The layout of one kernel's parameter block: named runs of 32-bit words (scalars or short
 * arrays such as a shape), in the order they are declared. The WGSL reads a word with
 * `ref(name, i)`; the host writes it with ParamBlock.set(name, ...).
 */
export class Uniforms {
  private slots = new Map<string, Slot>();
  /** Words declared so far (the block's size). */
  words = 0;

  /** Declares `n` words of `type` under `name` (n may be 0: an empty run still has a position). */
  add(name: string, type: WordType, n = 1): this {
    if (this.slots.has(name)) throw new Error(`uniforms: '${name}' declared twice`);
    this.slots.set(name, { at: this.words, n, type });
    this.words += n;
    return this;
  }

  u32(name: string, n = 1): this {
    return this.add(name, 'u32', n);
  }
  i32(name: string, n = 1): this {
    return this.add(name, 'i32', n);
  }
  f32(name: string, n = 1): this {
    return this.add(name, 'f32', n);
  }

  has(name: string): boolean {
    return this.slots.has(name);
  }

  slot(name: string): Slot {
    const s = this.slots.get(name);
    if (!s) throw new Error(`uniforms: no parameter '${name}'`);
    return s;
  }

  /** Word index of element `i` of `name` in the block. */
  word(name: string, i = 0): number {
    const s = this.slot(name);
    if (i < 0 || i >= s.n) throw new Error(`uniforms: '${name}'[${i}] is outside its ${s.n} words`);
    return s.at + i;
  }

  /** The WGSL expression reading element `i` of `name`, as its declared type. */
  ref(name: string, i = 0): string {
    const w = this.word(name, i);
    const t = this.slot(name).type;
    return t === 'u32' ? pU(w) : t === 'i32' ? pI(w) : pF(w);
  }
}

/** One dispatch's parameter block in the arena, written by name. */
export class ParamBlock {
  constructor(
    private readonly words: { u32: Uint32Array; i32: Int32Array; f32: Float32Array },
    /** Word index of the block in the arena (what Runtime.dispatch takes). */
    readonly base: number,
    private readonly u: Uniforms,
  ) {}

  /** Writes `v` at element `i` of `name`, as the slot's type. */
  set(name: string, v: number, i = 0): this {
    const s = this.u.slot(name);
    const w = this.base + s.at + i;
    if (s.type === 'u32') this.words.u32[w] = v;
    else if (s.type === 'i32') this.words.i32[w] = v;
    else this.words.f32[w] = v;
    return this;
  }

  /** Writes every element of `name` from `vs` (length must match the slot). */
  setAll(name: string, vs: readonly number[]): this {
    const s = this.u.slot(name);
    if (vs.length !== s.n) throw new Error(`params: '${name}' has ${s.n} words; got ${vs.length} values`);
    const arr = s.type === 'u32' ? this.words.u32 : s.type === 'i32' ? this.words.i32 : this.words.f32;
    const w = this.base + s.at;
    for (let i = 0; i < vs.length; i++) arr[w + i] = vs[i];
    return this;
  }

  /**
   * Writes the constants an expression key collected (exprKey) into `name`, a run of u32
   * words the expression emitter reads as f32, i32 (truncated, saturated, NaN to 0) or bool.
   */
  setConsts(name: string, consts: readonly { value: number; dtype: DType }[]): this {
    const s = this.u.slot(name);
    if (consts.length !== s.n) throw new Error(`params: '${name}' has ${s.n} words; got ${consts.length} constants`);
    writeConsts(this.words, this.base + s.at, consts);
    return this;
  }
}

/** Writes constants as the expression emitter reads them, from word `at` on (see setConsts). */
export function writeConsts(
  words: { u32: Uint32Array; i32: Int32Array; f32: Float32Array },
  at: number,
  consts: readonly { value: number; dtype: DType }[],
): void {
  for (let j = 0; j < consts.length; j++) {
    const c = consts[j];
    if (c.dtype === 'float32') words.f32[at + j] = c.value;
    else if (c.dtype === 'int32') words.i32[at + j] = castInt(c.value);
    else words.u32[at + j] = c.value !== 0 ? 1 : 0;
  }
}

/**
 * Names of per-operand parameter runs (`in3Offset`), built once: a dispatch writes by these
 * names, and a fresh template string per write would be hashed on every lookup.
 */
export function operandNames<const K extends readonly string[]>(
  prefix: string,
  fields: K,
): (i: number) => { readonly [F in K[number]]: string } {
  const cache: { [F in K[number]]: string }[] = [];
  return (i) => {
    let c = cache[i];
    if (!c) {
      c = {} as { [F in K[number]]: string };
      for (const f of fields) (c as Record<string, string>)[f] = `${prefix}${i}${f}`;
      cache[i] = c;
    }
    return c;
  };
}

/** float -> int32 as the kernels cast: truncate, saturate, NaN -> 0. */
export function castInt(v: number): number {
  if (Number.isNaN(v)) return 0;
  if (v >= 2147483647) return 2147483647;
  if (v <= -2147483648) return -2147483648;
  return Math.trunc(v);
}
