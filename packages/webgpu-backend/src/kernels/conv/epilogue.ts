import { DType, Expr, exprInputs, exprKey } from '@surf/core';
import type { Runtime } from '../../runtime';
import type { PooledBuffer } from '../../pool';
import { Emitter } from '../elementwise/elementwise';
import type { ConvFin } from './direct-wgsl';
import { FLOAT_HELPERS, pI, storageType, valueType } from '../wgsl';

/** An epilogue input: a 4-d operand [n, o, oH, oW] (H stride 0 for 1-d) with its dtype. */
export interface ConvEpilogueInput {
  buf: PooledBuffer;
  offset: number;
  strides: readonly number[];
  dtype: DType;
}

/**
 * The fused epilogue of a conv kernel (implicit GEMM or Winograd): which buffers it binds
 * (one binding per distinct buffer and dtype, unused inputs bound not at all), its parameter
 * words after `base` (offset and 4 strides per used input, then the expression's constants),
 * the pipeline-key part, the WGSL helper it emits and the call that wraps a stored value.
 */
export interface ConvEpiloguePlan {
  bufs: PooledBuffer[];
  /** Parameter words in all (base included). */
  words: number;
  key: string;
  /** Binding declarations from `first`, then the epi_ helper. */
  wgsl(first: number): string[];
  fin: ConvFin;
  /** Writes the offsets, strides and constants into the parameter block at word p. */
  fill(rt: Runtime, p: number): void;
}

export function planConvEpilogue(
  epi: { expr: Expr; inputs: ConvEpilogueInput[] } | undefined,
  base: number,
): ConvEpiloguePlan {
  if (!epi) return { bufs: [], words: base, key: '', wgsl: () => [], fin: (v) => v, fill: () => {} };
  const used = exprInputs(epi.expr);
  const bufs: PooledBuffer[] = [],
    dts: DType[] = [],
    bind: number[] = [],
    word: number[] = [];
  const consts: { value: number; dtype: DType }[] = [];
  let words = base;
  epi.inputs.forEach((e, j) => {
    if (!used.has(j + 1)) return;
    let q = bufs.findIndex((b, i) => b === e.buf && dts[i] === e.dtype);
    if (q < 0) {
      q = bufs.length;
      bufs.push(e.buf);
      dts.push(e.dtype);
    }
    bind[j] = q;
    word[j] = words;
    words += 5;
  });
  const key = `|e${exprKey(epi.expr, consts)}|${epi.inputs.map((e, j) => (used.has(j + 1) ? `${e.dtype[0]}${bind[j]}` : '_')).join('')}`;
  const constBase = words;
  words += consts.length;
  const wgsl = (first: number): string[] => {
    const L = bufs.map(
      (_, q) => `@group(0) @binding(${first + q}) var<storage, read> E${q}: array<${storageType(dts[q])}>;`,
    );
    const inDT: DType[] = ['float32', ...epi.inputs.map((e) => e.dtype)];
    const reads: string[] = [];
    for (const j of bind.keys()) {
      if (word[j] === undefined) continue;
      const wd = word[j];
      const idx = `u32(${pI(wd)} + nb * ${pI(wd + 1)} + oc * ${pI(wd + 2)} + oy * ${pI(wd + 3)} + ox * ${pI(wd + 4)})`;
      const ld = epi.inputs[j].dtype === 'bool' ? `(E${bind[j]}[${idx}] != 0u)` : `E${bind[j]}[${idx}]`;
      reads.push(`let v${j + 1}: ${valueType(epi.inputs[j].dtype)} = ${ld};`);
    }
    const em = new Emitter(
      inDT,
      inDT.map((_, i) => `v${i}`),
      constBase,
    );
    const res = em.emit(epi.expr).v;
    L.push(FLOAT_HELPERS, em.helpers());
    L.push(
      `fn epi_(v0: f32, nb: i32, oc: i32, oy: i32, ox: i32) -> f32 {\n  ${[...reads, ...em.lines].join('\n  ')}\n  return ${res};\n}`,
    );
    return L;
  };
  const fin: ConvFin = (v, nb, oc, py, px) => `epi_(${v}, i32(${nb}), i32(${oc}), i32(${py}), i32(${px}))`;
  const fill = (rt: Runtime, p: number): void => {
    const { u32, i32, f32 } = rt.words;
    epi.inputs.forEach((e, j) => {
      const wd = word[j];
      if (wd === undefined) return;
      i32[p + wd] = e.offset;
      for (let d = 0; d < 4; d++) i32[p + wd + 1 + d] = e.strides[d];
    });
    consts.forEach((c, j) => {
      if (c.dtype === 'float32') f32[p + constBase + j] = c.value;
      else if (c.dtype === 'int32')
        i32[p + constBase + j] = Number.isNaN(c.value)
          ? 0
          : Math.max(-2147483648, Math.min(2147483647, Math.trunc(c.value)));
      else u32[p + constBase + j] = c.value !== 0 ? 1 : 0;
    });
  };
  return { bufs, words, key, wgsl, fin, fill };
}
