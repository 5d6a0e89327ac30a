import '@surf/webgpu';
import { getBackend, init, tensor } from '@surf/autograd';
import { gpuBackend, testGpu } from './gpu';

testGpu("init('auto') picks WebGPU when '@surf/webgpu' is imported and an adapter exists", async () => {
  const probe = await gpuBackend();
  probe.destroy();
  const r = await init({ backend: 'auto' });
  expect(r.backend).toBe('webgpu');
  expect(r.fallbackReason).toBeUndefined();
  expect(getBackend().name).toBe('webgpu');
  const x = tensor([1, 2, 3], { requiresGrad: true });
  x.mul(x).sum().backward();
  expect(await x.grad!.toArray()).toEqual([2, 4, 6]);
  getBackend().destroy();
});
