import type { Backend } from './backend';
import { CpuBackend } from './cpu';
import { BackendError } from './errors';

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
    const hint = name === 'webgpu' ? " (import '@surf/webgpu', or use '@surf/nn', which does)" : '';
    throw new BackendError(`createBackend: no backend named '${name}' is registered${hint}; registered: ${listBackends().join(', ')}`);
  }
  return f(opts);
}

registerBackend('cpu', async () => new CpuBackend());
