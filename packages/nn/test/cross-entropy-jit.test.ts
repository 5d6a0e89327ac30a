import { Backend, CpuBackend } from '@surf/core';
import { Tensor, crossEntropy, jit, setBackend, tensor } from '@surf/nn';
import { describeEach, gpuBackend } from '../../../test-support/gpu';

// A jitted step replays crossEntropy with other targets: a mean over the rows not ignored must
// use each call's own count (never the one the recording saw), in the loss and its gradient.

describeEach(['cpu', 'webgpu'] as const, 'crossEntropy with ignoreIndex under jit on %s', (kind) => {
  let backend: Backend;
  let prev: Backend | null = null;
  beforeAll(async () => {
    backend = kind === 'cpu' ? new CpuBackend() : await gpuBackend();
    prev = setBackend(backend);
  });
  afterAll(() => {
    if (prev) setBackend(prev);
    if (kind === 'webgpu') backend?.destroy();
  });

  test('replays divide by each call’s kept count', async () => {
    const zv = [0.5, -1, 2, 1.5, 0, -0.5, 3, 1, -2, 0.25, 0.75, -1.25];
    const targets = [
      [0, -100, 2, 1],
      [-100, -100, 2, 1],
      [0, 1, 2, 1],
      [-100, 2, -100, -100],
    ];
    const w = tensor(zv, { requiresGrad: true }).reshape(4, 3).detach().requiresGrad_();
    const we = tensor(zv, { requiresGrad: true }).reshape(4, 3).detach().requiresGrad_();
    const x = tensor([1, 2, -1, 0.5, 1, 1, -0.5, 2, 1, 1, 0.5, -2]).reshape(4, 3);
    const step = jit((xs: Tensor, y: Tensor) => {
      const loss = crossEntropy(w.mul(xs), y);
      loss.backward();
      return loss;
    });
    for (let round = 0; round < 3; round++) {
      for (const t of targets) {
        const y = tensor(t, { dtype: 'int32' });
        const loss = step(x, y);
        const eager = crossEntropy(we.mul(x), y);
        eager.backward();
        expect([t, await loss.item()]).toEqual([t, await eager.item()]);
        expect([t, Array.from(await w.grad!.data())]).toEqual([t, Array.from(await we.grad!.data())]);
        w.grad = null;
        we.grad = null;
      }
    }
  });
});
