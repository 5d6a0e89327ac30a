import '@surf/webgpu';
import { getBackend, init, tensor } from '@surf/autograd';
import { gpuBackend, testGpu } from './gpu';

testGpu("init('auto') picks a hardware WebGPU adapter, skips a software one unless allowed", async () => {
  const probe = await gpuBackend();
  const software = probe.software;
  probe.destroy();
  const made = tensor([2.5]);
  if (software) {
    // A software adapter (SwiftShader here) is slower than the CPU backend: 'auto' skips it and says why.
    const cpu = await init({ backend: 'auto' });
    expect(cpu.backend).toBe('cpu');
    expect(cpu.fallbackReason).toMatch(/is a software emulation, slower than the CPU backend/);
    expect(cpu.software).toBeUndefined();
    const forced = await init({ backend: 'webgpu' });
    expect(forced.software).toBe(true);
    // The CPU tensor made before survives the switch and can be moved.
    expect(await made.to(getBackend()).toArray()).toEqual([2.5]);
  }
  const r = await init({ backend: 'auto', allowSoftware: true });
  expect(r.backend).toBe('webgpu');
  expect(r.fallbackReason).toBeUndefined();
  expect(r.software ?? false).toBe(software);
  expect(getBackend().name).toBe('webgpu');
  const x = tensor([1, 2, 3], { requiresGrad: true });
  x.mul(x).sum().backward();
  expect(await x.grad!.toArray()).toEqual([2, 4, 6]);
  getBackend().destroy();
});
