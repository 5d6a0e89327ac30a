import { E, NDArray } from '@surf/core';
import { bucketedMatmulConfig, createWebGPUBackend, tableChooser } from '@surf/webgpu';
import { MatmulProgram } from '../../../src/kernels/matmul/matmul';
import { MatmulConfig, MatmulProblem, planMatmul, splitOf } from '../../../src/kernels/matmul/plan';
import { matmulWgsl } from '../../../src/kernels/matmul/wgsl';
import type { PooledBuffer } from '../../../src/pool';
import { validateMatmulConfig } from '../../../src/tune/choose';
import { expectClose, matmulTwins, twin } from '../../cpu-compare';
import { testGpu } from '../../gpu';

// Split k (MatmulConfig.splitK): how k is chunked, which problems the untuned choice splits,
// that a config without a split plans and generates exactly as before, and results against
// the CPU backend (with and without epilogues, transposed operands, batches, the general and
// the fixed kernel, double buffering) for splits that take the two-kernel path.
const buf = (id: number) => ({ id, bytes: 1 << 20, lastBatch: 0 }) as unknown as PooledBuffer;
const op = (rowStride: number, colStride: number, id = 1) => ({
  buf: buf(id),
  offset: 0,
  batchStrides: [],
  rowStride,
  colStride,
});
const prob = (m: number, n: number, k: number): MatmulProblem => ({
  a: op(k, 1),
  b: op(n, 1, 2),
  batchShape: [],
  m,
  n,
  k,
  out: buf(3),
});
const BASE: MatmulConfig = { tileM: 32, tileN: 32, tileK: 16, threadM: 4, threadN: 4, vec4: true, unroll: false };

test('k-chunks: whole tileK steps, at least two per chunk, none empty', () => {
  expect(splitOf({ ...BASE, splitK: 12 }, 784)).toEqual({ splits: 10, chunkSteps: 5 }); // 49 steps
  expect(splitOf({ ...BASE, splitK: 4 }, 100)).toEqual({ splits: 3, chunkSteps: 3 }); // 7 steps: 3+3+1
  expect(splitOf({ ...BASE, splitK: 8 }, 48)).toEqual({ splits: 1, chunkSteps: 3 }); // 3 steps: one chunk of 2 at most
  expect(splitOf({ ...BASE, splitK: 8 }, 64)).toEqual({ splits: 2, chunkSteps: 2 });
  expect(splitOf(BASE, 784)).toEqual({ splits: 1, chunkSteps: 49 });
  expect(() =>
    validateMatmulConfig({ ...BASE, splitK: 1.5 }, {
      maxComputeInvocationsPerWorkgroup: 256,
      maxComputeWorkgroupStorageSize: 16384,
    } as GPUSupportedLimits),
  ).toThrow(/splitK/);
});

test('the untuned choice splits small-output deep-k problems only (the MLP step and Adam shapes, the GPT weight gradients)', () => {
  expect(bucketedMatmulConfig(64, 128, 784, 1).splitK).toBe(16); // 8 tiles, 49 steps: 13 chunks of 4
  expect(bucketedMatmulConfig(256, 10, 512, 1).splitK).toBe(10); // 8 tiles, 32 steps: 8 chunks of 4
  expect(bucketedMatmulConfig(512, 10, 256, 1).splitK).toBeUndefined(); // 16 steps: the sum would cost what it saves
  expect(bucketedMatmulConfig(256, 512, 784, 1).splitK).toBeUndefined(); // 128 tiles of 64 threads
  expect(bucketedMatmulConfig(128, 512, 4096, 1).splitK).toBe(8); // the GPT MLP's dW: 64 tiles, 128 steps: 8 chunks of 16
  expect(bucketedMatmulConfig(512, 128, 4096, 1).splitK).toBe(8);
  expect(bucketedMatmulConfig(512, 512, 4096, 1).splitK).toBeUndefined(); // 256 tiles of 64 threads
  expect(bucketedMatmulConfig(784, 128, 64, 1).splitK).toBeUndefined(); // dW1: 4 steps
  expect(bucketedMatmulConfig(784, 512, 256, 1).splitK).toBeUndefined(); // 400 tiles
  expect(bucketedMatmulConfig(1024, 1024, 1024, 1).splitK).toBeUndefined();
  const cfg: MatmulConfig = { ...BASE, tileK: 32 };
  const choose = tableChooser({
    version: 0,
    adapter: 'test',
    entries: [{ m: 250, n: 256, k: 256, cfg, ms: 1, times: [1] }],
  }); // off the tile: the entry stands for nearby problems
  expect(choose(256, 256, 256, 1).splitK).toBeUndefined();
  expect(choose(64, 128, 784, 1).splitK).toBe(8);
});

test('no split: the same plan key and shader as a config without the field; a split kernel stores partials without the epilogue', () => {
  const shader = (cfg: MatmulConfig, p: MatmulProblem) => {
    const plan = planMatmul(cfg, p);
    return [plan.key, matmulWgsl(plan, new MatmulProgram(plan).uniforms())];
  };
  const epi = { expr: E.max(E.add(E.in(0), E.in(1)), E.f(0)), inputs: [{ ...op(0, 1, 4), dtype: 'float32' as const }] };
  for (const p of [prob(64, 128, 784), prob(60, 100, 90), { ...prob(64, 128, 784), epi }]) {
    expect(shader({ ...BASE, splitK: 1 }, p)).toEqual(shader(BASE, p));
    expect(shader({ ...BASE, splitK: 8 }, { ...p, k: 16 })).toEqual(shader(BASE, { ...p, k: 16 })); // one step: nothing to split
  }
  const split = planMatmul({ ...BASE, splitK: 4 }, { ...prob(64, 128, 784), epi });
  expect(split.splits).toBe(4);
  expect(split.key).toContain('|s');
  expect(split.eBufs).toEqual([]);
  expect(split.splitEpi).toBe(epi);
  expect(matmulWgsl(split, new MatmulProgram(split).uniforms())).not.toContain('epi_');
});

testGpu(
  'split k matches the CPU: epilogues after the sum, transposed operands, batches, general and fixed kernels, double buffering',
  async () => {
    const RDB: MatmulConfig = { ...BASE, tileK: 8, interleave: true, rows: true, doubleBuffer: true, splitK: 2 };
    const runs: [MatmulConfig, number[][]][] = [
      // [m, k, n, batch]: k 100 is 7 steps of 16 (chunks 3+3+1, the last one past k); n 10 sums as scalars.
      [
        { ...BASE, splitK: 4 },
        [
          [20, 100, 24, 1],
          [33, 100, 10, 2],
        ],
      ],
      // Fixed path (aligned), rows + double buffering: 5 steps of 8 in chunks of 3 and 2 (odd and even).
      [RDB, [[32, 40, 32, 1]]],
    ];
    for (const [cfg, shapes] of runs) {
      const b = await createWebGPUBackend({ matmul: cfg });
      try {
        let seed = 2500;
        for (const [m, k, n, batch] of shapes) {
          const { ag, ac, atg, atc, bg, bc, btg, btc, tr, epis, all } = matmulTwins(b, m, k, n, batch, seed);
          seed += 6;
          const pairs: [string, NDArray, NDArray, NDArray, NDArray][] = [['a b', ag, bg, ac, bc]];
          if (!cfg.rows)
            pairs.push(['aT bT', atg.permute(tr), btg.permute([1, 0]), atc.permute(tr), btc.permute([1, 0])]);
          for (const [name, a1, b1, a2, b2] of pairs) {
            const abs = (x: NDArray) => x.map(E.max(E.in(0), E.neg(E.in(0))));
            const scale = (await abs(a2).matmul(abs(b2)).data()) as Float32Array;
            const what = `split ${cfg.splitK} ${cfg.rows ? 'rows+db' : 'flat'} ${name} m=${m} k=${k} n=${n} batch=${batch}`;
            const d0 = b.stats().dispatches;
            const plain = a1.matmul(b1);
            const want0 = a2.matmul(b2);
            expectClose(await plain.data(), await want0.data(), 1e-5, 1e-5, `${what} (no epilogue)`, scale);
            expect(b.stats().dispatches - d0).toBe(2); // the partial products, then their sum
            for (const x of [plain, want0]) x.dispose();
            for (const e of epis) {
              const got = a1.matmul(b1, { expr: e.expr, inputs: e.g });
              const want = a2.matmul(b2, { expr: e.expr, inputs: e.c });
              expectClose(await got.data(), await want.data(), 1e-5, 1e-5, `${what} epilogue`, scale);
              got.dispose();
              want.dispose();
            }
          }
          for (const x of all) x.dispose();
        }
        // A problem with one chunk's worth of k keeps the single kernel.
        const [x, xc] = twin(b, [16, 8], 2600);
        const [y, yc] = twin(b, [8, 12], 2601);
        const d0 = b.stats().dispatches;
        const z = x.matmul(y);
        expectClose(await z.data(), await xc.matmul(yc).data(), 1e-5, 1e-5, 'unsplit 16x8x12');
        expect(b.stats().dispatches - d0).toBe(1);
        for (const t of [x, y, z, xc, yc]) t.dispose();
      } finally {
        b.destroy();
      }
    }
  },
);
