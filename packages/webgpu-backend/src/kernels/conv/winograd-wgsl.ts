import type { ConvFin } from './direct-wgsl';
import type { Winograd } from './winograd-matrices';
import { MAIN_ARGS, pI, pU } from '../wgsl';

/**
 * The three shaders of the Winograd conv (scheme in conv/winograd.ts): the filter and input
 * transforms, one thread per (channel pair) or (channel, tile), their matrices baked in as
 * constants with the zero terms left out; and the GEMM over the alpha² tile positions with the
 * output transform folded into it (each position's product is added into the m x m outputs
 * with its A-coefficients, so no per-position products are ever stored).
 */

/** Parameter words of the filter transform. */
export const WF = { O: 0, C: 1, Op: 2, Cp: 3, wOff: 4, wS: 5 } as const;
export const WF_WORDS = 9;
/** Parameter words of the input transform. */
export const WI = { C: 0, Cp: 1, T: 2, Tp: 3, tW: 4, tHW: 5, H: 6, W: 7, pH: 8, pW: 9, xOff: 10, xS: 11 } as const;
export const WI_WORDS = 15;
/** Parameter words of the GEMM (then the epilogue's). */
export const WG = { Op: 0, Cp: 1, Tp: 2, T: 3, O: 4, tilesN: 5, total: 6, tW: 7, tHW: 8, oH: 9, oW: 10 } as const;
export const WG_WORDS = 11;

const lit = (c: number) => (Number.isInteger(c) ? `${c}.0` : `${c}`);
/** sum_i cs[i] * vs[i] as WGSL, skipping zeros and multiplications by ±1. */
export function lin(cs: readonly number[], vs: readonly string[]): string {
  let s = '';
  cs.forEach((c, i) => {
    if (c === 0) return;
    const a = Math.abs(c);
    const term = a === 1 ? vs[i] : `${lit(a)} * ${vs[i]}`;
    s += s === '' ? (c < 0 ? `-${term}` : term) : c < 0 ? ` - ${term}` : ` + ${term}`;
  });
  return s === '' ? '0.0' : s;
}

/** A compute entry point of `size` invocations per workgroup running `lines`. */
export function mainOf(size: number | string, lines: readonly string[]): string {
  return `@compute @workgroup_size(${size})
fn main(${MAIN_ARGS}) {
  ${lines.join('\n  ')}
}`;
}

/**
 * The output transform AT·M·A of one tile: lines loading its α² values from Ms (planes
 * `stride` apart from `at0`, WGSL lets the caller declares) and contracting each row with AT,
 * and the WGSL expression of output (i, j).
 */
export function outputTransform(wn: Winograd): { lines: string[]; value: (i: number, j: number) => string } {
  const { m, alpha: A, AT } = wn;
  const lines: string[] = [];
  for (let x = 0; x < A; x++)
    for (let y = 0; y < A; y++) lines.push(`let m${x}_${y} = Ms[${x * A + y}u * stride + at0];`);
  for (let x = 0; x < A; x++)
    for (let j = 0; j < m; j++)
      lines.push(
        `let h${x}_${j} = ${lin(
          AT[j],
          AT[j].map((_, y) => `m${x}_${y}`),
        )};`,
      );
  return {
    lines,
    value: (i, j) =>
      `(${lin(
        AT[i],
        AT[i].map((_, x) => `h${x}_${j}`),
      )})`,
  };
}

/**
 * U[pos, c, o] = (G w[o, c] Gᵀ)[pos], zero in the padding rows (o >= O) and columns (c >= C);
 * with oMajor U[pos, o, c] instead (the batched matmul's row-major A).
 */
export function winoFilterWgsl(wn: Winograd, oMajor = false): string {
  const { r, alpha: A, G } = wn;
  const u = (w: number) => pU(w),
    i = (w: number) => pI(w);
  const L: string[] = [];
  L.push(`let e = (wid.x + wid.y * nwg.x) * 256u + lid;`);
  L.push(`if (e >= ${u(WF.Op)} * ${u(WF.Cp)}) { return; }`);
  L.push(`let o = e % ${u(WF.Op)}; let c = e / ${u(WF.Op)};`);
  L.push(`let ok = o < ${u(WF.O)} && c < ${u(WF.C)};`);
  L.push(`let base = ${i(WF.wOff)} + i32(o) * ${i(WF.wS)} + i32(c) * ${i(WF.wS + 1)};`);
  for (let a = 0; a < r; a++)
    for (let b = 0; b < r; b++) {
      L.push(
        `var g${a}_${b} = 0.0; if (ok) { g${a}_${b} = Wt[u32(base + ${a} * ${i(WF.wS + 2)} + ${b} * ${i(WF.wS + 3)})]; }`,
      );
    }
  // Rows first (G g), then columns ((G g) Gᵀ).
  for (let x = 0; x < A; x++)
    for (let b = 0; b < r; b++)
      L.push(
        `let h${x}_${b} = ${lin(
          G[x],
          G[x].map((_, a) => `g${a}_${b}`),
        )};`,
      );
  L.push(`let stride = ${u(WF.Cp)} * ${u(WF.Op)};`);
  for (let x = 0; x < A; x++)
    for (let y = 0; y < A; y++) {
      L.push(
        `Uw[${x * A + y}u * stride + ${oMajor ? `o * ${u(WF.Cp)} + c` : `c * ${u(WF.Op)} + o`}] = ${lin(
          G[y],
          G[y].map((_, b) => `h${x}_${b}`),
        )};`,
      );
    }
  return mainOf(256, L);
}

/**
 * V[pos, c, t] = (M d Mᵀ)[pos] for the p x p patch d of tile t (rows from tile row · step − pH,
 * zero outside the input), M alpha x p; zero in the padding (c >= C, t >= T). The input
 * transform is M = BT with p = alpha and step m; the weight gradient's output-gradient
 * transform is M = G of F(m', 2) over 2 x 2 blocks at step 2.
 */
export function winoTileWgsl(M: readonly (readonly number[])[], pw: number, step: number): string {
  const A = M.length;
  const u = (w: number) => pU(w),
    i = (w: number) => pI(w);
  const L: string[] = [];
  L.push(`let e = (wid.x + wid.y * nwg.x) * 256u + lid;`);
  L.push(`if (e >= ${u(WI.Cp)} * ${u(WI.Tp)}) { return; }`);
  L.push(`let t = e % ${u(WI.Tp)}; let c = e / ${u(WI.Tp)};`);
  L.push(`let ok = t < ${u(WI.T)} && c < ${u(WI.C)};`);
  L.push(`let nb = t / ${u(WI.tHW)}; let rr = t % ${u(WI.tHW)};`);
  L.push(
    `let y0 = i32(rr / ${u(WI.tW)}) * ${step} - ${i(WI.pH)}; let x0 = i32(rr % ${u(WI.tW)}) * ${step} - ${i(WI.pW)};`,
  );
  L.push(`let base = ${i(WI.xOff)} + i32(nb) * ${i(WI.xS)} + i32(c) * ${i(WI.xS + 1)};`);
  for (let a = 0; a < pw; a++) L.push(`let yy${a} = y0 + ${a}; let ry${a} = ok && yy${a} >= 0 && yy${a} < ${i(WI.H)};`);
  for (let b = 0; b < pw; b++) L.push(`let xx${b} = x0 + ${b}; let rx${b} = xx${b} >= 0 && xx${b} < ${i(WI.W)};`);
  for (let a = 0; a < pw; a++)
    for (let b = 0; b < pw; b++) {
      L.push(
        `var d${a}_${b} = 0.0; if (ry${a} && rx${b}) { d${a}_${b} = X[u32(base + yy${a} * ${i(WI.xS + 2)} + xx${b} * ${i(WI.xS + 3)})]; }`,
      );
    }
  for (let x = 0; x < A; x++)
    for (let b = 0; b < pw; b++)
      L.push(
        `let h${x}_${b} = ${lin(
          M[x],
          M[x].map((_, a) => `d${a}_${b}`),
        )};`,
      );
  L.push(`let stride = ${u(WI.Cp)} * ${u(WI.Tp)};`);
  for (let x = 0; x < A; x++)
    for (let y = 0; y < A; y++) {
      L.push(
        `V[${x * A + y}u * stride + c * ${u(WI.Tp)} + t] = ${lin(
          M[y],
          M[y].map((_, b) => `h${x}_${b}`),
        )};`,
      );
    }
  return mainOf(256, L);
}

export interface WinoTile {
  TM: number;
  TN: number;
  TK: number;
  RM: number;
  RN: number;
}

/**
 * Y[n, o, tile outputs] = sum over positions p of A-coefficients(p) · (sum_c U[p, c, o] V[p, c, t]).
 * The per-position GEMM is the matmul's register tile (k-major staged tiles read as vec4s,
 * columns interleaved across threads); U and V are padded to whole tiles, so no loader checks.
 */
export function winoGemmWgsl(wn: Winograd, s: WinoTile, fin: ConvFin): string {
  const { m, alpha: A, AT } = wn;
  const { TM, TN, TK, RM, RN } = s;
  const TX = TN / RN,
    TY = TM / RM,
    NT = TX * TY;
  const u = (w: number) => pU(w);
  const aN = (TK * TM) / 4,
    bN = (TK * TN) / 4;
  const loads = (n: number, body: (e: string) => string) => {
    const o: string[] = [];
    for (let q = 0; q * NT < n; q++) {
      const e = `(lid + ${q * NT}u)`;
      o.push((q + 1) * NT > n ? `if ${e} < ${n}u { ${body(e)} }` : `{ ${body(e)} }`);
    }
    return o;
  };
  const L: string[] = [];
  L.push(`let wg = wid.x + wid.y * nwg.x;`, `if (wg >= ${u(WG.total)}) { return; }`);
  L.push(`let tileCol = (wg % ${u(WG.tilesN)}) * ${TN}u; let tileRow = (wg / ${u(WG.tilesN)}) * ${TM}u;`);
  L.push(`let tx = lid % ${TX}u; let ty = lid / ${TX}u;`);
  L.push(`let op4 = ${u(WG.Op)} / 4u; let tp4 = ${u(WG.Tp)} / 4u;`);
  L.push(`var at = array<f32, ${m * A}>(${AT.flat().map(lit).join(', ')});`);
  const ys: string[] = [];
  for (let a = 0; a < RM; a++)
    for (let q = 0; q < RN / 4; q++) for (let p = 0; p < m * m; p++) ys.push(`y${a}_${q}_${p}`);
  L.push(...ys.map((y) => `var ${y} = vec4<f32>(0.0);`));
  L.push(`for (var pos = 0u; pos < ${A * A}u; pos++) {`);
  for (let a = 0; a < RM; a++) for (let q = 0; q < RN / 4; q++) L.push(`  var acc${a}_${q} = vec4<f32>(0.0);`);
  L.push(`  for (var k0 = 0u; k0 < ${u(WG.Cp)}; k0 += ${TK}u) {`);
  L.push(
    `    let rowA = (pos * ${u(WG.Cp)} + k0) * op4 + tileRow / 4u; let rowB = (pos * ${u(WG.Cp)} + k0) * tp4 + tileCol / 4u;`,
  );
  L.push(
    ...loads(aN, (e) => `As4[${e}] = Uw[rowA + (${e} / ${TM / 4}u) * op4 + ${e} % ${TM / 4}u];`).map((x) => `    ${x}`),
  );
  L.push(
    ...loads(bN, (e) => `Bs4[${e}] = V[rowB + (${e} / ${TN / 4}u) * tp4 + ${e} % ${TN / 4}u];`).map((x) => `    ${x}`),
  );
  L.push('    workgroupBarrier();');
  for (let kk = 0; kk < TK; kk++) {
    L.push('    {');
    for (let g = 0; g < RM / 4; g++) L.push(`      let a4_${g} = As4[${kk * (TM / 4)}u + ty * ${RM / 4}u + ${g}u];`);
    for (let q = 0; q < RN / 4; q++) L.push(`      let b${q} = Bs4[${kk * (TN / 4) + q * TX}u + tx];`);
    for (let a = 0; a < RM; a++)
      for (let q = 0; q < RN / 4; q++)
        L.push(`      acc${a}_${q} = fma(vec4<f32>(a4_${a >> 2}[${a & 3}]), b${q}, acc${a}_${q});`);
    L.push('    }');
  }
  L.push('    workgroupBarrier();', '  }');
  // Output transform, folded: y[i][j] += AT[i][xi] AT[j][eta] · acc.
  L.push(`  let xi = pos / ${A}u; let eta = pos % ${A}u;`);
  for (let i = 0; i < m; i++)
    for (let j = 0; j < m; j++) {
      L.push(`  let c${i}_${j} = vec4<f32>(at[${i * A}u + xi] * at[${j * A}u + eta]);`);
      for (let a = 0; a < RM; a++)
        for (let q = 0; q < RN / 4; q++)
          L.push(`  y${a}_${q}_${i * m + j} = fma(c${i}_${j}, acc${a}_${q}, y${a}_${q}_${i * m + j});`);
    }
  L.push('}');
  // Store: column n of the thread is tile t = tileCol + (q*TX + tx)*4 + jj.
  for (let q = 0; q < RN / 4; q++)
    for (let jj = 0; jj < 4; jj++) {
      L.push(`{ let t = tileCol + ${q * TX * 4 + jj}u + tx * 4u;`);
      L.push(
        `  if (t < ${u(WG.T)}) { let nb = t / ${u(WG.tHW)}; let rr = t % ${u(WG.tHW)}; let oy0 = (rr / ${u(WG.tW)}) * ${m}u; let ox0 = (rr % ${u(WG.tW)}) * ${m}u;`,
      );
      for (let a = 0; a < RM; a++) {
        L.push(`    { let oc = tileRow + ty * ${RM}u + ${a}u; if (oc < ${u(WG.O)}) {`);
        for (let i = 0; i < m; i++)
          for (let j = 0; j < m; j++) {
            const v = fin(`y${a}_${q}_${i * m + j}[${jj}]`, 'nb', 'oc', `(oy0 + ${i}u)`, `(ox0 + ${j}u)`);
            L.push(
              `      if (oy0 + ${i}u < ${u(WG.oH)} && ox0 + ${j}u < ${u(WG.oW)}) { Y[((nb * ${u(WG.O)} + oc) * ${u(WG.oH)} + oy0 + ${i}u) * ${u(WG.oW)} + ox0 + ${j}u] = ${v}; }`,
            );
          }
        L.push('    } }');
      }
      L.push('  } }');
    }
  return `var<workgroup> As4: array<vec4<f32>, ${aN}>;
var<workgroup> Bs4: array<vec4<f32>, ${bN}>;
${mainOf(NT, L)}`;
}
