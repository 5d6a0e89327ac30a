// The shared WebGPU test policy (test-support/gpu.ts), as every package's tests use it.
export { gpuBackend, testGpu } from '../../../test-support/gpu';
