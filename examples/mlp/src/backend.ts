import * as surf from '@surf/nn';
import type { BackendChoice } from './args';

export interface BackendInfo {
  name: string;
  description: string;
  fallbackReason?: string;
  /** For the user, e.g. "WebGPU (NVIDIA GeForce RTX 4070)", with the fallback reason under it. */
  line: string;
}

const SOFTWARE = /swiftshader|llvmpipe|lavapipe|microsoft basic render|\bwarp\b/i;

/**
 * Picks the backend. 'auto' takes a WebGPU adapter when one exists, except a software
 * emulation of a GPU (SwiftShader and the like): that runs the same kernels far slower than
 * the CPU backend's plain loops (here ~2 steps/s against ~60), so 'auto' uses the CPU and
 * says why; --backend webgpu still gets it.
 */
export async function setupBackend(choice: BackendChoice): Promise<BackendInfo> {
  let r = await surf.init({ backend: choice });
  let fallbackReason = r.fallbackReason;
  if (choice === 'auto' && r.backend === 'webgpu' && SOFTWARE.test(r.description)) {
    const adapter = r.description.replace(/^WebGPU:\s*/, '');
    r = await surf.init({ backend: 'cpu' });
    fallbackReason = `WebGPU skipped: its only adapter, ${adapter}, is a software emulation slower than the CPU backend (--backend webgpu forces it)`;
  }
  const line = r.backend === 'webgpu'
    ? `WebGPU (${r.description.replace(/^WebGPU:\s*/, '')})`
    : `${r.description}${fallbackReason ? `\n         ${fallbackReason}` : ''}`;
  return { name: r.backend, description: r.description, fallbackReason, line };
}
