import * as surf from '@surf/nn';
import { CLASSES, PIXELS } from './data/digits';

/** The example's network: 784 -> hidden... -> 10, ReLU between layers, logits out. */
export function buildMlp(hidden: readonly number[]): surf.nn.Sequential {
  const layers: surf.nn.Module[] = [];
  let width = PIXELS;
  for (const h of hidden) {
    layers.push(new surf.nn.Linear(width, h), new surf.nn.ReLU());
    width = h;
  }
  layers.push(new surf.nn.Linear(width, CLASSES));
  return new surf.nn.Sequential(...layers);
}
