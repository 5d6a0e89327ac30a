import { WebGPUBackend, WebGPUBackendOptions, createWebGPUBackend } from '@surf/webgpu';

/**
 * A WebGPU backend for a reliability test, or null (the file's tests then return early)
 * when no adapter exists here. With CI set a missing adapter is a failure, not a skip.
 */
export async function gpuOrSkip(opts?: WebGPUBackendOptions): Promise<WebGPUBackend | null> {
  try {
    return await createWebGPUBackend(opts);
  } catch (e) {
    if (process.env.CI) throw e;
    // eslint-disable-next-line no-console
    console.warn(`skipping WebGPU reliability tests: ${(e as Error).message}`);
    return null;
  }
}

/**
 * Collects promise rejections nobody handled while a test file runs: a GPU error or a
 * device-loss promise that escapes the library shows up here.
 */
export function watchUnhandled(): { list: unknown[]; stop(): void } {
  const list: unknown[] = [];
  const on = (e: unknown) => { list.push(e); };
  process.on('unhandledRejection', on);
  return { list, stop: () => { process.off('unhandledRejection', on); } };
}
