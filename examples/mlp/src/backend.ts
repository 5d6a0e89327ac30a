import * as surf from '@surf/nn';
import type { BackendChoice } from './args';

export interface BackendInfo {
  name: string;
  description: string;
  fallbackReason?: string;
}

/** Picks the backend and says which in one line, e.g. "webgpu (SwiftShader Device)". */
export async function setupBackend(choice: BackendChoice): Promise<BackendInfo & { line: string }> {
  const r = await surf.init({ backend: choice });
  const line = r.backend === 'webgpu'
    ? `WebGPU (${r.description.replace(/^WebGPU:\s*/, '')})`
    : `CPU backend (${r.description})${r.fallbackReason ? `; ${r.fallbackReason}` : ''}`;
  return { name: r.backend, description: r.description, fallbackReason: r.fallbackReason, line };
}
