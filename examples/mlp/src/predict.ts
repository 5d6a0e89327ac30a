import { readFileSync } from 'node:fs';
import { MnistSplit } from './data/digits';
import { loadModel } from './saved-model';
import { accuracy, uploadDigits } from './train';

export interface PredictResult {
  architecture: string;
  testAccuracy: number;
  savedAccuracy: number | undefined;
  count: number;
}

/** Loads a saved model and scores it on the test digits (on the current backend). */
export async function predictFile(path: string, data: MnistSplit): Promise<PredictResult> {
  const { model, hidden, savedAccuracy } = loadModel(new Uint8Array(readFileSync(path)));
  const test = uploadDigits(data.test);
  try {
    return {
      architecture: [784, ...hidden, 10].join('-'),
      testAccuracy: await accuracy(model, test.x, test.y),
      savedAccuracy,
      count: data.test.count,
    };
  } finally {
    test.x.dispose();
    test.y.dispose();
    model.parameters().forEach((p) => p.dispose());
  }
}
