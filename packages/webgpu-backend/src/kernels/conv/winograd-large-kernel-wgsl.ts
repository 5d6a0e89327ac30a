import type { ConvFin } from './direct-wgsl';
import { WinoTile, mainOf, outputTransform } from './winograd-wgsl';
import type { Winograd } from './winograd-matrices';
import { pU } from '../wgsl';

/**
 * Shaders of the Winograd form for convs with a small output and a large kernel (the weight
 * gradient; scheme in conv/winograd-large-kernel.ts): a GEMM per tile position whose k runs over the tiles,
 * both operands k-contiguous, split over workgroups into partials; then the output transform.
 */

/** Parameter words of the split GEMM. */
export const WN = { Op: 0, Np: 1, Tp: 2, tilesN: 3, tiles: 4, total: 5, kChunk: 6 } as const;
export const WN_WORDS = 7;
/** Parameter words of the output transform. */
export const WO = { O: 0, N: 1, Op: 2, Np: 3, oH: 4, oW: 5 } as const;
export const WO_WORDS = 6;

/**
 * P[split, pos, o, n] = sum over t in the split's chunk of D[pos, o, t] · V[pos, n, t]. D, V
 * and P are padded to whole tiles (zeros), so nothing is checked. The loaders read vec4s along
 * t and store them transposed into k-major tiles with pitches padded by 4 (fewer bank clashes).
 */
export function winoGemmNTWgsl(A2: number, s: WinoTile): string {
  const { TM, TN, TK, RM, RN } = s;
  const TX = TN / RN,
    TY = TM / RM,
    NT = TX * TY,
    TMP = TM + 4,
    TNP = TN + 4,
    K4 = TK / 4;
  const u = (w: number) => pU(w);
  const loads = (rows: number, pitch: number, buf: string, sh: string, base: string, first: string) => {
    const o: string[] = [];
    const n = rows * K4;
    for (let q = 0; q * NT < n; q++) {
      const e = `(lid + ${q * NT}u)`;
      const body =
        `let r = ${e} / ${K4}u; let kq = ${e} % ${K4}u; let v = ${buf}[(${base} + (${first} + r) * tp) / 4u + kq]; ` +
        [0, 1, 2, 3].map((i) => `${sh}[(kq * 4u + ${i}u) * ${pitch}u + r] = v[${i}];`).join(' ');
      o.push((q + 1) * NT > n ? `if ${e} < ${n}u { ${body} }` : `{ ${body} }`);
    }
    return o;
  };
  const L: string[] = [];
  L.push(`let wg = wid.x + wid.y * nwg.x;`, `if (wg >= ${u(WN.total)}) { return; }`);
  L.push(`let tile = wg % ${u(WN.tiles)}; let r1 = wg / ${u(WN.tiles)}; let pos = r1 % ${A2}u; let sp = r1 / ${A2}u;`);
  L.push(`let tileCol = (tile % ${u(WN.tilesN)}) * ${TN}u; let tileRow = (tile / ${u(WN.tilesN)}) * ${TM}u;`);
  L.push(`let tx = lid % ${TX}u; let ty = lid / ${TX}u; let tp = ${u(WN.Tp)};`);
  L.push(`let kBeg = sp * ${u(WN.kChunk)}; let kEnd = min(tp, kBeg + ${u(WN.kChunk)});`);
  L.push(`let dBase = pos * ${u(WN.Op)} * tp; let vBase = pos * ${u(WN.Np)} * tp;`);
  for (let a = 0; a < RM; a++) for (let q = 0; q < RN / 4; q++) L.push(`var acc${a}_${q} = vec4<f32>(0.0);`);
  L.push(`for (var k0 = kBeg; k0 < kEnd; k0 += ${TK}u) {`);
  L.push(...loads(TM, TMP, 'D', 'As', 'dBase + k0', 'tileRow').map((x) => `  ${x}`));
  L.push(...loads(TN, TNP, 'V', 'Bs', 'vBase + k0', 'tileCol').map((x) => `  ${x}`));
  L.push('  workgroupBarrier();');
  for (let kk = 0; kk < TK; kk++) {
    L.push('  {');
    for (let g = 0; g < RM / 4; g++)
      L.push(
        `    let a4_${g} = vec4<f32>(As[${kk * TMP}u + ty * ${RM}u + ${4 * g}u], As[${kk * TMP}u + ty * ${RM}u + ${4 * g + 1}u], As[${kk * TMP}u + ty * ${RM}u + ${4 * g + 2}u], As[${kk * TMP}u + ty * ${RM}u + ${4 * g + 3}u]);`,
      );
    for (let q = 0; q < RN / 4; q++) {
      const b0 = `${kk * TNP}u + (${q * TX}u + tx) * 4u`;
      L.push(`    let b${q} = vec4<f32>(Bs[${b0}], Bs[${b0} + 1u], Bs[${b0} + 2u], Bs[${b0} + 3u]);`);
    }
    for (let a = 0; a < RM; a++)
      for (let q = 0; q < RN / 4; q++)
        L.push(`    acc${a}_${q} = fma(vec4<f32>(a4_${a >> 2}[${a & 3}]), b${q}, acc${a}_${q});`);
    L.push('  }');
  }
  L.push('  workgroupBarrier();', '}');
  L.push(`let pBase = (sp * ${A2}u + pos) * ${u(WN.Op)};`);
  for (let a = 0; a < RM; a++)
    for (let q = 0; q < RN / 4; q++) {
      L.push(
        `P[((pBase + tileRow + ty * ${RM}u + ${a}u) * ${u(WN.Np)} + tileCol + (${q * TX}u + tx) * 4u) / 4u] = acc${a}_${q};`,
      );
    }
  return `var<workgroup> As: array<f32, ${TK * TMP}>;
var<workgroup> Bs: array<f32, ${TK * TNP}>;
${mainOf(NT, L)}`;
}

/** Y[n, o] (m x m) = AT M[·, o, n] A, one thread per (o, n), then the epilogue. */
export function winoOutWgsl(wn: Winograd, fin: ConvFin): string {
  const { m } = wn;
  const u = (w: number) => pU(w);
  const t = outputTransform(wn);
  const L: string[] = [];
  L.push(`let e = (wid.x + wid.y * nwg.x) * 256u + lid;`);
  L.push(`if (e >= ${u(WO.O)} * ${u(WO.N)}) { return; }`);
  L.push(`let oc = e % ${u(WO.O)}; let nb = e / ${u(WO.O)};`);
  L.push(`let stride = ${u(WO.Op)} * ${u(WO.Np)}; let at0 = oc * ${u(WO.Np)} + nb;`);
  L.push(...t.lines);
  L.push(`let yb = (nb * ${u(WO.O)} + oc) * ${u(WO.oH)};`);
  for (let i = 0; i < m; i++)
    for (let j = 0; j < m; j++) {
      const v = fin(t.value(i, j), 'nb', 'oc', `${i}u`, `${j}u`);
      L.push(`Y[(yb + ${i}u) * ${u(WO.oW)} + ${j}u] = ${v};`);
    }
  return mainOf(256, L);
}
