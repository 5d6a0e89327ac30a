import { WebGPUBackend, WebGPUBackendOptions, createWebGPUBackend } from '@surf/webgpu';

/**
 * The WebGPU backend for a test file, or null (its tests then return early) when no adapter
 * exists here. With CI set a missing adapter is a failure, not a skip. Shared by every
 * package's tests so that policy lives in one place.
 */
export async function gpuOrSkip(opts?: WebGPUBackendOptions): Promise<WebGPUBackend | null> {
  try {
    return await createWebGPUBackend(opts);
  } catch (e) {
    if (process.env.CI) throw e;
    // eslint-disable-next-line no-console
    console.warn(`skipping WebGPU tests: ${(e as Error).message}`);
    return null;
  }
}
