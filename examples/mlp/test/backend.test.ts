import * as surf from '@surf/nn';
import { setupBackend } from '../src/backend';

// 'auto' must pick WebGPU on a real GPU and the CPU when the only adapter is a software
// emulation (SwiftShader here), saying why; an explicit choice is always honoured.
afterAll(async () => {
  await surf.init({ backend: 'cpu' });
});

test('cpu is honoured and named', async () => {
  const b = await setupBackend('cpu');
  expect(b.name).toBe('cpu');
  expect(surf.getBackend().name).toBe('cpu');
  expect(b.fallbackReason).toBeUndefined();
});

test("'auto' uses a hardware adapter, but not a software emulation of one", async () => {
  let gpu: { description: string };
  try {
    gpu = await surf.init({ backend: 'webgpu' });
  } catch (e) {
    if (process.env.CI) throw e;
    console.warn(`skipping: no WebGPU adapter (${(e as Error).message})`);
    const b = await setupBackend('auto');
    expect(b.name).toBe('cpu');
    return;
  }
  const software = /swiftshader|llvmpipe|lavapipe/i.test(gpu.description);
  const auto = await setupBackend('auto');
  expect(surf.getBackend().name).toBe(auto.name);
  if (software) {
    expect(auto.name).toBe('cpu');
    expect(auto.line).toMatch(/the only WebGPU adapter, .*, is a software emulation, slower than the CPU backend/);
  } else {
    expect(auto.name).toBe('webgpu');
    expect(auto.line).toContain(gpu.description.replace(/^WebGPU:\s*/, ''));
  }
  const forced = await setupBackend('webgpu');
  expect(forced.name).toBe('webgpu');
  expect(forced.line).toMatch(/^WebGPU \(/);
});
