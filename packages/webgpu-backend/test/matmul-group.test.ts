import { createWebGPUBackend } from '@surf/webgpu';
import { MatmulConfig, MatmulProblem, planMatmul } from '../src/kernels/matmul-plan';
import type { PooledBuffer } from '../src/pool';
import { expectClose, matmulTwins, twinLayouts } from './cpu-compare';
import { testGpu } from './gpu';

// The launch order of output tiles (MatmulConfig.groupM): bands of g tile rows walked column
// by column. Every tile must still be computed exactly once, with the batch and the k-split
// taken from the same workgroup index: results against the CPU backend where the tile rows
// are not a multiple of g (a short last band), with a batch, a k-split and an epilogue.
const buf = (id: number) => ({ id, bytes: 1 << 20, lastBatch: 0 }) as unknown as PooledBuffer;
const op = (rowStride: number, colStride: number, id = 1) => ({ buf: buf(id), offset: 0, batchStrides: [], rowStride, colStride });
const prob = (m: number, n: number, k: number): MatmulProblem => ({ a: op(k, 1), b: op(n, 1, 2), batchShape: [], m, n, k, out: buf(3) });
const BASE: MatmulConfig = { tileM: 16, tileN: 16, tileK: 8, threadM: 4, threadN: 4, vec4: true, rows: true };

test('groupM is part of the kernel key, and 0 or 1 is the row-by-row order', () => {
  const p = prob(64, 64, 64);
  expect(planMatmul({ ...BASE, groupM: 4 }, p).key).not.toBe(planMatmul(BASE, p).key);
  expect(planMatmul({ ...BASE, groupM: 1 }, p).key).toBe(planMatmul(BASE, p).key);
  expect(planMatmul({ ...BASE, groupM: 3 }, p).groupM).toBe(3);
});

testGpu('grouped tile order matches the CPU: a short last band, a batch, a k-split, an epilogue, fixed and general kernels', async () => {
  for (const cfg of [{ ...BASE, groupM: 3 }, { ...BASE, groupM: 2, splitK: 2 }]) {
    const b = await createWebGPUBackend({ matmul: cfg });
    try {
      let seed = 3100;
      // [m, k, n, batch]: 5 x 3 tiles of 16 (aligned: the fixed kernel), then 4 x 5 off the tile.
      for (const [m, k, n, batch] of [[80, 32, 48, 2], [60, 40, 72, 1]]) {
        const tw = matmulTwins(b, m, k, n, batch, seed);
        seed += 6;
        for (const { name, a1, b1, a2, b2, scale } of await twinLayouts(tw)) {
          const e = tw.epis[1];
          const got = a1.matmul(b1, { expr: e.expr, inputs: e.g });
          const want = a2.matmul(b2, { expr: e.expr, inputs: e.c });
          expectClose(await got.data(), await want.data(), 1e-5, 1e-5, `groupM ${cfg.groupM} split ${cfg.splitK ?? 1} ${name} m=${m} k=${k} n=${n} batch=${batch}`, scale);
          got.dispose(); want.dispose();
        }
        for (const x of tw.all) x.dispose();
      }
    } finally {
      b.destroy();
    }
  }
});
