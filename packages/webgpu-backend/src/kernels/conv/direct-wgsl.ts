import { pI, pU } from '../wgsl';

/**
 * The implicit-GEMM conv shader (see conv.ts for the scheme). Per group, C[m, col] =
 * sum_k W[m, k] · X[k, col]: m an output channel of the group, col = (batch item, output
 * position), k = (input channel, kernel tap). The tile loop is the matmul's (LARGE_MATMUL's
 * layout): both operand tiles staged k-major in workgroup memory, A with a padded pitch, read
 * back as vec4s, B's column groups interleaved across threads so a warp reads consecutive
 * vec4s, a threadM x threadN register tile of vec4 accumulators. What differs is the loaders:
 * the kernel geometry (kernel size, stride, dilation, lhs dilation) is baked into the shader,
 * so the k -> (channel, tap) split and the dilation tests divide by constants, and each thread
 * keeps its B columns' window origins in registers for the whole k loop.
 */
export interface ConvShape {
  TM: number;
  TN: number;
  TK: number;
  RM: number;
  RN: number;
  padA: number;
  unroll: boolean;
  kH: number;
  kW: number;
  sH: number;
  sW: number;
  dH: number;
  dW: number;
  lH: number;
  lW: number;
}

/** Parameter words (u32/i32), before the epilogue's. */
export const CW = {
  Og: 0,
  cols: 1,
  K: 2,
  tilesN: 3,
  tilesM: 4,
  total: 5,
  P: 6,
  oW: 7,
  dinH: 8,
  dinW: 9,
  pH: 10,
  pW: 11,
  xOff: 12,
  xS: 13,
  wOff: 17,
  wS: 18,
  Cg: 22,
  O: 23,
  groups: 24,
  kChunk: 25,
  outSize: 26,
} as const;
export const CW_WORDS = 28;

/** WGSL wrapping a product element in the epilogue, given its batch item, channel and position. */
export type ConvFin = (v: string, nb: string, oc: string, py: string, px: string) => string;

/** The main function. */
export function convMain(s: ConvShape, fin: ConvFin): string {
  const { TM, TN, TK, RM, RN, kH, kW, sH, sW, dH, dW, lH, lW } = s;
  const TX = TN / RN,
    TY = TM / RM,
    NT = TX * TY,
    TMP = TM + s.padA;
  const slots = Math.max(1, TN / NT),
    kStep = Math.max(1, NT / TN);
  const kHW = kH * kW;
  const u = (w: number) => pU(w),
    i = (w: number) => pI(w);
  const L: string[] = [];
  // B (input windows): fixed columns per thread.
  const pre: string[] = [];
  for (let q = 0; q < slots; q++) {
    pre.push(`let col${q} = tileCol + ${slots > 1 ? `lid + ${q * NT}u` : `lid % ${TN}u`};`);
    pre.push(`let ok${q} = col${q} < ${u(CW.cols)};`);
    pre.push(`let cp${q} = col${q} % ${u(CW.P)};`);
    pre.push(`let y0_${q} = i32(cp${q} / ${u(CW.oW)}) * ${sH} - ${i(CW.pH)};`);
    pre.push(`let x0_${q} = i32(cp${q} % ${u(CW.oW)}) * ${sW} - ${i(CW.pW)};`);
    pre.push(
      `let xb${q} = ${i(CW.xOff)} + i32(col${q} / ${u(CW.P)}) * ${i(CW.xS)} + i32(grp * ${u(CW.Cg)}) * ${i(CW.xS + 1)};`,
    );
  }
  const hole = (v: string, l: number) => (l === 1 ? '' : ` && ${v} % ${l} == 0`);
  const loadB: string[] = [];
  loadB.push(`for (var kk = ${kStep > 1 ? `lid / ${TN}u` : '0u'}; kk < ${TK}u; kk += ${kStep}u) {`);
  loadB.push(`  let k = k0 + kk; let kOk = k < kEnd;`);
  loadB.push(
    `  let c = i32(k / ${kHW}u); let r = k % ${kHW}u; let dy = i32(r / ${kW}u) * ${dH}; let dx = i32(r % ${kW}u) * ${dW};`,
  );
  for (let q = 0; q < slots; q++) {
    loadB.push(`  { let yy = y0_${q} + dy; let xx = x0_${q} + dx; var v = 0.0;`);
    loadB.push(
      `    if (kOk && ok${q} && yy >= 0 && xx >= 0 && yy < ${i(CW.dinH)} && xx < ${i(CW.dinW)}${hole('yy', lH)}${hole('xx', lW)}) {`,
    );
    const yi = lH === 1 ? 'yy' : `(yy / ${lH})`,
      xi = lW === 1 ? 'xx' : `(xx / ${lW})`;
    loadB.push(`      v = X[u32(xb${q} + c * ${i(CW.xS + 1)} + ${yi} * ${i(CW.xS + 2)} + ${xi} * ${i(CW.xS + 3)})]; }`);
    loadB.push(
      `    let bi = kk * ${TN}u + ${slots > 1 ? `lid + ${q * NT}u` : `lid % ${TN}u`}; Bs4[bi / 4u][bi % 4u] = v; }`,
    );
  }
  loadB.push('}');
  // A (weights): lanes along k (the weight's contiguous dim), rows strided.
  const loadA = [
    `{ let k = k0 + ak; let kOk = k < kEnd;`,
    `  let wk = i32(k / ${kHW}u) * ${i(CW.wS + 1)} + i32((k % ${kHW}u) / ${kW}u) * ${i(CW.wS + 2)} + i32(k % ${kW}u) * ${i(CW.wS + 3)};`,
    `  for (var m = lid / ${TK}u; m < ${TM}u; m += ${NT / TK}u) {`,
    `    let row = tileRow + m; var v = 0.0;`,
    `    if (kOk && row < ${u(CW.Og)}) { v = Wt[u32(wb + i32(row) * ${i(CW.wS)} + wk)]; }`,
    `    let ai = ak * ${TMP}u + m; As4[ai / 4u][ai % 4u] = v;`,
    `  }`,
    `}`,
  ];
  // Register tile: row i = ty*RM + i, column group q = q*TX*4 + tx*4 (interleaved).
  const decl: string[] = [];
  for (let a = 0; a < RM; a++) for (let q = 0; q < RN / 4; q++) decl.push(`var acc${a}_${q} = vec4<f32>(0.0);`);
  const step = (kk: string) => {
    const o: string[] = [];
    for (let g = 0; g < RM / 4; g++) o.push(`let a4_${g} = As4[(${kk}) * ${TMP / 4}u + ty * ${RM / 4}u + ${g}u];`);
    for (let q = 0; q < RN / 4; q++) o.push(`let b${q} = Bs4[(${kk}) * ${TN / 4}u + ${q * TX}u + tx];`);
    for (let a = 0; a < RM; a++)
      for (let q = 0; q < RN / 4; q++)
        o.push(`acc${a}_${q} = fma(vec4<f32>(a4_${a >> 2}[${a & 3}]), b${q}, acc${a}_${q});`);
    return o;
  };
  const inner: string[] = [];
  if (s.unroll) for (let kk = 0; kk < TK; kk++) inner.push('{', ...step(`${kk}u`), '}');
  else inner.push(`for (var kk = 0u; kk < ${TK}u; kk++) {`, ...step('kk'), '}');
  // Store: each column's (batch, position) once, then the rows.
  const store: string[] = [];
  for (let q = 0; q < RN / 4; q++) {
    for (let j = 0; j < 4; j++) {
      const n = q * 4 + j;
      store.push(
        `let cc${n} = tileCol + ${q * TX * 4 + j}u + tx * 4u; let nb${n} = cc${n} / ${u(CW.P)}; let pp${n} = cc${n} % ${u(CW.P)};`,
      );
    }
  }
  for (let a = 0; a < RM; a++) {
    store.push(`{ let m = tileRow + ty * ${RM}u + ${a}u;`);
    store.push(`  if (m < ${u(CW.Og)}) { let oc = grp * ${u(CW.Og)} + m;`);
    for (let n = 0; n < RN; n++) {
      const v = fin(`acc${a}_${n >> 2}[${n & 3}]`, `nb${n}`, 'oc', `(pp${n} / ${u(CW.oW)})`, `(pp${n} % ${u(CW.oW)})`);
      store.push(
        `    if (cc${n} < ${u(CW.cols)}) { Y[yOff + (nb${n} * ${u(CW.O)} + oc) * ${u(CW.P)} + pp${n}] = ${v}; }`,
      );
    }
    store.push(`  } }`);
  }
  L.push(`@compute @workgroup_size(${NT})
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
  let wg = wid.x + wid.y * nwg.x;
  if (wg >= ${u(CW.total)}) { return; }
  let tn = wg % ${u(CW.tilesN)};
  let r1 = wg / ${u(CW.tilesN)};
  let tm = r1 % ${u(CW.tilesM)};
  let r2 = r1 / ${u(CW.tilesM)};
  let grp = r2 % ${u(CW.groups)};
  let sp = r2 / ${u(CW.groups)};
  let tileRow = tm * ${TM}u;
  let tileCol = tn * ${TN}u;
  let tx = lid % ${TX}u;
  let ty = lid / ${TX}u;
  let kBeg = sp * ${u(CW.kChunk)};
  let kEnd = min(${u(CW.K)}, kBeg + ${u(CW.kChunk)});
  let yOff = sp * ${u(CW.outSize)};
  ${pre.join('\n  ')}
  let ak = lid % ${TK}u;
  let wb = ${i(CW.wOff)} + i32(grp * ${u(CW.Og)}) * ${i(CW.wS)};
  ${decl.join('\n  ')}
  for (var k0 = kBeg; k0 < kEnd; k0 += ${TK}u) {
    ${loadA.join('\n    ')}
    ${loadB.join('\n    ')}
    workgroupBarrier();
    ${inner.join('\n    ')}
    workgroupBarrier();
  }
  ${store.join('\n  ')}
}`);
  return L.join('\n');
}

/** Sums split-K partials [splits, size] into the output. */
export function convSumWgsl(): string {
  return `@group(0) @binding(0) var<uniform> U: array<vec4<u32>, 1>;
@group(0) @binding(1) var<storage, read> Pt: array<f32>;
@group(0) @binding(2) var<storage, read_write> Y: array<f32>;
@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
  let e = (wid.x + wid.y * nwg.x) * 256u + lid;
  let n = U[0][0];
  if (e >= n) { return; }
  var s = 0.0;
  for (var q = 0u; q < U[0][1]; q++) { s += Pt[q * n + e]; }
  Y[e] = s;
}`;
}
