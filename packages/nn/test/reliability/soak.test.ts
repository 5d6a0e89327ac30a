import { CpuBackend } from '@surf/core';
import { setBackend } from '@surf/nn';
import type { WebGPUBackend } from '@surf/webgpu';
import { gpuBackend, testGpu } from '../../../../test-support/gpu';
import { runSoak } from '../../../../test-support/soak-loop';

/**
 * The memory soak of test-support/soak-loop.ts (bench/src/soak.ts runs 10,000 steps), shortened: the MNIST-shaped MLP
 * trains on synthetic data and memory() (live tensors, buffers, bytes) must not move by one
 * after the first step. The loss must fall, so the loop really trains.
 */
async function soakOn(backend: CpuBackend | WebGPUBackend, steps: number, hidden?: number): Promise<void> {
  const prev = setBackend(backend);
  try {
    const r = await runSoak({ steps, readEvery: 20, hidden });
    expect(r.steps).toBe(steps);
    expect(
      r.firstMovedStep === null
        ? 'flat'
        : `moved at step ${r.firstMovedStep}: ${JSON.stringify(r.first)} -> ${JSON.stringify(r.movedTo)}`,
    ).toBe('flat');
    expect(r.lastLoss).toBeLessThan(r.firstLoss * 0.5);
    // Everything the loop made is freed at the end.
    expect(backend.memory().buffers).toBe(0);
  } finally {
    setBackend(prev);
  }
}

test('soak: 300 steps of the MNIST-shaped MLP on the CPU keep memory flat', async () => {
  // 32 hidden units on the CPU (memory flatness does not depend on the width; a quarter of the
  // arithmetic). WebGPU keeps the CLI soak's 128: in 60 steps a narrower net does not halve its loss.
  await soakOn(new CpuBackend(), 300, 32);
});

testGpu('soak: 60 steps of the MNIST-shaped MLP on WebGPU keep memory flat', async () => {
  const gpu = await gpuBackend();
  try {
    await soakOn(gpu, 60);
  } finally {
    gpu.destroy();
  }
});
