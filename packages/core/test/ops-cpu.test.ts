import { CpuBackend } from '@surf/core';
import { assertCase, opCaseGroups, opCases } from '@surf/core/testing';

// The shared op table against the CPU backend; the WebGPU suite is this file with its backend.
const backend = new CpuBackend();

describe.each(opCaseGroups())('cpu %s', (group) => {
  it.each(opCases({ groups: [group] }).map((c) => [c.name, c] as const))('%s', async (_name, c) => {
    await assertCase(c, backend);
  });
});
