import { E, NDArray } from '@surf/core';
import { createWebGPUBackend } from '@surf/webgpu';
import { MatmulConfig, MatmulProblem, planMatmul, warpColsOf } from '../../../src/kernels/matmul/plan';
import { MatmulProgram } from '../../../src/kernels/matmul/matmul';
import { matmulWgsl } from '../../../src/kernels/matmul/wgsl';
import type { PooledBuffer } from '../../../src/pool';
import { workgroupBytes } from '../../../src/tune/choose';
import { expectClose, matmulTwins, twinLayouts } from '../../cpu-compare';
import { testGpu } from '../../gpu';

// The warp layout (MatmulConfig.warpCols) and the A slot permutation (swizzleA): when they
// apply, what the shader declares and reads, and results against the CPU backend on the fixed
// path and the general kernel (transposes, a batch, an epilogue, an odd k-step count).
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
const shader = (cfg: MatmulConfig, p: MatmulProblem) => {
  const plan = planMatmul(cfg, p);
  return matmulWgsl(plan, new MatmulProgram(plan).uniforms());
};
const HUGE: MatmulConfig = {
  tileM: 128,
  tileN: 128,
  tileK: 16,
  threadM: 8,
  threadN: 8,
  vec4: true,
  interleave: true,
  rows: true,
  doubleBuffer: true,
};

test('warpCols applies only where 32 threads make whole thread rows and whole warps of the tile', () => {
  expect(warpColsOf({ ...HUGE, warpCols: 8 })).toBe(8); // 16x16 threads: warps of 4x8
  expect(warpColsOf({ ...HUGE, warpCols: 4 })).toBe(4); // warps of 8x4
  expect(warpColsOf({ ...HUGE, warpCols: 32 })).toBe(0); // wider than the tile's 16 thread columns
  expect(warpColsOf({ ...HUGE, warpCols: 6 })).toBe(0);
  expect(warpColsOf({ ...HUGE, tileM: 16, threadM: 8, warpCols: 8 })).toBe(0); // 2 thread rows, a warp needs 4
  expect(planMatmul({ ...HUGE, rows: false, warpCols: 8 }, prob(256, 256, 256)).warpCols).toBe(0); // flat staging: no layout
  expect(planMatmul({ ...HUGE, warpCols: 8 }, prob(256, 256, 256)).key).not.toBe(
    planMatmul(HUGE, prob(256, 256, 256)).key,
  );
  expect(planMatmul({ ...HUGE, swizzleA: true }, prob(256, 256, 256)).key).not.toBe(
    planMatmul(HUGE, prob(256, 256, 256)).key,
  );
});

test('warp layout shader: A rows padded to an odd length (and counted), tx/ty from lane and warp, swizzled A reads at constant slots', () => {
  const cfg: MatmulConfig = { ...HUGE, warpCols: 8, swizzleA: true };
  const w = shader(cfg, prob(256, 256, 256));
  expect(w).toContain('var<workgroup> As4: array<array<vec4<f32>, 33>, 32>;');
  expect(w).toContain('let tx = (warp % 2u) * 8u + lane % 8u;');
  expect(w).toContain('let ty = (warp / 2u) * 4u + lane / 8u;');
  // k-row 4 sits in slot 5 (4 ^ 1), its second vec4 at 11; k-row 15 in slot 12.
  expect(w).toContain('let a4_1 = (*pa)[11];');
  expect(w).toContain('let a4_0 = (*pa)[24];');
  expect(w).toContain('(kk + 1u) ^ (((kk + 1u) >> 2u) & 3u)');
  expect(workgroupBytes(cfg)).toBe(2 * (33 * 16 + 33 * 16) * 16);
  expect(workgroupBytes(cfg)).toBeLessThanOrEqual(49152);
});

testGpu(
  'warp layout and swizzled A match the CPU: fixed and general kernels, transposes, a batch, an epilogue',
  async () => {
    // 32x32 tiles of 4x4: 8x8 threads, two warps; warpCols 4 makes each an 8x4 block.
    const cfgs: MatmulConfig[] = [
      {
        tileM: 32,
        tileN: 32,
        tileK: 16,
        threadM: 4,
        threadN: 4,
        vec4: true,
        interleave: true,
        rows: true,
        doubleBuffer: true,
        warpCols: 4,
        swizzleA: true,
      },
      {
        tileM: 32,
        tileN: 32,
        tileK: 16,
        threadM: 4,
        threadN: 4,
        vec4: true,
        rows: true,
        doubleBuffer: true,
        warpCols: 4,
        swizzleA: true,
      }, // the 128x128 bucket's knobs
      {
        tileM: 32,
        tileN: 32,
        tileK: 8,
        threadM: 4,
        threadN: 4,
        vec4: true,
        rows: true,
        warpCols: 8,
        swizzleA: true,
        unroll: false,
      },
    ];
    for (const cfg of cfgs) {
      const b = await createWebGPUBackend({ matmul: cfg });
      try {
        let seed = 2100;
        // [m, k, n, batch]: aligned with 3 k-steps of 16 (odd), then off the tile (general kernel).
        for (const [m, k, n, batch] of [
          [64, 48, 32, 2],
          [40, 44, 36, 1],
        ]) {
          const tw = matmulTwins(b, m, k, n, batch, seed);
          const { epis, all } = tw;
          seed += 6;
          for (const { name, a1, b1, a2, b2, scale } of await twinLayouts(tw)) {
            const e = epis[0];
            const got = a1.matmul(b1, { expr: e.expr, inputs: e.g });
            const want = a2.matmul(b2, { expr: e.expr, inputs: e.c });
            expectClose(
              await got.data(),
              await want.data(),
              1e-5,
              1e-5,
              `warp ${cfg.warpCols} ${name} m=${m} k=${k} n=${n} batch=${batch}`,
              scale,
            );
            got.dispose();
            want.dispose();
          }
          for (const x of all) x.dispose();
        }
      } finally {
        b.destroy();
      }
    }
  },
);
