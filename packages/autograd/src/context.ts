import { Backend, BackendError, BackendOptions, CpuBackend, ValueError, createBackend, listBackends } from '@surf/core';

/**
 * Which backend new tensors are created on. There is one current backend per process, as in
 * PyTorch's default device: `init()` picks it; before any init the CPU backend is created
 * lazily so `tensor(...)` just works in a script or a test.
 */
let current: Backend | null = null;

export type BackendChoice = 'auto' | 'webgpu' | 'cpu';

export interface InitOptions {
  /** 'auto' (default): WebGPU when '@surf/webgpu' is imported and an adapter exists, else CPU. */
  backend?: BackendChoice;
  /** Passed to the backend factory (e.g. Dawn toggles for WebGPU). */
  options?: BackendOptions;
  // cpu threads
  /** CPU backend: threads for its kernels (default min(cores, 4) in Node; 1 turns them off). */
  threads?: number;
}

export interface InitResult {
  /** 'cpu' or 'webgpu': the backend now in use. */
  backend: string;
  /** The device, e.g. the GPU adapter's name. */
  description: string;
  /** Why 'auto' fell back to the CPU, when it did. */
  fallbackReason?: string;
}

/**
 * Picks the backend new tensors go to. Tensors made on a previous backend are unusable
 * afterwards (that backend is destroyed, freeing its memory); re-create them.
 */
export async function init(opts: InitOptions = {}): Promise<InitResult> {
  const choice = opts.backend ?? 'auto';
  if (choice !== 'auto' && choice !== 'webgpu' && choice !== 'cpu') {
    throw new ValueError(`init: unknown backend ${JSON.stringify(choice)}; expected 'auto', 'webgpu' or 'cpu'`);
  }
  let next: Backend;
  let fallbackReason: string | undefined;
  // cpu threads: only the CPU factory takes `threads`.
  const cpuOptions = opts.threads === undefined ? opts.options : { ...opts.options, threads: opts.threads };
  if (choice === 'auto') {
    if (!listBackends().includes('webgpu')) {
      fallbackReason = "no 'webgpu' backend is registered (import '@surf/webgpu', or use '@surf/nn', which does)";
      next = await createBackend('cpu', cpuOptions);
    } else {
      try {
        next = await createBackend('webgpu', opts.options);
      } catch (e) {
        fallbackReason = `WebGPU is unavailable: ${(e as Error).message}`;
        next = await createBackend('cpu', cpuOptions);
      }
    }
  } else {
    next = await createBackend(choice, choice === 'cpu' ? cpuOptions : opts.options);
  }
  if (current && current !== next) current.destroy();
  current = next;
  return { backend: next.name, description: next.description, ...(fallbackReason ? { fallbackReason } : {}) };
}

/** The backend new tensors are created on (the CPU backend until init() says otherwise). */
export function getBackend(): Backend {
  if (!current) current = new CpuBackend();
  return current;
}

/**
 * Makes an existing backend object the current one without destroying the previous one:
 * for tests and tools that drive several backends side by side (the gradcheck suite).
 * Returns the previous backend so it can be restored.
 */
export function setBackend(backend: Backend): Backend {
  if (!backend || typeof backend.elementwise !== 'function') throw new BackendError('setBackend: expected a Backend object');
  const prev = getBackend();
  current = backend;
  return prev;
}
