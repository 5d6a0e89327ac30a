export * from './errors';
export * from './dtype';
export * from './shape';
export { View } from './view';
export * from './expr';
export type { Backend, Storage, Strided, ReduceOp, MemoryInfo, MatmulEpilogue } from './backend';
export { NDArray } from './ndarray';
export { CpuBackend } from './cpu';
export * from './random';
export * from './registry';
export { checkGatherArgs, checkMatmulArgs, checkOperand, checkOperandShape, checkReduceArgs } from './validate';
// conv (cnn)
export { checkConvArgs, checkConvEpilogue, convNd, convOutSize } from './conv';
export type { ConvParams } from './conv';
