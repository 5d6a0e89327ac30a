import { CpuBackend, E, NDArray } from '@surf/core';
import { ArrayPool } from '../../src/cpu/pool';

// Disposed CPU storages hand their typed arrays to a pool that new storages of the same
// dtype and length reuse without clearing: every op must still write all of its output.
test('ArrayPool reuses arrays by dtype and length, within its caps', () => {
  const p = new ArrayPool(4096 * 4 * 3, 256, 2);
  const a = p.take('float32', 1000);
  a.fill(7);
  p.give('float32', a);
  expect(p.heldBytes).toBe(4000);
  expect(p.take('int32', 1000)).not.toBe(a); // another dtype
  expect(p.take('float32', 999)).not.toBe(a); // another length
  expect(p.take('float32', 1000)).toBe(a);
  expect(p.heldBytes).toBe(0);
  const small = p.take('float32', 10);
  p.give('float32', small);
  expect(p.heldBytes).toBe(0); // small arrays are not kept
  const big = [0, 1, 2, 3].map(() => p.take('float32', 4096));
  big.forEach((x) => p.give('float32', x));
  expect(p.heldBytes).toBe(2 * 4096 * 4); // two per length
  p.clear();
  expect(p.heldBytes).toBe(0);
});

test('ops on reused arrays write every element (stale data never leaks)', async () => {
  const be = new CpuBackend();
  const n = 40 * 30;
  const junk = () => NDArray.fromData(be, new Float32Array(n).fill(NaN), [40, 30]);
  const recycle = (k: number) => {
    for (let i = 0; i < k; i++) junk().dispose();
  };
  const av = Float32Array.from({ length: n }, (_, i) => (i % 17) - 8);
  recycle(3);
  const a = NDArray.fromData(be, av, [40, 30]);
  expect(Array.from(await a.data())).toEqual(Array.from(av));
  recycle(3);
  const sq = (await a.map(E.mul(E.in(0), E.in(0))).data()) as Float32Array;
  expect(Array.from(sq)).toEqual(Array.from(av, (v) => v * v));
  // The product's output is 40 x 40 = 1600 elements; recycle arrays of that length too.
  for (let i = 0; i < 3; i++) NDArray.fromData(be, new Float32Array(1600).fill(NaN), [1600]).dispose();
  const prod = (await a.matmul(a.permute([1, 0])).data()) as Float32Array;
  for (let i = 0; i < 40; i++) {
    for (let j = 0; j < 40; j++) {
      let s = 0;
      for (let p = 0; p < 30; p++) s += av[i * 30 + p] * av[j * 30 + p];
      expect(prod[i * 40 + j]).toBe(s); // small integers: exact in f32
    }
  }
  // k = 0: the product is all zeros, written over a reused array.
  for (let i = 0; i < 3; i++) NDArray.fromData(be, new Float32Array(40 * 40).fill(NaN), [40 * 40]).dispose();
  const empty = NDArray.fromData(be, new Float32Array(0), [40, 0]);
  const zeros = (await empty.matmul(NDArray.fromData(be, new Float32Array(0), [0, 40])).data()) as Float32Array;
  expect(zeros.every((v) => v === 0)).toBe(true);
  // Reductions and gathers over reused arrays.
  const big = NDArray.fromData(
    be,
    Float32Array.from({ length: 300 * 4 }, (_, i) => i % 5),
    [300, 4],
  );
  for (let i = 0; i < 3; i++) NDArray.fromData(be, new Float32Array(300).fill(NaN), [300]).dispose();
  const rs = (await big.sum(1).data()) as Float32Array;
  expect(Array.from(rs)).toEqual(
    Array.from({ length: 300 }, (_, r) => [0, 1, 2, 3].reduce((s, j) => s + ((r * 4 + j) % 5), 0)),
  );
  for (let i = 0; i < 3; i++) NDArray.fromData(be, new Float32Array(300 * 4).fill(NaN), [300, 4]).dispose();
  const idx = NDArray.fromData(
    be,
    Int32Array.from({ length: 300 }, (_, i) => 299 - i),
    [300],
    'int32',
  );
  const g = (await big.gather(0, idx).data()) as Float32Array;
  for (let r = 0; r < 300; r++) for (let j = 0; j < 4; j++) expect(g[r * 4 + j]).toBe(((299 - r) * 4 + j) % 5);
  // Only live storages count as used memory.
  const before = be.memory();
  recycle(2);
  expect(be.memory()).toEqual(before);
});
