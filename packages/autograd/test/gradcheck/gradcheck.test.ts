import { CpuBackend } from '@surf/core';
import { Tensor, gradcheck, runGradcheckSuite, tensor } from '@surf/autograd';

describe('gradcheck', () => {
  test('passes a correct gradient and reports the checked elements', async () => {
    const x = tensor([0.3, -1.2, 2], { requiresGrad: true });
    const r = await gradcheck((a) => a.mul(a).sin(), [x]);
    expect(r.ok).toBe(true);
    expect(r.checked).toBe(3);
    expect(r.maxAbsError).toBeLessThan(1e-3);
    // The analytic gradient of Σ v·sin(x²) is v·2x·cos(x²); check it independently.
    const numeric = r.numeric[0]!;
    Array.from(r.analytic[0]!).forEach((a, i) => expect(a).toBeCloseTo(numeric[i], 2));
  });

  test('fails on a wrong gradient and names the worst element', async () => {
    // detach() hides one path of x·x from autodiff: the analytic gradient is x, the true one 2x.
    const x = tensor(
      [
        [0.5, -2],
        [3, 1],
      ],
      { requiresGrad: true },
    );
    const r = await gradcheck((a) => a.detach().mul(a), [x]);
    expect(r.ok).toBe(false);
    expect(r.worst!.input).toBe(0);
    expect(r.worst!.numeric).toBeCloseTo(2 * r.worst!.analytic, 2);
    expect(r.summary).toMatch(/FAILED/);
  });

  test("leaves the inputs' existing .grad untouched", async () => {
    const x = tensor([1, 2], { requiresGrad: true });
    x.mul(3).sum().backward();
    await gradcheck((a) => a.exp(), [x]);
    expect(await x.grad!.toArray()).toEqual([3, 3]);
  });

  test('the suite reports failures instead of throwing', async () => {
    const [r] = await runGradcheckSuite({
      backend: new CpuBackend(),
      cases: [{ name: 'bad', op: 'bad', inputs: [{ shape: [2] }], fn: (x: Tensor) => x.matmul(x.reshape(1, 2)) }],
    });
    expect(r.ok).toBe(false);
    expect(r.detail).toMatch(/ShapeError: matmul/);
  });
});
