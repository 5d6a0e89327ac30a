import { Backend, CpuBackend } from '@surf/core';
import { gradcheckSuite, runGradcheckSuite } from '@surf/autograd';
import { describeEach, gpuBackend } from '../gpu';

// The exported suite, one jest test per case: on the CPU backend against finite differences
// (and host references / hand-worked numbers), on WebGPU against the CPU backend's results.
const cases = gradcheckSuite();
const names = cases.map((c) => [c.name] as const);

describeEach(['cpu', 'webgpu'] as const, 'gradcheck suite on %s', (kind) => {
  let backend: Backend;
  const reference = new CpuBackend();
  beforeAll(async () => {
    backend = kind === 'cpu' ? new CpuBackend() : await gpuBackend();
  });
  afterAll(() => {
    if (kind === 'webgpu') backend?.destroy();
  });

  // Coverage (every differentiable op has a case) is read from the code: gradcheck-coverage.test.ts.

  test.each(names)('%s', async (name) => {
    const [r] = await runGradcheckSuite({
      backend,
      reference: kind === 'cpu' ? undefined : reference,
      cases: cases.filter((c) => c.name === name),
    });
    expect(r.detail).toMatch(/^ok/);
    expect(r.ok).toBe(true);
    expect(r.checked).toBeGreaterThan(0);
  });
});
