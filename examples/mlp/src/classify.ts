import * as surf from '@surf/nn';
import { PIXELS } from './data/digits';

/** Class probabilities for one 28x28 digit (pixels in [0, 1]). */
export async function classify(model: surf.nn.Module, digit: Float32Array): Promise<Float32Array> {
  const probs = surf.noGrad(() => surf.tidy(() => model.forward(surf.tensor(digit).reshape([1, PIXELS])).softmax(1)));
  try {
    return (await probs.data()) as Float32Array;
  } finally {
    probs.dispose();
  }
}
