import { assertCase, opCaseGroups, opCases } from '@surf/core/testing';
import type { WebGPUBackend } from '@surf/webgpu';
import { gpuOrSkip } from './gpu';

// The shared op table (the same one ops-cpu.test.ts runs) against the WebGPU backend.
let backend: WebGPUBackend | null = null;
beforeAll(async () => {
  backend = await gpuOrSkip();
});
afterAll(() => backend?.destroy());

describe.each(opCaseGroups())('webgpu %s', (group) => {
  it.each(opCases({ groups: [group] }).map((c) => [c.name, c] as const))('%s', async (_name, c) => {
    if (!backend) return;
    await assertCase(c, backend);
  });
});
