/**
 * The memory-soak loop: trains an MLP of the MNIST example's shape (784 -> 128 -> 10, ReLU,
 * Adam, cosine schedule, batches of 64) on synthetic digits and records memory() (live
 * tensors, buffers, bytes) after every step; after step 1, where the optimizer creates its
 * state, it must not move. Shared by bench/src/soak.ts (10,000 steps from the command line)
 * and packages/nn/test/reliability/soak.test.ts (a few hundred steps under jest).
 */
import { DataLoader, MemoryReport, Tensor, crossEntropy, manualSeed, memory, nn, optim, randn, tidy } from '@surf/nn';

export interface SoakOptions {
  steps: number;
  batchSize?: number;
  hidden?: number;
  /** Synthetic training rows (the loader reshuffles them every epoch). */
  samples?: number;
  /** Read the loss every N steps (a read waits for the device, as a real loop's logging does). */
  readEvery?: number;
  /** Called after every step with its memory report. */
  onStep?: (step: number, m: MemoryReport) => void;
  /**
   * eagermem: false runs the loop PyTorch users write (no tidy(), no dispose()): memory then
   * moves between the collections Surf runs at the loss reads, and the verdict is
   * `peakSecondHalf <= peakFirstHalf` instead of "flat". Default true.
   */
  tidy?: boolean;
}

export interface SoakResult {
  steps: number;
  /** memory() after step 1. */
  first: MemoryReport;
  last: MemoryReport;
  /** The first step whose tensors, buffers or bytes differ from step 1's; null when flat. */
  firstMovedStep: number | null;
  movedTo: MemoryReport | null;
  /** Largest pooled (reusable, not live) bytes seen; reported, not judged. */
  maxPooledBytes: number;
  firstLoss: number;
  lastLoss: number;
  seconds: number;
  /** eagermem: the largest memory().bytes in each half of the run, and the collections run. */
  peakFirstHalf: number;
  peakSecondHalf: number;
  collections: number;
}

const PIXELS = 784;
const CLASSES = 10;

/** Rows of noise labelled by a fixed random linear map, so the loss can actually fall. */
function syntheticData(samples: number): { x: Tensor; y: Tensor } {
  return tidy(() => {
    const x = randn([samples, PIXELS]);
    const w = randn([PIXELS, CLASSES]);
    return { x, y: x.matmul(w).argmax(1) };
  });
}

export async function runSoak(opts: SoakOptions): Promise<SoakResult> {
  const batchSize = opts.batchSize ?? 64;
  const readEvery = opts.readEvery ?? 50;
  manualSeed(0);
  const { x, y } = syntheticData(opts.samples ?? 1024);
  const model = new nn.Sequential(
    new nn.Linear(PIXELS, opts.hidden ?? 128),
    new nn.ReLU(),
    new nn.Linear(opts.hidden ?? 128, CLASSES),
  );
  const opt = new optim.Adam(model.parameters(), { lr: 2e-3 });
  const sched = new optim.CosineAnnealingLR(opt, { tMax: opts.steps });
  const loader = new DataLoader([x, y], { batchSize, shuffle: true, seed: 0, dropLast: true });
  let first: MemoryReport | null = null;
  let last: MemoryReport | null = null;
  let firstMovedStep: number | null = null;
  let movedTo: MemoryReport | null = null;
  let maxPooledBytes = 0;
  let firstLoss = NaN;
  let lastLoss = NaN;
  let step = 0;
  let peakFirstHalf = 0;
  let peakSecondHalf = 0;
  const collections0 = memory().collections;
  const tidied = opts.tidy ?? true;
  const t0 = performance.now();
  try {
    while (step < opts.steps) {
      for (const [xb, yb] of loader) {
        step++;
        const loss = tidied
          ? tidy(() => {
              opt.zeroGrad();
              const l = crossEntropy(model.forward(xb), yb);
              l.backward();
              opt.step();
              return l.detach();
            })
          : (() => {
              opt.zeroGrad();
              const l = crossEntropy(model.forward(xb), yb);
              l.backward();
              opt.step();
              return l;
            })();
        sched.step();
        if (step === 1 || step % readEvery === 0 || step === opts.steps) {
          lastLoss = await loss.item();
          if (step === 1) firstLoss = lastLoss;
        }
        if (tidied) loss.dispose();
        const m = memory();
        if (step <= opts.steps / 2) peakFirstHalf = Math.max(peakFirstHalf, m.bytes);
        else peakSecondHalf = Math.max(peakSecondHalf, m.bytes);
        maxPooledBytes = Math.max(maxPooledBytes, m.pooledBytes ?? 0);
        if (!first) first = m;
        else if (
          firstMovedStep === null &&
          (m.tensors !== first.tensors || m.buffers !== first.buffers || m.bytes !== first.bytes)
        ) {
          firstMovedStep = step;
          movedTo = m;
        }
        last = m;
        opts.onStep?.(step, m);
        if (step >= opts.steps) break;
      }
    }
  } finally {
    model.parameters().forEach((p) => p.dispose());
    opt.dispose();
    x.dispose();
    y.dispose();
  }
  const seconds = (performance.now() - t0) / 1000;
  return {
    steps: step,
    first: first!,
    last: last!,
    firstMovedStep,
    movedTo,
    maxPooledBytes,
    firstLoss,
    lastLoss,
    seconds,
    peakFirstHalf,
    peakSecondHalf,
    collections: memory().collections - collections0,
  };
}
