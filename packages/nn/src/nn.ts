/** The `nn` namespace: Module, layers and initialisers (PyTorch's torch.nn). */
export { Module, parameter } from './module';
export type { StateDict, LoadResult } from './module';
export { Linear } from './layers/linear';
export { Sequential } from './layers/sequential';
export { ReLU, LeakyReLU, GELU, Tanh, Sigmoid, Softmax } from './layers/activations';
export { Dropout } from './layers/dropout';
export { LayerNorm } from './layers/layer-norm';
export { Embedding } from './layers/embedding';
export { Flatten } from './layers/flatten';
export * as init from './init';
// attention
export { MultiheadAttention } from './layers/multihead-attention';
export type { MultiheadAttentionOptions, MultiheadAttentionForwardOptions } from './layers/multihead-attention';
// cnn
export { Conv1d, Conv2d, ConvTranspose2d } from './layers/conv';
export type { ConvModuleOptions, ConvTransposeModuleOptions } from './layers/conv';
export { MaxPool2d, AvgPool2d, AdaptiveAvgPool2d } from './layers/pool';
export { BatchNorm1d, BatchNorm2d } from './layers/batch-norm';
export type { BatchNormModuleOptions } from './layers/batch-norm';
