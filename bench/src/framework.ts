/**
 * What a framework (Surf or a peer) provides to the suite: for each row a Runner that enqueues
 * one iteration at a time, waits for the device, and checks its own result against the host
 * reference. The timing loop (timing.ts) is shared, so every framework is timed the same way.
 */
import {
  MatmulSpec,
  SEED_A,
  SEED_B,
  SEED_C,
  TrainData,
  fmaReference,
  matmulReference,
  matmulSamples,
  sumReference,
  trainData,
  uniform,
} from './data';
import { Row, inputBytes } from './rows';

export type FrameworkId =
  | 'surf-webgpu'
  | 'tfjs-webgpu'
  | 'jax-webgpu'
  | 'torch-cuda'
  | 'surf-cpu'
  | 'tfjs-cpu'
  | 'tfjs-wasm'
  | 'jax-wasm'
  | 'ort-cpu';

export interface Check {
  /** Relative error against the float64 host reference (kernel rows). */
  relErr?: number;
  /** Training rows: batch 0's loss before and after one more training step on batch 0. */
  lossFirst?: number;
  lossLast?: number;
  /** False marks the figure as WRONG in the table. */
  ok: boolean;
  note?: string;
}

export interface Runner {
  /** Enqueues iteration i. Readback rows return a promise (awaited by the timer). */
  step(i: number): void | Promise<void>;
  /** Resolves when all enqueued work has finished on the device. */
  sync(): Promise<void>;
  /** Runs once after timing: compares a result with the reference. */
  check(): Promise<Check>;
  dispose(): void | Promise<void>;
  /** Fixed iterations per repeat (the overhead row), instead of calibrating. */
  fixedIters?: number;
  /**
   * A runner that times itself (the MNIST example's loop): the suite runs step() once to warm
   * up and once more, then takes this figure, already in the row's unit.
   */
  reported?: () => number;
}

export interface Framework {
  id: FrameworkId;
  /** Column label, e.g. 'TF.js webgpu'. */
  label: string;
  device: 'gpu' | 'cpu';
  /** The framework's own description of its device and version, for the JSON. */
  describe(): Record<string, unknown>;
  /** Throws NotAvailable (or anything) when the row cannot run here: the row shows n/a. */
  prepare(row: Row, inputs: RowInputs): Promise<Runner>;
  /** Frees what the framework holds between rows (buffer pools, caches of data). */
  afterRow?(): Promise<void>;
}

export class NotAvailable extends Error {}

/** Host data for one row, made once and shared by every framework. */
export class RowInputs {
  private cache = new Map<string, unknown>();

  constructor(
    readonly row: Row,
    readonly quick: boolean,
  ) {}

  private memo<T>(key: string, make: () => T): T {
    if (!this.cache.has(key)) this.cache.set(key, make());
    return this.cache.get(key) as T;
  }

  /**
   * How many distinct copies of the inputs to cycle through, so that a small working set is
   * not served from cache every iteration: enough copies to pass 128 MiB, at most 16.
   */
  get rotations(): number {
    const b = inputBytes(this.row);
    if (!Number.isFinite(b)) return 1;
    if (this.quick) return b < 8 << 20 ? 2 : 1;
    return Math.max(1, Math.min(16, Math.ceil((128 << 20) / b)));
  }

  /** matmul: A as stored ([m,k], or [k,m] when ta), B likewise. */
  matmul(): { spec: MatmulSpec; a: Float32Array; b: Float32Array; samples: [number, number][]; want: Float64Array } {
    return this.memo('matmul', () => {
      if (this.row.kind !== 'matmul') throw new Error('not a matmul row');
      const spec = this.row.spec;
      const a = uniform(spec.m * spec.k, SEED_A);
      const b = uniform(spec.k * spec.n, SEED_B);
      const samples = matmulSamples(spec.m, spec.n);
      return { spec, a, b, samples, want: matmulReference(spec, a, b, samples) };
    });
  }

  sum(): { x: Float32Array; want: Float64Array } {
    return this.memo('sum', () => {
      if (this.row.kind !== 'sum') throw new Error('not a sum row');
      const x = uniform(this.row.rows * this.row.cols, SEED_A);
      return { x, want: sumReference(x, this.row.rows, this.row.cols, this.row.axis) };
    });
  }

  fma(): { a: Float32Array; b: Float32Array; c: Float32Array; want: Float64Array } {
    return this.memo('fma', () => {
      if (this.row.kind !== 'fma') throw new Error('not an fma row');
      const n = this.row.rows * this.row.cols;
      const a = uniform(n, SEED_A);
      const b = uniform(n, SEED_B);
      const c = uniform(n, SEED_C);
      return { a, b, c, want: fmaReference(a, b, c, this.row.rows, this.row.cols, this.row.permuted) };
    });
  }

  train(): TrainData {
    return this.memo('train', () => {
      if (this.row.kind !== 'train') throw new Error('not a training row');
      return trainData(this.row.layers[0], this.row.layers[this.row.layers.length - 1], this.row.batch, 8);
    });
  }
}

/**
 * The check of a training row, run after timing: one more step on batch 0 must lower batch 0's
 * loss (finite both times). A wrong gradient or update fails it; a slow start does not. After
 * thousands of timed steps a model can have fitted the synthetic batches (loss ~1e-6), where
 * one more step cannot lower the loss in f32: a loss already under FITTED that does not rise
 * passes, since a wrong gradient never gets there.
 */
const FITTED = 1e-4;
export function trainCheck(first: number, last: number): Check {
  const ok = Number.isFinite(first) && Number.isFinite(last) && (last < first || (first < FITTED && last <= first));
  return { lossFirst: first, lossLast: last, ok, note: ok ? undefined : `loss did not fall: ${first} -> ${last}` };
}

/** Tolerance of the kernel rows (f32 accumulation on positive data stays far below it). */
export const REL_TOL = 1e-3;

export function kernelCheck(relErr: number): Check {
  return { relErr, ok: relErr <= REL_TOL };
}
