/**
 * @surf/nn: everything an app needs in one import (`import * as surf from '@surf/nn'`): the
 * whole tensor API of @surf/autograd, plus modules and layers (`nn`), optimizers (`optim`),
 * losses, the DataLoader and safetensors save/load. Importing it registers the WebGPU
 * backend, so `init({ backend: 'auto' })` finds the GPU. See docs/api-nn.md.
 */
import '@surf/webgpu';

export * from '@surf/autograd';
export * as nn from './nn';
export * as optim from './optim';
export { Module } from './module';
export type { StateDict, LoadResult } from './module';
export type { ForwardHook, ForwardPreHook, BackwardHook, RemovableHandle } from './hooks';
// summary
export type { ModelSummary, SummaryRow, SummaryOptions } from './summary';
export {
  mseLoss,
  l1Loss,
  crossEntropy,
  nllLoss,
  binaryCrossEntropyWithLogits,
  binaryCrossEntropy,
  huberLoss,
  smoothL1Loss,
  klDivLoss,
} from './losses';
export type { Reduction, LossOptions, CrossEntropyOptions, KLDivReduction } from './losses';
export { DataLoader } from './data/dataloader';
export { TensorDataset, Subset, randomSplit } from './data/dataset';
export type { DataLoaderOptions, DataLoaderState } from './data/dataloader';
export { save, load, loadMetadata, loadHeader } from './safetensors/serialize';
export type { Saveable, SaveOptions } from './safetensors/serialize';
export type { StoreDType, SafeDType } from './safetensors/dtypes';
export type { TensorHeader } from './safetensors/format';
export { saveFile, loadFile, saveCheckpointFile, loadCheckpointFile } from './safetensors/node-files';
export { saveCheckpoint, loadCheckpoint } from './safetensors/checkpoint';
export type { CheckpointParts, Scheduler } from './safetensors/checkpoint';
export {
  SurfError,
  ShapeError,
  DTypeError,
  ValueError,
  SurfTypeError,
  DisposedError,
  BackendError,
  DeviceLostError,
} from '@surf/core';
// map-style datasets over host data, samplers, collate
export { Dataset, ArrayDataset, FunctionDataset, ConcatDataset } from './data/map-dataset';
export {
  Sampler,
  SequentialSampler,
  RandomSampler,
  SubsetRandomSampler,
  WeightedRandomSampler,
  BatchSampler,
} from './data/samplers';
export { defaultCollate } from './data/collate';
export { MapDataLoader } from './data/map-loader';
export type { MapDataLoaderOptions } from './data/map-loader';
