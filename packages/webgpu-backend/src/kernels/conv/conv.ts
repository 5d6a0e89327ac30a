import { Expr, ValueError } from '@surf/core';
import type { Runtime } from '../../runtime';
import type { PooledBuffer } from '../../pool';
import { CW, CW_WORDS, ConvShape, convMain, convSumWgsl } from './direct-wgsl';
import { ConvEpilogueInput, planConvEpilogue } from './epilogue';
import { paramsDecl } from '../wgsl';
import { encodeWino, useWino } from './winograd';
import { encodeWinoW, useWinoW } from './winograd-large-kernel';
import { MatmulChooser, encodeWinoMM, winoMMSizes } from './winograd-matmul';
import type { ConvConfig, ConvGeometry, ConvOperand } from './types';

export type { ConvConfig, ConvGeometry, ConvOperand } from './types';

/**
 * Convolution as an implicit GEMM. Per group g, C[o, col] = sum_k W[o, k] · X[k, col] with
 * o an output channel of the group, col = (batch item, output position) and k = (input
 * channel, kernel tap). Nothing is materialised: the X tile loader turns (k, col) into an
 * input address itself (stride, padding, dilation, lhs dilation and bounds), reading 0 for
 * padding and inserted holes. The tile loop is the matmul's (conv/direct-wgsl.ts); the kernel
 * geometry is part of the pipeline key so its divisions are by constants. Batch and
 * positions share the GEMM's N so late, small feature maps still fill tiles. When the
 * output has few tiles and K is long (the weight gradient: K = N·oH·oW, output O x C·kH·kW)
 * the k range is split over workgroups into partial outputs that a second kernel sums.
 * 1-d convs arrive lifted to 2-d (H = 1, stride 0 on H). Large stride-1 5x5 and 3x3 convs and
 * their weight gradients go to the Winograd paths instead (encodeConv's first lines).
 */

/** Software adapters pay per barrier and per thread: small tiles, few threads, rolled loops. */
export const SOFTWARE_CONV: ConvConfig = {
  tileM: 16,
  tileN: 32,
  tileK: 8,
  threadM: 4,
  threadN: 4,
  padA: 0,
  unroll: false,
  splitGroups: 4,
  minChunk: 32,
  wino: 0,
  wino3: false,
  winoTM: 16,
  winoTN: 16,
  winoTK: 4,
  winoRM: 4,
  winoRN: 4,
  winoTile: 2,
  winoBlock: 2,
};
/** 64 x 128 tiles of 8x8 per thread (the matmul's LARGE layout). */
export const DEFAULT_CONV: ConvConfig = {
  tileM: 64,
  tileN: 128,
  tileK: 16,
  threadM: 8,
  threadN: 8,
  padA: 0,
  unroll: true,
  splitGroups: 1056,
  minChunk: 512,
  wino: 1000,
  wino3: true,
  winoTM: 64,
  winoTN: 32,
  winoTK: 32,
  winoRM: 4,
  winoRN: 4,
  winoTile: 4,
  winoBlock: 4,
};

/** The config for a problem: 32-row tiles when a group has at most 32 output channels. */
export function chooseConvConfig(base: ConvConfig, og: number): ConvConfig {
  if (base.tileM === 64 && og <= 32 && base.threadM === 8) return { ...base, tileM: 32, threadM: 4 };
  return base;
}

export function validateConvConfig(c: ConvConfig): void {
  const bad = (why: string) => new ValueError(`conv config ${JSON.stringify(c)}: ${why}`);
  for (const f of ['tileM', 'tileN', 'tileK', 'threadM', 'threadN'] as const)
    if (!Number.isInteger(c[f]) || c[f] < 1) throw bad(`${f} must be a positive integer`);
  if (!Number.isInteger(c.splitGroups) || c.splitGroups < 0 || !Number.isInteger(c.minChunk) || c.minChunk < 1)
    throw bad('splitGroups must be an integer >= 0 and minChunk >= 1');
  if (c.threadM % 4 || c.threadN % 4) throw bad('threadM and threadN must be multiples of 4');
  if (c.tileM % c.threadM || c.tileN % c.threadN) throw bad('tiles must divide by the thread tiles');
  const nt = (c.tileM / c.threadM) * (c.tileN / c.threadN);
  if (nt % c.tileK || (nt % c.tileN && c.tileN % nt) || c.tileK % 4 || c.padA % 4) {
    throw bad(
      `threads (${nt}) must be a multiple of tileK, divide or be divided by tileN, and tileK and padA multiples of 4`,
    );
  }
  for (const f of ['winoTM', 'winoTN', 'winoTK', 'winoRM', 'winoRN'] as const)
    if (!Number.isInteger(c[f]) || c[f] < 4 || c[f] % 4) throw bad(`${f} must be a positive multiple of 4`);
  if (c.winoTM % c.winoRM || c.winoTN % c.winoRN || (c.winoTM === 64 && c.winoRM > 32))
    throw bad('the Winograd tiles must divide by their thread tiles');
  if (!(c.wino >= 0)) throw bad('wino must be a number >= 0');
  if (![2, 4].includes(c.winoTile) || ![2, 4].includes(c.winoBlock)) throw bad('winoTile and winoBlock must be 2 or 4');
}

export type { ConvEpilogueInput };

/** Each read of a GPUSupportedLimits field is a native call in Dawn: read once per device. */
const bindingBytes = new WeakMap<GPUDevice, number>();

export function encodeConv(
  rt: Runtime,
  base: ConvConfig,
  x: ConvOperand,
  w: ConvOperand,
  g: ConvGeometry,
  out: PooledBuffer,
  epi?: { expr: Expr; inputs: ConvEpilogueInput[] },
  mm?: MatmulChooser,
): void {
  let maxBinding = bindingBytes.get(rt.device);
  if (maxBinding === undefined)
    bindingBytes.set(rt.device, (maxBinding = rt.device.limits.maxStorageBufferBindingSize));
  if (useWino(base, g, maxBinding)) {
    const big = winoMMSizes(g);
    if (base.winoTile === 4 && mm && Math.max(big.vBytes, big.mBytes) <= maxBinding)
      encodeWinoMM(rt, mm, x, w, g, out, epi);
    else encodeWino(rt, base, x, w, g, out, epi);
    return;
  }
  if (useWinoW(base, g, maxBinding)) {
    encodeWinoW(rt, base, x, w, g, out, epi);
    return;
  }
  const Og = g.o / g.groups,
    Cg = g.c / g.groups;
  const cfg = chooseConvConfig(base, Og);
  const { tileM: TM, tileN: TN, tileK: TK, threadM: RM, threadN: RN } = cfg;
  const P = g.oH * g.oW;
  const cols = g.n * P;
  const K = Cg * g.kH * g.kW;
  const outSize = g.n * g.o * P;
  if (outSize === 0) return;
  const ep = planConvEpilogue(epi, CW_WORDS);
  const words = ep.words,
    eBufs = ep.bufs;
  const shape: ConvShape = {
    TM,
    TN,
    TK,
    RM,
    RN,
    padA: cfg.padA,
    unroll: cfg.unroll,
    kH: g.kH,
    kW: g.kW,
    sH: g.stride[0],
    sW: g.stride[1],
    dH: g.dilation[0],
    dW: g.dilation[1],
    lH: g.lhsDilation[0],
    lW: g.lhsDilation[1],
  };
  const key = `conv|${TM},${TN},${TK},${RM},${RN},${cfg.padA}${cfg.unroll ? 'u' : 'r'}|${g.kH},${g.kW},${shape.sH},${shape.sW},${shape.dH},${shape.dW},${shape.lH},${shape.lW}${ep.key}`;
  const kern = rt.kernel(key, 2 + eBufs.length, 1, words, () => {
    const L: string[] = [paramsDecl(words)];
    L.push('@group(0) @binding(1) var<storage, read> X: array<f32>;');
    L.push('@group(0) @binding(2) var<storage, read> Wt: array<f32>;');
    L.push(...ep.wgsl(3));
    L.push(`@group(0) @binding(${3 + eBufs.length}) var<storage, read_write> Y: array<f32>;`);
    L.push(
      `var<workgroup> As4: array<vec4<f32>, ${((TM + cfg.padA) * TK) / 4}>;`,
      `var<workgroup> Bs4: array<vec4<f32>, ${(TK * TN) / 4}>;`,
    );
    L.push(convMain(shape, ep.fin));
    return L.join('\n');
  });
  const tilesN = Math.ceil(cols / TN),
    tilesM = Math.ceil(Og / TM);
  const tiles = tilesN * tilesM * g.groups;
  // Split k when the output alone would leave most of the GPU idle (never with an epilogue:
  // the partial sums must be complete before it runs).
  let splits = 1;
  if (!epi && cfg.splitGroups > tiles)
    splits = Math.max(1, Math.min(Math.ceil(cfg.splitGroups / tiles), Math.floor(K / cfg.minChunk)));
  const kChunk = splits > 1 ? Math.ceil(Math.ceil(K / splits) / TK) * TK : K;
  if (splits > 1) splits = Math.ceil(K / kChunk);
  const total = tiles * splits;
  const target = splits > 1 ? rt.alloc(outSize * splits * 4) : out;
  const p = rt.params(kern);
  const { i32 } = rt.words;
  const dinH = (g.h - 1) * g.lhsDilation[0] + 1,
    dinW = (g.w - 1) * g.lhsDilation[1] + 1;
  const vals: [number, number][] = [
    [CW.Og, Og],
    [CW.cols, cols],
    [CW.K, K],
    [CW.tilesN, tilesN],
    [CW.tilesM, tilesM],
    [CW.total, total],
    [CW.P, P],
    [CW.oW, g.oW],
    [CW.dinH, dinH],
    [CW.dinW, dinW],
    [CW.pH, g.padLo[0]],
    [CW.pW, g.padLo[1]],
    [CW.xOff, x.offset],
    [CW.wOff, w.offset],
    [CW.Cg, Cg],
    [CW.O, g.o],
    [CW.groups, g.groups],
    [CW.kChunk, kChunk],
    [CW.outSize, outSize],
  ];
  for (let d = 0; d < 4; d++) vals.push([CW.xS + d, x.strides[d]], [CW.wS + d, w.strides[d]]);
  vals.forEach(([wd, v]) => {
    i32[p + wd] = v;
  });
  ep.fill(rt, p);
  rt.dispatch(kern, [x.buf, w.buf, ...eBufs, target], p, total);
  if (splits > 1) {
    const sum = rt.kernel('conv-sum', 1, 1, 2, convSumWgsl);
    const q = rt.params(sum);
    rt.words.u32[q] = outSize;
    rt.words.u32[q + 1] = splits;
    rt.dispatch(sum, [target, out], q, Math.ceil(outSize / 256));
    // Later dispatches that reuse the buffer run after these (same queue order).
    rt.release(target);
  }
}
