import type { Expr } from '@surf/core';
import type { Runtime } from '../../runtime';
import type { PooledBuffer } from '../../pool';
import type { ConvGeometry, ConvOperand } from './types';
import { ConvEpilogueInput, planConvEpilogue } from './epilogue';
import { WF, WF_WORDS, WI, WI_WORDS, mainOf, outputTransform, winoFilterWgsl, winoTileWgsl } from './winograd-wgsl';
import { MatmulConfig, encodeMatmul } from '../matmul/matmul';
import { Winograd, winograd } from './winograd-matrices';
import { pU, paramsDecl } from '../wgsl';

/**
 * The forward Winograd path with 4x4 output tiles, F(4x4, r x r) (alpha = r + 3: 8 for 5x5):
 * 64 multiplies per 16 outputs of a 5x5 conv (6.25x fewer than direct), with the transformed
 * input only 4x the input (F(2x2, 5x5): 9x). Its output tile has 16 values per (channel, tile),
 * too many registers to fold into the GEMM as conv/winograd.ts does, so the per-position products
 * go through memory: filter transform U[p, o, c], input transform V[p, c, t], the batched
 * matmul M[p] = U[p] · V[p] (the tuned matmul kernel, kernels/matmul/matmul.ts), then the output
 * transform Y = AT M A with the epilogue. Chosen by ConvConfig.winoTile = 4.
 */
export type MatmulChooser = (m: number, n: number, k: number, batch: number) => MatmulConfig;

/** Output transform parameter words. */
const WT = { O: 0, T: 1, tW: 2, tHW: 3, oH: 4, oW: 5 } as const;
const WT_WORDS = 6;

export function winoMMSizes(g: ConvGeometry) {
  const m = 4,
    A = m + g.kH - 1;
  const tH = Math.ceil(g.oH / m),
    tW = Math.ceil(g.oW / m),
    T = g.n * tH * tW;
  return { m, A, tH, tW, T, vBytes: A * A * g.c * T * 4, mBytes: A * A * g.o * T * 4 };
}

/** Y[n, o, tile] = AT M[·, o, t] A, one thread per (o, t) (t fastest: M's rows are read along t). */
function outWgsl(wn: Winograd, fin: (v: string, nb: string, oc: string, py: string, px: string) => string): string {
  const { m } = wn;
  const u = (w: number) => pU(w);
  const t = outputTransform(wn);
  const L: string[] = [];
  L.push(`let e = (wid.x + wid.y * nwg.x) * 256u + lid;`);
  L.push(`if (e >= ${u(WT.O)} * ${u(WT.T)}) { return; }`);
  L.push(`let t = e % ${u(WT.T)}; let oc = e / ${u(WT.T)};`);
  L.push(`let stride = ${u(WT.O)} * ${u(WT.T)}; let at0 = oc * ${u(WT.T)} + t;`);
  L.push(...t.lines);
  L.push(
    `let nb = t / ${u(WT.tHW)}; let rr = t % ${u(WT.tHW)}; let oy0 = (rr / ${u(WT.tW)}) * ${m}u; let ox0 = (rr % ${u(WT.tW)}) * ${m}u;`,
  );
  L.push(`let yb = (nb * ${u(WT.O)} + oc) * ${u(WT.oH)};`);
  for (let i = 0; i < m; i++)
    for (let j = 0; j < m; j++) {
      const v = fin(t.value(i, j), 'nb', 'oc', `(oy0 + ${i}u)`, `(ox0 + ${j}u)`);
      L.push(
        `if (oy0 + ${i}u < ${u(WT.oH)} && ox0 + ${j}u < ${u(WT.oW)}) { Y[(yb + oy0 + ${i}u) * ${u(WT.oW)} + ox0 + ${j}u] = ${v}; }`,
      );
    }
  return mainOf(256, L);
}

export function encodeWinoMM(
  rt: Runtime,
  mm: MatmulChooser,
  x: ConvOperand,
  w: ConvOperand,
  g: ConvGeometry,
  out: PooledBuffer,
  epi?: { expr: Expr; inputs: ConvEpilogueInput[] },
): void {
  const { m, A, tW, T, vBytes, mBytes } = winoMMSizes(g);
  const r = g.kH,
    wn = winograd(m, r),
    P = A * A;
  const { i32 } = rt.words;
  // 1. U[p, o, c]
  const U = rt.alloc(P * g.o * g.c * 4);
  const kf = rt.kernel(`wino-f|${m},${r}|o`, 1, 1, WF_WORDS, () =>
    [
      paramsDecl(WF_WORDS),
      '@group(0) @binding(1) var<storage, read> Wt: array<f32>;',
      '@group(0) @binding(2) var<storage, read_write> Uw: array<f32>;',
      winoFilterWgsl(wn, true),
    ].join('\n'),
  );
  const pf = rt.params(kf);
  [
    [WF.O, g.o],
    [WF.C, g.c],
    [WF.Op, g.o],
    [WF.Cp, g.c],
    [WF.wOff, w.offset],
  ].forEach(([k, v]) => {
    i32[pf + k] = v;
  });
  for (let d = 0; d < 4; d++) i32[pf + WF.wS + d] = w.strides[d];
  rt.dispatch(kf, [w.buf, U], pf, Math.ceil((g.o * g.c) / 256));
  // 2. V[p, c, t]
  const V = rt.alloc(vBytes);
  const ki = rt.kernel(`wino-i|${m},${r}`, 1, 1, WI_WORDS, () =>
    [
      paramsDecl(WI_WORDS),
      '@group(0) @binding(1) var<storage, read> X: array<f32>;',
      '@group(0) @binding(2) var<storage, read_write> V: array<f32>;',
      winoTileWgsl(wn.BT, A, m),
    ].join('\n'),
  );
  const pi = rt.params(ki);
  [
    [WI.C, g.c],
    [WI.Cp, g.c],
    [WI.T, T],
    [WI.Tp, T],
    [WI.tW, tW],
    [WI.tHW, Math.ceil(g.oH / m) * tW],
    [WI.H, g.h],
    [WI.W, g.w],
    [WI.pH, g.padLo[0]],
    [WI.pW, g.padLo[1]],
    [WI.xOff, x.offset],
  ].forEach(([k, v]) => {
    i32[pi + k] = v;
  });
  for (let d = 0; d < 4; d++) i32[pi + WI.xS + d] = x.strides[d];
  rt.dispatch(ki, [x.buf, V], pi, Math.ceil((g.c * T) / 256));
  // 3. M[p] = U[p] · V[p]
  const M = rt.alloc(mBytes);
  encodeMatmul(rt, mm(g.o, T, g.c, P), {
    a: { buf: U, offset: 0, batchStrides: [g.o * g.c], rowStride: g.c, colStride: 1 },
    b: { buf: V, offset: 0, batchStrides: [g.c * T], rowStride: T, colStride: 1 },
    batchShape: [P],
    m: g.o,
    n: T,
    k: g.c,
    out: M,
  });
  // 4. Y = AT M A (+ epilogue)
  const ep = planConvEpilogue(epi, WT_WORDS);
  const ko = rt.kernel(`wino-t|${m},${r}${ep.key}`, 1 + ep.bufs.length, 1, ep.words, () =>
    [
      paramsDecl(ep.words),
      '@group(0) @binding(1) var<storage, read> Ms: array<f32>;',
      ...ep.wgsl(2),
      `@group(0) @binding(${2 + ep.bufs.length}) var<storage, read_write> Y: array<f32>;`,
      outWgsl(wn, ep.fin),
    ].join('\n'),
  );
  const po = rt.params(ko);
  [
    [WT.O, g.o],
    [WT.T, T],
    [WT.tW, tW],
    [WT.tHW, Math.ceil(g.oH / m) * tW],
    [WT.oH, g.oH],
    [WT.oW, g.oW],
  ].forEach(([k, v]) => {
    i32[po + k] = v;
  });
  ep.fill(rt, po);
  rt.dispatch(ko, [M, ...ep.bufs, out], po, Math.ceil((g.o * T) / 256));
  // Later dispatches that reuse these buffers run after these (same queue order).
  for (const b of [U, V, M]) rt.release(b);
}
