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
/** torch.nn.functional.pad (PyTorch's flat list, last dim first; constant/reflect/replicate/circular). */
export { pad } from '@surf/autograd';
