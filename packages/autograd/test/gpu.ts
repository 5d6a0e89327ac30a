import type { Backend } from '@surf/core';
import { createWebGPUBackend } from '@surf/webgpu';

/**
 * The WebGPU backend for a test file, or null (its tests then return early) when no adapter
 * exists here. With CI set a missing adapter is a failure, not a skip.
 */
export async function gpuOrSkip(): Promise<Backend | null> {
  try {
    return await createWebGPUBackend();
  } catch (e) {
    if (process.env.CI) throw e;
    // eslint-disable-next-line no-console
    console.warn(`skipping WebGPU tests: ${(e as Error).message}`);
    return null;
  }
}
