import { BackendError, CpuBackend, DTypeError, NDArray, ShapeError, View, attentionNd } from '@surf/core';
import type { Backend } from '@surf/core';
import type { WebGPUBackend } from '@surf/webgpu';
import { describeEach, gpuAvailable, gpuBackend, testGpu } from '../../gpu';

// The attention contract's argument checks are the same on both backends (values are in the
// shared op cases); WebGPU names the head dims it cannot tile.
let gpu: WebGPUBackend | null = null;
const cpu = new CpuBackend();
beforeAll(async () => {
  if (gpuAvailable) gpu = await gpuBackend();
});
afterAll(() => gpu?.destroy());

const f32 = (b: Backend, shape: number[]) =>
  NDArray.fromData(b, new Float32Array(shape.reduce((a, c) => a * c, 1)), shape);

describeEach(['cpu', 'webgpu'] as const, 'attention contract checks on %s', (kind) => {
  const be = () => (kind === 'cpu' ? cpu : gpu!);

  test('shapes, dtypes and masks are checked before any work', () => {
    const b = be();
    const q = f32(b, [2, 3, 4]),
      k = f32(b, [2, 5, 4]),
      v = f32(b, [2, 5, 6]);
    const s = (x: NDArray, shape = x.shape) => ({ storage: x.storage, view: View.contiguous(shape) });
    expect(() => b.attention(s(q), s(k, [10, 4]) as never, s(v), { scale: 1, causal: false })).toThrow(ShapeError);
    expect(() => b.attention(s(q), s(k), s(v), { scale: 1, causal: false, mask: s(f32(b, [2, 3, 4])) })).toThrow(
      /mask has shape \[2,3,4\]; expected \[2,3,5\]/,
    );
    const ints = NDArray.fromData(b, new Int32Array(24), [2, 3, 4], 'int32');
    expect(() => b.attention(s(ints), s(k), s(v), { scale: 1, causal: false })).toThrow(DTypeError);
    expect(() => b.attention(s(q), s(k), s(v), { scale: NaN, causal: false })).toThrow(
      /scale NaN; expected a finite number/,
    );
    const out = attentionNd(q, k, v, { scale: 0.5 });
    expect(() =>
      b.attentionBackward(s(q), s(k), s(v), s(out.out), s(out.out), s(out.out), { scale: 0.5, causal: false }),
    ).toThrow(/lse has shape \[2,3,6\]; expected \[2,3\]/);
    [q, k, v, ints, out.out, out.lse].forEach((x) => x.dispose());
  });
});

testGpu('WebGPU: head dims too large for workgroup memory are a BackendError naming them', () => {
  if (!gpu) throw new Error('no WebGPU backend');
  const q = f32(gpu, [1, 2, 2100]),
    v = f32(gpu, [1, 2, 2100]);
  const before = gpu.memory().buffers;
  expect(() => attentionNd(q, q, v, { scale: 1 })).toThrow(BackendError);
  expect(() => attentionNd(q, q, v, { scale: 1 })).toThrow(/E=2100 and Ev=2100 are too large/);
  expect(gpu.memory().buffers).toBe(before); // nothing allocated for the failed call
  q.dispose();
  v.dispose();
});
