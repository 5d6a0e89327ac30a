import { CpuBackend, E, NDArray } from '@surf/core';

// The epilogue must equal matmul followed by the same elementwise expression, for broadcast
// bias rows and for a full-shape second input; checked against a naive loop.
test('matmul epilogue: relu(a@b + bias) and a@b * c match a naive reference', async () => {
  const be = new CpuBackend();
  const a = NDArray.fromData(be, [1, -2, 3, 4, 5, -6], [2, 3]);
  const b = NDArray.fromData(be, [1, 0, -1, 2, 1, 1], [3, 2]);
  const bias = NDArray.fromData(be, [0.5, -20], [2]);
  const y = a.matmul(b, { expr: E.max(E.add(E.in(0), E.in(1)), E.f(0)), inputs: [bias] });
  // a@b = [[1*1-2*-1+3*1, 0-4+3], [4-5-6, 0+10-6]] = [[6,-1],[-7,4]]
  expect(Array.from(await y.data())).toEqual([6.5, 0, 0, 0]);
  const c = NDArray.fromData(be, [1, 2, 3, 4], [2, 2]);
  const z = a.matmul(b, { expr: E.mul(E.in(0), E.in(1)), inputs: [c] });
  expect(Array.from(await z.data())).toEqual([6, -2, -21, 16]);
  expect(() => a.matmul(b, { expr: E.in(0), inputs: [NDArray.fromData(be, [1, 2, 3], [3])] })).toThrow(
    /does not broadcast|cannot broadcast/,
  );
});
