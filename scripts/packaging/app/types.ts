// Types an app reaches through the packages alone: WebGPU's globals (GPUDevice) come with
// @surf/webgpu, the error classes and the Tensor API with @surf/nn; strict settings only.
import { ShapeError, SurfError, Tensor, ones } from '@surf/nn';
import type { WebGPUBackend } from '@surf/webgpu';
import { CpuBackend } from '@surf/core';

export function deviceOf(b: WebGPUBackend): GPUDevice | undefined {
  return (b as unknown as { device?: GPUDevice }).device;
}
export const cpu: CpuBackend = new CpuBackend();
export function isShapeError(e: unknown): e is ShapeError {
  return e instanceof SurfError && e instanceof ShapeError;
}
export const t: Tensor = ones([2, 3]);
