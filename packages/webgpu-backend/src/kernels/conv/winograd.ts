import type { Expr } from '@surf/core';
import type { Runtime } from '../../runtime';
import type { PooledBuffer } from '../../pool';
import type { ConvConfig, ConvGeometry, ConvOperand } from './types';
import { ConvEpilogueInput, planConvEpilogue } from './epilogue';
import {
  WF,
  WF_WORDS,
  WG,
  WG_WORDS,
  WI,
  WI_WORDS,
  WinoTile,
  winoFilterWgsl,
  winoGemmWgsl,
  winoTileWgsl,
} from './winograd-wgsl';
import { Winograd, winograd } from './winograd-matrices';
import { paramsDecl } from '../wgsl';

/**
 * Winograd convolution for stride-1, undilated, ungrouped r x r kernels: F(m x m, r x r) over
 * alpha x alpha input tiles (alpha = m + r - 1) overlapping by r - 1, from
 * conv/winograd-matrices.ts. Three dispatches:
 *   1. filter transform U[p, c, o] = (G w[o, c] Gᵀ)[p], p one of the alpha² positions;
 *   2. input transform V[p, c, t] = (BT d[c, t] B)[p], t = (batch item, tile row, tile column);
 *   3. per position a GEMM over channels, sum_c U[p, c, o] V[p, c, t], folded at once into the
 *      m x m outputs of (o, t) with the output transform's coefficients AT[i][p/α]·AT[j][p%α],
 *      then the epilogue and the store.
 * F(2x2, 5x5) does 36 multiplies per 4 outputs where the direct conv does 100 (2.78x fewer);
 * the price is V (alpha²/m² = 9x the input) written and read once, and the folding FMAs
 * (m² per output pair and position against C for the GEMM). The data gradient of a stride-1
 * conv is again such a conv (flipped weight), so it takes this path too; the weight gradient
 * (a 28x28 "kernel") takes conv/winograd-large-kernel.ts. This is the F(2x2) tiling (winoTile 2), kept as the
 * fallback when F(4x4)'s buffers (conv/winograd-matmul.ts, the default) exceed a storage binding; the
 * shape rule here (useWino) is the one both share. See docs/kernels.md "Winograd".
 */

/** F(2x2)'s output tile for an r x r kernel under `cfg`, or 0 when the kernel has no Winograd path. */
export function winoM(cfg: ConvConfig, r: number): number {
  if (r === 5) return 2;
  if (r === 3 && cfg.wino3) return 2;
  return 0;
}

/** Whether a conv takes the Winograd path: the shape rule of the dispatcher (see winoM). */
export function useWino(cfg: ConvConfig, g: ConvGeometry, maxBinding: number): boolean {
  if (cfg.wino <= 0 || g.groups !== 1 || g.kH !== g.kW || winoM(cfg, g.kH) === 0) return false;
  if (
    g.stride[0] !== 1 ||
    g.stride[1] !== 1 ||
    g.dilation[0] !== 1 ||
    g.dilation[1] !== 1 ||
    g.lhsDilation[0] !== 1 ||
    g.lhsDilation[1] !== 1
  )
    return false;
  const flops = 2 * g.n * g.o * g.oH * g.oW * g.c * g.kH * g.kW;
  if (flops < cfg.wino * 1e6) return false;
  const { vBytes } = winoSizes(cfg, g);
  return vBytes <= maxBinding;
}

function tileOf(cfg: ConvConfig, o: number): WinoTile {
  const TM = cfg.winoTM === 64 && o <= 32 ? 32 : cfg.winoTM;
  return { TM, TN: cfg.winoTN, TK: cfg.winoTK, RM: Math.min(cfg.winoRM, TM), RN: cfg.winoRN };
}

function winoSizes(cfg: ConvConfig, g: ConvGeometry) {
  const m = winoM(cfg, g.kH),
    wn = winograd(m, g.kH),
    A = wn.alpha;
  const s = tileOf(cfg, g.o);
  const tH = Math.ceil(g.oH / m),
    tW = Math.ceil(g.oW / m),
    T = g.n * tH * tW;
  const Op = Math.ceil(g.o / s.TM) * s.TM,
    Cp = Math.ceil(g.c / s.TK) * s.TK,
    Tp = Math.ceil(T / s.TN) * s.TN;
  return { wn, s, m, A, tH, tW, T, Op, Cp, Tp, vBytes: A * A * Cp * Tp * 4, uBytes: A * A * Cp * Op * 4 };
}

const cache = new Map<string, Winograd>();

export function encodeWino(
  rt: Runtime,
  cfg: ConvConfig,
  x: ConvOperand,
  w: ConvOperand,
  g: ConvGeometry,
  out: PooledBuffer,
  epi?: { expr: Expr; inputs: ConvEpilogueInput[] },
): void {
  const z = winoSizes(cfg, g);
  const { s, m, A, tW, T, Op, Cp, Tp } = z;
  const r = g.kH;
  const wk = `${m},${r}`;
  const wn = cache.get(wk) ?? z.wn;
  cache.set(wk, wn);
  const { i32 } = rt.words;
  // 1. filter transform
  const U = rt.alloc(z.uBytes);
  const kf = rt.kernel(`wino-f|${wk}`, 1, 1, WF_WORDS, () =>
    [
      paramsDecl(WF_WORDS),
      '@group(0) @binding(1) var<storage, read> Wt: array<f32>;',
      '@group(0) @binding(2) var<storage, read_write> Uw: array<f32>;',
      winoFilterWgsl(wn),
    ].join('\n'),
  );
  const pf = rt.params(kf);
  [
    [WF.O, g.o],
    [WF.C, g.c],
    [WF.Op, Op],
    [WF.Cp, Cp],
    [WF.wOff, w.offset],
  ].forEach(([k, v]) => {
    i32[pf + k] = v;
  });
  for (let d = 0; d < 4; d++) i32[pf + WF.wS + d] = w.strides[d];
  rt.dispatch(kf, [w.buf, U], pf, Math.ceil((Op * Cp) / 256));
  // 2. input transform
  const V = rt.alloc(z.vBytes);
  const ki = rt.kernel(`wino-i|${wk}`, 1, 1, WI_WORDS, () =>
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
    [WI.Cp, Cp],
    [WI.T, T],
    [WI.Tp, Tp],
    [WI.tW, tW],
    [WI.tHW, z.tH * tW],
    [WI.H, g.h],
    [WI.W, g.w],
    [WI.pH, g.padLo[0]],
    [WI.pW, g.padLo[1]],
    [WI.xOff, x.offset],
  ].forEach(([k, v]) => {
    i32[pi + k] = v;
  });
  for (let d = 0; d < 4; d++) i32[pi + WI.xS + d] = x.strides[d];
  rt.dispatch(ki, [x.buf, V], pi, Math.ceil((Cp * Tp) / 256));
  // 3. GEMM over the positions with the output transform and the epilogue
  const ep = planConvEpilogue(epi, WG_WORDS);
  const key = `wino-g|${wk}|${s.TM},${s.TN},${s.TK},${s.RM},${s.RN}${ep.key}`;
  const kg = rt.kernel(key, 2 + ep.bufs.length, 1, ep.words, () =>
    [
      paramsDecl(ep.words),
      '@group(0) @binding(1) var<storage, read> Uw: array<vec4<f32>>;',
      '@group(0) @binding(2) var<storage, read> V: array<vec4<f32>>;',
      ...ep.wgsl(3),
      `@group(0) @binding(${3 + ep.bufs.length}) var<storage, read_write> Y: array<f32>;`,
      winoGemmWgsl(wn, s, ep.fin),
    ].join('\n'),
  );
  const pg = rt.params(kg);
  const tilesN = Tp / s.TN,
    total = tilesN * (Op / s.TM);
  [
    [WG.Op, Op],
    [WG.Cp, Cp],
    [WG.Tp, Tp],
    [WG.T, T],
    [WG.O, g.o],
    [WG.tilesN, tilesN],
    [WG.total, total],
    [WG.tW, tW],
    [WG.tHW, z.tH * tW],
    [WG.oH, g.oH],
    [WG.oW, g.oW],
  ].forEach(([k, v]) => {
    i32[pg + k] = v;
  });
  ep.fill(rt, pg);
  rt.dispatch(kg, [U, V, ...ep.bufs, out], pg, total);
  // Later dispatches that reuse these buffers run after this one (same queue order).
  rt.release(U);
  rt.release(V);
}
