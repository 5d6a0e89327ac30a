import { CpuBackend, E, NDArray } from '@surf/core';

test('cpu smoke: strided add, reduce, matmul, gather', async () => {
  const b = new CpuBackend();
  const a = NDArray.fromData(b, [1, 2, 3, 4, 5, 6], [2, 3]);
  const t = a.permute([1, 0]); // [3,2]
  const s = NDArray.elementwise([E.add(E.in(0), E.in(1))], [t, NDArray.fromData(b, [10, 20], [2])])[0];
  expect(Array.from(await s.data())).toEqual([11, 24, 12, 25, 13, 26]);
  expect(Array.from(await a.sum(1).data())).toEqual([6, 15]);
  expect(Array.from(await a.max(0).data())).toEqual([4, 5, 6]);
  expect(Array.from(await a.matmul(t).data())).toEqual([14, 32, 32, 77]);
  const p = a.pad([[1, 0], [0, 1]]);
  expect(Array.from(await p.data())).toEqual([0, 0, 0, 0, 1, 2, 3, 0, 4, 5, 6, 0]);
  expect(Array.from(await a.flip(1).reshape([6]).data())).toEqual([3, 2, 1, 6, 5, 4]);
  const g = a.gather(0, NDArray.fromData(b, new Int32Array([1, 1, 0]), [3]));
  expect(Array.from(await g.data())).toEqual([4, 5, 6, 4, 5, 6, 1, 2, 3]);
});
