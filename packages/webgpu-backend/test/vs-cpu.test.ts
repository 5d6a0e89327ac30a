import { E, NDArray } from '@surf/core';
import type { WebGPUBackend } from '@surf/webgpu';
import { cpu, expectClose, twin } from './cpu-compare';
import { gpuBackend, testGpu } from './gpu';

// Backend-specific paths checked against the CPU backend on seeded random inputs of odd
// sizes: every read kind of the elementwise generator, both reduction layouts and the
// multi-pass split, every matmul load variant (vec4 or scalar, k- or m-major A, n- or
// k-major B), custom tile configs, and gather. Tolerances: elementwise f32 rtol 1e-6 (one
// rounding per op, inputs in [-1, 1]); sums rtol 1e-5 of Σ|x| (f32 tree vs float64);
// matmul rtol 1e-5 of Σ|a||b| (f32 accumulation over k).
let gpu: WebGPUBackend;
beforeAll(async () => {
  gpu = await gpuBackend();
});
afterAll(() => gpu?.destroy());

async function same(
  g: NDArray,
  c: NDArray,
  what: string,
  rtol = 1e-6,
  atol = 1e-6,
  scale?: ArrayLike<number>,
): Promise<void> {
  expect(g.shape).toEqual(c.shape);
  expect(g.dtype).toBe(c.dtype);
  expectClose(await g.data(), await c.data(), rtol, atol, what, scale);
  g.dispose();
  c.dispose();
}

testGpu(
  'elementwise: contiguous, broadcast-scalar, strided, masked and fully-masked inputs in one kernel',
  async () => {
    for (const [i, n] of [1, 3, 7, 33, 65, 257].entries()) {
      const [ag, ac] = twin(gpu, [n, 5], 10 + i);
      const [bg, bc] = twin(gpu, [5, n], 20 + i);
      const [sg, sc] = twin(gpu, [1, 1], 30 + i);
      const f = (a: NDArray, b: NDArray, s: NDArray) => {
        const bt = b.permute([1, 0]); // strided
        const pad = a
          .crop([
            [0, Math.max(n - 1, 0)],
            [1, 4],
          ])
          .pad([
            [1, 0],
            [1, 1],
          ]); // masked, [n,5]
        const gone = a
          .crop([
            [0, 1],
            [0, 0],
          ])
          .pad([
            [0, 0],
            [0, 5],
          ])
          .expand([n, 5]); // masked away entirely
        const flip = a.flip([0, 1]);
        return NDArray.elementwise(
          [E.add(E.mul(E.in(0), E.in(1)), E.sub(E.mul(E.in(2), E.in(3)), E.add(E.in(4), E.in(5))))],
          [a, bt, s.expand([n, 5]), pad, gone, flip],
        )[0];
      };
      await same(f(ag, bg, sg), f(ac, bc, sc), `n=${n}`);
      for (const x of [ag, ac, bg, bc, sg, sc]) x.dispose();
    }
  },
);

testGpu('elementwise: multi-output mixed dtypes with constants reuses one pipeline', async () => {
  const [ag, ac] = twin(gpu, [257], 1, -5, 5);
  const run = (a: NDArray, k: number) =>
    NDArray.elementwise([E.mul(E.in(0), E.f(k)), E.lt(E.in(0), E.f(k)), E.cast(E.in(0), 'int32')], [a]);
  const before = gpu.pipelineCount;
  for (const k of [0.5, -2, 3]) {
    const g = run(ag, k);
    const c = run(ac, k);
    for (let j = 0; j < 3; j++) await same(g[j], c[j], `k=${k} out ${j}`);
  }
  expect(gpu.pipelineCount - before).toBeLessThanOrEqual(1);
  ag.dispose();
  ac.dispose();
});

testGpu('elementwise: more outputs than storage bindings are split over several kernels', async () => {
  const n = gpu.limits.maxStorageBuffersPerShaderStage + 3;
  const [xg, xc] = twin(gpu, [33], 5);
  const outs = Array.from({ length: n }, (_, j) => E.add(E.mul(E.in(0), E.f(j)), E.f(-j)));
  const g = NDArray.elementwise(outs, [xg]);
  const c = NDArray.elementwise(outs, [xc]);
  for (let j = 0; j < n; j++) await same(g[j], c[j], `output ${j} of ${n}`);
  xg.dispose();
  xc.dispose();
});

testGpu('reduce: row and column layouts, mixed axes, multi-pass splits', async () => {
  const shapes: [number[], number[][]][] = [
    [
      [33, 257],
      [[0], [1], [0, 1]],
    ],
    [
      [7, 65, 3],
      [[0], [1], [2], [0, 2], [1, 2], [0, 1, 2]],
    ],
    [
      [3, 1, 5000],
      [[2], [0, 2]],
    ],
    [[20000, 3], [[0]]],
  ];
  let seed = 100;
  for (const [shape, axesList] of shapes) {
    const [xg, xc] = twin(gpu, shape, seed++);
    for (const view of ['plain', 'permuted', 'flipped'] as const) {
      const vg = view === 'plain' ? xg : view === 'permuted' ? xg.permute([...shape.keys()].reverse()) : xg.flip(0);
      const vc = view === 'plain' ? xc : view === 'permuted' ? xc.permute([...shape.keys()].reverse()) : xc.flip(0);
      for (const axes of axesList) {
        const ax = view === 'permuted' ? axes.map((a) => shape.length - 1 - a).sort() : axes;
        const absSum = vc.map(E.max(E.in(0), E.neg(E.in(0)))).sum(ax);
        const scale = await absSum.data();
        absSum.dispose();
        await same(vg.sum(ax), vc.sum(ax), `sum ${view} [${shape}] over ${ax}`, 1e-5, 1e-6, scale);
        await same(vg.max(ax), vc.max(ax), `max ${view} [${shape}] over ${ax}`, 0, 0);
      }
      if (view !== 'plain') {
        vg.dispose();
        vc.dispose();
      }
    }
    xg.dispose();
    xc.dispose();
  }
});

testGpu('matmul: every load variant and edge tiles against the CPU', async () => {
  const dims: [number, number, number][] = [
    [1, 1, 1],
    [3, 5, 7],
    [4, 8, 12],
    [33, 65, 17],
    [64, 64, 64],
    [65, 67, 129],
    [128, 4, 256],
  ];
  let seed = 200;
  for (const [m, k, n] of dims) {
    const [ag, ac] = twin(gpu, [m, k], seed++);
    const [bg, bc] = twin(gpu, [k, n], seed++);
    const [atg, atc] = twin(gpu, [k, m], seed++);
    const [btg, btc] = twin(gpu, [n, k], seed++);
    const cases: [string, NDArray, NDArray, NDArray, NDArray][] = [
      ['a b', ag, bg, ac, bc],
      ['aT b', atg.permute([1, 0]), bg, atc.permute([1, 0]), bc],
      ['a bT', ag, btg.permute([1, 0]), ac, btc.permute([1, 0])],
      ['aT bT', atg.permute([1, 0]), btg.permute([1, 0]), atc.permute([1, 0]), btc.permute([1, 0])],
    ];
    for (const [name, a1, b1, a2, b2] of cases) {
      const absA = a2.map(E.max(E.in(0), E.neg(E.in(0))));
      const absB = b2.map(E.max(E.in(0), E.neg(E.in(0))));
      const sc = absA.matmul(absB);
      const scale = await sc.data();
      for (const x of [absA, absB, sc]) x.dispose();
      await same(a1.matmul(b1), a2.matmul(b2), `${name} m=${m} k=${k} n=${n}`, 1e-5, 1e-6, scale);
    }
    for (const x of [ag, ac, bg, bc, atg, atc, btg, btc]) x.dispose();
  }
});

testGpu(
  'matmul: custom tile configs (scalar registers, no vec4, rolled and unrolled k, large register tiles) give the same result',
  async () => {
    const { createWebGPUBackend } = await import('@surf/webgpu');
    const configs = [
      { tileM: 16, tileN: 16, tileK: 8, threadM: 1, threadN: 1, vec4: false, unroll: false },
      { tileM: 32, tileN: 32, tileK: 8, threadM: 2, threadN: 4, vec4: true, unroll: true },
      { tileM: 32, tileN: 64, tileK: 8, threadM: 4, threadN: 8, vec4: true },
      { tileM: 64, tileN: 32, tileK: 4, threadM: 8, threadN: 4, vec4: true },
    ];
    for (const cfg of configs) {
      const b = await createWebGPUBackend({ matmul: cfg });
      try {
        const [ag, ac] = twin(b, [2, 37, 45], 300);
        const [bg, bc] = twin(b, [2, 45, 70], 301);
        const g = ag.matmul(bg);
        const c = ac.matmul(bc);
        expectClose(await g.data(), await c.data(), 1e-5, 1e-5, JSON.stringify(cfg));
      } finally {
        b.destroy();
      }
    }
    void cpu;
  },
);

testGpu('gather: every axis of a strided 3-d source, with out-of-range ids', async () => {
  const [xg, xc] = twin(gpu, [7, 33, 5], 400);
  const ids = new Int32Array([0, 6, -1, 3, 32, 33, 1]);
  const ig = NDArray.fromData(gpu, ids, [7]);
  const ic = NDArray.fromData(cpu, ids, [7]);
  for (const axis of [0, 1, 2]) {
    const vg = xg.permute([2, 1, 0]).flip(1);
    const vc = xc.permute([2, 1, 0]).flip(1);
    await same(vg.gather(axis, ig), vc.gather(axis, ic), `axis ${axis}`, 0, 0);
    vg.dispose();
    vc.dispose();
  }
  for (const x of [xg, xc, ig, ic]) x.dispose();
  // An int32 source gathered by itself binds one buffer once.
  const selfIds = new Int32Array([2, 0, 1, 5, -3]);
  const sg = NDArray.fromData(gpu, selfIds, [5]);
  const g = sg.gather(0, sg);
  expect(Array.from(await g.data())).toEqual([1, 2, 0, 0, 0]);
  g.dispose();
  sg.dispose();
});
