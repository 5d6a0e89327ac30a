import { NDArray, parseOptions, randomArray } from '@surf/core';
import type { TunableBackend, TunedEntry, TunedTable } from './table';
import type { MatmulConfig } from '../kernels/matmul/plan';
import { SMALL_MATMUL, bucketedMatmulConfig, tilesExactly, validateMatmulConfig, withSplitK } from './choose';
import { readTuneCache, writeTuneCache } from './cache';

export type { TunedEntry, TunedTable } from './table';

/**
 * The matmul autotuner: times a handful of candidate configs on a few representative
 * problems on this adapter and keeps the fastest per problem. A later matmul uses the entry
 * nearest to it in log(outputs) and log(k). Timing is wall time around `sync()` over
 * repeated dispatches (about `minMs` per candidate in three interleaved rounds, after the GPU
 * was kept busy long enough to reach its clocks), which needs no optional device feature
 * (timestamp queries are not exposed everywhere) and measures what a caller sees, host
 * encoding included.
 *
 * Bump TUNE_VERSION when the kernel generator changes, so cached tables are re-measured.
 */
export const TUNE_VERSION = 8;

/** Candidates: the configs that won some problem in the tuning sweeps on a datacenter GPU. */
export const MATMUL_CANDIDATES: MatmulConfig[] = [
  { tileM: 32, tileN: 32, tileK: 16, threadM: 2, threadN: 4, vec4: true },
  { tileM: 32, tileN: 32, tileK: 32, threadM: 4, threadN: 4, vec4: true },
  { tileM: 32, tileN: 64, tileK: 32, threadM: 4, threadN: 4, vec4: true },
  { tileM: 64, tileN: 64, tileK: 32, threadM: 4, threadN: 4, vec4: true },
  { tileM: 128, tileN: 64, tileK: 16, threadM: 8, threadN: 4, vec4: true },
  { tileM: 64, tileN: 128, tileK: 16, threadM: 8, threadN: 8, vec4: true, padA: 4, interleave: true },
  { tileM: 64, tileN: 64, tileK: 16, threadM: 8, threadN: 8, vec4: true, interleave: true },
  { tileM: 128, tileN: 128, tileK: 32, threadM: 8, threadN: 8, vec4: true, interleave: true },
  { tileM: 128, tileN: 128, tileK: 32, threadM: 8, threadN: 8, vec4: true, padA: 4, interleave: true },
  { tileM: 128, tileN: 128, tileK: 16, threadM: 8, threadN: 8, vec4: true, padA: 4, interleave: true },
  // Per-thread staged rows (the tuner's pick at 256³-512³), with A's k-rows swizzled, and rows
  // with double buffering (its pick at 1024³).
  { tileM: 32, tileN: 32, tileK: 32, threadM: 4, threadN: 4, vec4: true, rows: true, swizzleA: true },
  {
    tileM: 64,
    tileN: 128,
    tileK: 16,
    threadM: 4,
    threadN: 8,
    vec4: true,
    interleave: true,
    rows: true,
    doubleBuffer: true,
  },
  // The aligned fast path's large tiles (every problem below tiles exactly, so each candidate
  // is timed on the fixed path), the 128x128 one with the warp layout and the A swizzle.
  {
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
  },
  {
    tileM: 128,
    tileN: 64,
    tileK: 16,
    threadM: 8,
    threadN: 4,
    vec4: true,
    interleave: true,
    rows: true,
    doubleBuffer: true,
  },
];

/** Representative problems [m, n, k]: square sizes and the MLP example's layer shapes. */
export const TUNE_PROBLEMS: [number, number, number][] = [
  [128, 128, 128],
  [256, 256, 256],
  [256, 512, 784],
  [512, 512, 512],
  [1024, 1024, 1024],
  [2048, 2048, 1024],
  [4096, 4096, 1024],
];

export interface TuneOptions {
  candidates?: MatmulConfig[];
  problems?: [number, number, number][];
  /** Wall time per candidate and problem, over all rounds (default 30 ms). */
  minMs?: number;
  /** Called after each problem (progress output for `npm run tune`). */
  log?: (e: TunedEntry) => void;
}

const memory = new Map<string, TunedTable>();

/** The key a table is cached under: the adapter's description and the generator version. */
export function tuneKey(b: TunableBackend): string {
  return `${b.description}|v${TUNE_VERSION}`;
}

/** Mean ms of `reps` matmuls with `cfg`, timed from the first record to `sync()`. */
async function timeConfig(b: TunableBackend, cfg: MatmulConfig, x: NDArray, y: NDArray, reps: number): Promise<number> {
  b.setMatmulConfig(() => cfg);
  const t0 = performance.now();
  for (let i = 0; i < reps; i++) x.matmul(y).dispose();
  await b.sync();
  return (performance.now() - t0) / reps;
}

/**
 * Times every candidate on one problem. GPUs drop their clocks while the host works (making
 * inputs, compiling), so the GPU is first kept busy for ~100 ms, and candidates are timed in
 * interleaved rounds (the best round counts): a clock ramp then cannot favour the candidates
 * measured last. The first pass compiles each candidate and sizes its repetitions.
 */
async function timeProblem(
  b: TunableBackend,
  cands: MatmulConfig[],
  x: NDArray,
  y: NDArray,
  minMs: number,
): Promise<number[]> {
  const reps: number[] = [];
  const best: number[] = [];
  for (const c of cands) {
    try {
      const ms = await timeConfig(b, c, x, y, 1);
      reps.push(Math.max(1, Math.min(256, Math.ceil(minMs / 3 / Math.max(ms, 1e-3)))));
      best.push(Infinity);
    } catch {
      reps.push(0);
      best.push(NaN);
    }
  }
  const warm = cands.findIndex((_, i) => reps[i] > 0);
  if (warm < 0) return best;
  for (const t0 = performance.now(); performance.now() - t0 < 100;) await timeConfig(b, cands[warm], x, y, reps[warm]);
  for (let round = 0; round < 3; round++) {
    for (let i = 0; i < cands.length; i++) {
      if (reps[i]) best[i] = Math.min(best[i], await timeConfig(b, cands[i], x, y, reps[i]));
    }
  }
  return best;
}

/** Times every candidate on every problem; the backend's own matmul choice is restored after. */
const TUNE_SPEC = { candidates: 'array', problems: 'array', minMs: 'nonnegative', log: 'function' } as const;

export async function tuneMatmul(b: TunableBackend, opts: TuneOptions = {}): Promise<TunedTable> {
  opts = parseOptions<TuneOptions>('tuneMatmul', opts, TUNE_SPEC);
  const cands = (opts.candidates ?? MATMUL_CANDIDATES).filter((c) => {
    try {
      validateMatmulConfig(c, b.limits);
      return true;
    } catch {
      return false;
    }
  });
  const entries: TunedEntry[] = [];
  const saved = b.matmulOption;
  try {
    for (const [m, n, k] of opts.problems ?? TUNE_PROBLEMS) {
      const x = NDArray.fromData(b, randomArray('uniform', m * k, 1, -1, 1), [m, k]);
      const y = NDArray.fromData(b, randomArray('uniform', k * n, 2, -1, 1), [k, n]);
      const times = await timeProblem(b, cands, x, y, opts.minMs ?? 30);
      x.dispose();
      y.dispose();
      let best = -1;
      times.forEach((t, i) => {
        if (!Number.isNaN(t) && (best < 0 || t < times[best])) best = i;
      });
      if (best < 0) continue;
      const e = { m, n, k, cfg: cands[best], ms: times[best], times };
      entries.push(e);
      opts.log?.(e);
    }
  } finally {
    b.setMatmulConfig(saved);
  }
  return { version: TUNE_VERSION, adapter: b.description, entries };
}

/** A chooser from a tuned table: the entry nearest in log2(outputs) and, less, log2(k). */
export function tableChooser(t: TunedTable): (m: number, n: number, k: number, batch: number) => MatmulConfig {
  if (!t.entries.length) return bucketedMatmulConfig;
  return (m, n, k, batch) => {
    if (m <= 16 || n <= 16) return withSplitK(SMALL_MATMUL, m, n, k, batch);
    const lo = Math.log2(Math.max(1, m * n * batch));
    const lk = Math.log2(Math.max(1, k));
    let best = t.entries[0];
    let bd = Infinity;
    for (const e of t.entries) {
      const d = Math.abs(Math.log2(e.m * e.n) - lo) + 0.25 * Math.abs(Math.log2(e.k) - lk);
      if (d < bd) {
        bd = d;
        best = e;
      }
    }
    // An entry timed on the fixed path (its problem tiled exactly) says nothing of the
    // general kernel with the same knobs (rows + double buffering lose there): a problem off
    // that tile takes the bucketed choice.
    if (tilesExactly(best.cfg, best.m, best.n, best.k) && !tilesExactly(best.cfg, m, n, k))
      return bucketedMatmulConfig(m, n, k, batch);
    // The table's problems all fill the GPU; a small-output deep-k one splits k on top.
    return withSplitK(best.cfg, m, n, k, batch);
  };
}

/**
 * `createWebGPUBackend({ matmul: 'auto' })`: the table from memory, else from the cache file
 * (or localStorage key), else measured now and stored in both; then installed on the backend.
 */
export async function autoTune(b: TunableBackend, opts: TuneOptions & { cache?: string } = {}): Promise<TunedTable> {
  opts = parseOptions<TuneOptions & { cache?: string }>('autoTune', opts, { ...TUNE_SPEC, cache: 'string' });
  const key = tuneKey(b);
  let t = memory.get(key);
  if (!t && opts.cache) {
    const c = await readTuneCache(opts.cache, key);
    if (c && c.version === TUNE_VERSION) t = c;
  }
  if (!t) {
    t = await tuneMatmul(b, opts);
    if (opts.cache) await writeTuneCache(opts.cache, key, t);
  }
  memory.set(key, t);
  b.setMatmulConfig(tableChooser(t));
  return t;
}
