import { ValueError } from '@surf/core';
import type { Runtime } from '../runtime';
import type { PooledBuffer } from '../pool';
import { LINEAR_WG, MAIN_ARGS, pI, pU, paramsDecl } from './wgsl';

/**
 * Tiled matmul. A workgroup computes a tileM×tileN block of C; each of its
 * (tileM/threadM)·(tileN/threadN) threads owns a threadM×threadN register tile of
 * consecutive rows and columns. Per step of tileK, the workgroup stages A's tileM×tileK and
 * B's tileK×tileN blocks in workgroup memory (A transposed, so a thread's rows are adjacent),
 * then every thread does threadM·threadN fused multiply-adds per k from registers. All loops
 * are unrolled by the generator. Global loads are vec4 when the operand is contiguous along
 * the loaded dim and 4-aligned; B and C use vec4 registers when threadN is a multiple of 4.
 * Edges (any m, n, k) are handled by bounds checks in the loads and the store. Any strides
 * (transposes, broadcast batches with stride 0) are read directly.
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
}

export const DEFAULT_MATMUL: MatmulConfig = { tileM: 64, tileN: 64, tileK: 16, threadM: 4, threadN: 4, vec4: true };
const SMALL_MATMUL: MatmulConfig = { tileM: 32, tileN: 32, tileK: 16, threadM: 2, threadN: 4, vec4: true };

/** A fixed config, or a function choosing one per problem (a later tuner plugs in here). */
export type MatmulConfigOption = Partial<MatmulConfig> | ((m: number, n: number, k: number, batch: number) => MatmulConfig);

export function chooseMatmulConfig(opt: MatmulConfigOption | undefined, m: number, n: number, k: number, batch: number): MatmulConfig {
  if (typeof opt === 'function') return opt(m, n, k, batch);
  if (opt && Object.keys(opt).length) return { ...DEFAULT_MATMUL, ...opt };
  return m * n <= 64 * 64 * 4 || m <= 16 || n <= 16 ? SMALL_MATMUL : DEFAULT_MATMUL;
}

export function validateMatmulConfig(c: MatmulConfig, limits: GPUSupportedLimits): void {
  const bad = (why: string) => new ValueError(`matmul config ${JSON.stringify(c)}: ${why}`);
  for (const f of ['tileM', 'tileN', 'tileK', 'threadM', 'threadN'] as const) {
    if (!Number.isInteger(c[f]) || c[f] < 1) throw bad(`${f} must be a positive integer`);
  }
  if (c.tileM % c.threadM || c.tileN % c.threadN) throw bad('tileM/tileN must be multiples of threadM/threadN');
  const threads = (c.tileM / c.threadM) * (c.tileN / c.threadN);
  if (threads > limits.maxComputeInvocationsPerWorkgroup) throw bad(`needs ${threads} threads per workgroup; the adapter allows ${limits.maxComputeInvocationsPerWorkgroup}`);
  if (c.tileK % 4 || c.tileN % 4) throw bad('tileK and tileN must be multiples of 4');
  const shared = (c.tileM + c.tileN) * c.tileK * 4;
  if (shared > limits.maxComputeWorkgroupStorageSize) throw bad(`needs ${shared} bytes of workgroup memory; the adapter allows ${limits.maxComputeWorkgroupStorageSize}`);
}

export interface MatmulOperand {
  buf: PooledBuffer;
  offset: number;
  /** Strides of the collapsed batch dims (shared shape), then rows, then cols. */
  batchStrides: number[];
  rowStride: number;
  colStride: number;
}

export function encodeMatmul(rt: Runtime, cfg: MatmulConfig, a: MatmulOperand, b: MatmulOperand, batchShape: number[], m: number, n: number, k: number, out: PooledBuffer): void {
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
  const cVec = cfg.vec4 && vecB && n % 4 === 0;
  // Params: m n k tilesN tilesM total | aOff aRS aCS | bOff bRS bCS | batch shape | a batch strides | b batch strides
  const words = 12 + 3 * br;
  const key = `mm|${TM},${TN},${TK},${RM},${RN}${cfg.unroll === false ? 'r' : 'u'}|b${br}|a${aKMajor ? 'k' : 'm'}${aVec ? 'v' : ''}|b${bNMajor ? 'n' : 'k'}${bVec ? 'v' : ''}|c${cVec ? 'v' : ''}`;
  const kern = rt.kernel(key, 2, 1, words, () => {
    const L: string[] = [];
    const M = pU(0), N = pU(1), K = pU(2);
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
          for (let q = 0; q < 4; q++) {
            lines.push(aKMajor ? `As[(kk + ${q}u) * ${TM}u + row] = v[${q}];` : `As[kk * ${TM}u + row + ${q}u] = v[${q}];`);
          }
        } else {
          lines.push(`var v = 0.0;`);
          lines.push(`if (gr < ${M} && gk < ${K}) { v = A[u32(aBase + i32(gr) * ${pI(7)} + i32(gk) * ${pI(8)})]; }`);
          lines.push(`As[kk * ${TM}u + row] = v;`);
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
    // Register tile: acc{i}_{q} is row i, columns 4q..4q+3 (vec4) or column q (scalar).
    const cols = vecB ? RN / 4 : RN;
    const accT = vecB ? 'vec4<f32>' : 'f32';
    const decl: string[] = [];
    for (let i = 0; i < RM; i++) for (let q = 0; q < cols; q++) decl.push(`var acc${i}_${q} = ${accT}(0.0);`);
    const inner: string[] = [];
    const unroll = cfg.unroll !== false;
    for (let kk = 0; kk < (unroll ? TK : 1); kk++) {
      // Unrolled: constant offsets per step; rolled: one loop body over kk.
      const aRow = unroll ? `${kk * TM}u` : `kk * ${TM}u`;
      const bRow = unroll ? `${(kk * TN) / 4}u` : `kk * ${TN / 4}u`;
      const bRowS = unroll ? `${kk * TN}u` : `kk * ${TN}u`;
      inner.push(unroll ? '{' : `for (var kk = 0u; kk < ${TK}u; kk++) {`);
      for (let i = 0; i < RM; i++) inner.push(`let a${i} = As[${aRow} + ty * ${RM}u + ${i}u];`);
      for (let q = 0; q < cols; q++) {
        inner.push(vecB ? `let b${q} = Bs4[${bRow} + tx * ${RN / 4}u + ${q}u];` : `let b${q} = Bs[${bRowS} + tx * ${RN}u + ${q}u];`);
      }
      for (let i = 0; i < RM; i++) for (let q = 0; q < cols; q++) inner.push(`acc${i}_${q} = fma(${vecB ? `vec4<f32>(a${i})` : `a${i}`}, b${q}, acc${i}_${q});`);
      inner.push('}');
    }
    // Store.
    const store: string[] = [];
    for (let i = 0; i < RM; i++) {
      store.push(`{ let r = tileRow + ty * ${RM}u + ${i}u;`);
      store.push(`  if (r < ${M}) {`);
      for (let q = 0; q < cols; q++) {
        if (vecB) {
          const c0 = `tileCol + tx * ${RN}u + ${q * 4}u`;
          if (cVec) store.push(`    if (${c0} < ${N}) { C4[(cBase + r * ${N} + ${c0}) / 4u] = acc${i}_${q}; }`);
          else for (let j = 0; j < 4; j++) store.push(`    if (${c0} + ${j}u < ${N}) { C[cBase + r * ${N} + ${c0} + ${j}u] = acc${i}_${q}[${j}]; }`);
        } else {
          const c = `tileCol + tx * ${RN}u + ${q}u`;
          store.push(`    if (${c} < ${N}) { C[cBase + r * ${N} + ${c}] = acc${i}_${q}; }`);
        }
      }
      store.push(`  } }`);
    }
    // Batch offsets from the collapsed batch index.
    const bat: string[] = [`var aBase = ${pI(6)}; var bBase = ${pI(9)};`];
    if (br) {
      bat.push(`var bq = bt;`);
      for (let d = br - 1; d >= 0; d--) {
        const dig = d > 0 ? `bq % ${pU(12 + d)}` : 'bq';
        bat.push(`{ let dg = i32(${dig}); aBase += dg * ${pI(12 + br + d)}; bBase += dg * ${pI(12 + 2 * br + d)};${d > 0 ? ` bq = bq / ${pU(12 + d)};` : ''} }`);
      }
    }
    L.push(paramsDecl(words));
    L.push(`@group(0) @binding(1) var<storage, read> ${aVec ? 'A4: array<vec4<f32>>' : 'A: array<f32>'};`);
    L.push(`@group(0) @binding(2) var<storage, read> ${bVec ? 'B4: array<vec4<f32>>' : 'B: array<f32>'};`);
    L.push(`@group(0) @binding(3) var<storage, read_write> ${cVec ? 'C4: array<vec4<f32>>' : 'C: array<f32>'};`);
    L.push(`var<workgroup> As: array<f32, ${TM * TK}>;`);
    L.push(vecB ? `var<workgroup> Bs4: array<vec4<f32>, ${(TK * TN) / 4}>;` : `var<workgroup> Bs: array<f32, ${TK * TN}>;`);
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
  const { u32, i32 } = rt.words;
  u32[p] = m; u32[p + 1] = n; u32[p + 2] = k; u32[p + 3] = tilesN; u32[p + 4] = tilesM; u32[p + 5] = total;
  i32[p + 6] = a.offset; i32[p + 7] = a.rowStride; i32[p + 8] = a.colStride;
  i32[p + 9] = b.offset; i32[p + 10] = b.rowStride; i32[p + 11] = b.colStride;
  for (let d = 0; d < br; d++) {
    u32[p + 12 + d] = batchShape[d];
    i32[p + 12 + br + d] = a.batchStrides[d];
    i32[p + 12 + 2 * br + d] = b.batchStrides[d];
  }
  rt.dispatch(kern, [a.buf, b.buf, out], p, total);
}
