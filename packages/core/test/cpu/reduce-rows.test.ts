import { CpuBackend, NDArray } from '@surf/core';

// Reducing axis 0 of a 2-d view with contiguous rows (a bias gradient) runs row by row;
// it must equal a naive column loop (float64 sum, top to bottom; max propagating NaN).
function naive(
  op: 'sum' | 'max',
  v: ArrayLike<number>,
  R: number,
  C: number,
  at: (r: number, j: number) => number,
): number[] {
  const out: number[] = [];
  for (let j = 0; j < C; j++) {
    let acc = op === 'sum' ? 0 : -Infinity;
    for (let r = 0; r < R; r++) {
      const x = v[at(r, j)];
      if (op === 'sum') acc += x;
      else if (x > acc || x !== x) acc = x;
    }
    out.push(op === 'sum' ? Math.fround(acc) : acc);
  }
  return out;
}

test.each([
  [64, 128],
  [64, 10],
  [1, 7],
  [300, 3],
] as const)('sum and max over the rows of [%i, %i]', async (R, C) => {
  const be = new CpuBackend();
  const v = Float32Array.from({ length: R * C }, (_, i) => Math.sin(i * 1.7) * 1e3 + (i % 3) * 1e-4);
  if (R * C > 20) {
    v[5] = NaN;
    v[17] = -Infinity;
    v[19] = Infinity;
  }
  const a = NDArray.fromData(be, v, [R, C]);
  for (const op of ['sum', 'max'] as const) {
    const got = Array.from((await (op === 'sum' ? a.sum(0) : a.max(0)).data()) as Float32Array);
    expect(got).toEqual(naive(op, v, R, C, (r, j) => r * C + j));
  }
});

test('rows of a wider array (a crop), and int32', async () => {
  const be = new CpuBackend();
  const v = Float32Array.from({ length: 50 * 40 }, (_, i) => ((i * 7919) % 1000) - 500);
  const a = NDArray.fromData(be, v, [50, 40]).crop([
    [3, 50],
    [10, 30],
  ]);
  expect(Array.from((await a.sum(0).data()) as Float32Array)).toEqual(
    naive('sum', v, 47, 20, (r, j) => (r + 3) * 40 + j + 10),
  );
  expect(Array.from((await a.max(0).data()) as Float32Array)).toEqual(
    naive('max', v, 47, 20, (r, j) => (r + 3) * 40 + j + 10),
  );
  const iv = Int32Array.from({ length: 30 * 5 }, (_, i) => ((i * 31) % 97) - 50);
  const b = NDArray.fromData(be, iv, [30, 5], 'int32');
  expect(Array.from((await b.sum(0).data()) as Int32Array)).toEqual(naive('sum', iv, 30, 5, (r, j) => r * 5 + j));
  expect(Array.from((await b.max(0).data()) as Int32Array)).toEqual(naive('max', iv, 30, 5, (r, j) => r * 5 + j));
});
