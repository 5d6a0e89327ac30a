import { CpuBackend } from '@surf/core';
import { setBackend } from '@surf/autograd';
import type { WebGPUBackend } from '@surf/webgpu';
import { disagreements } from './fuzz/agree';
import { checkAgainstOracle, makeCase, runCase } from './fuzz/run';
import { gpuAvailable, gpuBackend, testGpu, watchUnhandled } from './gpu';

/**
 * The fuzz cases of fuzz-cpu.test.ts (a different seed range) run on the CPU and on WebGPU:
 * same errors, same shapes and dtypes, values equal (bit-exact where the oracle knows the
 * value is exact), same gradients; no GPU validation error and no unhandled rejection
 * escapes, and the GPU leaks no buffer. Shapes are tiny: SwiftShader is slow.
 */
const CASES = 400;
const FIRST_SEED = 100001;

let gpu: WebGPUBackend;
const cpu = new CpuBackend();
const watch = watchUnhandled();

beforeAll(async () => {
  if (gpuAvailable) gpu = await gpuBackend();
});
afterAll(() => {
  gpu?.destroy();
  watch.stop();
});

testGpu(`fuzz: ${CASES} random op chains agree between the CPU and WebGPU backends`, async () => {
  const prev = setBackend(cpu);
  const failures: string[] = [];
  try {
    for (let seed = FIRST_SEED; seed < FIRST_SEED + CASES; seed++) {
      const c = makeCase(seed);
      setBackend(cpu);
      const a = await runCase(c);
      setBackend(gpu);
      const b = await runCase(c);
      // A GPU error from this case surfaces at the next op or sync: make it this case's.
      try {
        await gpu.sync();
      } catch (e) {
        failures.push(`seed ${seed}: GPU error after the case: ${(e as Error).message}`);
      }
      failures.push(...disagreements(c, a, b));
      failures.push(...checkAgainstOracle(c, b).map((f) => `webgpu: ${f}`));
    }
  } finally {
    setBackend(prev);
  }
  expect(failures.slice(0, 30)).toEqual([]);
  expect(watch.list).toEqual([]);
});
