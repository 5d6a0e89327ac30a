import { parseOptions } from '../../options';
import { ValueError } from '../../errors';
import { sharedArena } from '../wasm/arena';
import { ThreadPool } from './pool';
import { canBlock, coreCount } from './spawn';

/**
 * How many threads the CPU backend's kernels use, process-wide (one pool on the shared
 * arena). The default is min(cores, 4) where threads can work — Node, or a browser worker on a
 * cross-origin-isolated page — else 1. Workers start on the first job big enough to split
 * (or in `createBackend('cpu', { threads })`, which waits for them); until they are up, jobs
 * run on the calling thread alone.
 */
export interface ThreadOptions {
  /** Threads in all, the calling one included; 1 turns threading off. */
  threads?: number;
  /** Smallest matmul, in flops (2·m·n·k), that is split across threads. */
  minMatmulFlops?: number;
  /** Smallest elementwise job, in elements, that is split across threads. */
  minElementwise?: number;
  /** Polls of the job word a worker makes before it sleeps (a new value restarts the workers). */
  spin?: number;
  /** Chunks a split job is cut into per thread (claimed dynamically). */
  chunksPerThread?: number;
}

// spin: about 1.5 ms of polls (7 ns each here), longer than the gaps between a training step's split jobs:
// a sleeping worker costs a futex wake (20-50 µs in a VM) and joins late.
const settings = { threads: 0, minMatmulFlops: 1 << 22, minElementwise: 1 << 16, spin: 200000, chunksPerThread: 3 };
let pool: ThreadPool | null = null;
let broken = false;

/** Whether this engine can run the kernels on several threads at all. */
export function threadsAvailable(): boolean {
  return sharedArena().shared && canBlock();
}

/** The thread count used when none is asked for. */
export function defaultThreads(): number {
  return threadsAvailable() ? Math.max(1, Math.min(coreCount(), 4)) : 1;
}

/** Threads the kernels will use (1 where threads are unavailable). */
export function cpuThreads(): number {
  if (!threadsAvailable() || broken) return 1;
  return settings.threads || defaultThreads();
}

/** Changes the thread settings; a new thread count replaces the pool. */
export function setCpuThreads(opts: ThreadOptions): void {
  opts = parseOptions<ThreadOptions>('setCpuThreads', opts, {
    threads: 'any',
    minMatmulFlops: 'any',
    minElementwise: 'any',
    spin: 'any',
    chunksPerThread: 'any',
  });
  const { threads, minMatmulFlops, minElementwise, spin, chunksPerThread } = opts;
  if (threads !== undefined && (!Number.isInteger(threads) || threads < 1 || threads > 65)) {
    throw new ValueError(`cpu threads: expected an integer from 1 to 65, got ${String(threads)}`);
  }
  for (const [name, v] of [
    ['minMatmulFlops', minMatmulFlops],
    ['minElementwise', minElementwise],
    ['spin', spin],
  ] as const) {
    if (v !== undefined && !(Number.isFinite(v) && v >= 0))
      throw new ValueError(`cpu threads: ${name} must be a number ≥ 0, got ${String(v)}`);
  }
  if (
    chunksPerThread !== undefined &&
    !(Number.isInteger(chunksPerThread) && chunksPerThread >= 1 && chunksPerThread <= 64)
  ) {
    throw new ValueError(
      `cpu threads: chunksPerThread must be an integer from 1 to 64, got ${String(chunksPerThread)}`,
    );
  }
  if (minMatmulFlops !== undefined) settings.minMatmulFlops = minMatmulFlops;
  if (minElementwise !== undefined) settings.minElementwise = minElementwise;
  if (chunksPerThread !== undefined) {
    settings.chunksPerThread = chunksPerThread;
    if (pool) pool.chunksPerThread = chunksPerThread;
  }
  if (spin !== undefined && spin !== settings.spin) {
    settings.spin = spin;
    stopPool();
  }
  if (threads !== undefined && threads !== settings.threads) {
    settings.threads = threads;
    stopPool();
  }
}

/** The current thresholds. */
export function threadThresholds(): { minMatmulFlops: number; minElementwise: number } {
  return { minMatmulFlops: settings.minMatmulFlops, minElementwise: settings.minElementwise };
}

/**
 * The pool for a job of `work` (in the unit its threshold uses), or null to run it on the
 * calling thread: threads off, work too small, or workers still starting (they are started
 * here on first need).
 */
export function poolFor(work: number, threshold: number): ThreadPool | null {
  if (work < threshold) return null;
  const n = cpuThreads();
  if (n <= 1) return null;
  if (!pool) start(n);
  return pool && pool.ready ? pool : null;
}

function start(n: number): void {
  try {
    pool = new ThreadPool(sharedArena(), n - 1, settings.spin);
    pool.chunksPerThread = settings.chunksPerThread;
  } catch {
    // No workers in this engine: run single-threaded from now on.
    broken = true;
    pool = null;
  }
}

/** Starts the workers now and waits until they run (the async backend factory calls this). */
export async function startCpuThreads(): Promise<number> {
  const n = cpuThreads();
  if (n <= 1) return 1;
  if (!pool) start(n);
  if (!pool) return 1;
  try {
    await pool.whenReady();
  } catch {
    stopPool();
    broken = true;
    return 1;
  }
  return n;
}

/** Jobs the current pool ran on its workers (0 without one). */
export function threadJobs(): number {
  return pool?.jobs ?? 0;
}

/** The current pool, if started (tests). */
export function currentPool(): ThreadPool | null {
  return pool;
}

/** Stops the workers (a later job starts them again). */
export function stopPool(): void {
  pool?.terminate();
  pool = null;
}
