/**
 * The one timing loop every framework goes through: warm up, calibrate how many iterations fill
 * a repeat, then time `repeats` batches of back-to-back iterations, each batch ending in one
 * device synchronisation, and take the median seconds per iteration.
 */
import type { Runner } from './framework';

export interface TimingOptions {
  warmup: number;
  repeats: number;
  /** Wall time one repeat aims at. */
  targetMs: number;
  minIters: number;
  maxIters: number;
  /**
   * Keep warming up until this much wall time has passed (CPU training rows: V8 tiers a
   * JS training loop up over its first ~1,000 steps, and a row measures the steady state;
   * every framework of the row gets the same warm-up).
   */
  warmupMs?: number;
}

export const QUICK_TIMING: TimingOptions = { warmup: 1, repeats: 3, targetMs: 150, minIters: 1, maxIters: 200 };
export const FULL_TIMING: TimingOptions = { warmup: 5, repeats: 5, targetMs: 250, minIters: 3, maxIters: 2000 };

export interface Timing {
  secondsPerIter: number;
  iters: number;
  repeats: number;
  /** Seconds per iteration of every repeat. */
  samples: number[];
}

function now(): number {
  return performance.now();
}

/** SURF_BENCH_DEBUG=1 logs every timed batch (to find a hang or a slow warm-up). */
const debug = typeof process !== 'undefined' && process.env.SURF_BENCH_DEBUG === '1';

async function batch(r: Runner, start: number, n: number): Promise<number> {
  if (debug) console.log(`#   batch of ${n} from iteration ${start}`);
  const t0 = now();
  for (let i = 0; i < n; i++) {
    const p = r.step(start + i);
    if (p) await p;
  }
  if (debug) console.log(`#   ${n} enqueued in ${(now() - t0).toFixed(1)} ms; syncing`);
  await r.sync();
  if (debug) console.log(`#   done in ${(now() - t0).toFixed(1)} ms`);
  return (now() - t0) / 1000;
}

export function median(xs: number[]): number {
  const s = xs.slice().sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
}

export async function timeRunner(r: Runner, o: TimingOptions): Promise<Timing> {
  let i = 0;
  // Warm-up: compiles pipelines, fills pools. One sync after each iteration so that a slow
  // first compile does not hide behind queued work.
  const w0 = now();
  for (let w = 0; w < o.warmup; w++) {
    await batch(r, i, 1);
    i++;
  }
  for (let n = 4; now() - w0 < (o.warmupMs ?? 0); n = Math.min(o.maxIters, n * 2)) {
    await batch(r, i, n);
    i += n;
  }
  let iters: number;
  if (r.fixedIters) {
    iters = r.fixedIters;
  } else {
    // Calibrate: double until a batch takes a fifth of the target.
    let n = 1;
    let t = await batch(r, i, n);
    i += n;
    while (t * 1000 < o.targetMs / 5 && n < o.maxIters) {
      n = Math.min(o.maxIters, n * 2);
      t = await batch(r, i, n);
      i += n;
    }
    const per = t / n;
    iters = Math.max(o.minIters, Math.min(o.maxIters, Math.round(o.targetMs / 1000 / per)));
    // One very slow iteration (SwiftShader, a CPU matmul): few of them.
    if (per * 1000 > o.targetMs) iters = Math.max(1, Math.min(iters, o.minIters));
  }
  const samples: number[] = [];
  for (let k = 0; k < o.repeats; k++) {
    const t = await batch(r, i, iters);
    i += iters;
    samples.push(t / iters);
  }
  return { secondsPerIter: median(samples), iters, repeats: o.repeats, samples };
}
