import { Digits, MnistSplit, PIXELS } from './digits';
import { seededPermutation } from './rng';

export const DEFAULT_SPLIT_SEED = 2024;

/**
 * Shuffles all digits with a fixed seed and cuts them into train and test sets. The split
 * seed is separate from the training seed on purpose: every run, whatever its --seed, is
 * scored on the same held-out digits.
 */
export function splitDigits(all: Digits, trainCount: number, seed = DEFAULT_SPLIT_SEED): MnistSplit {
  if (trainCount < 1 || trainCount >= all.count) {
    throw new Error(`splitDigits: trainCount ${trainCount} must be in [1, ${all.count - 1}]`);
  }
  const order = seededPermutation(all.count, seed);
  const pick = (from: number, to: number): Digits => {
    const count = to - from;
    const pixels = new Uint8Array(count * PIXELS);
    const labels = new Uint8Array(count);
    for (let i = 0; i < count; i++) {
      const src = order[from + i];
      pixels.set(all.pixels.subarray(src * PIXELS, (src + 1) * PIXELS), i * PIXELS);
      labels[i] = all.labels[src];
    }
    return { count, pixels, labels };
  };
  return { train: pick(0, trainCount), test: pick(trainCount, all.count) };
}
