import { CpuBackend, E, NDArray } from '@surf/core';
import type { WebGPUBackend } from '@surf/webgpu';
import { opHelpersFor } from '../../src/kernels/wgsl-ops';
import { expectClose } from '../cpu-compare';
import { describeGpu, gpuBackend } from '../gpu';

// Kernels carry only the op helpers their expression calls (shader text, and compile time on
// software adapters, stays small), including the ones those call; a matmul epilogue gets
// them too.
test('opHelpersFor picks the called helpers and their dependencies, callees first', () => {
  const t = opHelpersFor('let t0: f32 = ftanh_(v0);');
  expect(t.indexOf('fn fexpm1_(')).toBeGreaterThanOrEqual(0);
  expect(t.indexOf('fn fexpm1_(')).toBeLessThan(t.indexOf('fn ftanh_('));
  expect(t).not.toMatch(/fn ferf_|fn fcos_/);
  expect(opHelpersFor('let t0: f32 = (v0 + v1);')).toBe('');
  const all = opHelpersFor('ferf_(a) fcos_(b) fmod_(c, d) imod_(e, f) flog1p_(g) fmin_(h, i) fsign_(j) isign_(k)');
  expect(all.match(/^fn /gm)!.length).toBe(8);
});

describeGpu('on WebGPU', () => {
  let gpu: WebGPUBackend;
  beforeAll(async () => {
    gpu = await gpuBackend();
  });
  afterAll(() => gpu?.destroy());

  test("a matmul epilogue with the op table's newer ops matches the CPU backend", async () => {
    const cpu = new CpuBackend();
    const vals = (n: number, s: number) => Array.from({ length: n }, (_, i) => Math.sin(i * 1.7 + s) * 2);
    const run = (be: CpuBackend | WebGPUBackend) => {
      const a = NDArray.fromData(be, vals(5 * 7, 1), [5, 7]);
      const b = NDArray.fromData(be, vals(7 * 3, 2), [7, 3]);
      const bias = NDArray.fromData(be, vals(3, 3), [3]);
      const x = E.add(E.in(0), E.in(1));
      return a.matmul(b, {
        expr: E.add(E.mul(E.tanh(x), E.erf(x)), E.add(E.mod(x, E.f(1.5)), E.expm1(E.mul(x, E.f(0.1))))),
        inputs: [bias],
      });
    };
    expectClose(await run(gpu).data(), await run(cpu).data(), 1e-5, 1e-5, 'tanh·erf + x mod 1.5 + expm1(x/10)');
  });
});
