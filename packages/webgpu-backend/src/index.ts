import { registerBackend } from '@surf/core';
import { WebGPUBackendOptions, createWebGPUBackend } from './backend';

export { WebGPUBackend, createWebGPUBackend, isSoftwareAdapter } from './backend';
export type { WebGPUBackendOptions, WebGPUStats } from './backend';
export { isWebGPUAvailable, requestWebGPUAdapter, installHint } from './device';
export { DEFAULT_MATMUL, chooseMatmulConfig } from './kernels/matmul/matmul';
export { bucketedMatmulConfig } from './tune/choose';
export { MATMUL_CANDIDATES, TUNE_PROBLEMS, autoTune, tableChooser, tuneKey, tuneMatmul } from './tune/tuner';
export { readTuneCache, writeTuneCache } from './tune/cache';
export type { TunedEntry, TunedTable, TuneOptions } from './tune/tuner';
export type { MatmulConfig, MatmulConfigOption } from './kernels/matmul/matmul';
export type { AttnTile, AttnTiledConfig } from './kernels/attention/tiled';

registerBackend('webgpu', (opts) => createWebGPUBackend(opts as WebGPUBackendOptions));
