import { ValueError, crossEntropy, tensor } from '@surf/nn';
import { backends, on, testGpu } from './helpers';

// Class indices outside [0, C) are an error on every backend, never a silent 0.

const B = backends();
beforeAll(B.setup);
afterAll(B.teardown);

const logits = () => tensor([[0.5, -1, 2], [0.25, 0, -0.75]]);

test('the CPU backend checks class indices on the host at once', () => on(B.cpu, () => {
  expect(() => crossEntropy(logits(), tensor([0, 3], { dtype: 'int32' }))).toThrow(ValueError);
  expect(() => crossEntropy(logits(), tensor([-1, 0], { dtype: 'int32' }))).toThrow(/crossEntropy: target\[0\] = -1 is outside the class range \[0, 3\)/);
}));

testGpu('on WebGPU a bad index makes the loss NaN and its readback throws a ValueError naming it', async () => {
  const gpu = B.gpu();
  await on(gpu, async () => {
    const bad = crossEntropy(logits(), tensor([1, 3], { dtype: 'int32' }));
    await expect(bad.item()).rejects.toThrow(/crossEntropy: target\[1\] = 3 is outside the class range \[0, 3\)/);
    // The check runs once; the value itself is NaN, so a derived tensor is not a silent 0.
    expect(Number.isNaN(await bad.item())).toBe(true);
    const none = crossEntropy(logits(), tensor([-2, 2], { dtype: 'int32' }), { reduction: 'none', labelSmoothing: 0.1 });
    await expect(none.data()).rejects.toThrow(ValueError);
    const sum = crossEntropy(logits(), tensor([-2, 2], { dtype: 'int32' }), { reduction: 'sum' }).mul(1);
    expect(Number.isNaN(await sum.item())).toBe(true);
    // Valid indices read back normally, equal to the CPU's value.
    const good = await crossEntropy(logits(), tensor([2, 0], { dtype: 'int32' })).item();
    const want = await on(B.cpu, () => crossEntropy(logits(), tensor([2, 0], { dtype: 'int32' })).item());
    expect(good).toBeCloseTo(want, 5);
  });
});
