export { gpuOrSkip } from '../../../test-support/gpu';
