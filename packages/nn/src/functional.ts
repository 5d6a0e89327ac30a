/** `nn.functional`: the loss functions under PyTorch's torch.nn.functional names (camelCase). */
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
