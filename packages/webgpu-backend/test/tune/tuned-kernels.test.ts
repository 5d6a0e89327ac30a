import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { E, Expr, NDArray } from '@surf/core';
import { WebGPUBackend, createWebGPUBackend, tableChooser, tuneMatmul } from '@surf/webgpu';
import { cpu, expectClose, twin } from '../cpu-compare';
import { gpuBackend, testGpu } from '../gpu';

// The tuned kernel variants against the CPU backend: matmul epilogues fused into the store,
// the matmul knobs the tuner picks from (vec4 A reads, padded A tile, interleaved columns),
// the column and vec4 reduction layouts, x - x / x / x on Inf and NaN, and the tuner itself.
// Sizes are odd and small (SwiftShader in CI); tolerances as in vs-cpu.test.ts.
let gpu: WebGPUBackend;
beforeAll(async () => {
  gpu = await gpuBackend();
});
afterAll(() => gpu?.destroy());

/** |a|@|b| per element: the scale a matmul's f32 rounding error is relative to. */
async function mmScale(a: NDArray, b: NDArray): Promise<Float32Array> {
  const aa = a.map(E.max(E.in(0), E.neg(E.in(0))));
  const bb = b.map(E.max(E.in(0), E.neg(E.in(0))));
  const s = aa.matmul(bb);
  const d = (await s.data()) as Float32Array;
  for (const x of [aa, bb, s]) x.dispose();
  return d;
}

const relu = (x: Expr) => E.max(x, E.f(0));
// A gelu-like tree: 0.5 x (1 + sin(0.7 x)) / (2 + y*y), reading the product twice.
const geluish = (x: Expr, y: Expr) =>
  E.div(E.mul(E.mul(E.f(0.5), x), E.add(E.f(1), E.sin(E.mul(x, E.f(0.7))))), E.add(E.f(2), E.mul(y, y)));

testGpu(
  'matmul epilogue: bias+relu, gelu-like tree, full-shape input, transposed operands, odd m/n/k, batches',
  async () => {
    const g = gpu;
    const dims: [number, number, number][] = [
      [5, 7, 3],
      [33, 17, 65],
      [64, 64, 64],
    ];
    let seed = 500;
    for (const [m, k, n] of dims) {
      const [ag, ac] = twin(g, [m, k], seed++);
      const [atg, atc] = twin(g, [k, m], seed++);
      const [bg, bc] = twin(g, [k, n], seed++);
      const [btg, btc] = twin(g, [n, k], seed++);
      const [biasg, biasc] = twin(g, [n], seed++);
      const [fullg, fullc] = twin(g, [m, n], seed++);
      const ops: [string, NDArray, NDArray, NDArray, NDArray][] = [
        ['a b', ag, bg, ac, bc],
        ['aT bT', atg.permute([1, 0]), btg.permute([1, 0]), atc.permute([1, 0]), btc.permute([1, 0])],
      ];
      for (const [name, a1, b1, a2, b2] of ops) {
        const scale = await mmScale(a2, b2);
        const epis: [string, Expr, NDArray[], NDArray[]][] = [
          ['bias+relu', relu(E.add(E.in(0), E.in(1))), [biasg], [biasc]],
          ['gelu-like(x+bias, full)', geluish(E.add(E.in(0), E.in(1)), E.in(2)), [biasg, fullg], [biasc, fullc]],
          ['x*full - bias', E.sub(E.mul(E.in(0), E.in(2)), E.in(1)), [biasg, fullg], [biasc, fullc]],
          [
            'bias column (stride 0 over n)',
            E.add(E.in(0), E.in(1)),
            [
              fullg.crop([
                [0, m],
                [0, 1],
              ]),
            ],
            [
              fullc.crop([
                [0, m],
                [0, 1],
              ]),
            ],
          ],
        ];
        for (const [what, expr, gi, ci] of epis) {
          const got = a1.matmul(b1, { expr, inputs: gi });
          const want = a2.matmul(b2, { expr, inputs: ci });
          // The epilogue is smooth with derivative <= ~1 here, so the product's error bound carries over.
          expectClose(await got.data(), await want.data(), 1e-5, 1e-5, `${name} m=${m} k=${k} n=${n}: ${what}`, scale);
          got.dispose();
          want.dispose();
        }
      }
      for (const x of [ag, ac, atg, atc, bg, bc, btg, btc, biasg, biasc, fullg, fullc]) x.dispose();
    }
    // Fused: the matmul kernels compiled include epilogue variants (no second elementwise pass).
    const keys = [...(g as unknown as { rt: { pipelines: Map<string, unknown> } }).rt.pipelines.keys()];
    expect(keys.filter((k) => k.startsWith('mm|') && k.includes('|e')).length).toBeGreaterThanOrEqual(4);
    // Batched with a broadcast batch in a and a per-batch epilogue input.
    const [ag, ac] = twin(g, [1, 9, 6], 600);
    const [bg, bc] = twin(g, [3, 6, 10], 601);
    const [eg, ec] = twin(g, [3, 1, 10], 602);
    const scale = await mmScale(ac.expand([3, 9, 6]), bc);
    const got = ag.matmul(bg, { expr: E.add(E.in(0), E.in(1)), inputs: [eg] });
    const want = ac.matmul(bc, { expr: E.add(E.in(0), E.in(1)), inputs: [ec] });
    expectClose(await got.data(), await want.data(), 1e-5, 1e-5, 'batched epilogue', scale);
    for (const x of [ag, ac, bg, bc, eg, ec, got, want]) x.dispose();
  },
);

testGpu(
  'matmul: vec4 A reads, padded A tile, interleaved columns, per-thread rows, double buffering, epilogue after the store give the CPU result on every load variant',
  async () => {
    const configs = [
      { tileM: 32, tileN: 32, tileK: 8, threadM: 4, threadN: 8, vec4: true, unroll: false, interleave: true },
      {
        tileM: 32,
        tileN: 32,
        tileK: 8,
        threadM: 4,
        threadN: 4,
        vec4: true,
        unroll: false,
        padA: 4,
        epilogueAfter: true,
      },
      {
        tileM: 32,
        tileN: 32,
        tileK: 8,
        threadM: 2,
        threadN: 8,
        vec4: true,
        unroll: false,
        interleave: true,
        epilogueAfter: true,
      },
      {
        tileM: 16,
        tileN: 32,
        tileK: 4,
        threadM: 4,
        threadN: 4,
        vec4: true,
        unroll: true,
        padA: 4,
        interleave: true,
        vecA: false,
      },
      // Per-thread staged rows (B rows padded to odd length; 8 and 4 vec4s), rolled and unrolled.
      {
        tileM: 32,
        tileN: 32,
        tileK: 8,
        threadM: 4,
        threadN: 8,
        vec4: true,
        unroll: false,
        interleave: true,
        rows: true,
      },
      {
        tileM: 32,
        tileN: 32,
        tileK: 8,
        threadM: 4,
        threadN: 4,
        vec4: true,
        unroll: false,
        rows: true,
        epilogueAfter: true,
      },
      {
        tileM: 16,
        tileN: 32,
        tileK: 4,
        threadM: 4,
        threadN: 4,
        vec4: true,
        unroll: true,
        interleave: true,
        rows: true,
        vecA: false,
      },
      // Double-buffered rows: k = 44 is 6 steps of 8 (even) and 11 steps of 4 (odd: the loop's second half is skipped).
      {
        tileM: 32,
        tileN: 32,
        tileK: 8,
        threadM: 4,
        threadN: 8,
        vec4: true,
        unroll: false,
        interleave: true,
        rows: true,
        doubleBuffer: true,
      },
      {
        tileM: 16,
        tileN: 32,
        tileK: 4,
        threadM: 4,
        threadN: 4,
        vec4: true,
        unroll: true,
        rows: true,
        doubleBuffer: true,
        epilogueAfter: true,
      },
    ];
    for (const cfg of configs) {
      const b = await createWebGPUBackend({ matmul: cfg });
      try {
        const [ag, ac] = twin(b, [37, 44], 700);
        const [bg, bc] = twin(b, [44, 68], 701);
        const [atg, atc] = twin(b, [44, 36], 702);
        const [btg, btc] = twin(b, [68, 44], 703);
        for (const [name, a1, b1, a2, b2] of [
          ['a b', ag, bg, ac, bc],
          ['aT b (m-major A)', atg.permute([1, 0]), bg, atc.permute([1, 0]), bc],
          ['a bT (k-major B)', ag, btg.permute([1, 0]), ac, btc.permute([1, 0])],
        ] as [string, NDArray, NDArray, NDArray, NDArray][]) {
          const scale = await mmScale(a2, b2);
          const epi = { expr: relu(E.in(0)), inputs: [] };
          const got = a1.matmul(b1, epi);
          const want = a2.matmul(b2, epi);
          expectClose(await got.data(), await want.data(), 1e-5, 1e-5, `${JSON.stringify(cfg)} ${name}`, scale);
          got.dispose();
          want.dispose();
        }
        for (const x of [ag, ac, bg, bc, atg, atc, btg, btc]) x.dispose();
      } finally {
        b.destroy();
      }
    }
  },
);

testGpu('reduce: column layout (32 outputs per workgroup), vec4 rows and four accumulators match the CPU', async () => {
  // 64-thread reductions reach the column layout (32 outputs x 2 threads) on any adapter;
  // then every knob off (the plain tree reduction).
  for (const reduce of [{}, { vec4: false, unroll: false, colOutputs: 0, targetGroups: 64 }]) {
    const b = await createWebGPUBackend({ reduceWorkgroupSize: 64, reduce });
    try {
      const cases: [number[], number[]][] = [
        [[300, 40], [0]],
        [[5000, 17], [0]],
        [[3, 4000], [1]],
        [
          [2, 3, 1000],
          [0, 2],
        ],
        [
          [4, 6000],
          [0, 1],
        ],
      ];
      let seed = 800;
      for (const [shape, axes] of cases) {
        const [xg, xc] = twin(b, shape, seed++);
        const abs = xc.map(E.max(E.in(0), E.neg(E.in(0)))).sum(axes);
        const scale = await abs.data();
        abs.dispose();
        for (const op of ['sum', 'max'] as const) {
          const g = op === 'sum' ? xg.sum(axes) : xg.max(axes);
          const c = op === 'sum' ? xc.sum(axes) : xc.max(axes);
          expectClose(
            await g.data(),
            await c.data(),
            op === 'sum' ? 1e-5 : 0,
            op === 'sum' ? 1e-6 : 0,
            `${JSON.stringify(reduce)} ${op} [${shape}] over ${axes}`,
            op === 'sum' ? scale : undefined,
          );
          g.dispose();
          c.dispose();
        }
        // int32 through the vec4 path too.
        const xi = xg.cast('int32');
        const ci = xc.cast('int32');
        const gi = xi.map(E.add(E.in(0), E.i(3))).sum(axes);
        const wi = ci.map(E.add(E.in(0), E.i(3))).sum(axes);
        expect(Array.from(await gi.data())).toEqual(Array.from(await wi.data()));
        for (const x of [xi, ci, gi, wi, xg, xc]) x.dispose();
      }
    } finally {
      b.destroy();
    }
  }
});

testGpu('x - x and x / x of Inf and NaN are NaN inside one kernel (no algebraic folding)', async () => {
  const v = [1.5, 0, Infinity, -Infinity, NaN, -3];
  const x = NDArray.fromData(gpu, new Float32Array(v), [6]);
  const [d, q] = NDArray.elementwise([E.sub(E.in(0), E.in(0)), E.div(E.in(0), E.in(0))], [x]);
  expect(Array.from(await d.data())).toEqual([0, 0, NaN, NaN, NaN, 0]);
  expect(Array.from(await q.data())).toEqual([1, NaN, NaN, NaN, NaN, 1]);
  for (const a of [x, d, q]) a.dispose();
});

testGpu('tuner: times candidates, picks the fastest per problem, caches by adapter in a JSON file', async () => {
  const cands = [
    { tileM: 16, tileN: 16, tileK: 8, threadM: 2, threadN: 4, vec4: true, unroll: false },
    { tileM: 32, tileN: 32, tileK: 8, threadM: 4, threadN: 4, vec4: true, unroll: false },
    { tileM: 4096, tileN: 4096, tileK: 4, threadM: 1, threadN: 4, vec4: true }, // invalid here: skipped
  ];
  const before = gpu.matmulOption;
  const t = await tuneMatmul(gpu, {
    candidates: cands,
    problems: [
      [24, 20, 16],
      [40, 48, 8],
    ],
    minMs: 1,
  });
  expect(gpu.matmulOption).toBe(before);
  expect(t.entries).toHaveLength(2);
  for (const e of t.entries) {
    expect(e.times).toHaveLength(2);
    expect(e.ms).toBe(Math.min(...e.times));
    expect(cands).toContainEqual(e.cfg);
  }
  const choose = tableChooser(t);
  expect(choose(40, 48, 8, 1)).toEqual(t.entries[1].cfg);
  expect(choose(20, 24, 16, 1)).toEqual(t.entries[0].cfg);
  // The chooser drives a real matmul; results stay right.
  gpu.setMatmulConfig(choose);
  try {
    const [ag, ac] = twin(gpu, [40, 8], 900);
    const [bg, bc] = twin(gpu, [8, 48], 901);
    const g = ag.matmul(bg);
    const c = ac.matmul(bc);
    expectClose(await g.data(), await c.data(), 1e-5, 1e-5, 'tuned chooser', await mmScale(ac, bc));
    for (const x of [ag, ac, bg, bc, g, c]) x.dispose();
  } finally {
    gpu.setMatmulConfig(before);
  }
  // The file cache round-trips a table under the adapter's key (and keeps other keys).
  const { readTuneCache, writeTuneCache } = await import('../../src/tune/cache');
  const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'surf-tune-')), 'tune.json');
  await writeTuneCache(file, 'other adapter|v0', { ...t, adapter: 'other' });
  await writeTuneCache(file, 'this|v2', t);
  expect(await readTuneCache(file, 'this|v2')).toEqual(t);
  expect((await readTuneCache(file, 'other adapter|v0'))?.adapter).toBe('other');
  expect(await readTuneCache(path.join(path.dirname(file), 'missing.json'), 'this|v2')).toBeNull();
  void cpu;
});

testGpu("matmul 'auto' on a software adapter keeps the small rolled config without tuning", async () => {
  // Only a software adapter skips tuning; on a hardware one there is nothing to check here.
  if (!gpu.software) return;
  const b = await createWebGPUBackend({ matmul: 'auto' });
  try {
    expect(b.matmulOption).toMatchObject({ unroll: false });
  } finally {
    b.destroy();
  }
});
