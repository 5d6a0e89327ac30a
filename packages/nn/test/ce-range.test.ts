import { Tensor, ValueError, crossEntropy, jit, nn, sync, tensor } from '@surf/nn';
import { backends, on, testGpu } from './helpers';

// Class indices outside [0, C) are an error on every backend, never a silent 0: the CPU
// checks on the host at once; WebGPU runs a device-side assert whose flag the next readback
// or sync() reads (as CUDA's device asserts).

const B = backends();
beforeAll(B.setup);
afterAll(B.teardown);

const logits = () =>
  tensor([
    [0.5, -1, 2],
    [0.25, 0, -0.75],
  ]);
const labels = (v: number[]) => tensor(v, { dtype: 'int32' });

test('the CPU backend checks class indices on the host at once', () =>
  on(B.cpu, async () => {
    expect(() => crossEntropy(logits(), labels([0, 3]))).toThrow(ValueError);
    expect(() => crossEntropy(logits(), labels([-1, 0]))).toThrow(
      /crossEntropy: target\[0\] = -1 is outside the class range \[0, 3\)/,
    );
    await expect(sync()).resolves.toBeUndefined();
  }));

testGpu('on WebGPU a bad index raises a ValueError naming it at the next readback, once', async () => {
  const gpu = B.gpu();
  await on(gpu, async () => {
    const bad = crossEntropy(logits(), labels([1, 3]));
    await expect(bad.item()).rejects.toThrow(/crossEntropy: target\[1\] = 3 is outside the class range \[0, 3\)/);
    // The flag was cleared by the read that raised it; the value itself is NaN, not a silent 0.
    expect(Number.isNaN(await bad.item())).toBe(true);
    const none = crossEntropy(logits(), labels([-2, 2]), { reduction: 'none', labelSmoothing: 0.1 });
    await expect(none.data()).rejects.toThrow(/target\[0\] = -2 is outside/);
    // Any readback raises it, as CUDA's asserts surface at the next synchronisation.
    const sum = crossEntropy(logits(), labels([0, 7]), { reduction: 'sum' }).mul(1);
    const other = tensor([1, 2]).add(1);
    await expect(other.data()).rejects.toThrow(/crossEntropy: target\[1\] = 7/);
    expect(Number.isNaN(await sum.item())).toBe(true);
    // Several bad rows: the first position and the range of the bad values.
    const many = crossEntropy(tensor(Array.from({ length: 5 }, () => [0, 1, 2])), labels([0, 5, 1, -4, 9]));
    await expect(many.item()).rejects.toThrow(/target\[1\] is outside the class range \[0, 3\) .*from -4 to 9/);
    // Valid indices read back normally, equal to the CPU's value.
    const good = await crossEntropy(logits(), labels([2, 0])).item();
    const want = await on(B.cpu, () => crossEntropy(logits(), labels([2, 0])).item());
    expect(good).toBeCloseTo(want, 5);
  });
});

testGpu('on WebGPU sync() raises a bad index without the loss being read; a valid run raises nothing', async () => {
  const gpu = B.gpu();
  await on(gpu, async () => {
    const w = tensor(
      [
        [0.1, 0.2, -0.3],
        [0.4, -0.5, 0.6],
      ],
      { requiresGrad: true },
    );
    const x = tensor([
      [1, 2],
      [3, -1],
      [0.5, 0.5],
      [-2, 1],
    ]);
    const step = (y: number[]) => {
      const loss = crossEntropy(x.matmul(w), labels(y));
      loss.backward();
      return loss;
    };
    step([0, 1, 2, 1]);
    await expect(sync()).resolves.toBeUndefined();
    step([0, 1, 3, 1]);
    await expect(sync()).rejects.toThrow(
      /crossEntropy: target\[2\] = 3 is outside the class range \[0, 3\) of the input's 3 columns/,
    );
    // Raised once: the next sync is clean, and so are valid steps after it.
    await expect(sync()).resolves.toBeUndefined();
    step([2, 2, 0, 0]);
    await expect(sync()).resolves.toBeUndefined();
    expect(Number.isFinite((await w.grad!.data())[0])).toBe(true);
  });
});

testGpu('on WebGPU a jitted training step replays the device-side check', async () => {
  const gpu = B.gpu();
  await on(gpu, async () => {
    const model = new nn.Linear(2, 3);
    const x = tensor([
      [1, 2],
      [3, -1],
      [0.5, 0.5],
      [-2, 1],
    ]);
    const step = jit((y: Tensor) => crossEntropy(model.forward(x), y));
    for (const y of [
      [0, 1, 2, 1],
      [1, 1, 0, 2],
    ]) {
      step(labels(y)).dispose();
      await expect(sync()).resolves.toBeUndefined();
    }
    // By now the step replays its recording: the check is part of it.
    step(labels([0, -1, 2, 1])).dispose();
    await expect(sync()).rejects.toThrow(/target\[1\] = -1 is outside/);
    step(labels([0, 1, 2, 1])).dispose();
    await expect(sync()).resolves.toBeUndefined();
    expect(step.stats.replayed).toBeGreaterThanOrEqual(2);
  });
});
