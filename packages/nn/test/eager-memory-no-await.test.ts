import { Backend, canCollectSync } from '@surf/core';
import { collectGarbage, configureMemory, crossEntropy, manualSeed, memory, nn, optim, randint, randn } from '@surf/nn';
import { backends, on, testGpu } from './helpers';

// The loop PyTorch users write, without even an await: nothing reads the loss until the end.
// Where the host finalizes synchronously (Node), Surf collects as tensors are made once live
// bytes passed the limit, so memory stays bounded with no task turn at all.

const B = backends();
beforeAll(B.setup);
afterAll(B.teardown);
afterEach(() => {
  configureMemory({ autoCollect: true, minGrowthBytes: 4 << 20, warnTensors: 50_000 });
});

async function noAwaitLoop(backend: Backend, steps: number): Promise<void> {
  await on(backend, async () => {
    configureMemory({ minGrowthBytes: 64 << 10 });
    await collectGarbage(backend);
    const before = backend.memory().bytes;
    manualSeed(3);
    const x = randn([64, 40]);
    const y = randint(0, 5, [64]);
    const model = new nn.Sequential(new nn.Linear(40, 96), new nn.ReLU(), new nn.Linear(96, 5));
    const opt = new optim.Adam(model.parameters(), { lr: 0.01 });
    const c0 = memory().collections;
    let peak = 0;
    let first = NaN;
    let loss = crossEntropy(model.forward(x), y);
    for (let step = 0; step < steps; step++) {
      opt.zeroGrad();
      loss = crossEntropy(model.forward(x), y);
      loss.backward();
      opt.step();
      peak = Math.max(peak, backend.memory().bytes);
      if (step === 0) first = backend.memory().bytes;
    }
    // Each step drops its logits (64 x 5), the hidden activations (64 x 96) and their
    // gradients: ~60 KiB a step, so without collections the live bytes pass 8 MiB here.
    const dropped = steps * 64 * (96 + 5) * 4 * 2;
    expect(dropped).toBeGreaterThan(8 << 20);
    expect(memory().collections - c0).toBeGreaterThan(0);
    // Bounded: the live set (parameters, Adam's moments, x, y) plus the limit's slack.
    expect(peak - first).toBeLessThan(2 << 20);
    expect(await loss.item()).toBeLessThan(1.5);
    model.parameters().forEach((p) => p.dispose());
    opt.dispose();
    x.dispose();
    y.dispose();
    loss.dispose();
    await collectGarbage(backend);
    expect(backend.memory().bytes).toBe(before);
  });
}

const syncTest = canCollectSync() ? test : test.skip;
const syncGpuTest = canCollectSync() ? testGpu : test.skip;
syncTest('CPU: a loop that never awaits keeps memory bounded', () => noAwaitLoop(B.cpu, 200));
syncGpuTest('WebGPU: a loop that never awaits keeps memory bounded', () => noAwaitLoop(B.gpu(), 200));
test('Node finalizes synchronously (the no-await collection is available here)', () => {
  expect(canCollectSync()).toBe(true);
});
