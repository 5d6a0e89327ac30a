import { CpuBackend, E, NDArray, ValueError, createBackend } from '@surf/core';
import { matmulInto } from '../../../src/cpu/matmul';
import {
  currentPool,
  cpuThreads,
  setCpuThreads,
  startCpuThreads,
  stopPool,
  threadJobs,
  threadsAvailable,
} from '../../../src/cpu/threads/config';
import { planGemm, splitRange } from '../../../src/cpu/threads/split';
import { View } from '../../../src/view';

// Deterministic pseudo-random values in [-1, 1), with a few exact zeros.
function rand(n: number, seed: number): Float32Array {
  const out = new Float32Array(n);
  let s = seed >>> 0 || 1;
  for (let i = 0; i < n; i++) {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    out[i] = i % 17 === 0 ? 0 : s / 2 ** 31 - 1;
  }
  return out;
}

/** f64 reference through the views, any strides. */
function reference(a: Float32Array, av: View, b: Float32Array, bv: View): Float64Array {
  const nd = av.ndim,
    m = av.shape[nd - 2],
    k = av.shape[nd - 1],
    n = bv.shape[nd - 1];
  const batches = av.shape.slice(0, -2).reduce((x, y) => x * y, 1);
  const out = new Float64Array(batches * m * n);
  for (let bt = 0; bt < batches; bt++) {
    const ab = av.offset + (nd > 2 ? bt * av.strides[0] : 0),
      bb = bv.offset + (nd > 2 ? bt * bv.strides[0] : 0);
    for (let i = 0; i < m; i++)
      for (let j = 0; j < n; j++) {
        let acc = 0;
        for (let p = 0; p < k; p++)
          acc +=
            a[ab + i * av.strides[nd - 2] + p * av.strides[nd - 1]] *
            b[bb + p * bv.strides[nd - 2] + j * bv.strides[nd - 1]];
        out[bt * m * n + i * n + j] = acc;
      }
  }
  return out;
}

const bits = (x: Float32Array) => Array.from(new Uint32Array(x.buffer, x.byteOffset, x.length));

afterAll(() => {
  setCpuThreads({ threads: 1, minMatmulFlops: 1 << 22 });
  stopPool();
});

const run = threadsAvailable() ? test : test.skip;

test('splits cover every unit once, by whole micro-kernel rows or B panels', () => {
  expect(splitRange(10, 3)).toEqual([
    [0, 4],
    [4, 7],
    [7, 10],
  ]);
  expect(splitRange(2, 4)).toEqual([
    [0, 1],
    [1, 2],
  ]);
  // Panels first whenever there are enough of them (a row cut re-streams all of B per chunk):
  // 64 × 128 in 8-column panels over 6 chunks.
  expect(planGemm(64, 128, 6, 8, 6).map((p) => [p.r0, p.r1, p.c1 - p.c0])).toEqual([
    [0, 64, 24],
    [0, 64, 24],
    [0, 64, 24],
    [0, 64, 24],
    [0, 64, 16],
    [0, 64, 16],
  ]);
  // Too few panels (2 for 4 chunks): rows, which balance better.
  expect(planGemm(64, 20, 4, 12, 4)).toEqual([0, 16, 32, 48].map((r0) => ({ r0, r1: r0 + 16, c0: 0, c1: 20 })));
  // A short, wide product is cut into panel ranges.
  expect(planGemm(4, 120, 4, 12, 3)).toEqual([
    { r0: 0, r1: 4, c0: 0, c1: 48 },
    { r0: 0, r1: 4, c0: 48, c1: 84 },
    { r0: 0, r1: 4, c0: 84, c1: 120 },
  ]);
  expect(planGemm(10, 5, 4, 12, 3)).toEqual([
    { r0: 0, r1: 4, c0: 0, c1: 5 },
    { r0: 4, r1: 8, c0: 0, c1: 5 },
    { r0: 8, r1: 10, c0: 0, c1: 5 },
  ]);
});

run('matmul gives the same bits on 1, 2 and 3 threads, for every operand layout, and matches an f64 loop', async () => {
  // [m, k, n, A transposed, B transposed, batch]
  const cases: [number, number, number, boolean, boolean, number][] = [
    [64, 300, 128, false, false, 1], // short A, B read in place, k over one block
    [150, 70, 37, true, false, 1], // column-major A, packed B, ragged edges
    [45, 33, 130, false, true, 1], // transposed B (packed by the wasm packer)
    [8, 300, 120, false, true, 1], // a transposed B big enough to be packed by every thread
    [9, 20, 50, false, false, 3], // a batch
  ];
  const results: Float32Array[][] = cases.map(() => []);
  // The last run leaves every chunk to the workers, so their kernels are checked too.
  for (const [threads, caller] of [
    [1, true],
    [2, true],
    [3, false],
  ] as const) {
    setCpuThreads({ threads, minMatmulFlops: 0 });
    expect(await startCpuThreads()).toBe(threads);
    if (threads > 1) currentPool()!.callerClaims = caller;
    const jobs0 = threadJobs();
    cases.forEach(([m, k, n, ta, tb, batch], ci) => {
      const a = rand(batch * m * k, 10 + ci),
        b = rand(batch * k * n, 20 + ci);
      let av = ta ? View.contiguous([batch, k, m]).permute([0, 2, 1]) : View.contiguous([batch, m, k]);
      let bv = tb ? View.contiguous([batch, n, k]).permute([0, 2, 1]) : View.contiguous([batch, k, n]);
      if (batch === 1) {
        av = av.reshape([m, k]) ?? av;
        bv = bv.reshape([k, n]) ?? bv;
      }
      const out = new Float32Array(batch * m * n);
      matmulInto(a, av, b, bv, out, 'wasm');
      const ref = reference(a, av, b, bv);
      let worst = 0;
      for (let i = 0; i < out.length; i++) worst = Math.max(worst, Math.abs(out[i] - ref[i]));
      expect(worst).toBeLessThan(1e-5 * k);
      results[ci].push(out);
    });
    if (threads > 1) expect(threadJobs()).toBeGreaterThan(jobs0);
  }
  results.forEach((r) => {
    expect(bits(r[1]).join() === bits(r[0]).join()).toBe(true);
    expect(bits(r[2]).join() === bits(r[0]).join()).toBe(true);
  });
});

run('a fused epilogue (bias + ReLU) after a threaded product, through the backend', async () => {
  const outs: Float32Array[] = [];
  for (const threads of [1, 3]) {
    setCpuThreads({ threads, minMatmulFlops: 0 });
    await startCpuThreads();
    const be = new CpuBackend();
    const x = NDArray.fromData(be, rand(40 * 50, 1), [40, 50]);
    const w = NDArray.fromData(be, rand(60 * 50, 2), [60, 50]).permute([1, 0]);
    const bias = NDArray.fromData(be, rand(60, 3), [60]);
    const y = x.matmul(w, { expr: E.max(E.add(E.in(0), E.in(1)), E.f(0)), inputs: [bias] });
    outs.push((await y.data()) as Float32Array);
  }
  expect(bits(outs[1])).toEqual(bits(outs[0]));
  expect(outs[0].some((v) => v > 0) && outs[0].some((v) => v === 0)).toBe(true);
});

run('elementwise SIMD work gives the same bits on 1 and 3 threads: split by rows and along one long row', async () => {
  const be = new CpuBackend();
  const R = 70,
    N = 130;
  const a = NDArray.fromData(be, rand(R * N, 5), [R, N]);
  const bias = NDArray.fromData(be, rand(N, 6), [N]);
  const col = NDArray.fromData(be, rand(R, 7), [R, 1]);
  const flat = NDArray.fromData(be, rand(10003, 8), [10003]);
  const flat2 = NDArray.fromData(be, rand(10003, 9), [10003]);
  // where(a < bias, a·col − 0.5, max(a, col)) and a flat update p − 0.1·g.
  const e2d = E.where(E.lt(E.in(0), E.in(1)), E.sub(E.mul(E.in(0), E.in(2)), E.f(0.5)), E.max(E.in(0), E.in(2)));
  const eFlat = E.sub(E.in(0), E.mul(E.f(0.1), E.in(1)));
  const outs: Float32Array[][] = [];
  for (const threads of [1, 3]) {
    setCpuThreads({ threads, minElementwise: 0 });
    await startCpuThreads();
    const jobs0 = threadJobs();
    if (threads > 1) currentPool()!.callerClaims = false;
    const y = NDArray.elementwise([e2d], [a, bias, col])[0];
    const z = flat.map(eFlat, flat2);
    outs.push([(await y.data()) as Float32Array, (await z.data()) as Float32Array]);
    if (threads > 1) expect(threadJobs()).toBeGreaterThanOrEqual(jobs0 + 2);
    if (threads > 1) currentPool()!.callerClaims = true;
  }
  setCpuThreads({ minElementwise: 1 << 16 });
  for (let t = 0; t < 2; t++) expect(bits(outs[1][t]).join() === bits(outs[0][t]).join()).toBe(true);
  // Against an f32 loop written here.
  const av = rand(R * N, 5),
    bv = rand(N, 6),
    cv = rand(R, 7);
  const f = Math.fround;
  let bad = 0;
  for (let r = 0; r < R; r++)
    for (let j = 0; j < N; j++) {
      const x = av[r * N + j];
      const want = x < bv[j] ? f(f(x * cv[r]) - 0.5) : Math.max(x, cv[r]);
      if (outs[0][0][r * N + j] !== want) bad++;
    }
  expect(bad).toBe(0);
});

run('workers see linear memory that grew after they started', async () => {
  setCpuThreads({ threads: 2, minMatmulFlops: 0 });
  await startCpuThreads();
  const pool = currentPool()!;
  const before = pool.arena.memory.buffer.byteLength;
  // Bigger than anything before in this file: the arena grows by several MiB.
  const m = 640,
    k = 700,
    n = 300;
  const a = rand(m * k, 61),
    b = rand(k * n, 62);
  const av = View.contiguous([m, k]),
    bv = View.contiguous([k, n]);
  const one = new Float32Array(m * n),
    two = new Float32Array(m * n);
  pool.callerClaims = false;
  matmulInto(a, av, b, bv, two, 'wasm');
  pool.callerClaims = true;
  expect(pool.arena.memory.buffer.byteLength).toBeGreaterThan(before);
  setCpuThreads({ threads: 1 });
  matmulInto(a, av, b, bv, one, 'wasm');
  expect(bits(two).join() === bits(one).join()).toBe(true);
});

run('small products stay on the calling thread', async () => {
  setCpuThreads({ threads: 2, minMatmulFlops: 1 << 22 });
  await startCpuThreads();
  const jobs0 = threadJobs();
  const out = new Float32Array(16 * 16);
  matmulInto(rand(16 * 16, 1), View.contiguous([16, 16]), rand(16 * 16, 2), View.contiguous([16, 16]), out, 'wasm');
  expect(threadJobs()).toBe(jobs0);
});

run('a failing kernel call is reported, whichever thread ran it, and the pool goes on', async () => {
  setCpuThreads({ threads: 2 });
  await startCpuThreads();
  const pool = currentPool()!;
  // Function id 999 was never loaded: every chunk's call throws.
  expect(() => pool.run([[[999, 1, 2]], [[999, 3]], [[999]]], 1 << 16)).toThrow(/worker thread|no kernel with id 999/);
  expect(() => pool.run([[], []], 1 << 16)).not.toThrow();
});

test('thread options are checked; the backend factory takes threads', async () => {
  expect(() => setCpuThreads({ threads: 0 })).toThrow(ValueError);
  expect(() => setCpuThreads({ threads: 2.5 })).toThrow(/integer from 1 to 65/);
  expect(() => setCpuThreads({ minMatmulFlops: -1 })).toThrow(/minMatmulFlops/);
  expect(() => setCpuThreads(null as never)).toThrow(/setCpuThreads: the options argument must be an object/);
  expect(() => setCpuThreads({ spin: -1 })).toThrow(/spin/);
  expect(() => setCpuThreads({ chunksPerThread: 0 })).toThrow(/chunksPerThread/);
  await expect(createBackend('cpu', { threads: -3 })).rejects.toThrow(ValueError);
  await createBackend('cpu', { threads: 2 });
  expect(cpuThreads()).toBe(threadsAvailable() ? 2 : 1);
});
