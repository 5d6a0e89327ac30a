import * as surf from '@surf/nn';
import { CLASSES, PIXELS } from './data/digits';
import { buildMlp } from './model';

/**
 * The model file: the Sequential's state dict as safetensors ('0.weight', '0.bias',
 * '2.weight', ... as PyTorch names them, so torch can load it), with the test accuracy at save
 * time in the metadata so --predict can show both numbers.
 */
export async function saveModel(
  model: surf.nn.Sequential,
  meta: { hidden: number[]; testAccuracy: number },
): Promise<Uint8Array> {
  return surf.save(model, {
    architecture: [PIXELS, ...meta.hidden, CLASSES].join('-'),
    testAccuracy: String(meta.testAccuracy),
  });
}

export interface LoadedModel {
  model: surf.nn.Sequential;
  hidden: number[];
  savedAccuracy: number | undefined;
}

/** Rebuilds the MLP from a file: its layer sizes come from the weights' shapes. */
export function loadModel(bytes: Uint8Array): LoadedModel {
  const dict = surf.load(bytes);
  try {
    const hidden: number[] = [];
    let width = PIXELS;
    for (let i = 0; ; i += 2) {
      const w = dict[`${i}.weight`];
      if (!w) throw new Error(`model file: no '${i}.weight'; expected an MLP saved by this example`);
      if (w.ndim !== 2 || w.shape[1] !== width)
        throw new Error(`model file: '${i}.weight' has shape [${w.shape}]; expected [*, ${width}]`);
      width = w.shape[0];
      if (!dict[`${i + 2}.weight`]) break;
      hidden.push(width);
    }
    if (width !== CLASSES) throw new Error(`model file: the last layer has ${width} outputs; expected ${CLASSES}`);
    const model = buildMlp(hidden);
    model.loadStateDict(dict);
    const acc = Number(surf.loadMetadata(bytes)?.testAccuracy);
    return { model, hidden, savedAccuracy: Number.isFinite(acc) ? acc : undefined };
  } finally {
    Object.values(dict).forEach((t) => t.dispose());
  }
}
