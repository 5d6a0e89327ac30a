import { E, NDArray } from '@surf/core';
import { bucketedMatmulConfig, createWebGPUBackend, tableChooser } from '@surf/webgpu';
import { MatmulConfig, MatmulProblem, planMatmul } from '../../../src/kernels/matmul/plan';
import { MatmulProgram, fitted } from '../../../src/kernels/matmul/matmul';
import { matmulWgsl } from '../../../src/kernels/matmul/wgsl';
import type { PooledBuffer } from '../../../src/pool';
import { workgroupBytes } from '../../../src/tune/choose';
import { expectClose, matmulTwins, twin, twinLayouts } from '../../cpu-compare';
import { testGpu } from '../../gpu';

// The aligned fast path (MatmulConfig.fixed): which problems qualify, what the shader loses
// (bounds checks, size and stride parameters), and results against the CPU backend for
// qualifying shapes (epilogues, transposed operands, batches, odd and even k-step counts)
// and for shapes that must keep the general kernel.
const buf = (id: number) => ({ id, bytes: 1 << 20, lastBatch: 0 }) as unknown as PooledBuffer;
const op = (rowStride: number, colStride: number, id = 1) => ({
  buf: buf(id),
  offset: 0,
  batchStrides: [],
  rowStride,
  colStride,
});
const prob = (m: number, n: number, k: number, a = op(k, 1), b = op(n, 1, 2)): MatmulProblem => ({
  a,
  b,
  batchShape: [],
  m,
  n,
  k,
  out: buf(3),
});
const RDB: MatmulConfig = {
  tileM: 32,
  tileN: 32,
  tileK: 16,
  threadM: 4,
  threadN: 4,
  vec4: true,
  interleave: true,
  rows: true,
  doubleBuffer: true,
};
const FLAT: MatmulConfig = {
  tileM: 32,
  tileN: 32,
  tileK: 8,
  threadM: 4,
  threadN: 4,
  vec4: true,
  padA: 4,
  epilogueAfter: true,
};

test('fixed path: tile-aligned contiguous problems qualify (row-major or transposed), others keep the general kernel', () => {
  expect(planMatmul(RDB, prob(64, 96, 48)).fixed).toBe(true);
  expect(planMatmul(RDB, prob(64, 96, 48, op(1, 64), op(1, 48, 2))).fixed).toBe(true); // Aᵀ, Bᵀ
  expect(planMatmul(RDB, prob(64, 96, 48)).key).toContain('|f64,96,48');
  expect(planMatmul(RDB, prob(65, 96, 48)).fixed).toBe(false); // m off the tile
  expect(planMatmul(RDB, prob(64, 96, 40)).fixed).toBe(false); // k off the tile
  expect(planMatmul(RDB, prob(64, 96, 48, op(64, 1))).fixed).toBe(false); // a cropped view: row stride 64, k 48
  expect(planMatmul({ ...RDB, fixed: false }, prob(64, 96, 48)).fixed).toBe(false);
  // Two aligned shapes are two pipelines; off the tile, one pipeline serves every size.
  expect(planMatmul(RDB, prob(64, 96, 48)).key).not.toBe(planMatmul(RDB, prob(64, 96, 64)).key);
  expect(planMatmul(RDB, prob(65, 96, 48)).key).toBe(planMatmul(RDB, prob(67, 92, 44)).key);
});

test('fixed path shader: no bounds checks, sizes and strides compiled in, the even-step loop without its first-half test', () => {
  const shader = (cfg: MatmulConfig, p: MatmulProblem) => {
    const plan = planMatmul(cfg, p);
    return matmulWgsl(plan, new MatmulProgram(plan).uniforms());
  };
  const fixed = shader(RDB, prob(64, 96, 64));
  const general = shader(RDB, prob(65, 96, 64));
  expect(general).toMatch(/if \(gr < /);
  expect(general).toMatch(/if \(r < /);
  expect(fixed).not.toMatch(/if \((gr|gc|r|c0|c) < /);
  expect(fixed).toContain('let nk = 4u;');
  expect(fixed).toContain('i32(gr) * 64i');
  expect(fixed).not.toContain('more1');
  expect(general).toContain('more1');
  expect(shader(RDB, prob(64, 96, 48))).toContain('more1'); // 3 steps: odd, the general loop
});

testGpu(
  'fixed path matches the CPU: epilogues, transposed operands, batches with broadcast; unaligned shapes take the general kernel and are right',
  async () => {
    for (const cfg of [RDB, FLAT]) {
      const b = await createWebGPUBackend({ matmul: cfg });
      try {
        let seed = 1500;
        // [m, k, n, batch]: k = 48 is 3 steps of 16 (odd) or 6 of 8; k = 64 is 4 or 8 (even); k = 40 misses the tile.
        // The flat config (epilogue after the store) on one aligned shape: SwiftShader compiles slowly.
        const shapes = cfg.rows
          ? [
              [64, 48, 32, 1],
              [32, 64, 96, 2],
              [64, 40, 32, 2],
            ]
          : [[32, 64, 96, 2]];
        for (const [m, k, n, batch] of shapes) {
          const tw = matmulTwins(b, m, k, n, batch, seed);
          const { epis, all } = tw;
          seed += 6;
          for (const { name, a1, b1, a2, b2, scale } of await twinLayouts(tw)) {
            const what = `${cfg.rows ? 'rows+db' : 'flat'} ${name} m=${m} k=${k} n=${n} batch=${batch}`;
            const plain = a1.matmul(b1);
            const want0 = a2.matmul(b2);
            expectClose(await plain.data(), await want0.data(), 1e-5, 1e-5, `${what} (no epilogue)`, scale);
            for (const x of [plain, want0]) x.dispose();
            // One epilogue per layout (each is a pipeline to compile, slow on SwiftShader).
            for (const e of [epis[name === 'a b' ? 0 : 1]]) {
              const got = a1.matmul(b1, { expr: e.expr, inputs: e.g });
              const want = a2.matmul(b2, { expr: e.expr, inputs: e.c });
              expectClose(await got.data(), await want.data(), 1e-5, 1e-5, `${what} epilogue`, scale);
              got.dispose();
              want.dispose();
            }
          }
          for (const x of all) x.dispose();
        }
        // At run time: a new aligned shape compiles its own pipeline, a new unaligned one reuses the general kernel's.
        const count = async (m: number, k: number, n: number) => {
          const [x, xc] = twin(b, [m, k], 1600);
          const [y, yc] = twin(b, [k, n], 1601);
          const before = b.pipelineCount;
          const z = x.matmul(y);
          await z.data();
          const added = b.pipelineCount - before;
          for (const t of [x, y, z, xc, yc]) t.dispose();
          return added;
        };
        await count(65, 48, 32);
        await count(64, 64, 32);
        expect(await count(64, 64, 64)).toBe(1);
        expect(await count(67, 44, 36)).toBe(0); // same vec4 layout as 65x48x32
      } finally {
        b.destroy();
      }
    }
  },
);

test('tuned table: an entry timed on the fixed path stands only for problems that tile exactly under its config', () => {
  const cfg: MatmulConfig = { ...RDB, tileM: 64, tileN: 64 };
  const choose = tableChooser({
    version: 0,
    adapter: 'test',
    entries: [{ m: 128, n: 128, k: 64, cfg, ms: 1, times: [1] }],
  });
  expect(choose(128, 192, 64, 1)).toEqual(cfg);
  expect(choose(130, 128, 64, 1)).toEqual(bucketedMatmulConfig(130, 128, 64, 1));
  expect(choose(128, 128, 72, 1)).toEqual(bucketedMatmulConfig(128, 128, 72, 1));
});

test('the double-buffered 128x128 bucket gives way to flat staging on an adapter with 32 KB of workgroup memory', () => {
  const huge = bucketedMatmulConfig(2048, 2048, 2048, 1);
  expect(huge.doubleBuffer).toBe(true);
  const dev = (bytes: number) => ({ device: { limits: { maxComputeWorkgroupStorageSize: bytes } } as GPUDevice });
  expect(fitted(dev(49152), huge)).toBe(huge);
  const flat = fitted(dev(32768), huge);
  expect(flat).toMatchObject({
    tileM: 128,
    tileN: 128,
    tileK: 16,
    rows: false,
    doubleBuffer: false,
    padA: 4,
    interleave: true,
  });
  expect(workgroupBytes(flat)).toBeLessThanOrEqual(32768);
});
