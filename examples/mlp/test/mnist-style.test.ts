import { digitAt, SIDE } from '../src/data/digits';
import { loadMnist } from '../src/data/mnist-node';
import { resampleArea, toMnistDigit } from '../src/web/mnist-style';

function box(w: number, h: number, x0: number, y0: number, bw: number, bh: number): Float32Array {
  const img = new Float32Array(w * h);
  for (let y = y0; y < y0 + bh; y++) for (let x = x0; x < x0 + bw; x++) img[y * w + x] = 1;
  return img;
}

function inkBounds(d: Float32Array) {
  let x0 = SIDE,
    y0 = SIDE,
    x1 = -1,
    y1 = -1,
    m = 0,
    mx = 0,
    my = 0;
  for (let y = 0; y < SIDE; y++)
    for (let x = 0; x < SIDE; x++) {
      const v = d[y * SIDE + x];
      if (v > 0) {
        x0 = Math.min(x0, x);
        x1 = Math.max(x1, x);
        y0 = Math.min(y0, y);
        y1 = Math.max(y1, y);
      }
      m += v;
      mx += v * x;
      my += v * y;
    }
  return { w: x1 - x0 + 1, h: y1 - y0 + 1, cx: mx / m, cy: my / m };
}

describe('drawing to MNIST-style digit', () => {
  test('area averaging keeps the mean and halves a 2x2 checker cell', () => {
    const img = new Float32Array([1, 0, 0, 0, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0]);
    const r = resampleArea(img, 4, 0, 0, 4, 4, 2, 2);
    expect(Array.from(r)).toEqual([0.75, 0.5, 0, 0]);
    const odd = resampleArea(box(3, 3, 0, 0, 3, 3), 3, 0, 0, 3, 3, 2, 2);
    for (const v of odd) expect(v).toBeCloseTo(1, 6);
  });

  test('a small off-centre stroke becomes a 20-pixel digit centred by mass', () => {
    // a tall bar in the corner of a 280x280 pad
    const d = toMnistDigit(box(280, 280, 10, 20, 30, 90), 280, 280);
    const b = inkBounds(d);
    expect(b.h).toBe(20);
    expect(b.w).toBeGreaterThanOrEqual(6);
    expect(b.w).toBeLessThanOrEqual(8);
    expect(Math.abs(b.cx - 14)).toBeLessThanOrEqual(0.5);
    expect(Math.abs(b.cy - 14)).toBeLessThanOrEqual(0.5);
    for (const v of d) expect(v >= 0 && v <= 1).toBe(true);
    expect(Array.from(toMnistDigit(new Float32Array(100), 10, 10)).every((v) => v === 0)).toBe(true);
  });

  test('a real test digit drawn 10x larger comes back close to itself', () => {
    const test = loadMnist().test;
    for (const i of [0, 1, 2, 3]) {
      const orig = digitAt(test, i);
      const big = new Float32Array(280 * 280);
      for (let y = 0; y < 280; y++)
        for (let x = 0; x < 280; x++) big[y * 280 + x] = orig[Math.floor(y / 10) * SIDE + Math.floor(x / 10)];
      const back = toMnistDigit(big, 280, 280);
      let dot = 0,
        na = 0,
        nb = 0;
      for (let k = 0; k < orig.length; k++) {
        dot += orig[k] * back[k];
        na += orig[k] ** 2;
        nb += back[k] ** 2;
      }
      // MNIST digits are already 20-pixel, mass-centred: the round trip nearly reproduces them.
      expect(dot / Math.sqrt(na * nb)).toBeGreaterThan(0.95);
    }
  });
});
