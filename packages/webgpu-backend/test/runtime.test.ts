import { E, NDArray } from '@surf/core';
import { WebGPUBackend } from '@surf/webgpu';
import { gpuBackend, testGpu } from './gpu';

// The runtime's host-side shortcuts: small uploads copied in the command stream (so a
// buffer freed in the open batch is reused at once), the dispatch/submit counters, and a
// chain of one kernel recorded without re-setting its pipeline. Each is checked by values.

let b: WebGPUBackend;
beforeAll(async () => {
  b = await gpuBackend();
});
afterAll(() => b?.destroy());

const bufId = (x: NDArray) => (x.storage as unknown as { buf: { id: number } }).buf.id;

testGpu('a small upload into a buffer the open batch still reads keeps both values right', async () => {
  const a = NDArray.fromData(b, new Float32Array([1, 2, 3, 4]), [4]);
  const doubled = a.map(E.mul(E.in(0), E.f(2)));
  const id = bufId(a);
  a.dispose();
  // Recorded before any submit: the pool hands out a's buffer again, and the upload must
  // land after the kernel above has read the old contents.
  const c = NDArray.fromData(b, new Float32Array([7, 8, 9, 10]), [4]);
  expect(bufId(c)).toBe(id);
  const sum = c.map(E.add(E.in(0), E.in(1)), doubled);
  expect(Array.from(await doubled.data())).toEqual([2, 4, 6, 8]);
  expect(Array.from(await c.data())).toEqual([7, 8, 9, 10]);
  expect(Array.from(await sum.data())).toEqual([9, 12, 15, 18]);
  [doubled, c, sum].forEach((x) => x.dispose());
});

testGpu('int32 and bool uploads, and one larger than the inline limit, read back exactly', async () => {
  const i = NDArray.fromData(b, new Int32Array([-3, 0, 2147483647]), [3]);
  const q = NDArray.fromData(b, [1, 0, 1], [3], 'bool');
  const big = new Float32Array(5000).map((_, k) => k * 0.5 - 7);
  const f = NDArray.fromData(b, big, [5000]);
  expect(Array.from(await i.data())).toEqual([-3, 0, 2147483647]);
  expect(Array.from(await q.data())).toEqual([1, 0, 1]);
  expect(Array.from(await f.data())).toEqual(Array.from(big));
  [i, q, f].forEach((x) => x.dispose());
});

testGpu('stats() counts dispatches and submits; a chain of one kernel stays correct', async () => {
  const s0 = b.stats();
  let t = NDArray.fromData(b, new Float32Array([1, -2, 0.5]), [3]);
  for (let k = 0; k < 10; k++) {
    const u = t.map(E.add(E.mul(E.in(0), E.f(2)), E.f(1)));
    t.dispose();
    t = u;
  }
  const v = await t.data();
  const want = [1, -2, 0.5].map((x) => {
    for (let k = 0; k < 10; k++) x = 2 * x + 1;
    return x;
  });
  expect(Array.from(v)).toEqual(want);
  const s1 = b.stats();
  expect(s1.dispatches - s0.dispatches).toBe(10);
  expect(s1.readbacks - s0.readbacks).toBe(1);
  expect(s1.submits - s0.submits).toBeGreaterThanOrEqual(1);
  t.dispose();
});

testGpu('a buffer freed while the open batch binds it survives a full pool until the submit', async () => {
  // With no pool headroom every release destroys its buffer; one the unsubmitted batch still
  // reads must wait for the submit (the H100 bench hit "used in submit while destroyed").
  const small = await gpuBackend({ poolLimitBytes: 0 });
  try {
    const x = NDArray.fromData(
      small,
      new Float32Array(4096).map((_, k) => k % 7),
      [4096],
    );
    const y = x.map(E.mul(E.in(0), E.f(3)));
    x.dispose();
    const z = y.map(E.add(E.in(0), E.f(1)));
    y.dispose();
    const got = await z.data();
    for (let k = 0; k < 4096; k += 97) expect(got[k]).toBe((k % 7) * 3 + 1);
    z.dispose();
    small.trimPool();
  } finally {
    small.destroy();
  }
});
