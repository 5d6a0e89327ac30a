import '@surf/webgpu';
import { Backend, CpuBackend } from '@surf/core';
import { Tensor, gradcheck, setBackend, tensor } from '@surf/autograd';
import { describeEach, gpuAvailable, gpuBackend } from '../gpu';

// gradcheck's step and tolerance follow the magnitudes of inputs and outputs: correct
// functions with outputs near 1e2 and near 1e-2 pass at the defaults on both backends, and a
// gradient that is wrong by a few percent still fails.

let gpu: Backend | null = null;
const cpu = new CpuBackend();
beforeAll(async () => {
  if (gpuAvailable) gpu = await gpuBackend();
});
afterAll(() => gpu?.destroy());

async function on<T>(b: Backend, fn: () => Promise<T>): Promise<T> {
  const prev = setBackend(b);
  try {
    return await fn();
  } finally {
    setBackend(prev);
  }
}

const cube = (a: Tensor) => a.mul(a).mul(a);
// Same values as cube (the extra terms cancel exactly), but the detached factor drops
// 0.05·x² from the gradient: 1.7 % too small.
const wrongCube = (a: Tensor) =>
  cube(a).add(a.mul(a.detach()).mul(a).mul(0.05)).sub(a.detach().mul(a.detach()).mul(a).mul(0.05));

describeEach(['cpu', 'webgpu'] as const, 'on %s', (kind) => {
  const get = () => (kind === 'cpu' ? cpu : gpu!);

  test('outputs near 1e2 pass at the defaults; a 1.7 % gradient error fails', async () => {
    await on(get(), async () => {
      const x = tensor([5.38, -5.2, 5.41, 4.9], { requiresGrad: true });
      const ok = await gradcheck(cube, [x]);
      expect(Math.abs(ok.output[0])).toBeGreaterThan(150);
      expect(ok.summary).toMatch(/^ok/);
      expect((await gradcheck(wrongCube, [x])).ok).toBe(false);
    });
  });

  test('outputs near 1e-2 from small inputs pass at the defaults (the step shrinks with the inputs)', async () => {
    await on(get(), async () => {
      const x = tensor([3e-3, 5e-3, 8e-3], { requiresGrad: true });
      const f = (a: Tensor) => a.log().mul(0.005);
      const r = await gradcheck(f, [x]);
      expect(Math.abs(r.output[0])).toBeLessThan(0.05);
      expect(r.summary).toMatch(/^ok/);
      // A fixed step of 1e-3 (the old default) is too coarse here: truncation error fails it.
      expect((await gradcheck(f, [x], { eps: 1e-3 })).ok).toBe(false);
    });
  });
});

test('options must be an object', async () => {
  await expect(gradcheck((a) => a, [tensor([1.5], { requiresGrad: true })], 1e-3 as never)).rejects.toThrow(
    /gradcheck: the options argument must be an object/,
  );
});
