import { ShapeError, broadcastShapes, normAxes, normAxis, randomArray, randomInts } from '@surf/core';

describe('randomArray / randomInts', () => {
  test('same seed, same numbers; number and string seeds agree; other seeds differ', () => {
    const a = randomArray('uniform', 1000, 42);
    expect(randomArray('uniform', 1000, 42)).toEqual(a);
    expect(randomArray('uniform', 1000, '42')).toEqual(a);
    expect(randomArray('uniform', 1000, 43)).not.toEqual(a);
    // A prefix of a longer draw is the shorter draw: n does not change the stream.
    expect(randomArray('uniform', 10, 42)).toEqual(a.slice(0, 10));
    expect(randomInts(50, -3, 4, 'x')).toEqual(randomInts(50, -3, 4, 'x'));
  });
  test('uniform lies in [a, b) with mean near the middle', () => {
    const u = randomArray('uniform', 20000, 7, -2, 6);
    expect(Math.min(...u)).toBeGreaterThanOrEqual(-2);
    expect(Math.max(...u)).toBeLessThan(6);
    const mean = u.reduce((s, v) => s + v, 0) / u.length;
    expect(Math.abs(mean - 2)).toBeLessThan(0.1);
  });
  test('normal has the requested mean and std, odd n fills every element', () => {
    const n = randomArray('normal', 20001, 8, 3, 0.5);
    const mean = n.reduce((s, v) => s + v, 0) / n.length;
    const sd = Math.sqrt(n.reduce((s, v) => s + (v - mean) ** 2, 0) / n.length);
    expect(Math.abs(mean - 3)).toBeLessThan(0.02);
    expect(Math.abs(sd - 0.5)).toBeLessThan(0.02);
    expect(n.every(Number.isFinite)).toBe(true);
    expect(n[20000]).not.toBe(0);
  });
  test('randomInts covers [low, high) and nothing else', () => {
    const r = randomInts(5000, -3, 4, 1);
    expect(new Set(r)).toEqual(new Set([-3, -2, -1, 0, 1, 2, 3]));
  });
  test('n = 0 gives empty arrays', () => {
    expect(randomArray('normal', 0, 1).length).toBe(0);
    expect(randomInts(0, 0, 1, 1).length).toBe(0);
  });
});

describe('broadcast rules', () => {
  test.each([
    [
      [[2, 3], [3]],
      [2, 3],
    ],
    [
      [
        [2, 1],
        [1, 3],
      ],
      [2, 3],
    ],
    [
      [[], [4, 5]],
      [4, 5],
    ],
    [[[], []], []],
    [
      [[5, 1, 4], [3, 1], [1]],
      [5, 3, 4],
    ],
    [[[0], [1]], [0]],
    [
      [
        [3, 0],
        [3, 1],
      ],
      [3, 0],
    ],
    [
      [
        [1, 0],
        [7, 1],
      ],
      [7, 0],
    ],
  ])('%j -> %j', (shapes, want) => {
    expect(broadcastShapes('t', ...(shapes as number[][]))).toEqual(want);
  });
  test.each([
    [[2, 3], [2]],
    [[0], [3]],
    [
      [4, 2, 3],
      [5, 1, 3],
    ],
  ])('%j with %j fails naming both', (a, c) => {
    expect(() => broadcastShapes('op', a, c)).toThrow(ShapeError);
    expect(() => broadcastShapes('op', a, c)).toThrow(`[${a.join(',')}] and [${c.join(',')}]`);
  });
  test('normAxis / normAxes resolve negatives, sort, and reject repeats', () => {
    expect(normAxis('t', -1, 3)).toBe(2);
    expect(normAxes('t', [2, -3], 3)).toEqual([0, 2]);
    expect(normAxes('t', undefined, 2)).toEqual([0, 1]);
    expect(normAxes('t', undefined, 0)).toEqual([]);
    expect(() => normAxes('t', [1, -1], 2)).toThrow('repeated axis');
    expect(() => normAxis('t', 3, 3)).toThrow('axis 3 is out of range for a 3-d tensor');
  });
});
