/**
 * Memory soak: trains an MLP of the MNIST example's shape (784 -> 128 -> 10, ReLU, Adam,
 * cosine schedule, batches of 64) on synthetic digits for many steps and checks that
 * memory() (live tensors, buffers, bytes) is exactly flat after the first step, which is
 * where the optimizer creates its state. Any growth is a leak: at 10,000 steps a leak of one
 * small buffer per step is 10,000 buffers.
 *
 *   node scripts/run-ts.mjs bench/src/soak.ts [--steps 10000] [--backend auto|webgpu|cpu] [--read-every 50] [--no-tidy]
 *
 * --no-tidy runs the loop PyTorch users write (no tidy, no dispose; use --read-every 10):
 * memory then moves between the collections Surf runs at the loss reads, and the verdict is
 * that the peak of memory().bytes in the second half is no more than in the first.
 *
 * Exits 1 when memory moved. The loop itself is test-support/soak-loop.ts, which
 * packages/nn/test/reliability/soak.test.ts runs for a few hundred steps under jest.
 */
import { MemoryReport, init } from '@surf/nn';
import { runSoak } from '../../test-support/soak-loop';
import { JobProgress } from './job-progress';

export { runSoak };

function arg(name: string, fallback: string): string {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 && process.argv[i + 1] ? process.argv[i + 1] : fallback;
}

const fmt = (m: MemoryReport) =>
  `${m.tensors} tensors, ${m.buffers} buffers, ${m.bytes} bytes (pool ${m.pooledBuffers ?? 0} buffers, ${m.pooledBytes ?? 0} bytes)`;

/** The command-line run: prints memory every 1,000 steps and a verdict; exit code 1 on growth. */
export async function soakMain(): Promise<number> {
  const steps = Number(arg('steps', '10000'));
  const backend = arg('backend', 'auto') as 'auto' | 'webgpu' | 'cpu';
  const info = await init({ backend });
  console.log(
    `soak: ${steps} steps of the MNIST-shaped MLP on ${info.backend} (${info.description})${info.fallbackReason ? `; ${info.fallbackReason}` : ''}`,
  );
  const bar = new JobProgress('soak', steps, 'steps');
  const noTidy = process.argv.includes('--no-tidy');
  const r = await runSoak({
    steps,
    tidy: !noTidy,
    readEvery: Number(arg('read-every', '50')),
    onStep: (s, m) => {
      if (s === 1 || s % 1000 === 0) bar.line(`  step ${String(s).padStart(6)}: ${fmt(m)}`);
      bar.update(s);
    },
  });
  bar.clear();
  console.log(
    `loss ${r.firstLoss.toFixed(4)} -> ${r.lastLoss.toFixed(4)}; ${(r.steps / r.seconds).toFixed(1)} steps/s; max pooled ${r.maxPooledBytes} bytes`,
  );
  if (noTidy) {
    // eagermem: without tidy, bounded is the verdict (peaks per half), not flat
    console.log(
      `peak bytes: first half ${r.peakFirstHalf}, second half ${r.peakSecondHalf}; ${r.collections} collections`,
    );
    if (r.peakSecondHalf > r.peakFirstHalf) {
      console.log('FAIL: memory grew: the second half peaked higher than the first');
      return 1;
    }
    console.log(`ok: memory bounded over ${r.steps} steps without tidy: ${fmt(r.last)}`);
    return 0;
  }
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
  soakMain().then(
    (code) => {
      process.exitCode = code;
    },
    (e) => {
      console.error(e);
      process.exitCode = 1;
    },
  );
}
