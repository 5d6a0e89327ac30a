import { DType, Expr, exprInputs, exprKey } from '@surf/core';
import type { Runtime } from '../runtime';
import type { PooledBuffer } from '../pool';
import { Emitter } from './elementwise';
import { FLOAT_HELPERS, LINEAR_WG, MAIN_ARGS, pI, pU, paramsDecl, storageType, valueType } from './wgsl';

/**
 * Convolution as an implicit GEMM. Per group g, C[o, col] = sum_k W[o, k] · X[k, col] with
 * o an output channel of the group, col = (batch item, output position) and k = (input
 * channel, kernel tap). Nothing is materialised: the X tile loader turns (k, col) into an
 * input address itself (stride, padding, dilation, lhs dilation and bounds), reading 0 for
 * padding and inserted holes. A workgroup computes a tileM × tileN block of C with a
 * threadM × threadN register tile per thread, staging both operand tiles in workgroup memory
 * per tileK step, as the matmul does. Batch and positions share the GEMM's N so late, small
 * feature maps still fill tiles. 1-d convs arrive lifted to 2-d (H = 1, stride 0 on H).
 */
export interface ConvConfig {
  tileM: number;
  tileN: number;
  tileK: number;
  threadM: number;
  threadN: number;
}

/** Software adapters pay per barrier and per thread: small tiles, few threads. */
export const SOFTWARE_CONV: ConvConfig = { tileM: 16, tileN: 32, tileK: 8, threadM: 4, threadN: 4 };
export const DEFAULT_CONV: ConvConfig = { tileM: 64, tileN: 64, tileK: 16, threadM: 4, threadN: 4 };

/** A 4-d operand [d0, d1, H, W]: its buffer, offset and strides (H stride 0 for 1-d). */
export interface ConvOperand {
  buf: PooledBuffer;
  offset: number;
  strides: readonly number[];
}

export interface ConvEpilogueInput extends ConvOperand {
  dtype: DType;
}

/** Geometry, all lifted to 2-d. */
export interface ConvGeometry {
  n: number; c: number; h: number; w: number;
  o: number; kH: number; kW: number;
  oH: number; oW: number;
  stride: [number, number]; dilation: [number, number]; lhsDilation: [number, number];
  /** Low padding per dim (the high side only bounds the output size). */
  padLo: [number, number];
  groups: number;
}

const W_ = 33; // first epilogue word

export function encodeConv(
  rt: Runtime, cfg: ConvConfig, x: ConvOperand, w: ConvOperand, g: ConvGeometry, out: PooledBuffer,
  epi?: { expr: Expr; inputs: ConvEpilogueInput[] },
): void {
  const { tileM: TM, tileN: TN, tileK: TK, threadM: RM, threadN: RN } = cfg;
  const TX = TN / RN, TY = TM / RM, NT = TX * TY;
  const Og = g.o / g.groups, Cg = g.c / g.groups;
  const P = g.oH * g.oW;
  const cols = g.n * P;
  const K = Cg * g.kH * g.kW;
  if (Og * cols * g.groups === 0) return;
  const eUsed = epi ? exprInputs(epi.expr) : new Set<number>();
  const eBufs: PooledBuffer[] = [], eDT: DType[] = [], eBind: number[] = [], eWord: number[] = [];
  const consts: { value: number; dtype: DType }[] = [];
  let words = W_;
  let eKey = '';
  if (epi) {
    epi.inputs.forEach((e, j) => {
      if (!eUsed.has(j + 1)) return;
      let q = eBufs.findIndex((b, i) => b === e.buf && eDT[i] === e.dtype);
      if (q < 0) { q = eBufs.length; eBufs.push(e.buf); eDT.push(e.dtype); }
      eBind[j] = q;
      eWord[j] = words;
      words += 5;
    });
    eKey = `|e${exprKey(epi.expr, consts)}|${epi.inputs.map((e, j) => (eUsed.has(j + 1) ? `${e.dtype[0]}${eBind[j]}` : '_')).join('')}`;
  }
  const constBase = words;
  words += consts.length;
  const key = `conv|${TM},${TN},${TK},${RM},${RN}${eKey}`;
  const kern = rt.kernel(key, 2 + eBufs.length, 1, words, () => {
    const L: string[] = [paramsDecl(words)];
    L.push('@group(0) @binding(1) var<storage, read> X: array<f32>;');
    L.push('@group(0) @binding(2) var<storage, read> Wt: array<f32>;');
    eBufs.forEach((_, q) => L.push(`@group(0) @binding(${3 + q}) var<storage, read> E${q}: array<${storageType(eDT[q])}>;`));
    L.push(`@group(0) @binding(${3 + eBufs.length}) var<storage, read_write> Y: array<f32>;`);
    L.push(`var<workgroup> As: array<f32, ${TM * TK}>;`, `var<workgroup> Bs: array<f32, ${TK * TN}>;`);
    let fin = (v: string) => v;
    if (epi) {
      const inDT: DType[] = ['float32', ...epi.inputs.map((e) => e.dtype)];
      const reads: string[] = [];
      for (const j of eBind.keys()) {
        if (eWord[j] === undefined) continue;
        const wd = eWord[j];
        const idx = `u32(${pI(wd)} + nb * ${pI(wd + 1)} + oc * ${pI(wd + 2)} + oy * ${pI(wd + 3)} + ox * ${pI(wd + 4)})`;
        const ld = epi.inputs[j].dtype === 'bool' ? `(E${eBind[j]}[${idx}] != 0u)` : `E${eBind[j]}[${idx}]`;
        reads.push(`let v${j + 1}: ${valueType(epi.inputs[j].dtype)} = ${ld};`);
      }
      const em = new Emitter(inDT, inDT.map((_, i) => `v${i}`), constBase);
      const res = em.emit(epi.expr).v;
      L.push(FLOAT_HELPERS);
      L.push(`fn epi_(v0: f32, nb: i32, oc: i32, oy: i32, ox: i32) -> f32 {\n  ${[...reads, ...em.lines].join('\n  ')}\n  return ${res};\n}`);
      fin = (v) => `epi_(${v}, i32(nb), i32(oc), i32(py), i32(px))`;
    }
    // Words: 0 Og, 1 cols, 2 K, 3 tilesN, 4 tilesM, 5 total, 6 P, 7 oW, 8 kHW, 9 kW, 10 dinH, 11 dinW,
    // 12 sH, 13 sW, 14 dH, 15 dW, 16 lH, 17 lW, 18 pH, 19 pW, 20 xOff, 21-24 x strides,
    // 25 wOff, 26-29 w strides, 30 Cg, 31 O, 32 unused.
    L.push(`@compute @workgroup_size(${NT})
fn main(${MAIN_ARGS}) {
  ${LINEAR_WG}
  if (wg >= ${pU(5)}) { return; }
  let tn = wg % ${pU(3)};
  let rest = wg / ${pU(3)};
  let tm = rest % ${pU(4)};
  let grp = rest / ${pU(4)};
  let tx = lid % ${TX}u;
  let ty = lid / ${TX}u;
  // This thread's column in the X-tile loads (fixed: NT is a multiple of tileN).
  let ln = lid % ${TN}u;
  let lk = lid / ${TN}u;
  let col = tn * ${TN}u + ln;
  let colOk = col < ${pU(1)};
  let cn = col / ${pU(6)};
  let cp = col % ${pU(6)};
  let y0 = i32(cp / ${pU(7)}) * ${pI(12)} - ${pI(18)};
  let x0 = i32(cp % ${pU(7)}) * ${pI(13)} - ${pI(19)};
  let xBase = ${pI(20)} + i32(cn) * ${pI(21)} + i32(grp * ${pU(30)}) * ${pI(22)};
  // This thread's row in the W-tile loads (fixed: NT is a multiple of tileM).
  let lm = lid % ${TM}u;
  let lkA = lid / ${TM}u;
  let row = tm * ${TM}u + lm;
  let rowOk = row < ${pU(0)};
  let wBase = ${pI(25)} + i32(grp * ${pU(0)} + row) * ${pI(26)};
  var acc: array<f32, ${RM * RN}>;
  for (var k0 = 0u; k0 < ${pU(2)}; k0 += ${TK}u) {
    for (var kk = lkA; kk < ${TK}u; kk += ${NT / TM}u) {
      let k = k0 + kk;
      var v = 0.0;
      if (rowOk && k < ${pU(2)}) {
        let c = k / ${pU(8)};
        let r = k % ${pU(8)};
        v = Wt[u32(wBase + i32(c) * ${pI(27)} + i32(r / ${pU(9)}) * ${pI(28)} + i32(r % ${pU(9)}) * ${pI(29)})];
      }
      As[kk * ${TM}u + lm] = v;
    }
    for (var kk = lk; kk < ${TK}u; kk += ${NT / TN}u) {
      let k = k0 + kk;
      var v = 0.0;
      if (colOk && k < ${pU(2)}) {
        let c = k / ${pU(8)};
        let r = k % ${pU(8)};
        let yy = y0 + i32(r / ${pU(9)}) * ${pI(14)};
        let xx = x0 + i32(r % ${pU(9)}) * ${pI(15)};
        if (yy >= 0 && xx >= 0 && yy < ${pI(10)} && xx < ${pI(11)} && yy % ${pI(16)} == 0 && xx % ${pI(17)} == 0) {
          v = X[u32(xBase + i32(c) * ${pI(22)} + (yy / ${pI(16)}) * ${pI(23)} + (xx / ${pI(17)}) * ${pI(24)})];
        }
      }
      Bs[kk * ${TN}u + ln] = v;
    }
    workgroupBarrier();
    for (var kk = 0u; kk < ${TK}u; kk++) {
      var a: array<f32, ${RM}>;
      var b: array<f32, ${RN}>;
      for (var i = 0u; i < ${RM}u; i++) { a[i] = As[kk * ${TM}u + ty + i * ${TY}u]; }
      for (var j = 0u; j < ${RN}u; j++) { b[j] = Bs[kk * ${TN}u + tx + j * ${TX}u]; }
      for (var i = 0u; i < ${RM}u; i++) {
        for (var j = 0u; j < ${RN}u; j++) { acc[i * ${RN}u + j] = fma(a[i], b[j], acc[i * ${RN}u + j]); }
      }
    }
    workgroupBarrier();
  }
  for (var i = 0u; i < ${RM}u; i++) {
    let m = tm * ${TM}u + ty + i * ${TY}u;
    if (m >= ${pU(0)}) { continue; }
    let oc = grp * ${pU(0)} + m;
    for (var j = 0u; j < ${RN}u; j++) {
      let cc = tn * ${TN}u + tx + j * ${TX}u;
      if (cc >= ${pU(1)}) { continue; }
      let nb = cc / ${pU(6)};
      let pp = cc % ${pU(6)};
      let py = pp / ${pU(7)};
      let px = pp % ${pU(7)};
      Y[(nb * ${pU(31)} + oc) * ${pU(6)} + pp] = ${fin(`acc[i * ${RN}u + j]`)};
    }
  }
}`);
    return L.join('\n');
  });
  const tilesN = Math.ceil(cols / TN), tilesM = Math.ceil(Og / TM);
  const total = tilesN * tilesM * g.groups;
  const p = rt.params(kern);
  const { u32, i32, f32 } = rt.words;
  const dinH = (g.h - 1) * g.lhsDilation[0] + 1, dinW = (g.w - 1) * g.lhsDilation[1] + 1;
  const vals = [Og, cols, K, tilesN, tilesM, total, P, g.oW, g.kH * g.kW, g.kW, dinH, dinW,
    g.stride[0], g.stride[1], g.dilation[0], g.dilation[1], g.lhsDilation[0], g.lhsDilation[1], g.padLo[0], g.padLo[1],
    x.offset, ...x.strides, w.offset, ...w.strides, Cg, g.o];
  vals.forEach((v, i) => { i32[p + i] = v; });
  if (epi) {
    epi.inputs.forEach((e, j) => {
      const wd = eWord[j];
      if (wd === undefined) return;
      i32[p + wd] = e.offset;
      for (let d = 0; d < 4; d++) i32[p + wd + 1 + d] = e.strides[d];
    });
    consts.forEach((c, j) => {
      if (c.dtype === 'float32') f32[p + constBase + j] = c.value;
      else if (c.dtype === 'int32') i32[p + constBase + j] = Number.isNaN(c.value) ? 0 : Math.max(-2147483648, Math.min(2147483647, Math.trunc(c.value)));
      else u32[p + constBase + j] = c.value !== 0 ? 1 : 0;
    });
  }
  rt.dispatch(kern, [x.buf, w.buf, ...eBufs, out], p, total);
}
