import * as surf from '@surf/nn';
import { CLASSES, SIDE } from './data/digits';

const { nn } = surf;

/**
 * The MNIST CNN, shared by `npm run cnn` (examples/cnn re-exports it) and the browser page:
 * blocks of conv 3x3 (pad 1) - BatchNorm - ReLU - max pool 2x2, then one linear layer.
 * Channels [16, 32] give 28 -> 14 -> 7 and 20,490 parameters, 1/5 of the default MLP's.
 * It lives beside the MLP so the page (in this package) can build it without a package cycle.
 */
export const DEFAULT_CHANNELS = [16, 32];

/** [N, 784] rows -> [N, 1, 28, 28] images: lets the CNN take the MLP's data, accuracy and classify code unchanged. */
export class ToImages extends surf.Module {
  forward(x: surf.Tensor): surf.Tensor {
    return x.reshape([x.shape[0], 1, SIDE, SIDE]);
  }
}

export interface CnnOptions {
  /** Dropout before the linear layer (0 = none). */
  dropout?: number;
  /** Start with ToImages, so the network takes [N, 784] rows (the page, the MLP's helpers). */
  rows?: boolean;
}

export function buildCnn(channels: readonly number[] = DEFAULT_CHANNELS, opts: CnnOptions = {}): surf.nn.Sequential {
  if (channels.length < 1 || channels.length > 4 || !channels.every((c) => Number.isInteger(c) && c > 0)) {
    throw new surf.ValueError(
      `buildCnn: channels ${JSON.stringify(channels)}; expected 1 to 4 positive integers (28 px halves at each block)`,
    );
  }
  const layers: surf.nn.Module[] = opts.rows ? [new ToImages()] : [];
  let inC = 1;
  let side = SIDE;
  for (const c of channels) {
    // No conv bias: the BatchNorm after it subtracts any constant (PyTorch's usual bias=False).
    layers.push(
      new nn.Conv2d(inC, c, 3, { padding: 1, bias: false }),
      new nn.BatchNorm2d(c),
      new nn.ReLU(),
      new nn.MaxPool2d(2),
    );
    inC = c;
    side = Math.floor(side / 2);
  }
  layers.push(new nn.Flatten());
  if (opts.dropout) layers.push(new nn.Dropout(opts.dropout));
  layers.push(new nn.Linear(inC * side * side, CLASSES));
  return new nn.Sequential(...layers);
}

/** The first conv layer of a network built by buildCnn, or null for another network (the MLP). */
export function firstConv(model: surf.nn.Module): surf.nn.Conv2d | null {
  for (const m of model.modules()) if (m instanceof nn.Conv2d) return m;
  return null;
}
