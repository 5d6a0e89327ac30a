import { assertCase, opCaseGroups, opCases } from '@surf/core/testing';
import type { WebGPUBackend } from '@surf/webgpu';
import { describeGpu, gpuBackend } from './gpu';

// The shared op table (the same one ops-cpu.test.ts runs) against the WebGPU backend.
let backend: WebGPUBackend;
beforeAll(async () => {
  backend = await gpuBackend();
});
afterAll(() => backend?.destroy());

describeGpu.each(opCaseGroups())('webgpu %s', (group) => {
  it.each(opCases({ groups: [group] }).map((c) => [c.name, c] as const))('%s', async (_name, c) => {
    await assertCase(c, backend);
  });
});
