import * as surf from '@surf/nn';
import { buildCnn, DEFAULT_CHANNELS } from './model';

/**
 * CPU time per CNN training step (forward, cross-entropy, backward, Adam) on random digits,
 * measured with process.cpuUsage so a loaded machine does not skew it. Usage:
 * node scripts/run-ts.mjs examples/cnn/src/step-bench.ts [steps=20] [batch=32] [cpu|webgpu] [channels=16,32]
 */
async function main(): Promise<void> {
  const steps = Number(process.argv[2] ?? 20);
  const batch = Number(process.argv[3] ?? 32);
  await surf.init({ backend: (process.argv[4] as 'cpu' | 'webgpu') ?? 'cpu' });
  surf.manualSeed(0);
  const channels = process.argv[5] ? process.argv[5].split(',').map(Number) : DEFAULT_CHANNELS;
  const model = buildCnn(channels);
  const opt = new surf.optim.Adam(model.parameters(), { lr: 1e-3 });
  const x = surf.keep(surf.rand([batch, 1, 28, 28]));
  const y = surf.keep(surf.tensor(Int32Array.from({ length: batch }, (_, i) => i % 10)));
  const step = () =>
    surf.tidy(() => {
      opt.zeroGrad();
      const l = surf.crossEntropy(model.forward(x), y);
      l.backward();
      opt.step();
      return l.detach();
    });
  for (let i = 0; i < 3; i++) await step().item();
  const c0 = process.cpuUsage();
  const t0 = performance.now();
  let loss = 0;
  for (let i = 0; i < steps; i++) loss = await step().item();
  const c = process.cpuUsage(c0);
  const cpuMs = (c.user + c.system) / 1000 / steps;
  console.log(
    `channels ${channels.join(',')}, batch ${batch}: ${cpuMs.toFixed(1)} ms CPU/step (${(1000 / cpuMs).toFixed(1)} steps/s of CPU), wall ${((performance.now() - t0) / steps).toFixed(1)} ms/step, loss ${loss.toFixed(4)}`,
  );
}

main().then(
  () => process.exit(0),
  (e) => {
    console.error(e);
    process.exit(1);
  },
);
