import * as surf from '@surf/nn';
import type { BackendChoice } from './args';

export interface BackendInfo {
  name: string;
  description: string;
  fallbackReason?: string;
  /** For the user, e.g. "WebGPU (NVIDIA GeForce RTX 4070)", with the fallback reason under it. */
  line: string;
}

/**
 * Picks the backend with init(): 'auto' takes a hardware WebGPU adapter when one exists and
 * otherwise the CPU backend, saying why (a software adapter such as SwiftShader runs the same
 * kernels far slower than the CPU backend); --backend webgpu still gets a software adapter.
 */
export async function setupBackend(choice: BackendChoice): Promise<BackendInfo> {
  const r = await surf.init({ backend: choice });
  const gpu = r.description.replace(/^WebGPU:\s*/, '');
  const line =
    r.backend === 'webgpu'
      ? `WebGPU (${gpu}${r.software ? ', a software adapter' : ''})`
      : `${r.description}${r.fallbackReason ? `\n         ${r.fallbackReason}` : ''}`;
  return { name: r.backend, description: r.description, fallbackReason: r.fallbackReason, line };
}
