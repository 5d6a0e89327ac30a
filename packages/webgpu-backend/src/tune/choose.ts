import { ValueError } from '@surf/core';
import type { MatmulConfig } from '../kernels/matmul/plan';
import { warpColsOf } from '../kernels/matmul/plan';

/**
 * Which matmul config a problem gets when nothing was tuned, bucketed by output elements:
 * small layers want 32-wide tiles (every SM gets a workgroup), large squares big register
 * tiles with a padded A tile and interleaved columns, as measured on a datacenter GPU.
 */
export const DEFAULT_MATMUL: MatmulConfig = { tileM: 64, tileN: 64, tileK: 16, threadM: 4, threadN: 4, vec4: true };
export const SMALL_MATMUL: MatmulConfig = { tileM: 32, tileN: 32, tileK: 16, threadM: 2, threadN: 4, vec4: true };
/**
 * The MLP's layers and squares up to ~700²: 32x32x32 4x4 with per-thread staged rows (faster
 * than flat staging and than 32x64 tiles at these sizes) and A's k-rows swizzled.
 */
const MID_MATMUL: MatmulConfig = {
  tileM: 32,
  tileN: 32,
  tileK: 32,
  threadM: 4,
  threadN: 4,
  vec4: true,
  rows: true,
  swizzleA: true,
};
/** 1024²-sized outputs: 64-row tiles give 128 workgroups at 1024² (one per SM; run 8: 28.3 TFLOP/s against 24.1 for 128x64 8x4). */
const LARGE_MATMUL: MatmulConfig = {
  tileM: 64,
  tileN: 128,
  tileK: 16,
  threadM: 8,
  threadN: 8,
  vec4: true,
  padA: 4,
  interleave: true,
};
/**
 * 1024²-sized aligned problems: 128x64 tiles of 256 threads (8x4 each) with rows and double
 * buffering on the fixed path (about a quarter faster than LARGE_MATMUL at 1024³). The warp
 * layout and the A swizzle (warpCols, swizzleA) are not used here: they won only with operands
 * resident in L2 and lost slightly with fresh inputs.
 */
const LARGE_ALIGNED: MatmulConfig = {
  tileM: 128,
  tileN: 64,
  tileK: 16,
  threadM: 8,
  threadN: 4,
  vec4: true,
  interleave: true,
  rows: true,
  doubleBuffer: true,
};
const HUGE_MATMUL: MatmulConfig = {
  tileM: 128,
  tileN: 128,
  tileK: 16,
  threadM: 8,
  threadN: 8,
  vec4: true,
  padA: 4,
  interleave: true,
};
/**
 * Tile-aligned large problems: per-thread rows with double buffering, which only pays on the
 * fixed path (the general kernel with the same knobs lost to HUGE_MATMUL); warps of 8x4
 * threads, A's k-rows swizzled, a thread's columns side by side (each a few percent at 2048³
 * and 4096³). Needs 33 KB of workgroup memory:
 * kernels/matmul/matmul.ts stages it flat on adapters with less.
 */
const HUGE_ALIGNED: MatmulConfig = {
  tileM: 128,
  tileN: 128,
  tileK: 16,
  threadM: 8,
  threadN: 8,
  vec4: true,
  rows: true,
  doubleBuffer: true,
  warpCols: 4,
  swizzleA: true,
};

/** Whether m, n, k tile exactly under `c` (the fixed path then applies to contiguous operands). */
export function tilesExactly(c: MatmulConfig, m: number, n: number, k: number): boolean {
  return m % c.tileM === 0 && n % c.tileN === 0 && k % c.tileK === 0;
}

/** A fixed config, or a function choosing one per problem (the tuner's table plugs in here). */
export type MatmulConfigOption =
  Partial<MatmulConfig> | ((m: number, n: number, k: number, batch: number) => MatmulConfig);

/**
 * Split k (MatmulConfig.splitK) only where a workgroup's walk over k is the whole cost: the
 * tiles run fewer than SPLIT_MAX_THREADS threads (a few warps per SM of a datacenter GPU)
 * and k has at least MIN_SPLIT_STEPS steps. Each step then costs about one global load's
 * latency (about half a microsecond: a few tiles walking a long k take tens of µs), and the split
 * saves that per step skipped, less the sum kernel (~4 µs); it must also pay for the second
 * dispatch's host time (~5.6 µs per native dispatch), which host-bound loops see first: at
 * 8192 threads (256x784x512, one 64-thread workgroup per SM) the GPU time fell only 25.5 ->
 * 21 µs and the eager bench row lost 10-20%. The chunk count aims the split problem at
 * SPLIT_THREADS threads (~256 per SM), chunks of at least MIN_CHUNK_STEPS steps.
 * Deeper walks pay at more threads: with DEEP_SPLIT_STEPS steps or more, problems of up to
 * DEEP_SPLIT_MAX_THREADS threads split too (the GPT step's MLP weight gradients, 128x512 over
 * k = 4096: 64 tiles walking 128 steps).
 *
 */
export const SPLIT_MAX_THREADS = 4096;
export const SPLIT_THREADS = 32768;
export const MIN_CHUNK_STEPS = 3;
export const MIN_SPLIT_STEPS = 24;
export const DEEP_SPLIT_MAX_THREADS = 16384;
export const DEEP_SPLIT_STEPS = 64;

/** `c` with the k-split this problem's tile count and depth call for (none: `c` itself). */
export function withSplitK(c: MatmulConfig, m: number, n: number, k: number, batch: number): MatmulConfig {
  const threads =
    Math.ceil(m / c.tileM) * Math.ceil(n / c.tileN) * batch * (c.tileM / c.threadM) * (c.tileN / c.threadN);
  const steps = Math.ceil(k / c.tileK);
  const latencyBound =
    (threads < SPLIT_MAX_THREADS && steps >= MIN_SPLIT_STEPS) ||
    (threads < DEEP_SPLIT_MAX_THREADS && steps >= DEEP_SPLIT_STEPS);
  if (c.splitK !== undefined || !latencyBound) return c;
  return { ...c, splitK: Math.min(Math.ceil(SPLIT_THREADS / threads), Math.floor(steps / MIN_CHUNK_STEPS)) };
}

/** The untuned choice for a hardware adapter, by the number of output elements (then split k where it pays). */
export function bucketedMatmulConfig(m: number, n: number, k: number, batch: number): MatmulConfig {
  return withSplitK(bucketOf(m, n, k, batch), m, n, k, batch);
}

function bucketOf(m: number, n: number, k: number, batch: number): MatmulConfig {
  const outs = m * n * batch;
  if (m <= 16 || n <= 16 || outs <= 64 * 64 * 4) return SMALL_MATMUL;
  if (outs <= 1024 * 512) return MID_MATMUL;
  if (outs <= 1536 * 1536) return tilesExactly(LARGE_ALIGNED, m, n, k) ? LARGE_ALIGNED : LARGE_MATMUL;
  return tilesExactly(HUGE_ALIGNED, m, n, k) ? HUGE_ALIGNED : HUGE_MATMUL;
}

export function chooseMatmulConfig(
  opt: MatmulConfigOption | undefined,
  m: number,
  n: number,
  k: number,
  batch: number,
): MatmulConfig {
  if (typeof opt === 'function') return opt(m, n, k, batch);
  if (opt && Object.keys(opt).length) return { ...DEFAULT_MATMUL, ...opt };
  return bucketedMatmulConfig(m, n, k, batch);
}

/** Bytes of workgroup memory config `c` stages (both tiles, both buffers). */
export function workgroupBytes(c: MatmulConfig): number {
  const rows = !!c.rows && c.threadN % 4 === 0 && c.threadM % 4 === 0;
  // rows: B's per-thread rows are padded by one vec4 when even (kernels/matmul/plan.ts).
  const rowPad = rows && ((c.tileK * c.threadN) / 4) % 2 === 0 ? (c.tileN / c.threadN) * 16 : 0;
  // With a warp layout A's rows are padded the same way (kernels/matmul/plan.ts).
  const aRowPad = rows && warpColsOf(c) && ((c.tileK * c.threadM) / 4) % 2 === 0 ? (c.tileM / c.threadM) * 16 : 0;
  const bufs = rows && c.doubleBuffer ? 2 : 1;
  return bufs * ((c.tileM + (rows ? 0 : (c.padA ?? 0)) + c.tileN) * c.tileK * 4 + rowPad + aRowPad);
}

export function validateMatmulConfig(c: MatmulConfig, limits: GPUSupportedLimits): void {
  const bad = (why: string) => new ValueError(`matmul config ${JSON.stringify(c)}: ${why}`);
  for (const f of ['tileM', 'tileN', 'tileK', 'threadM', 'threadN'] as const) {
    if (!Number.isInteger(c[f]) || c[f] < 1) throw bad(`${f} must be a positive integer`);
  }
  if (c.splitK !== undefined && (!Number.isInteger(c.splitK) || c.splitK < 1))
    throw bad('splitK must be a positive integer');
  const pad = c.padA ?? 0;
  if (!Number.isInteger(pad) || pad < 0) throw bad('padA must be a non-negative integer');
  if (c.tileM % c.threadM || c.tileN % c.threadN) throw bad('tileM/tileN must be multiples of threadM/threadN');
  const threads = (c.tileM / c.threadM) * (c.tileN / c.threadN);
  if (threads > limits.maxComputeInvocationsPerWorkgroup)
    throw bad(`needs ${threads} threads per workgroup; the adapter allows ${limits.maxComputeInvocationsPerWorkgroup}`);
  if (c.tileK % 4 || c.tileN % 4) throw bad('tileK and tileN must be multiples of 4');
  const shared = workgroupBytes(c);
  if (shared > limits.maxComputeWorkgroupStorageSize)
    throw bad(`needs ${shared} bytes of workgroup memory; the adapter allows ${limits.maxComputeWorkgroupStorageSize}`);
}
