import { E, NDArray } from '@surf/core';
import { WebGPUBackend } from '@surf/webgpu';
import { describeGpu, gpuBackend } from './gpu';

// GPU time from timestamp queries: every compute pass is timed, the sums arrive by the next
// sync(), results are the same as untimed, and an untimed backend reports no GPU time.
describeGpu('timestamps: true', () => {
  let timed: WebGPUBackend;
  let plain: WebGPUBackend;
  beforeAll(async () => {
    plain = await gpuBackend();
    timed = await gpuBackend({ timestamps: true }).catch((e: Error) => {
      // The one acceptable refusal names the missing feature; the adapters we test on have it.
      expect(e.message).toMatch(/timestamp-query/);
      throw e;
    });
  });
  afterAll(() => {
    timed?.destroy();
    plain?.destroy();
  });

  const work = async (b: WebGPUBackend) => {
    const a = NDArray.fromData(
      b,
      Float32Array.from({ length: 64 * 48 }, (_, i) => Math.sin(i)),
      [64, 48],
    );
    const w = NDArray.fromData(
      b,
      Float32Array.from({ length: 48 * 32 }, (_, i) => Math.cos(i)),
      [48, 32],
    );
    const y = a.matmul(w).map(E.max(E.in(0), E.f(0)));
    const out = Array.from(await y.data());
    [a, w, y].forEach((x) => x.dispose());
    return out;
  };

  test('sums the GPU time of each pass by sync(), with the untimed results', async () => {
    const s0 = timed.stats();
    expect(s0.gpuTimeMs).toBe(0);
    const want = await work(plain);
    expect(await work(timed)).toEqual(want);
    await timed.sync();
    const s1 = timed.stats();
    expect(s1.timedPasses!).toBeGreaterThanOrEqual(1);
    expect(s1.gpuTimeMs!).toBeGreaterThan(0);
    // A few small kernels on any adapter take well under a second of GPU time.
    expect(s1.gpuTimeMs!).toBeLessThan(1000);
    await work(timed);
    await timed.sync();
    expect(timed.stats().timedPasses!).toBeGreaterThan(s1.timedPasses!);
    expect(plain.stats().gpuTimeMs).toBeUndefined();
  });
});
