// The shared WebGPU-or-skip policy (test-support/gpu.ts), as every package's tests use it.
export { gpuOrSkip } from '../../../test-support/gpu';
