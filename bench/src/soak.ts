/**
 * Memory soak: trains an MLP of the MNIST example's shape (784 -> 128 -> 10, ReLU, Adam,
 * cosine schedule, batches of 64) on synthetic digits for many steps and checks that
 * memory() (live tensors, buffers, bytes) is exactly flat after the first step, which is
 * where the optimizer creates its state. Any growth is a leak: at 10,000 steps a leak of one
 * small buffer per step is 10,000 buffers.
 *
 *   node scripts/run-ts.mjs bench/src/soak.ts [--steps 10000] [--backend auto|webgpu|cpu] [--read-every 50]
 *
 * Exits 1 when memory moved. packages/nn/test/reliability/soak.test.ts runs the same loop
 * for a few hundred steps under jest.
 */
import { DataLoader, MemoryReport, Tensor, crossEntropy, init, manualSeed, memory, nn, optim, randn, tidy } from '@surf/nn';

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
  const model = new nn.Sequential(new nn.Linear(PIXELS, opts.hidden ?? 128), new nn.ReLU(), new nn.Linear(opts.hidden ?? 128, CLASSES));
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
  const t0 = performance.now();
  try {
    while (step < opts.steps) {
      for (const [xb, yb] of loader) {
        step++;
        const loss = tidy(() => {
          opt.zeroGrad();
          const l = crossEntropy(model.forward(xb), yb);
          l.backward();
          opt.step();
          return l.detach();
        });
        sched.step();
        if (step === 1 || step % readEvery === 0 || step === opts.steps) {
          lastLoss = await loss.item();
          if (step === 1) firstLoss = lastLoss;
        }
        loss.dispose();
        const m = memory();
        maxPooledBytes = Math.max(maxPooledBytes, m.pooledBytes ?? 0);
        if (!first) first = m;
        else if (firstMovedStep === null && (m.tensors !== first.tensors || m.buffers !== first.buffers || m.bytes !== first.bytes)) {
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
  return { steps: step, first: first!, last: last!, firstMovedStep, movedTo, maxPooledBytes, firstLoss, lastLoss, seconds: (performance.now() - t0) / 1000 };
}

function arg(name: string, fallback: string): string {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 && process.argv[i + 1] ? process.argv[i + 1] : fallback;
}

const fmt = (m: MemoryReport) => `${m.tensors} tensors, ${m.buffers} buffers, ${m.bytes} bytes (pool ${m.pooledBuffers ?? 0} buffers, ${m.pooledBytes ?? 0} bytes)`;

/** The command-line run: prints memory every 1,000 steps and a verdict; exit code 1 on growth. */
export async function soakMain(): Promise<number> {
  const steps = Number(arg('steps', '10000'));
  const backend = arg('backend', 'auto') as 'auto' | 'webgpu' | 'cpu';
  const info = await init({ backend });
  console.log(`soak: ${steps} steps of the MNIST-shaped MLP on ${info.backend} (${info.description})${info.fallbackReason ? `; ${info.fallbackReason}` : ''}`);
  const r = await runSoak({
    steps,
    readEvery: Number(arg('read-every', '50')),
    onStep: (s, m) => { if (s === 1 || s % 1000 === 0) console.log(`  step ${String(s).padStart(6)}: ${fmt(m)}`); },
  });
  console.log(`loss ${r.firstLoss.toFixed(4)} -> ${r.lastLoss.toFixed(4)}; ${(r.steps / r.seconds).toFixed(1)} steps/s; max pooled ${r.maxPooledBytes} bytes`);
  if (r.firstMovedStep !== null) {
    console.log(`FAIL: memory moved at step ${r.firstMovedStep}: from ${fmt(r.first)} to ${fmt(r.movedTo!)}`);
    return 1;
  }
  console.log(`ok: memory flat from step 1 to step ${r.steps}: ${fmt(r.last)}`);
  return 0;
}

// Run as a script (node scripts/run-ts.mjs bench/src/soak.ts bundles it to .out/soak.mjs),
// not when imported by the jest soak test or the bench suite.
if (/[\\/]soak\.m?js$/.test(process.argv[1] ?? '')) {
  soakMain().then((code) => { process.exitCode = code; }, (e) => { console.error(e); process.exitCode = 1; });
}
