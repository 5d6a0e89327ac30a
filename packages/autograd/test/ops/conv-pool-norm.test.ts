import { Backend, CpuBackend, ShapeError, ValueError } from '@surf/core';
import {
  avgPool2d,
  batchNorm,
  conv1d,
  conv2d,
  convTranspose2d,
  maxPool2d,
  setBackend,
  tensor,
  zeros,
} from '@surf/autograd';
import { describeEach, gpuBackend } from '../gpu';

// CNN op behaviour the gradcheck suite cannot show: ties, in-place running stats, shapes
// PyTorch gives, and the errors for bad arguments. On CPU and WebGPU.
describeEach(['cpu', 'webgpu'] as const, 'cnn ops on %s', (kind) => {
  let backend: Backend | null = null;
  let prev: Backend | null = null;
  beforeAll(async () => {
    backend = kind === 'cpu' ? new CpuBackend() : await gpuBackend();
    if (backend) prev = setBackend(backend);
  });
  afterAll(() => {
    if (prev) setBackend(prev);
    if (kind === 'webgpu') backend?.destroy();
  });

  test('maxPool2d sends the gradient of a tie to the first maximum (row-major)', async () => {
    const x = tensor(
      [
        [
          [
            [1, 3],
            [3, 3],
          ],
        ],
      ],
      { requiresGrad: true },
    );
    const y = maxPool2d(x, 2);
    expect(await y.toArray()).toEqual([[[[3]]]]);
    y.sum().backward();
    expect(await x.grad!.toArray()).toEqual([
      [
        [
          [0, 1],
          [0, 0],
        ],
      ],
    ]);
    // Overlapping windows that share a maximum add their gradients there.
    const z = tensor([[[[0, 9, 0, 0]]]], { requiresGrad: true });
    maxPool2d(z, [1, 3], { stride: 1 }).sum().backward();
    expect(await z.grad!.toArray()).toEqual([[[[0, 2, 0, 0]]]]);
  });

  test('batchNorm in training updates running stats in place with the unbiased variance', async () => {
    // Channel 0: 1, 3, 5, 7 (mean 4, unbiased var 20/3); channel 1: 2, 2, 2, 2.
    const x = tensor(
      [
        [
          [1, 3],
          [2, 2],
        ],
        [
          [5, 7],
          [2, 2],
        ],
      ],
      { dtype: 'float32' },
    );
    const rm = zeros([2]),
      rv = tensor([1, 1], { dtype: 'float32' });
    const y = batchNorm(x, rm, rv, null, null, { training: true, momentum: 0.5 });
    const [m0, m1] = (await rm.toArray()) as number[];
    const [v0, v1] = (await rv.toArray()) as number[];
    expect([m0, m1]).toEqual([2, 1]);
    expect(v0).toBeCloseTo(0.5 + 0.5 * (20 / 3), 5);
    expect(v1).toBeCloseTo(0.5, 6);
    const out = (await y.data()) as Float32Array;
    expect(out[0]).toBeCloseTo(-3 / Math.sqrt(5 + 1e-5), 5);
    expect(out[2]).toBeCloseTo(0, 6);
    // Eval uses the running stats and leaves them alone.
    const e = batchNorm(x, rm, rv);
    expect(((await e.data()) as Float32Array)[0]).toBeCloseTo((1 - 2) / Math.sqrt(v0 + 1e-5), 5);
    expect(await rm.toArray()).toEqual([2, 1]);
  });

  test('output shapes match PyTorch', () => {
    expect(conv2d(zeros([2, 3, 28, 28]), zeros([8, 3, 5, 5]), null, { stride: 2, padding: 2 }).shape).toEqual([
      2, 8, 14, 14,
    ]);
    expect(conv2d(zeros([3, 9, 9]), zeros([4, 3, 3, 3]), null, { padding: 'valid' }).shape).toEqual([4, 7, 7]);
    expect(conv1d(zeros([1, 2, 10]), zeros([4, 2, 4]), null, { padding: 'same' }).shape).toEqual([1, 4, 10]);
    expect(
      convTranspose2d(zeros([1, 4, 5, 5]), zeros([4, 2, 3, 3]), null, { stride: 2, padding: 1, outputPadding: 1 })
        .shape,
    ).toEqual([1, 2, 10, 10]);
    expect(maxPool2d(zeros([1, 1, 5, 5]), 2, { ceilMode: true }).shape).toEqual([1, 1, 3, 3]);
    expect(avgPool2d(zeros([1, 1, 5, 5]), 2).shape).toEqual([1, 1, 2, 2]);
  });

  test('bad shapes and options are clear errors', () => {
    expect(() => conv2d(zeros([1, 3, 8, 8]), zeros([4, 2, 3, 3]))).toThrow(ShapeError);
    expect(() => conv2d(zeros([1, 3, 8, 8]), zeros([4, 2, 3, 3]))).toThrow(
      /conv2d: weight \[4,2,3,3\] has 2 input channels per group; expected C\/groups = 3\/1/,
    );
    expect(() => conv2d(zeros([1, 3, 8, 8]), zeros([4, 1, 3, 3]), null, { groups: 2 })).toThrow(/divide by groups 2/);
    expect(() => conv2d(zeros([1, 1, 4, 4]), zeros([1, 1, 5, 5]))).toThrow(/larger than the padded input/);
    expect(() => conv2d(zeros([1, 4]), zeros([1, 1, 3, 3]))).toThrow(/conv2d: input has shape \[1,4\]/);
    expect(() => conv2d(zeros([1, 1, 4, 4]), zeros([1, 1, 2, 2]), null, { padding: 'same', stride: 2 })).toThrow(
      ValueError,
    );
    expect(() => conv2d(zeros([1, 1, 4, 4]), zeros([1, 1, 2, 2]), zeros([2]))).toThrow(
      /bias has shape \[2\]; expected \[1\]/,
    );
    expect(() => conv2d(zeros([1, 1, 4, 4]), zeros([1, 1, 2, 2]), null, { strides: 2 } as never)).toThrow(
      /conv2d: unknown option 'strides'; did you mean 'stride'?/,
    );
    expect(() =>
      convTranspose2d(zeros([1, 2, 3, 3]), zeros([2, 1, 3, 3]), null, { stride: 2, outputPadding: 2 }),
    ).toThrow(/outputPadding/);
    expect(() => maxPool2d(zeros([1, 1, 4, 4]), 2, { padding: 2 })).toThrow(/at most half the kernel/);
    expect(() => maxPool2d(zeros([1, 1, 1, 1]), 3)).toThrow(ShapeError);
    expect(() => batchNorm(zeros([2, 3]), zeros([2]), null)).toThrow(/runningMean has shape \[2\]; expected \[3\]/);
    expect(() => batchNorm(zeros([1, 3]), null, null, null, null, { training: true })).toThrow(
      /more than 1 value per channel/,
    );
  });
});
