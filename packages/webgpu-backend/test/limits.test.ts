import { BackendError, E, NDArray } from '@surf/core';
import { createWebGPUBackend, requestWebGPUAdapter } from '@surf/webgpu';
import { cpu, expectClose, twin } from './cpu-compare';
import { gpuBackend, testGpu } from './gpu';

// Dispatch-size and buffer-size limits.

testGpu('more than 65,535 workgroups in a dimension: a real 2-D grid', async () => {
  // 64-thread workgroups over 65,535·64 + 77 elements need 65,537 workgroups.
  const b = await gpuBackend({ workgroupSize: 64 });
  try {
    expect(b.limits.maxComputeWorkgroupsPerDimension).toBeLessThan(65536 + 1);
    const n = 65535 * 64 + 77;
    const x = NDArray.elementwise([E.add(E.in(0), E.f(1))], [NDArray.full(b, [n], 2, 'int32').cast('float32')])[0];
    const got = (await x.data()) as Float32Array;
    expect(got.length).toBe(n);
    let bad = 0;
    for (let i = 0; i < n; i++) if (got[i] !== 3) bad++;
    expect(bad).toBe(0);
    x.dispose();
  } finally {
    b.destroy();
  }
});

testGpu(
  'every kernel folds its grid: elementwise, reduce, matmul and gather with at most 3 workgroups per dimension',
  async () => {
    const b = await gpuBackend({
      maxWorkgroupsPerDim: 3,
      workgroupSize: 32,
      reduceWorkgroupSize: 32,
      matmul: { tileM: 16, tileN: 16, tileK: 4, threadM: 2, threadN: 4 },
    });
    try {
      const [xg, xc] = twin(b, [45, 77], 1);
      const [yg, yc] = twin(b, [77, 50], 2);
      const pairs: [string, NDArray, NDArray, number][] = [
        ['elementwise', xg.map(E.mul(E.in(0), E.in(0))), xc.map(E.mul(E.in(0), E.in(0))), 0],
        ['elementwise strided', xg.permute([1, 0]).map(E.neg(E.in(0))), xc.permute([1, 0]).map(E.neg(E.in(0))), 0],
        ['sum rows', xg.sum(1), xc.sum(1), 1e-5],
        ['sum cols', xg.sum(0), xc.sum(0), 1e-5],
        ['sum all (multi-pass)', xg.sum(), xc.sum(), 1e-5],
        ['matmul', xg.matmul(yg), xc.matmul(yc), 1e-5],
        [
          'gather',
          xg.gather(1, NDArray.fromData(b, new Int32Array([76, 0, 5]), [3])),
          xc.gather(1, NDArray.fromData(cpu, new Int32Array([76, 0, 5]), [3])),
          0,
        ],
      ];
      for (const [what, g, c, tol] of pairs) {
        expectClose(
          await g.data(),
          await c.data(),
          tol,
          tol,
          what,
          tol ? new Float32Array(c.size).fill(50) : undefined,
        );
      }
    } finally {
      b.destroy();
    }
  },
);

testGpu('a tensor at maxStorageBufferBindingSize works; one element more is a clear BackendError', async () => {
  const adapter = await requestWebGPUAdapter();
  // A device with default limits: 128 MiB bindings, small enough to fill on SwiftShader.
  const device = await adapter.requestDevice();
  const b = await createWebGPUBackend({ device, adapter });
  try {
    const limit = Math.min(b.limits.maxStorageBufferBindingSize, b.limits.maxBufferSize);
    const n = limit / 4;
    const ones = NDArray.full(b, [n], 1, 'int32');
    const s = ones.sum();
    expect(Array.from(await s.data())).toEqual([n]);
    ones.dispose();
    s.dispose();
    let err: unknown = null;
    try {
      NDArray.full(b, [n + 1], 1, 'int32');
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(BackendError);
    expect((err as Error).message).toMatch(
      /full: a int32 tensor of \d+ elements needs \d+ bytes, more than this adapter's storage buffer limit of \d+ bytes/,
    );
    expect(() => b.fromData(new Float32Array(n + 1), 'float32')).toThrow(/fromData: .*storage buffer limit/);
    // The failed allocation leaves the backend usable.
    const t = NDArray.fromData(b, [1, 2], [2]);
    expect(Array.from(await t.sum().data())).toEqual([3]);
  } finally {
    b.destroy();
    device.destroy();
  }
});
