import type { Backend } from './backend';
import { CpuBackend } from './cpu';
import { BackendError } from './errors';
import { startCpuThreads } from './cpu/threads/config';

/**
 * Backends register a factory by name. core registers 'cpu'; importing @surf/webgpu registers
 * 'webgpu'. This keeps the layering strict: autograd asks the registry, never imports a GPU
 * package.
 */
export interface BackendOptions {
  /** Dawn toggles and other backend-specific settings. */
  [key: string]: unknown;
}

export type BackendFactory = (opts?: BackendOptions) => Promise<Backend>;

const factories = new Map<string, BackendFactory>();

export function registerBackend(name: string, factory: BackendFactory): void {
  factories.set(name, factory);
}

export function listBackends(): string[] {
  return [...factories.keys()];
}

export async function createBackend(name: string, opts?: BackendOptions): Promise<Backend> {
  const f = factories.get(name);
  if (!f) {
    const hint =
      name === 'webgpu'
        ? " (import '@surf/webgpu', or use '@surf/nn', which does; a bundler drops that import from a file its package's sideEffects does not list)"
        : '';
    throw new BackendError(
      `createBackend: no backend named '${name}' is registered${hint}; registered: ${listBackends().join(', ')}`,
    );
  }
  return f(opts);
}

// cpu threads: `threads` (a positive integer) sets the CPU kernels' thread count; the
// factory waits until the workers run.
registerBackend('cpu', async (opts) => {
  const backend = new CpuBackend({ threads: opts?.threads as number | undefined });
  await startCpuThreads();
  return backend;
});
