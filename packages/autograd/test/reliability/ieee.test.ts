import { CpuBackend } from '@surf/core';
import { memory, setBackend } from '@surf/autograd';
import type { WebGPUBackend } from '@surf/webgpu';
import { gpuAvailable, gpuBackend, testGpu, watchUnhandled } from './gpu';
import { IEEE_CASES, IeeeResult, runIeeeCases } from '../../../../test-support/ieee-cases';

/** The IEEE edge cases of ieee-cases.ts give the documented results on the CPU and on WebGPU. */
let gpu: WebGPUBackend;
const watch = watchUnhandled();
beforeAll(async () => {
  if (gpuAvailable) gpu = await gpuBackend();
});
afterAll(() => {
  gpu?.destroy();
  watch.stop();
});

const bad = (rs: IeeeResult[]) =>
  rs.filter((r) => !r.ok).map((r) => `${r.name}: ${r.message} (got ${JSON.stringify(r.got)})`);

async function runOn(backend: CpuBackend | WebGPUBackend): Promise<IeeeResult[]> {
  const prev = setBackend(backend);
  try {
    const before = memory();
    const rs = await runIeeeCases();
    const after = memory();
    expect([after.tensors - before.tensors, after.buffers - before.buffers]).toEqual([0, 0]);
    return rs;
  } finally {
    setBackend(prev);
  }
}

test(`ieee: ${IEEE_CASES.length} edge cases give the documented results on the CPU`, async () => {
  expect(bad(await runOn(new CpuBackend()))).toEqual([]);
});

testGpu(`ieee: ${IEEE_CASES.length} edge cases give the documented results on WebGPU`, async () => {
  expect(bad(await runOn(gpu))).toEqual([]);
  await gpu.sync();
  expect(watch.list).toEqual([]);
});
