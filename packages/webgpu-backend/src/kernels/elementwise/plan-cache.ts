import { DType, Expr, ExprInfo, exprInfo } from '@surf/core';
import type { Kernel, Runtime } from '../../runtime';
import type { PooledBuffer } from '../../pool';
import { writeConsts } from '../program';
import type { EwInput } from './operand';

/**
 * The per-signature plan cache of elementwise dispatches (the host cost of a small eager op). A kernel
 * and its parameter block depend only on the expression's structure, the input dtypes,
 * shapes, strides, masks, which inputs share a buffer, and whether each offset is a multiple
 * of 4; the offsets themselves and the constants' values are the only words that change
 * between calls of one signature. So the first dispatch of a signature runs the full
 * planner (lowering, code generation, named parameters) and leaves here what it wrote; the
 * next ones that match it copy that block, patch offsets and constants at known words, and
 * dispatch: no lowering, no strings, no name lookups.
 */
export interface EwPlan {
  readonly kernel: Kernel;
  readonly groups: number;
  // What the plan was made for (all compared on a hit).
  readonly shape: readonly number[];
  readonly dtypes: readonly DType[];
  readonly strides: readonly (readonly number[])[];
  readonly masks: readonly (readonly (readonly [number, number])[] | null)[];
  readonly off4: readonly boolean[];
  readonly wgSize: number;
  readonly allowVec4: boolean;
  /** Bound slot of each input, -1 where it is not bound (unread, or masked away). */
  readonly bindOf: readonly number[];
  /** The first input bound at each slot. */
  readonly firstOf: readonly number[];
  // How to write its parameter block.
  readonly template: Uint32Array;
  /** [word, input] pairs: input's offset goes to that word. */
  readonly offsetWords: readonly number[];
  readonly constBase: number;
}

/** The expressions' joint key, constants and read inputs (one Expr: exprInfo's, cached). */
export function exprsInfo(outs: readonly Expr[]): ExprInfo {
  if (outs.length === 1) return exprInfo(outs[0]);
  const parts = outs.map(exprInfo);
  const used: boolean[] = [];
  for (const p of parts)
    p.used.forEach((u, i) => {
      used[i] = used[i] === true || u;
    });
  // Each key numbers its constants from 0; their slots follow in order, as the emitter counts.
  return { key: parts.map((p) => p.key).join(';'), consts: parts.flatMap((p) => p.consts), used };
}

const MAX_PER_KEY = 8;
const MAX_KEYS = 2048;
const caches = new WeakMap<Runtime, Map<string, EwPlan[]>>();

export function findPlan(
  rt: Runtime,
  key: string,
  inputs: readonly EwInput[],
  shape: readonly number[],
  wgSize: number,
  allowVec4: boolean,
): EwPlan | null {
  const list = caches.get(rt)?.get(key);
  if (!list) return null;
  for (let j = 0; j < list.length; j++) {
    const p = list[j];
    if (matches(p, inputs, shape, wgSize, allowVec4)) return p;
  }
  return null;
}

export function storePlan(rt: Runtime, key: string, p: EwPlan): void {
  let m = caches.get(rt);
  if (!m) caches.set(rt, (m = new Map()));
  let list = m.get(key);
  if (!list) {
    if (m.size >= MAX_KEYS) m.clear();
    m.set(key, (list = []));
  }
  if (list.length >= MAX_PER_KEY) list.shift();
  list.push(p);
}

function sameNums(a: readonly number[], b: readonly number[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

function sameMask(
  a: readonly (readonly [number, number])[] | null,
  b: readonly (readonly [number, number])[] | null,
): boolean {
  if (a === b) return true;
  if (!a || !b || a.length !== b.length) return false;
  for (let d = 0; d < a.length; d++) if (a[d][0] !== b[d][0] || a[d][1] !== b[d][1]) return false;
  return true;
}

function matches(
  p: EwPlan,
  inputs: readonly EwInput[],
  shape: readonly number[],
  wgSize: number,
  allowVec4: boolean,
): boolean {
  if (
    p.wgSize !== wgSize ||
    p.allowVec4 !== allowVec4 ||
    inputs.length !== p.dtypes.length ||
    !sameNums(p.shape, shape)
  )
    return false;
  for (let i = 0; i < inputs.length; i++) {
    const x = inputs[i];
    if (
      x.dtype !== p.dtypes[i] ||
      (x.offset % 4 === 0) !== p.off4[i] ||
      !sameNums(x.strides, p.strides[i]) ||
      !sameMask(x.mask, p.masks[i])
    )
      return false;
  }
  // The same aliasing: inputs of one slot share its buffer, and distinct slots' buffers differ
  // (one buffer read as two dtypes takes two slots, which the dtype check above pins).
  for (let i = 0; i < inputs.length; i++) {
    const s = p.bindOf[i];
    if (s >= 0 && inputs[p.firstOf[s]].buf !== inputs[i].buf) return false;
  }
  for (let s = 0; s < p.firstOf.length; s++) {
    const a = inputs[p.firstOf[s]];
    for (let t = s + 1; t < p.firstOf.length; t++) {
      const b = inputs[p.firstOf[t]];
      if (a.buf === b.buf && a.dtype === b.dtype) return false;
    }
  }
  return true;
}

/** Dispatches a cached plan: its block with this call's offsets and constants. */
export function replayPlan(
  rt: Runtime,
  p: EwPlan,
  consts: ExprInfo['consts'],
  inputs: readonly EwInput[],
  outBufs: readonly PooledBuffer[],
): void {
  const base = rt.params(p.kernel);
  const w = rt.words;
  w.u32.set(p.template, base);
  const ow = p.offsetWords;
  for (let j = 0; j < ow.length; j += 2) w.i32[base + ow[j]] = inputs[ow[j + 1]].offset;
  writeConsts(w, base + p.constBase, consts);
  const nb = p.firstOf.length;
  // Built by push: a packed array, as every other kernel passes to rt.dispatch.
  const bufs: PooledBuffer[] = [];
  for (let s = 0; s < nb; s++) bufs.push(inputs[p.firstOf[s]].buf);
  for (let o = 0; o < outBufs.length; o++) bufs.push(outBufs[o]);
  rt.dispatch(p.kernel, bufs, base, p.groups);
}
