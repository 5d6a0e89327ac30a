import { CpuBackend, NDArray } from '@surf/core';
import type { WebGPUBackend } from '@surf/webgpu';
import fixtures from '../../../test-support/fixtures/philox.json';
import { gpuBackend, testGpu } from './gpu';

/**
 * randn uses the device's sqrt (ln and cos are core's float32 polynomials, spelled alike in
 * WGSL): bit-exact where sqrt is correctly rounded, a few ulp where it or a fused a·b + c is
 * not. Against the numpy reference (float64 libm) the polynomials add about 1 ulp.
 */
const NORMAL_ATOL = 1e-6;

// The WGSL Philox kernel against the numpy reference (scripts/rng/make-philox-fixtures.py)
// and against the CPU backend on a draw long enough to carry into the offset's high word.
testGpu('WebGPU random: the reference draws, and the CPU backend (uniform and int bit for bit)', async () => {
  const b: WebGPUBackend = await gpuBackend();
  const cpu = new CpuBackend();
  try {
    for (const d of fixtures.draws) {
      const st = NDArray.fromData(
        b,
        Int32Array.from([d.key[0], d.key[1], d.offset % 2 ** 32, Math.floor(d.offset / 2 ** 32)]),
        [4],
        'int32',
      );
      const n = d.uniform.length;
      const u = await NDArray.fromStorage(b.random(st.strided, [n], { dist: 'uniform' }), [n]).data();
      expect(Array.from(u)).toEqual(d.uniform);
      const r = d.randint;
      const ints = b.random(st.strided, [n], { dist: 'int', low: r.low, range: r.high - r.low });
      expect(Array.from(await NDArray.fromStorage(ints, [n]).data())).toEqual(r.values);
      const z = await NDArray.fromStorage(b.random(st.strided, [n], { dist: 'normal' }), [n]).data();
      z.forEach((v, i) =>
        expect(Math.abs(v - d.normal[i])).toBeLessThanOrEqual(NORMAL_ATOL * Math.max(1, Math.abs(v))),
      );
    }
    // Offset 2^32 - 100: elements from 400 on carry into the high counter word; 1001 elements
    // end with a partial group of four.
    const words = Int32Array.from([7, -3, -100, 5]);
    const n = 1001;
    for (const p of [{ dist: 'uniform' as const }, { dist: 'int' as const, low: -(2 ** 31), range: 2 ** 32 }]) {
      const g = NDArray.fromStorage(b.random(NDArray.fromData(b, words, [4], 'int32').strided, [n], p), [n]);
      const c = NDArray.fromStorage(cpu.random(NDArray.fromData(cpu, words, [4], 'int32').strided, [n], p), [n]);
      expect(Array.from(await g.data())).toEqual(Array.from(await c.data()));
    }
    const g = NDArray.fromStorage(b.random(NDArray.fromData(b, words, [4], 'int32').strided, [n], { dist: 'normal' }), [
      n,
    ]);
    const c = NDArray.fromStorage(
      cpu.random(NDArray.fromData(cpu, words, [4], 'int32').strided, [n], { dist: 'normal' }),
      [n],
    );
    const gv = await g.data();
    const cv = await c.data();
    let worst = 0;
    cv.forEach((v, i) => (worst = Math.max(worst, Math.abs(gv[i] - v) / Math.max(1, Math.abs(v)))));
    expect(worst).toBeLessThanOrEqual(NORMAL_ATOL);
  } finally {
    b.destroy();
  }
});
