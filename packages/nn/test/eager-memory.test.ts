import { Backend } from '@surf/core';
import {
  Tensor,
  collectGarbage,
  configureMemory,
  crossEntropy,
  manualSeed,
  memory,
  nn,
  optim,
  randint,
  randn,
  tidy,
} from '@surf/nn';
import { backends, on, testGpu } from './helpers';

// eagermem: the loop PyTorch users write (no tidy, no dispose, the loss read every 10 steps)
// keeps memory bounded on both backends: at the awaits on the loss, Surf runs the garbage
// collector when live bytes grew, and the dropped tensors' storages go back to the backend.
// Tensors user code still holds are never freed.

const B = backends();
beforeAll(B.setup);
afterAll(B.teardown);
afterEach(() => {
  configureMemory({ autoCollect: true, minGrowthBytes: 4 << 20, warnTensors: 50_000 });
});

type Style = 'raw' | 'module';

interface LoopResult {
  firstPeak: number;
  secondPeak: number;
  stepBytes: number;
  collections: number;
  losses: number[];
}

/** A 12 -> 32 -> 3 MLP trained without tidy; memory().bytes sampled after every step. */
async function loop(
  style: Style,
  steps: number,
  onStep?: (step: number, held: Tensor[]) => void,
): Promise<LoopResult & { cleanup: () => void }> {
  manualSeed(1);
  const x = randn([16, 12]);
  const y = randint(0, 3, [16]);
  const model = new nn.Sequential(new nn.Linear(12, 32), new nn.ReLU(), new nn.Linear(32, 3));
  const [W1, b1, W2, b2] = model.parameters();
  const opt = new optim.SGD(model.parameters(), { lr: 0.05, momentum: 0.9 });
  const c0 = memory().collections;
  const bytes: number[] = [];
  const losses: number[] = [];
  for (let step = 1; step <= steps; step++) {
    opt.zeroGrad();
    const out = style === 'module' ? model.forward(x) : x.matmul(W1.T).add(b1).relu().matmul(W2.T).add(b2);
    const loss = crossEntropy(out, y);
    loss.backward();
    opt.step();
    if (step % 10 === 0) losses.push(await loss.item());
    onStep?.(step, [out, loss]);
    bytes.push(memory().bytes);
  }
  const half = Math.floor(steps / 2);
  return {
    firstPeak: Math.max(...bytes.slice(0, half)),
    secondPeak: Math.max(...bytes.slice(half)),
    stepBytes: bytes[1] - bytes[0],
    collections: memory().collections - c0,
    losses,
    cleanup: () => {
      model.parameters().forEach((p) => p.dispose());
      opt.dispose();
      x.dispose();
      y.dispose();
    },
  };
}

/** Live bytes of the parameters, gradients and momentum: what a tidy step keeps. */
const paramBytes = (12 * 32 + 32 + 32 * 3 + 3) * 4;

/**
 * The criterion (the peak of the second half is no more than the first's) on a
 * short run: steps must span two collection periods (about 20 steps here) in each half.
 */
async function bounded(backend: Backend, style: Style, steps: number): Promise<void> {
  // The raw loop drops a few KiB a step (its unread matmuls hold the old weights), the
  // module loop a few hundred bytes: a threshold each that collects every few reads.
  const minGrowthBytes = style === 'raw' ? 48 << 10 : 4 << 10;
  await on(backend, async () => {
    configureMemory({ minGrowthBytes });
    await collectGarbage(backend);
    const before = backend.memory().bytes;
    const r = await loop(style, steps);
    expect(r.collections).toBeGreaterThan(0);
    // Two steps' bytes of slack: a collection runs as tensors are made (where the host
    // finalizes synchronously) or at an await, so the peak's place within a step moves a
    // little between periods. Growth beyond that fails here; slower growth fails the absolute
    // bound below once it adds up (the 10,000-step soak, bench/src/soak.ts --no-tidy).
    expect(r.secondPeak).toBeLessThanOrEqual(r.firstPeak + 2 * r.stepBytes + 1024);
    // Bounded by the policy, whatever the number of steps: twice the live set (parameters,
    // gradients, momentum, x, y) plus the threshold plus ten steps' garbage (a few KiB each).
    expect(r.secondPeak - before).toBeLessThan(2 * (3 * paramBytes + 16 * 13 * 4) + minGrowthBytes + 64 * 1024);
    expect(r.losses[r.losses.length - 1]).toBeLessThan(r.losses[0]);
    r.cleanup();
    await collectGarbage(backend);
    expect(backend.memory().bytes).toBe(before);
  });
}

test('CPU, raw tensor ops, no tidy: memory stays bounded', () => bounded(B.cpu, 'raw', 120));
test('CPU, nn modules, no tidy: memory stays bounded', () => bounded(B.cpu, 'module', 160));
testGpu('WebGPU, raw tensor ops, no tidy: memory stays bounded', () => bounded(B.gpu(), 'raw', 30));
testGpu('WebGPU, nn modules, no tidy: memory stays bounded', () => bounded(B.gpu(), 'module', 80));

async function heldSurvive(backend: Backend): Promise<void> {
  await on(backend, async () => {
    manualSeed(2);
    const x = randn([8, 5]);
    const W = randn([5, 6]).requiresGrad_();
    // Held across many collections: a matmul folded into its consumer and never read (its
    // value must still be x·W as W was then), a loss, and a view of a dropped tensor.
    const folded = x.matmul(W);
    const consumer = folded.add(1).relu();
    const wThen = await W.toArray();
    const view = randn([4, 6]).reshape(24).narrow(0, 2, 5);
    const viewValues = await view.toArray();
    consumer.sum().backward();
    let c0 = memory().collections;
    for (let i = 0; i < 10; i++) {
      // garbage: each step replaces W's data (as an optimizer does) and drops its results
      W.grad = null;
      x.matmul(W).sum().backward();
      tidy(() => W.assign(W.sub(W.grad!.mul(0.1))));
      await x.matmul(W).sum().item();
      if (i % 5 === 4) await collectGarbage();
    }
    expect(memory().collections - c0).toBeGreaterThan(0);
    const got = (await folded.toArray()) as number[][];
    const xs = (await x.toArray()) as number[][];
    const ws = wThen as number[][];
    for (let i = 0; i < 8; i++)
      for (let j = 0; j < 6; j++) {
        let s = 0;
        for (let k = 0; k < 5; k++) s += xs[i][k] * ws[k][j];
        expect(got[i][j]).toBeCloseTo(s, 4);
      }
    expect(await view.toArray()).toEqual(viewValues);
    c0 = memory().collections;
    await collectGarbage();
    expect(memory().collections).toBe(c0 + 1);
    [x, W, folded, consumer, view].forEach((t) => t.dispose());
  });
}

test('CPU: tensors user code holds survive the collections', () => heldSurvive(B.cpu));
testGpu('WebGPU: tensors user code holds survive the collections', () => heldSurvive(B.gpu()));

test('tidy stays exact: no collection is due when steps are tidied', async () => {
  await on(B.cpu, async () => {
    configureMemory({ minGrowthBytes: 16 << 10 });
    await collectGarbage(B.cpu);
    const c0 = memory().collections;
    const model = new nn.Linear(12, 3);
    const x = randn([16, 12]);
    const y = randint(0, 3, [16]);
    const opt = new optim.SGD(model.parameters(), { lr: 0.1 });
    let base = -1;
    for (let step = 1; step <= 40; step++) {
      const loss = tidy(() => {
        opt.zeroGrad();
        const l = crossEntropy(model.forward(x), y);
        l.backward();
        opt.step();
        return l;
      });
      await loss.item();
      loss.dispose();
      if (step === 1) base = B.cpu.memory().bytes;
      else expect(B.cpu.memory().bytes).toBe(base);
    }
    expect(memory().collections).toBe(c0);
    model.parameters().forEach((p) => p.dispose());
    opt.dispose();
    x.dispose();
    y.dispose();
  });
});

test('configureMemory checks its options; autoCollect: false turns collection off', async () => {
  expect(() => configureMemory(3 as never)).toThrow(/configureMemory: the options argument must be an object like/);
  expect(() => configureMemory({ minGrowthBytes: -1 })).toThrow(/minGrowthBytes must be a number >= 0/);
  expect(() => configureMemory({ autoCollect: 'yes' as never })).toThrow(/option 'autoCollect' must be a boolean/);
  await on(B.cpu, async () => {
    configureMemory({ autoCollect: false, minGrowthBytes: 0 });
    const c0 = memory().collections;
    for (let i = 0; i < 5; i++)
      await randn([64, 64])
        .matmul(randn([64, 64]))
        .sum()
        .item();
    expect(memory().collections).toBe(c0);
  });
});

test('a one-time warning when tensors pile up', () => {
  const warn = jest.spyOn(console, 'warn').mockImplementation(() => undefined);
  try {
    on(B.cpu, () => {
      const held: Tensor[] = [];
      configureMemory({ warnTensors: memory().tensors + 20 });
      for (let i = 0; i < 40; i++) held.push(randn([2]));
      expect(warn).toHaveBeenCalledTimes(1);
      expect(String(warn.mock.calls[0][0])).toMatch(/tensors are alive at once.*tidy\(\)/s);
      held.forEach((t) => t.dispose());
    });
  } finally {
    warn.mockRestore();
  }
});

// Without tidy, buffers come back whenever V8 collects, in no set order. The pool hands out
// the lowest-id free buffer of a size, so after each collection the steps bind the same
// buffers as after the last one and create no bind groups (a new one costs ~15 µs on the H100
// host; handing out the last buffer released made 9 per step here).
testGpu('WebGPU: a loop without tidy creates no bind groups per step once warm', async () => {
  await on(B.gpu(), async () => {
    const be = B.gpu() as unknown as { stats(): { bindGroupsCreated: number } };
    manualSeed(2);
    const model = new nn.Sequential(new nn.Linear(12, 32), new nn.ReLU(), new nn.Linear(32, 3));
    const opt = new optim.SGD(model.parameters(), { lr: 0.05 });
    const batches = Array.from({ length: 4 }, () => ({ x: randn([16, 12]), y: randint(0, 3, [16]) }));
    let made = 0;
    for (let step = 0; step < 120; step++) {
      if (step === 60) made = be.stats().bindGroupsCreated;
      opt.zeroGrad();
      const loss = crossEntropy(model.forward(batches[step % 4].x), batches[step % 4].y);
      loss.backward();
      opt.step();
      if (step % 10 === 9) {
        await loss.item();
        // What the collector does whenever it runs: the dropped tensors' buffers come back.
        await collectGarbage();
      }
    }
    expect(be.stats().bindGroupsCreated - made).toBeLessThanOrEqual(3);
  });
});

// Before V8 collects (on the GPU host, steps outrun it), each step's dropped logits and loss
// hold their buffers, so the kernels that bind them make new bind groups. The logits'
// gradient is freed by autograd each step and must not change buffer too: the pool keeps a
// freed buffer for the op that released it, so the next step's logits (another op) do not take
// it. Here the dropped tensors are held, as V8 holds them until it collects: three kernels a
// step bind a fresh buffer (the logits' matmul, cross-entropy's rows, its backward); with the
// gradient's buffer changing too, six did.
testGpu('WebGPU: before V8 collects, a loop without tidy binds only its dropped tensors anew', async () => {
  await on(B.gpu(), async () => {
    const be = B.gpu() as unknown as { stats(): { bindGroupsCreated: number } };
    manualSeed(3);
    const model = new nn.Sequential(new nn.Linear(12, 32), new nn.ReLU(), new nn.Linear(32, 10));
    const opt = new optim.SGD(model.parameters(), { lr: 0.05 });
    const x = randn([16, 12]);
    const y = randint(0, 10, [16]);
    const held: Tensor[] = [];
    let made = 0;
    for (let step = 0; step < 16; step++) {
      if (step === 8) made = be.stats().bindGroupsCreated;
      opt.zeroGrad();
      const out = model.forward(x);
      const loss = crossEntropy(out, y);
      loss.backward();
      opt.step();
      held.push(out, loss);
    }
    expect((be.stats().bindGroupsCreated - made) / 8).toBeLessThanOrEqual(3);
    await held[held.length - 1].item();
    held.forEach((t) => t.dispose());
  });
});
