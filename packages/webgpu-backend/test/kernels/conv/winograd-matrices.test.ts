import { winograd } from '../../../src/kernels/conv/winograd-matrices';

// The generated F(m, r) matrices against the correlation they stand for, in float64 on random
// data (1-d and the nested 2-d form), and against the published F(2, 3) and F(4, 3) transforms
// (Lavin and Gray 2016) up to the row scaling the construction is free to choose.
function rand(n: number, seed: number): number[] {
  let s = seed;
  return Array.from({ length: n }, () => ((s = (s * 1103515245 + 12345) % 2147483648) / 2147483648) * 2 - 1);
}
const mv = (M: number[][], v: number[]) => M.map((row) => row.reduce((s, a, k) => s + a * v[k], 0));

test.each([
  [2, 5],
  [2, 3],
  [4, 3],
  [5, 2],
  [3, 3],
])('F(%i, %i) computes 1-d and 2-d correlation', (m, r) => {
  const wn = winograd(m, r);
  expect(wn.alpha).toBe(m + r - 1);
  const g = rand(r, m * 10 + r),
    d = rand(wn.alpha, m * 100 + r);
  const y = mv(
    wn.AT,
    mv(wn.G, g).map((v, j) => v * mv(wn.BT, d)[j]),
  );
  for (let i = 0; i < m; i++) {
    let ref = 0;
    for (let k = 0; k < r; k++) ref += g[k] * d[i + k];
    expect(Math.abs(y[i] - ref)).toBeLessThan(1e-12);
  }
  // 2-d: Y = AT [(G g Gᵀ) ⊙ (BT D B)] A.
  const A = wn.alpha;
  const g2 = Array.from({ length: r }, (_, a) => rand(r, 7 + a)),
    d2 = Array.from({ length: A }, (_, a) => rand(A, 70 + a));
  const T = (M: number[][]) => M[0].map((_, j) => M.map((row) => row[j]));
  const mm = (X: number[][], Y: number[][]) =>
    X.map((row) => Y[0].map((_, j) => row.reduce((s, v, k) => s + v * Y[k][j], 0)));
  const U = mm(mm(wn.G, g2), T(wn.G)),
    V = mm(mm(wn.BT, d2), T(wn.BT));
  const Y = mm(
    mm(
      wn.AT,
      U.map((row, i) => row.map((v, j) => v * V[i][j])),
    ),
    T(wn.AT),
  );
  for (let i = 0; i < m; i++)
    for (let j = 0; j < m; j++) {
      let ref = 0;
      for (let a = 0; a < r; a++) for (let b = 0; b < r; b++) ref += g2[a][b] * d2[i + a][j + b];
      expect(Math.abs(Y[i][j] - ref)).toBeLessThan(1e-11);
    }
});

test('F(4, 3) has the published input transform, and F(2, 5) the expected output transform', () => {
  expect(winograd(4, 3).BT).toEqual([
    [4, 0, -5, 0, 1, 0],
    [0, -4, -4, 1, 1, 0],
    [0, 4, -4, -1, 1, 0],
    [0, -2, -1, 2, 1, 0],
    [0, 2, -1, -2, 1, 0],
    [0, 4, 0, -5, 0, 1],
  ]);
  expect(winograd(2, 5).AT).toEqual([
    [1, 1, 1, 1, 1, 0],
    [0, 1, -1, 2, -2, 1],
  ]);
  // F(m, r) and F(r, m) share BT (it depends on the points only).
  expect(winograd(5, 2).BT).toEqual(winograd(2, 5).BT);
});
