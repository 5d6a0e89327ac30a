import type { Expr } from '@surf/core';
import type { Runtime } from '../../runtime';
import type { PooledBuffer } from '../../pool';
import type { ConvConfig, ConvGeometry, ConvOperand } from './types';
import { ConvEpilogueInput, planConvEpilogue } from './epilogue';
import { convSumWgsl } from './direct-wgsl';
import { WI, WI_WORDS, WinoTile, winoTileWgsl } from './winograd-wgsl';
import { WN, WN_WORDS, WO, WO_WORDS, winoGemmNTWgsl, winoOutWgsl } from './winograd-large-kernel-wgsl';
import { winograd } from './winograd-matrices';
import { paramsDecl } from '../wgsl';

/**
 * Winograd for a conv whose output is a small m x m and whose kernel is large: the weight
 * gradient of a stride-1 r x r conv (x as [C, N, H, W] with the output gradient [O, N, oH, oW]
 * as its kernel, output [C, O, r, r]). The kernel is cut into b x b blocks (b = winoBlock, 2
 * or 4); each block of input channel c' contributes the correlation of its b x b weights with
 * the alpha x alpha input patch under it (alpha = m + b - 1), which is F(m, b):
 * out[n, o] = AT (Σ_t (G w_t[o] Gᵀ) ⊙ (BT x_t[n] B)) A with t = (c', block row, block column).
 * Five dispatches: the input transform V[p, n, t] (the forward path's kernel at step b), the
 * kernel transform D[p, o, t] (the same kernel with G over b x b blocks), a GEMM per position
 * over t split over workgroups, the split sum, and the output transform with the epilogue.
 * For the 5x5 row's weight gradient F(5x5, 2x2) does 36 multiplies per 4 kernel taps and
 * F(5x5, 4x4) 64 per 16, against 25 per tap for the direct form; the transformed operands are
 * alpha²/b² times the input and the output gradient (9x and 4x).
 */

/** The output size m for this path, or 0. The rule: an m x m output (5, or 3 with wino3) under a larger kernel. */
function winoWM(cfg: ConvConfig, oH: number): number {
  return oH === 5 || (oH === 3 && cfg.wino3) ? oH : 0;
}

export function useWinoW(cfg: ConvConfig, g: ConvGeometry, maxBinding: number): boolean {
  if (cfg.wino <= 0 || g.groups !== 1 || g.oH !== g.oW || winoWM(cfg, g.oH) === 0 || g.kH <= g.oH || g.kW <= g.oW)
    return false;
  if (
    g.stride[0] !== 1 ||
    g.stride[1] !== 1 ||
    g.dilation[0] !== 1 ||
    g.dilation[1] !== 1 ||
    g.lhsDilation[0] !== 1 ||
    g.lhsDilation[1] !== 1
  )
    return false;
  if (2 * g.n * g.o * g.oH * g.oW * g.c * g.kH * g.kW < cfg.wino * 1e6) return false;
  const z = sizes(cfg, g);
  return Math.max(z.dBytes, z.vBytes) <= maxBinding;
}

function sizes(cfg: ConvConfig, g: ConvGeometry) {
  const m = g.oH,
    b = cfg.winoBlock,
    A = m + b - 1;
  const TM = cfg.winoTM === 64 && g.o <= 32 ? 32 : cfg.winoTM;
  const s: WinoTile = {
    TM,
    TN: Math.min(cfg.winoTN, 32),
    TK: Math.max(cfg.winoTK, 8),
    RM: Math.min(cfg.winoRM, TM),
    RN: 4,
  };
  const bH = Math.ceil(g.kH / b),
    bW = Math.ceil(g.kW / b),
    T = g.c * bH * bW;
  const Op = Math.ceil(g.o / s.TM) * s.TM,
    Np = Math.ceil(g.n / s.TN) * s.TN,
    Tp = Math.ceil(T / s.TK) * s.TK;
  return { m, b, A, s, bH, bW, T, Op, Np, Tp, dBytes: A * A * Op * Tp * 4, vBytes: A * A * Np * Tp * 4 };
}

export function encodeWinoW(
  rt: Runtime,
  cfg: ConvConfig,
  x: ConvOperand,
  w: ConvOperand,
  g: ConvGeometry,
  out: PooledBuffer,
  epi?: { expr: Expr; inputs: ConvEpilogueInput[] },
): void {
  const z = sizes(cfg, g);
  const { m, b, A, s, bH, bW, T, Op, Np, Tp } = z;
  const wn = winograd(m, b);
  const { i32, u32 } = rt.words;
  const swap = (st: readonly number[]) => [st[1], st[0], st[2], st[3]];
  // V[p, n, t] from x (its batch n is the channel of the transform, its channel c' the tile's batch).
  const tile = (
    key: string,
    M: number[][],
    pw: number,
    src: ConvOperand,
    C: number,
    Cp: number,
    H: number,
    W: number,
    pH: number,
    pW: number,
    bytes: number,
  ) => {
    const k = rt.kernel(key, 1, 1, WI_WORDS, () =>
      [
        paramsDecl(WI_WORDS),
        '@group(0) @binding(1) var<storage, read> X: array<f32>;',
        '@group(0) @binding(2) var<storage, read_write> V: array<f32>;',
        winoTileWgsl(M, pw, b),
      ].join('\n'),
    );
    const dst = rt.alloc(bytes);
    const p = rt.params(k);
    [
      [WI.C, C],
      [WI.Cp, Cp],
      [WI.T, T],
      [WI.Tp, Tp],
      [WI.tW, bW],
      [WI.tHW, bH * bW],
      [WI.H, H],
      [WI.W, W],
      [WI.pH, pH],
      [WI.pW, pW],
      [WI.xOff, src.offset],
    ].forEach(([q, v]) => {
      i32[p + q] = v;
    });
    swap(src.strides).forEach((v, d) => {
      i32[p + WI.xS + d] = v;
    });
    rt.dispatch(k, [src.buf, dst], p, Math.ceil((Cp * Tp) / 256));
    return dst;
  };
  const V = tile(`wino-i|${m},${b}`, wn.BT, A, x, g.n, Np, g.h, g.w, g.padLo[0], g.padLo[1], z.vBytes);
  const D = tile(`wino-k|${m},${b}`, wn.G, b, w, g.o, Op, g.kH, g.kW, 0, 0, z.dBytes);
  // Split GEMM: about cfg.splitGroups workgroups in all.
  const tilesN = Np / s.TN,
    tiles = tilesN * (Op / s.TM);
  const steps = Tp / s.TK;
  const splits = Math.max(1, Math.min(steps, Math.round(cfg.splitGroups / (tiles * A * A))));
  const kChunk = Math.ceil(steps / splits) * s.TK,
    nSplit = Math.ceil(Tp / kChunk);
  const size = A * A * Op * Np;
  const kg = rt.kernel(`wino-n|${A}|${s.TM},${s.TN},${s.TK},${s.RM},${s.RN}`, 2, 1, WN_WORDS, () =>
    [
      paramsDecl(WN_WORDS),
      '@group(0) @binding(1) var<storage, read> D: array<vec4<f32>>;',
      '@group(0) @binding(2) var<storage, read> V: array<vec4<f32>>;',
      '@group(0) @binding(3) var<storage, read_write> P: array<vec4<f32>>;',
      winoGemmNTWgsl(A * A, s),
    ].join('\n'),
  );
  const P = rt.alloc(size * nSplit * 4);
  const pg = rt.params(kg);
  const total = tiles * A * A * nSplit;
  [
    [WN.Op, Op],
    [WN.Np, Np],
    [WN.Tp, Tp],
    [WN.tilesN, tilesN],
    [WN.tiles, tiles],
    [WN.total, total],
    [WN.kChunk, kChunk],
  ].forEach(([q, v]) => {
    i32[pg + q] = v;
  });
  rt.dispatch(kg, [D, V, P], pg, total);
  let Ms = P;
  if (nSplit > 1) {
    Ms = rt.alloc(size * 4);
    const ks = rt.kernel('conv-sum', 1, 1, 2, convSumWgsl);
    const q = rt.params(ks);
    u32[q] = size;
    u32[q + 1] = nSplit;
    rt.dispatch(ks, [P, Ms], q, Math.ceil(size / 256));
  }
  // Output transform with the epilogue.
  const ep = planConvEpilogue(epi, WO_WORDS);
  const ko = rt.kernel(`wino-o|${m},${b}${ep.key}`, 1 + ep.bufs.length, 1, ep.words, () =>
    [
      paramsDecl(ep.words),
      '@group(0) @binding(1) var<storage, read> Ms: array<f32>;',
      ...ep.wgsl(2),
      `@group(0) @binding(${2 + ep.bufs.length}) var<storage, read_write> Y: array<f32>;`,
      winoOutWgsl(wn, ep.fin),
    ].join('\n'),
  );
  const po = rt.params(ko);
  [
    [WO.O, g.o],
    [WO.N, g.n],
    [WO.Op, Op],
    [WO.Np, Np],
    [WO.oH, g.oH],
    [WO.oW, g.oW],
  ].forEach(([q, v]) => {
    i32[po + q] = v;
  });
  ep.fill(rt, po);
  rt.dispatch(ko, [Ms, ...ep.bufs, out], po, Math.ceil((g.o * g.n) / 256));
  // Later dispatches that reuse these buffers run after these (same queue order).
  for (const b of new Set([V, D, P, Ms])) rt.release(b);
}
