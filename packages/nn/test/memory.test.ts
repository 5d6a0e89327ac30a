import { Backend } from '@surf/core';
import { DataLoader, MemoryReport, crossEntropy, manualSeed, memory, nn, optim, randn, tidy } from '@surf/nn';
import { backends, on, testGpu } from './helpers';

// Training keeps memory flat: after the first step (which creates the optimizer state), the
// live tensor count and the backend's live buffers and bytes stay exactly where they were,
// step after step. And a step reads nothing back unless the loss is asked for.

const B = backends();
beforeAll(B.setup);
afterAll(B.teardown);

async function train(backend: Backend, steps: number, readEvery: number): Promise<void> {
  manualSeed(0);
  const x = randn([64, 6]);
  const y = tidy(() => x.sum(1).gt(0).int());
  const model = new nn.Sequential(
    new nn.Linear(6, 16),
    new nn.GELU(),
    new nn.LayerNorm(16),
    new nn.Dropout(0.1),
    new nn.Linear(16, 16),
    new nn.ReLU(),
    new nn.Linear(16, 2),
  );
  const opt = new optim.AdamW(model.parameters(), { lr: 1e-2 });
  const sched = new optim.LinearWarmup(opt, {
    warmupSteps: 10,
    after: new optim.CosineAnnealingLR(opt, { tMax: steps }),
  });
  const loader = new DataLoader([x, y], { batchSize: 16, shuffle: true, seed: 3 });
  const reads = jest.spyOn(backend, 'read');
  let first: MemoryReport | null = null;
  let step = 0;
  let readsWanted = 0;
  let lastLoss = Infinity;
  while (step < steps) {
    for (const [xb, yb] of loader) {
      const loss = tidy(() => {
        const l = crossEntropy(model.forward(xb), yb);
        l.backward();
        optim.clipGradNorm(model.parameters(), 1);
        opt.step();
        opt.zeroGrad();
        sched.step();
        return l;
      });
      step++;
      if (step % readEvery === 0) {
        lastLoss = await loss.item();
        readsWanted++;
      }
      loss.dispose();
      const m = memory();
      if (!first) first = m;
      else if (m.tensors !== first.tensors || m.buffers !== first.buffers || m.bytes !== first.bytes) {
        throw new Error(`step ${step}: memory moved from ${JSON.stringify(first)} to ${JSON.stringify(m)}`);
      }
      if (step === steps) break;
    }
  }
  // Free everything, so the next test's tensor count does not include this one's (or
  // drop mid-run when the garbage collector finalizes it).
  model.parameters().forEach((p) => p.dispose());
  opt.dispose();
  x.dispose();
  y.dispose();
  expect(reads).toHaveBeenCalledTimes(readsWanted);
  reads.mockRestore();
  expect(Number.isFinite(lastLoss)).toBe(true);
  expect(lastLoss).toBeLessThan(0.6);
}

test('300 training steps on the CPU: memory flat, reads only when asked', () => on(B.cpu, () => train(B.cpu, 300, 50)));

testGpu('40 training steps on WebGPU: memory flat, reads only when asked', async () => {
  const gpu = B.gpu();
  await on(gpu, () => train(gpu, 40, 20));
});
