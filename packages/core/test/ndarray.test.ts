import { CpuBackend, E, NDArray } from '@surf/core';

// NDArray lifetime: views share one refcounted storage; memory() returns to its start once
// everything is disposed; a copy is made only when strides cannot express a reshape.
const b = new CpuBackend();
const live = () => b.memory().buffers;

test('a view outlives its disposed base', async () => {
  const start = live();
  const base = NDArray.fromData(b, [1, 2, 3, 4, 5, 6], [2, 3]);
  const t = base.permute([1, 0]);
  const v = t.flip(0);
  expect(live()).toBe(start + 1); // views allocate nothing
  base.dispose();
  t.dispose();
  expect(base.disposed).toBe(true);
  expect(live()).toBe(start + 1);
  expect(Array.from(await v.data())).toEqual([3, 6, 2, 5, 1, 4]);
  v.dispose();
  expect(live()).toBe(start);
});

test('dispose is idempotent and the storage is freed once, by the last owner', () => {
  const start = live();
  const a = NDArray.full(b, [4], 2);
  const v1 = a.reshape([2, 2]);
  const v2 = v1.crop([
    [0, 1],
    [0, 2],
  ]);
  a.dispose();
  a.dispose();
  v1.dispose();
  expect(live()).toBe(start + 1);
  v2.dispose();
  v2.dispose();
  expect(live()).toBe(start);
});

test('reshape shares storage when strides allow, copies when not', () => {
  const a = NDArray.fromData(b, [1, 2, 3, 4, 5, 6], [2, 3]);
  const before = live();
  const r = a.reshape([3, 2]);
  expect(r.storage).toBe(a.storage);
  expect(live()).toBe(before);
  const t = a.permute([1, 0]).reshape([6]);
  expect(t.storage).not.toBe(a.storage);
  expect(live()).toBe(before + 1);
  for (const x of [a, r, t]) x.dispose();
});

test('contiguous() of a plain array is the same storage; of a view a copy', () => {
  const a = NDArray.full(b, [3, 3], 1);
  const c = a.contiguous();
  expect(c.storage).toBe(a.storage);
  const d = a
    .crop([
      [0, 2],
      [0, 3],
    ])
    .contiguous(); // a prefix: isPlain but storage is bigger
  expect(d.storage).not.toBe(a.storage);
  expect(d.storage.size).toBe(6);
  for (const x of [a, c, d]) x.dispose();
});

test('memory returns to its start after a mixed workload (reshape copies, masked matmul/gather/reduce)', async () => {
  const start = b.memory();
  const x = NDArray.fromData(
    b,
    Float32Array.from({ length: 24 }, (_, i) => i),
    [4, 6],
  );
  const parts: NDArray[] = [x];
  const keep = (a: NDArray) => {
    parts.push(a);
    return a;
  };
  const p = keep(
    x.pad([
      [1, 0],
      [0, 2],
    ]),
  );
  keep(p.sum(1));
  keep(p.max([0, 1]));
  keep(p.sum([]));
  keep(p.matmul(keep(NDArray.full(b, [8, 2], 1))));
  keep(p.gather(0, keep(NDArray.fromData(b, new Int32Array([0, 4]), [2]))));
  keep(keep(x.permute([1, 0])).reshape([24]));
  NDArray.elementwise([E.add(E.in(0), E.in(1)), E.lt(E.in(0), E.f(3))], [p, keep(NDArray.full(b, [8], 1))]).forEach(
    keep,
  );
  await p.data();
  for (const a of parts) a.dispose();
  expect(b.memory()).toEqual(start);
});

test('fromData converts plain arrays to the dtype and copies typed arrays', async () => {
  const src = new Float32Array([1, 2]);
  const a = NDArray.fromData(b, src, [2]);
  src[0] = 99;
  expect(Array.from(await a.data())).toEqual([1, 2]);
  const bools = NDArray.fromData(b, [true, false, 2] as unknown as number[], [3], 'bool');
  expect(Array.from(await bools.data())).toEqual([1, 0, 1]);
  expect(bools.dtype).toBe('bool');
  const ints = NDArray.fromData(b, [1, -2], [2], 'int32');
  expect(await ints.data()).toBeInstanceOf(Int32Array);
  for (const x of [a, bools, ints]) x.dispose();
});

test('sum/max without keepdim drop the reduced dims; all axes gives 0-d', async () => {
  const a = NDArray.fromData(b, [1, 2, 3, 4, 5, 6], [2, 3]);
  const s = a.sum();
  expect(s.shape).toEqual([]);
  expect(Array.from(await s.data())).toEqual([21]);
  const m = a.max(-1);
  expect(m.shape).toEqual([2]);
  expect(Array.from(await m.data())).toEqual([3, 6]);
  const k = a.sum(0, true);
  expect(k.shape).toEqual([1, 3]);
  expect(Array.from(await k.data())).toEqual([5, 7, 9]);
  for (const x of [a, s, m, k]) x.dispose();
});

test('toString names dtype, shape and state', () => {
  const a = NDArray.full(b, [2, 1], 0, 'int32');
  expect(String(a)).toBe('NDArray(int32, [2,1], cpu)');
  a.dispose();
  expect(String(a)).toBe('NDArray(int32, [2,1], disposed)');
});
