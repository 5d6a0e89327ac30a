/** Side of an MNIST image, and pixels per image. */
export const SIDE = 28;
export const PIXELS = SIDE * SIDE;
export const CLASSES = 10;

/**
 * A set of digits in compact form: one byte per pixel (MNIST's own 0..255 grey levels) and
 * one byte per label. 10,000 digits take 7.8 MB this way instead of 21 MB of JSON.
 */
export interface Digits {
  readonly count: number;
  /** count * 784 grey levels, row-major, 0 = background, 255 = ink. */
  readonly pixels: Uint8Array;
  /** count labels 0..9. */
  readonly labels: Uint8Array;
}

export interface MnistSplit {
  readonly train: Digits;
  readonly test: Digits;
}

/** Pixels scaled to [0, 1] as float32, the network's input. */
export function toFloatPixels(d: Digits): Float32Array {
  const out = new Float32Array(d.pixels.length);
  for (let i = 0; i < out.length; i++) out[i] = d.pixels[i] / 255;
  return out;
}

/** Labels as int32, the class indices cross-entropy expects. */
export function toInt32Labels(d: Digits): Int32Array {
  return Int32Array.from(d.labels);
}

/** The first `n` digits of a set (for short test runs). */
export function take(d: Digits, n: number): Digits {
  const count = Math.min(n, d.count);
  return { count, pixels: d.pixels.subarray(0, count * PIXELS), labels: d.labels.subarray(0, count) };
}

/** One digit's pixels scaled to [0, 1]. */
export function digitAt(d: Digits, i: number): Float32Array {
  const out = new Float32Array(PIXELS);
  for (let k = 0; k < PIXELS; k++) out[k] = d.pixels[i * PIXELS + k] / 255;
  return out;
}
