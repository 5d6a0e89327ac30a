/** `nn.functional`: PyTorch's torch.nn.functional under camelCase names (the losses, then the rest). */
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
// The rest of torch.nn.functional: activations, dropout, linear and convolution, pooling,
// normalisation, embedding, padding, resampling, distances and attention.
export {
  relu,
  sigmoid,
  tanh,
  silu,
  leakyRelu,
  gelu,
  softmax,
  logSoftmax,
  softmin,
  elu,
  selu,
  celu,
  softplus,
  mish,
  hardswish,
  hardsigmoid,
  relu6,
  hardtanh,
  softsign,
  tanhshrink,
  logsigmoid,
  softshrink,
  hardshrink,
  threshold,
  glu,
  prelu,
} from './functional/activations';
export { dropout } from './functional/dropout';
export {
  linear,
  conv1d,
  conv2d,
  convTranspose2d,
  maxPool2d,
  avgPool2d,
  adaptiveAvgPool2d,
  batchNorm,
  oneHot,
  scaledDotProductAttention,
} from '@surf/autograd';
export { maxPool1d, avgPool1d, adaptiveAvgPool1d, adaptiveMaxPool2d } from './functional/pooling';
export type { Pool1dOptions } from './functional/pooling';
export { layerNorm, rmsNorm, groupNorm, instanceNorm, normalize } from './functional/normalization';
export type { InstanceNormOptions } from './functional/normalization';
export { embedding } from './functional/embedding';
/** torch.nn.functional.pad (PyTorch's flat list, last dim first; constant/reflect/replicate/circular). */
export { pad } from '@surf/autograd';
export { interpolate, pixelShuffle, pixelUnshuffle } from './functional/resample';
export type { InterpolateOptions, InterpolateMode } from './functional/resample';
export { cosineSimilarity, pairwiseDistance } from './functional/distance';
