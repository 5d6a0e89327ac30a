import { DType, Expr, collapseDims, exprInputs, exprKey } from '@surf/core';
import type { Runtime } from '../runtime';
import type { PooledBuffer } from '../pool';
import { Emitter } from './elementwise';
import { FLOAT_HELPERS, LINEAR_WG, MAIN_ARGS, pI, pU, paramsDecl, storageType, valueType } from './wgsl';

/**
 * Tiled matmul. A workgroup computes a tileM×tileN block of C; each of its
 * (tileM/threadM)·(tileN/threadN) threads owns a threadM×threadN register tile. Per step of
 * tileK, the workgroup stages A's tileM×tileK and B's tileK×tileN blocks in workgroup memory
 * (A transposed, so a thread's rows are adjacent), then every thread does threadM·threadN
 * fused multiply-adds per k from registers. Global loads are vec4 when the operand is
 * contiguous along the loaded dim and 4-aligned; workgroup reads are vec4 for B (threadN a
 * multiple of 4) and for A (threadM a multiple of 4, `vecA`). Edges (any m, n, k) are
 * handled by bounds checks in the loads and the store. Any strides (transposes, broadcast
 * batches with stride 0) are read directly. An optional epilogue expression is applied to
 * each product element before the store (bias, activation) so it costs no extra pass.
 */
export interface MatmulConfig {
  tileM: number;
  tileN: number;
  tileK: number;
  threadM: number;
  threadN: number;
  /** Use vec4 global loads and stores when the operands allow it. */
  vec4: boolean;
  /**
   * Unroll the tileK loop in the generated code (default true). Register-tile loops are
   * always unrolled. Off, shaders are far smaller: software adapters compile a fully
   * unrolled 64x64x32 kernel in seconds.
   */
  unroll?: boolean;
  /** Read A's register column from workgroup memory as vec4s (default true; needs threadM % 4 = 0). */
  vecA?: boolean;
  /**
   * Floats of padding after each k-row of the staged A tile (default 0; a multiple of 4 keeps
   * vec4 reads legal). Spreads the transposing stores of a k-major A over memory banks.
   */
  padA?: number;
  /**
   * A thread's column groups of 4 lie tileN/threadN·4 apart instead of side by side (default
   * false), so the threads of a warp read consecutive vec4s of the B tile.
   */
  interleave?: boolean;
  /**
   * Apply an epilogue in a second, rolled loop over the just-stored tile instead of in the
   * store itself. Frees the accumulators' registers before the epilogue runs. Default: true
   * for register tiles of 32 or more elements.
   */
  epilogueAfter?: boolean;
}

/** The product-element epilogue: input 0 is the product, inputs 1.. are strided views of C. */
export interface MatmulEpilogueDesc {
  expr: Expr;
  inputs: MatmulEpilogueInput[];
}

export interface MatmulEpilogueInput {
  buf: PooledBuffer;
  dtype: DType;
  offset: number;
  /** Strides over the collapsed batch dims, then C's rows and cols (0 = broadcast). */
  batchStrides: number[];
  rowStride: number;
  colStride: number;
}

export { DEFAULT_MATMUL, chooseMatmulConfig, validateMatmulConfig } from '../tune/choose';
export type { MatmulConfigOption } from '../tune/choose';

export interface MatmulOperand {
  buf: PooledBuffer;
  offset: number;
  /** Strides of the collapsed batch dims (shared shape), then rows, then cols. */
  batchStrides: number[];
  rowStride: number;
  colStride: number;
}

/**
 * Drops size-1 batch dims and merges adjacent ones that every operand (A, B, epilogue views)
 * walks as one run, so the kernel splits the batch index into as few digits as possible.
 */
export function collapseBatch(shape: readonly number[], strides: readonly (readonly number[])[]): { shape: number[]; strides: number[][] } {
  // optable: core's one collapse routine (ops/lower.ts), the one the elementwise generators use.
  const c = collapseDims(shape, strides.map((s) => ({ strides: s, mask: null })));
  return { shape: c.shape, strides: c.ops.map((o) => o.strides) };
}

export function encodeMatmul(
  rt: Runtime, cfg: MatmulConfig, a: MatmulOperand, b: MatmulOperand, batchShape: number[], m: number, n: number, k: number, out: PooledBuffer,
  epi?: MatmulEpilogueDesc,
): void {
  const batch = batchShape.reduce((x, y) => x * y, 1);
  if (batch * m * n === 0) return;
  const { tileM: TM, tileN: TN, tileK: TK, threadM: RM, threadN: RN } = cfg;
  const TX = TN / RN;
  const TY = TM / RM;
  const NT = TX * TY;
  const br = batchShape.length;
  const aligned = (o: MatmulOperand, along: 'row' | 'col', len: number) => {
    const other = along === 'col' ? o.rowStride : o.colStride;
    const own = along === 'col' ? o.colStride : o.rowStride;
    return cfg.vec4 && own === 1 && len % 4 === 0 && o.offset % 4 === 0 && other % 4 === 0 && o.batchStrides.every((s) => s % 4 === 0);
  };
  // A is loaded along k (its cols) or along m (its rows) — whichever is contiguous in memory.
  const aKMajor = Math.abs(a.colStride) <= Math.abs(a.rowStride);
  const bNMajor = Math.abs(b.colStride) <= Math.abs(b.rowStride);
  const aVec = aKMajor ? aligned(a, 'col', k) : aligned(a, 'row', m);
  const bVec = bNMajor ? aligned(b, 'col', n) : aligned(b, 'row', k);
  const vecB = RN % 4 === 0;
  const padA = cfg.padA ?? 0;
  const TMP = TM + padA; // k-row pitch of the staged A tile
  const vecA = cfg.vecA !== false && RM % 4 === 0 && TMP % 4 === 0;
  const inter = !!cfg.interleave && vecB;
  // Inline, the epilogue made 8x8 register tiles 3x slower on the H200 (run 4: 13.9 ms against
  // 3.8 at 4096³, register pressure); after the store it costs ~3%. Small tiles keep it inline.
  const after = !!epi && (cfg.epilogueAfter ?? RM * RN >= 32);
  const cVec = cfg.vec4 && vecB && n % 4 === 0;

  // Epilogue inputs: bind each distinct (buffer, dtype) once; params after the matmul's own.
  const eUsed = epi ? exprInputs(epi.expr) : new Set<number>();
  const eBind: number[] = [];
  const eBufs: PooledBuffer[] = [];
  const eDT: DType[] = [];
  const eWord: number[] = [];
  const consts: { value: number; dtype: DType }[] = [];
  let words = 12 + 3 * br;
  let eKey = '';
  if (epi) {
    epi.inputs.forEach((x, j) => {
      if (!eUsed.has(j + 1)) return;
      let q = eBufs.findIndex((bb, i) => bb === x.buf && eDT[i] === x.dtype);
      if (q < 0) { q = eBufs.length; eBufs.push(x.buf); eDT.push(x.dtype); }
      eBind[j] = q;
      eWord[j] = words;
      words += 3 + br;
    });
    eKey = `|e${exprKey(epi.expr, consts)}|${epi.inputs.map((x, j) => (eUsed.has(j + 1) ? `${x.dtype[0]}${eBind[j]}` : '_')).join('')}`;
  }
  const constBase = words;
  words += consts.length;

  const key = `mm|${TM},${TN},${TK},${RM},${RN}${cfg.unroll === false ? 'r' : 'u'}${vecA ? 'A' : ''}${padA ? `p${padA}` : ''}${inter ? 'i' : ''}${after ? 'x' : ''}|b${br}|a${aKMajor ? 'k' : 'm'}${aVec ? 'v' : ''}|b${bNMajor ? 'n' : 'k'}${bVec ? 'v' : ''}|c${cVec ? 'v' : ''}${eKey}`;
  const kern = rt.kernel(key, 2 + eBufs.length, 1, words, () => {
    const L: string[] = [];
    const M = pU(0), N = pU(1), K = pU(2);
    const putA = (idx: string, val: string) => (vecA ? `{ let ai = ${idx}; As4[ai / 4u][ai % 4u] = ${val}; }` : `As[${idx}] = ${val};`);
    // Tile loaders: each thread moves ceil(elems/NT) elements (or vec4s) per step.
    const loadA: string[] = [];
    {
      const along = aKMajor ? TK : TM; // contiguous extent in the tile
      const vw = aVec ? 4 : 1;
      const units = (TM * TK) / vw;
      for (let it = 0; it < Math.ceil(units / NT); it++) {
        const guard = (it + 1) * NT > units;
        const e = `(lid + ${it * NT}u)`;
        const lines: string[] = [];
        lines.push(`let e = ${e};`);
        lines.push(`let inner = (e % ${along / vw}u) * ${vw}u; let outer = e / ${along / vw}u;`);
        lines.push(aKMajor ? `let row = outer; let kk = inner;` : `let row = inner; let kk = outer;`);
        lines.push(`let gr = tileRow + row; let gk = k0 + kk;`);
        if (aVec) {
          const cond = `gr < ${M} && gk < ${K}`;
          lines.push(`var v = vec4<f32>(0.0);`);
          lines.push(`if (${cond}) { v = A4[u32(aBase + i32(gr) * ${pI(7)} + i32(gk) * ${pI(8)}) / 4u]; }`);
          if (!aKMajor && vecA) lines.push(`As4[(kk * ${TMP}u + row) / 4u] = v;`);
          else for (let q = 0; q < 4; q++) lines.push(aKMajor ? putA(`(kk + ${q}u) * ${TMP}u + row`, `v[${q}]`) : putA(`kk * ${TMP}u + row + ${q}u`, `v[${q}]`));
        } else {
          lines.push(`var v = 0.0;`);
          lines.push(`if (gr < ${M} && gk < ${K}) { v = A[u32(aBase + i32(gr) * ${pI(7)} + i32(gk) * ${pI(8)})]; }`);
          lines.push(putA(`kk * ${TMP}u + row`, 'v'));
        }
        loadA.push(guard ? `if (${e} < ${units}u) {\n      ${lines.join('\n      ')}\n    }` : `{\n      ${lines.join('\n      ')}\n    }`);
      }
    }
    const loadB: string[] = [];
    {
      const along = bNMajor ? TN : TK;
      const vw = bVec ? 4 : 1;
      const units = (TK * TN) / vw;
      for (let it = 0; it < Math.ceil(units / NT); it++) {
        const guard = (it + 1) * NT > units;
        const e = `(lid + ${it * NT}u)`;
        const lines: string[] = [];
        lines.push(`let e = ${e};`);
        lines.push(`let inner = (e % ${along / vw}u) * ${vw}u; let outer = e / ${along / vw}u;`);
        lines.push(bNMajor ? `let col = inner; let kk = outer;` : `let col = outer; let kk = inner;`);
        lines.push(`let gc = tileCol + col; let gk = k0 + kk;`);
        // Bs is a vec4 array when the register tile reads it as vec4s.
        const put = (idx: string, val: string) => (vecB ? `{ let bi = ${idx}; Bs4[bi / 4u][bi % 4u] = ${val}; }` : `Bs[${idx}] = ${val};`);
        if (bVec) {
          lines.push(`var v = vec4<f32>(0.0);`);
          lines.push(`if (gc < ${N} && gk < ${K}) { v = B4[u32(bBase + i32(gk) * ${pI(10)} + i32(gc) * ${pI(11)}) / 4u]; }`);
          if (bNMajor && vecB) lines.push(`Bs4[(kk * ${TN}u + col) / 4u] = v;`);
          else for (let q = 0; q < 4; q++) lines.push(bNMajor ? put(`kk * ${TN}u + col + ${q}u`, `v[${q}]`) : put(`(kk + ${q}u) * ${TN}u + col`, `v[${q}]`));
        } else {
          lines.push(`var v = 0.0;`);
          lines.push(`if (gc < ${N} && gk < ${K}) { v = B[u32(bBase + i32(gk) * ${pI(10)} + i32(gc) * ${pI(11)})]; }`);
          lines.push(put(`kk * ${TN}u + col`, 'v'));
        }
        loadB.push(guard ? `if (${e} < ${units}u) {\n      ${lines.join('\n      ')}\n    }` : `{\n      ${lines.join('\n      ')}\n    }`);
      }
    }
    // Register tile: acc{i}_{q} is row i, column group q (4 columns, vec4) or column q (scalar).
    const cols = vecB ? RN / 4 : RN;
    const accT = vecB ? 'vec4<f32>' : 'f32';
    // Column of group q (or scalar column q) of this thread, relative to the tile.
    const colOf = (q: number) => (inter ? `${q * TX * 4}u + tx * 4u` : vecB ? `tx * ${RN}u + ${q * 4}u` : `tx * ${RN}u + ${q}u`);
    const bIdx = (q: number) => (inter ? `${q * TX}u + tx` : `tx * ${RN / 4}u + ${q}u`);
    const decl: string[] = [];
    for (let i = 0; i < RM; i++) for (let q = 0; q < cols; q++) decl.push(`var acc${i}_${q} = ${accT}(0.0);`);
    const inner: string[] = [];
    const unroll = cfg.unroll !== false;
    for (let kk = 0; kk < (unroll ? TK : 1); kk++) {
      // Unrolled: constant offsets per step; rolled: one loop body over kk.
      const aRow = unroll ? `${kk * TMP}u` : `kk * ${TMP}u`;
      const aRow4 = unroll ? `${(kk * TMP) / 4}u` : `kk * ${TMP / 4}u`;
      const bRow = unroll ? `${(kk * TN) / 4}u` : `kk * ${TN / 4}u`;
      const bRowS = unroll ? `${kk * TN}u` : `kk * ${TN}u`;
      inner.push(unroll ? '{' : `for (var kk = 0u; kk < ${TK}u; kk++) {`);
      if (vecA) {
        for (let g = 0; g < RM / 4; g++) inner.push(`let a4_${g} = As4[${aRow4} + ty * ${RM / 4}u + ${g}u];`);
        for (let i = 0; i < RM; i++) inner.push(`let a${i} = a4_${i >> 2}[${i & 3}];`);
      } else {
        for (let i = 0; i < RM; i++) inner.push(`let a${i} = As[${aRow} + ty * ${RM}u + ${i}u];`);
      }
      for (let q = 0; q < cols; q++) {
        inner.push(vecB ? `let b${q} = Bs4[${bRow} + ${bIdx(q)}];` : `let b${q} = Bs[${bRowS} + ${colOf(q)}];`);
      }
      for (let i = 0; i < RM; i++) for (let q = 0; q < cols; q++) inner.push(`acc${i}_${q} = fma(${vecB ? `vec4<f32>(a${i})` : `a${i}`}, b${q}, acc${i}_${q});`);
      inner.push('}');
    }
    // Store, through the epilogue when there is one.
    const fin = (v: string, r: string, c: string) => (epi && !after ? `epi_(${v}, ${r}, ${c})` : v);
    const store: string[] = [];
    for (let i = 0; i < RM; i++) {
      store.push(`{ let r = tileRow + ty * ${RM}u + ${i}u;`);
      store.push(`  if (r < ${M}) {`);
      for (let q = 0; q < cols; q++) {
        const c0 = `tileCol + ${colOf(q)}`;
        if (vecB) {
          if (cVec) {
            const v = epi && !after ? `vec4<f32>(${[0, 1, 2, 3].map((j) => fin(`acc${i}_${q}[${j}]`, 'r', `c0 + ${j}u`)).join(', ')})` : `acc${i}_${q}`;
            store.push(`    { let c0 = ${c0}; if (c0 < ${N}) { C4[(cBase + r * ${N} + c0) / 4u] = ${v}; } }`);
          } else {
            store.push(`    { let c0 = ${c0};`);
            for (let j = 0; j < 4; j++) store.push(`      if (c0 + ${j}u < ${N}) { C[cBase + r * ${N} + c0 + ${j}u] = ${fin(`acc${i}_${q}[${j}]`, 'r', `c0 + ${j}u`)}; }`);
            store.push(`    }`);
          }
        } else {
          store.push(`    { let c = ${c0}; if (c < ${N}) { C[cBase + r * ${N} + c] = ${fin(`acc${i}_${q}`, 'r', 'c')}; } }`);
        }
      }
      store.push(`  } }`);
    }
    if (after) {
      // Re-read this thread's own stores (same invocation: ordered) and apply the epilogue.
      const g = vecB ? 4 : 1;
      const col = inter ? `q * ${TX * 4}u + tx * 4u` : `tx * ${RN}u + q * ${g}u`;
      store.push(`for (var i = 0u; i < ${RM}u; i++) {
    let r = tileRow + ty * ${RM}u + i;
    if (r >= ${M}) { break; }
    for (var q = 0u; q < ${RN / g}u; q++) {
      let c0 = tileCol + ${col};
      ${cVec ? `if (c0 < ${N}) { let ci = (cBase + r * ${N} + c0) / 4u; let v = C4[ci]; C4[ci] = vec4<f32>(epi_(v.x, r, c0), epi_(v.y, r, c0 + 1u), epi_(v.z, r, c0 + 2u), epi_(v.w, r, c0 + 3u)); }`
    : Array.from({ length: g }, (_, j) => `if (c0 + ${j}u < ${N}) { let ci = cBase + r * ${N} + c0 + ${j}u; C[ci] = epi_(C[ci], r, c0 + ${j}u); }`).join('\n      ')}
    }
  }`);
    }
    // Batch offsets from the collapsed batch index (A, B and each epilogue view).
    const eIdx = epi ? epi.inputs.map((_, j) => j).filter((j) => eUsed.has(j + 1)) : [];
    const bat: string[] = [`var aBase = ${pI(6)}; var bBase = ${pI(9)};`];
    for (const j of eIdx) bat.push(`eb${j} = ${pI(eWord[j])};`);
    if (br) {
      bat.push(`var bq = bt;`);
      for (let d = br - 1; d >= 0; d--) {
        const dig = d > 0 ? `bq % ${pU(12 + d)}` : 'bq';
        const eb = eIdx.map((j) => ` eb${j} += dg * ${pI(eWord[j] + 1 + d)};`).join('');
        bat.push(`{ let dg = i32(${dig}); aBase += dg * ${pI(12 + br + d)}; bBase += dg * ${pI(12 + 2 * br + d)};${eb}${d > 0 ? ` bq = bq / ${pU(12 + d)};` : ''} }`);
      }
    }
    L.push(paramsDecl(words));
    L.push(`@group(0) @binding(1) var<storage, read> ${aVec ? 'A4: array<vec4<f32>>' : 'A: array<f32>'};`);
    L.push(`@group(0) @binding(2) var<storage, read> ${bVec ? 'B4: array<vec4<f32>>' : 'B: array<f32>'};`);
    eBufs.forEach((_, q) => L.push(`@group(0) @binding(${3 + q}) var<storage, read> E${q}: array<${storageType(eDT[q])}>;`));
    L.push(`@group(0) @binding(${3 + eBufs.length}) var<storage, read_write> ${cVec ? 'C4: array<vec4<f32>>' : 'C: array<f32>'};`);
    L.push(vecA ? `var<workgroup> As4: array<vec4<f32>, ${(TMP * TK) / 4}>;` : `var<workgroup> As: array<f32, ${TMP * TK}>;`);
    L.push(vecB ? `var<workgroup> Bs4: array<vec4<f32>, ${(TK * TN) / 4}>;` : `var<workgroup> Bs: array<f32, ${TK * TN}>;`);
    if (epi) {
      // The epilogue as a function of (product, row, col): the elementwise emitter over reads
      // of the strided views at this thread's batch base (private, set once in main).
      const inDT: DType[] = ['float32', ...epi.inputs.map((x) => x.dtype)];
      const vals = inDT.map((_, i) => `v${i}`);
      const reads: string[] = [];
      for (const j of eIdx) {
        const x = epi.inputs[j];
        const w = eWord[j];
        const idx = `u32(eb${j} + i32(r) * ${pI(w + 1 + br)} + i32(c) * ${pI(w + 2 + br)})`;
        const ld = x.dtype === 'bool' ? `(E${eBind[j]}[${idx}] != 0u)` : `E${eBind[j]}[${idx}]`;
        reads.push(`let v${j + 1}: ${valueType(x.dtype)} = ${ld};`);
      }
      const em = new Emitter(inDT, vals, constBase);
      const res = em.emit(epi.expr).v;
      L.push(FLOAT_HELPERS, em.helpers()); // optable: helpers of the op table's ops the epilogue uses
      for (const j of eIdx) L.push(`var<private> eb${j}: i32;`);
      L.push(`fn epi_(v0: f32, r: u32, c: u32) -> f32 {\n  ${[...reads, ...em.lines].join('\n  ')}\n  return ${res};\n}`);
    }
    L.push(`@compute @workgroup_size(${NT})
fn main(${MAIN_ARGS}) {
  ${LINEAR_WG}
  if (wg >= ${pU(5)}) { return; }
  let tn = wg % ${pU(3)};
  let rest = wg / ${pU(3)};
  let tm = rest % ${pU(4)};
  let bt = rest / ${pU(4)};
  let tileRow = tm * ${TM}u;
  let tileCol = tn * ${TN}u;
  let tx = lid % ${TX}u;
  let ty = lid / ${TX}u;
  ${bat.join('\n  ')}
  let cBase = bt * ${M} * ${N};
  ${decl.join('\n  ')}
  for (var k0 = 0u; k0 < ${K}; k0 += ${TK}u) {
    ${loadA.join('\n    ')}
    ${loadB.join('\n    ')}
    workgroupBarrier();
    ${inner.join('\n    ')}
    workgroupBarrier();
  }
  ${store.join('\n  ')}
}`);
    return L.join('\n');
  });
  const tilesN = Math.ceil(n / TN);
  const tilesM = Math.ceil(m / TM);
  const total = tilesN * tilesM * batch;
  const p = rt.params(kern);
  const { u32, i32, f32 } = rt.words;
  u32[p] = m; u32[p + 1] = n; u32[p + 2] = k; u32[p + 3] = tilesN; u32[p + 4] = tilesM; u32[p + 5] = total;
  i32[p + 6] = a.offset; i32[p + 7] = a.rowStride; i32[p + 8] = a.colStride;
  i32[p + 9] = b.offset; i32[p + 10] = b.rowStride; i32[p + 11] = b.colStride;
  for (let d = 0; d < br; d++) {
    u32[p + 12 + d] = batchShape[d];
    i32[p + 12 + br + d] = a.batchStrides[d];
    i32[p + 12 + 2 * br + d] = b.batchStrides[d];
  }
  if (epi) {
    epi.inputs.forEach((x, j) => {
      const w = eWord[j];
      if (w === undefined) return;
      i32[p + w] = x.offset;
      for (let d = 0; d < br; d++) i32[p + w + 1 + d] = x.batchStrides[d];
      i32[p + w + 1 + br] = x.rowStride;
      i32[p + w + 2 + br] = x.colStride;
    });
    consts.forEach((c, j) => {
      if (c.dtype === 'float32') f32[p + constBase + j] = c.value;
      else if (c.dtype === 'int32') i32[p + constBase + j] = Number.isNaN(c.value) ? 0 : Math.max(-2147483648, Math.min(2147483647, Math.trunc(c.value)));
      else u32[p + constBase + j] = c.value !== 0 ? 1 : 0;
    });
  }
  rt.dispatch(kern, [a.buf, b.buf, ...eBufs, out], p, total);
}
