import * as surf from '@surf/nn';
import { RandomShift } from '../src/augment';

// Reference: shifting a 28x28 image on the host, pixel by pixel, filling with zeros.
function hostShift(img: Float32Array, dy: number, dx: number): Float32Array {
  const out = new Float32Array(784);
  for (let y = 0; y < 28; y++)
    for (let x = 0; x < 28; x++) {
      const sy = y - dy,
        sx = x - dx;
      if (sy >= 0 && sy < 28 && sx >= 0 && sx < 28) out[y * 28 + x] = img[sy * 28 + sx];
    }
  return out;
}

test('every row of a shifted batch is its digit moved by one of the allowed offsets', async () => {
  await surf.init({ backend: 'cpu' });
  const n = 8;
  const host = new Float32Array(n * 784).map((_, i) => ((i * 7919) % 97) / 97);
  const x = surf.tidy(() => surf.tensor(host).reshape([n, 784]));
  const shift = new RandomShift(2, 11, 4);
  const seen = new Set<string>();
  for (let round = 0; round < 5; round++) {
    const y = shift.apply(x);
    expect(y.shape).toEqual([n, 784]);
    const got = (await y.data()) as Float32Array;
    y.dispose();
    for (let r = 0; r < n; r++) {
      const row = got.subarray(r * 784, (r + 1) * 784);
      const src = host.subarray(r * 784, (r + 1) * 784);
      let match: string | undefined;
      for (let dy = -2; dy <= 2 && !match; dy++)
        for (let dx = -2; dx <= 2 && !match; dx++) {
          const ref = hostShift(src, dy, dx);
          if (ref.every((v, i) => v === row[i])) match = `${dy},${dx}`;
        }
      expect(match).toBeDefined();
      seen.add(match!);
    }
  }
  // Several different offsets over 20 groups, not one fixed shift.
  expect(seen.size).toBeGreaterThan(4);
  x.dispose();
  expect(new RandomShift(0, 1).apply(x)).toBe(x);
});
