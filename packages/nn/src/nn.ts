/** The `nn` namespace: Module, layers and initialisers (PyTorch's torch.nn). */
export { Module, parameter, isParameter } from './module';
export type { StateDict, LoadResult } from './module';
export { Linear } from './layers/linear';
export { Sequential } from './layers/sequential';
export { ReLU, LeakyReLU, GELU, Tanh, Sigmoid, Softmax, SiLU, LogSoftmax } from './layers/activations';
export { Dropout } from './layers/dropout';
export { LayerNorm } from './layers/layer-norm';
export { Embedding } from './layers/embedding';
export { Flatten } from './layers/flatten';
export * as init from './init';
export { ModuleList, ModuleDict, Identity } from './layers/containers';
export { RMSNorm, GroupNorm } from './layers/norms';
export {
  CrossEntropyLoss,
  NLLLoss,
  MSELoss,
  L1Loss,
  BCELoss,
  BCEWithLogitsLoss,
  HuberLoss,
  SmoothL1Loss,
  KLDivLoss,
} from './layers/losses';
export * as functional from './functional';
// attention
export { MultiheadAttention } from './layers/multihead-attention';
export type { MultiheadAttentionOptions, MultiheadAttentionForwardOptions } from './layers/multihead-attention';
export { Conv1d, Conv2d, ConvTranspose2d } from './layers/conv';
export type { ConvModuleOptions, ConvTransposeModuleOptions } from './layers/conv';
export { MaxPool2d, AvgPool2d, AdaptiveAvgPool2d } from './layers/pool';
export { BatchNorm1d, BatchNorm2d } from './layers/batch-norm';
export type { BatchNormModuleOptions } from './layers/batch-norm';
// recurrent
export { RNN, LSTM, GRU } from './layers/rnn';
export type { RNNOptions, ElmanRNNOptions } from './layers/rnn';
export { RNNCell, LSTMCell, GRUCell } from './layers/rnn-cells';
// activations composed in nn.functional
export {
  ELU,
  SELU,
  CELU,
  Softplus,
  Mish,
  PReLU,
  Hardswish,
  Hardsigmoid,
  ReLU6,
  Softsign,
  Tanhshrink,
  Hardtanh,
  LogSigmoid,
  Softshrink,
  Hardshrink,
  Threshold,
  Softmin,
  GLU,
} from './layers/activation-layers';
// resampling, 1-d and adaptive max pools, instance norm
export { Upsample, PixelShuffle, PixelUnshuffle } from './layers/resample';
export { MaxPool1d, AvgPool1d, AdaptiveAvgPool1d, AdaptiveMaxPool2d } from './layers/pool1d';
export type { MaxPool1dOptions, AvgPool1dOptions } from './layers/pool1d';
export { InstanceNorm1d, InstanceNorm2d } from './layers/instance-norm';
export type { InstanceNormModuleOptions } from './layers/instance-norm';
export { Unflatten } from './layers/unflatten';
// transformer layers
export {
  TransformerEncoderLayer,
  TransformerDecoderLayer,
  TransformerEncoder,
  TransformerDecoder,
} from './layers/transformer';
export type {
  TransformerLayerOptions,
  TransformerActivation,
  EncoderLayerForwardOptions,
  DecoderLayerForwardOptions,
} from './layers/transformer';
export { ParameterList, ParameterDict } from './layers/parameter-containers';
