import {
  Backend,
  BackendError,
  BackendOptions,
  CpuBackend,
  ValueError,
  createBackend,
  listBackends,
  parseOptions,
  setCpuThreads,
  startCpuThreads,
} from '@surf/core';

/**
 * Which backend new tensors are created on. There is one current backend per process, as in
 * PyTorch's default device: `init()` picks it; before any init the CPU backend is created
 * lazily so `tensor(...)` just works in a script or a test.
 */
let current: Backend | null = null;
/** The CPU backend last made current: kept so CPU tensors outlive a switch to WebGPU. */
let lastCpu: CpuBackend | null = null;

export type BackendChoice = 'auto' | 'webgpu' | 'cpu';

export interface InitOptions {
  /** 'auto' (default): WebGPU when '@surf/webgpu' is imported and a hardware adapter exists, else CPU. */
  backend?: BackendChoice;
  /**
   * Let 'auto' take a software WebGPU adapter (SwiftShader, llvmpipe, WARP). Default false:
   * those emulate the GPU on the CPU and run models many times slower than the CPU backend.
   */
  allowSoftware?: boolean;
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
  /** True when the backend is a software WebGPU adapter (only when one was asked for). */
  software?: boolean;
  /** Why 'auto' fell back to the CPU, when it did. */
  fallbackReason?: string;
}

/** A WebGPU backend reports `software` (see @surf/webgpu's isSoftwareAdapter); others do not. */
function isSoftware(b: Backend): boolean {
  return (b as { software?: unknown }).software === true;
}

/** The current CPU backend when there is one (reused, so its tensors stay valid), else a new one. */
async function cpuBackend(opts: BackendOptions | undefined): Promise<Backend> {
  const alive = lastCpu && !(lastCpu as unknown as { destroyed: boolean }).destroyed;
  // cpu threads: a thread count alone keeps the backend (the count is process-wide).
  if (alive && opts !== undefined && Object.keys(opts).every((k) => k === 'threads')) {
    if (opts.threads !== undefined) setCpuThreads({ threads: opts.threads as number });
    await startCpuThreads();
    return lastCpu!;
  }
  if (opts === undefined && alive) return lastCpu!;
  const b = await createBackend('cpu', opts);
  if (b instanceof CpuBackend) lastCpu = b;
  return b;
}

/**
 * The CPU backend for `to('cpu')`: the one init()/getBackend() last used, else a new one
 * (which later CPU inits then reuse).
 */
export function defaultCpuBackend(): Backend {
  if (!lastCpu || (lastCpu as unknown as { destroyed: boolean }).destroyed) lastCpu = new CpuBackend();
  return lastCpu;
}

/**
 * Picks the backend new tensors go to. A previous WebGPU backend is destroyed (freeing device
 * memory) and its tensors become unusable; a previous CPU backend is reused by a CPU init and
 * otherwise left alive, so tensors made before init() can still be moved with `to()`.
 */
export async function init(opts: InitOptions = {}): Promise<InitResult> {
  opts = parseOptions<InitOptions>('init', opts, {
    backend: 'string',
    allowSoftware: 'boolean',
    options: 'object',
    threads: 'any', // setCpuThreads checks the range (1 to 65)
  });
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
      fallbackReason =
        "no 'webgpu' backend is registered (import '@surf/webgpu', or use '@surf/nn', which does; a bundler drops that import from a file its package's sideEffects does not list)";
      next = await cpuBackend(cpuOptions);
    } else {
      try {
        next = await createBackend('webgpu', opts.options);
        if (isSoftware(next) && !opts.allowSoftware) {
          fallbackReason = `the only WebGPU adapter, ${next.description}, is a software emulation, slower than the CPU backend (init({ backend: 'webgpu' }) or allowSoftware: true forces it)`;
          next.destroy();
          next = await cpuBackend(cpuOptions);
        }
      } catch (e) {
        fallbackReason = `WebGPU is unavailable: ${(e as Error).message}`;
        next = await cpuBackend(cpuOptions);
      }
    }
  } else {
    next = choice === 'cpu' ? await cpuBackend(cpuOptions) : await createBackend(choice, opts.options);
  }
  if (current && current !== next && current.name !== 'cpu') current.destroy();
  current = next;
  return {
    backend: next.name,
    description: next.description,
    ...(isSoftware(next) ? { software: true } : {}),
    ...(fallbackReason ? { fallbackReason } : {}),
  };
}

/** The backend new tensors are created on (the CPU backend until init() says otherwise). */
export function getBackend(): Backend {
  if (!current) current = defaultCpuBackend();
  return current;
}

/**
 * Makes an existing backend object the current one without destroying the previous one:
 * for tests and tools that drive several backends side by side (the gradcheck suite).
 * Returns the previous backend so it can be restored.
 */
export function setBackend(backend: Backend): Backend {
  if (!backend || typeof backend.elementwise !== 'function')
    throw new BackendError('setBackend: expected a Backend object');
  const prev = getBackend();
  current = backend;
  return prev;
}
