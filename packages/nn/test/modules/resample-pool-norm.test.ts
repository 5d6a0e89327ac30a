import { Module, ShapeError, ValueError, nn, ones, tensor } from '@surf/nn';
import { backends, testEach } from '../helpers';
import { checkCase, loadCases } from './torch-cases';

// Upsample/interpolate, PixelShuffle, InstanceNorm, the 1-d and adaptive max pools and
// Unflatten against PyTorch (scripts/interop/make-modules-fixtures.py), CPU and WebGPU.
const b = backends();
beforeAll(b.setup);
afterAll(b.teardown);

const cases = loadCases('misc');
const build: Record<string, () => Module> = {
  upsample_nearest_scale2: () => new nn.Upsample({ scaleFactor: 2 }),
  upsample_nearest_size: () => new nn.Upsample({ size: [7, 3] }),
  upsample_bilinear_scale: () => new nn.Upsample({ scaleFactor: 2, mode: 'bilinear' }),
  upsample_bilinear_align_size: () => new nn.Upsample({ size: [6, 9], mode: 'bilinear', alignCorners: true }),
  upsample_bilinear_down: () => new nn.Upsample({ size: [3, 3], mode: 'bilinear' }),
  pixel_shuffle: () => new nn.PixelShuffle(2),
  pixel_unshuffle: () => new nn.PixelUnshuffle(2),
  instance_norm1d: () => new nn.InstanceNorm1d(3),
  instance_norm2d_affine: () => new nn.InstanceNorm2d(3, { affine: true }),
  adaptive_max_pool2d: () => new nn.AdaptiveMaxPool2d([2, 3]),
  max_pool1d: () => new nn.MaxPool1d(2),
  max_pool1d_stride_pad: () => new nn.MaxPool1d(3, { stride: 2, padding: 1 }),
  avg_pool1d: () => new nn.AvgPool1d(3, { stride: 2, padding: 1 }),
  adaptive_avg_pool1d: () => new nn.AdaptiveAvgPool1d(3),
  unflatten: () => new nn.Unflatten(1, [2, 3]),
};

test('every misc fixture has a layer', () => {
  expect(Object.keys(cases).sort()).toEqual(Object.keys(build).sort());
});

describe.each(Object.keys(build))('%s matches PyTorch', (name) => {
  testEach(['cpu', 'webgpu'], '%s', (kind) =>
    checkCase(kind === 'cpu' ? b.cpu : b.gpu(), cases[name], build[name], (m, [x]) => [m.forward(x)]),
  );
});

test("InstanceNorm's PyTorch defaults: no affine, no running stats; tracking updates them in training", async () => {
  expect(Object.keys(new nn.InstanceNorm2d(3).stateDict())).toEqual([]);
  const m = new nn.InstanceNorm1d(2, { trackRunningStats: true, affine: true });
  expect(Object.keys(m.stateDict())).toEqual(['weight', 'bias', 'running_mean', 'running_var', 'num_batches_tracked']);
  // Instance means 1 and 3 (channel 0), 2 and 2 (channel 1); unbiased variances 1, 1, 0, 0.
  const x = tensor([
    [
      [0, 1, 2],
      [2, 2, 2],
    ],
    [
      [2, 3, 4],
      [2, 2, 2],
    ],
  ]);
  m.forward(x);
  const rm = await m.running_mean!.data();
  const rv = await m.running_var!.data();
  expect(Array.from(rm).map((v) => +v.toFixed(6))).toEqual([0.2, 0.2]);
  expect(Array.from(rv).map((v) => +v.toFixed(6))).toEqual([1, 0.9]);
  expect(await m.num_batches_tracked!.item()).toBe(1);
  m.eval();
  // eval normalises with the running stats: (x − 0.2)/√(1 + 1e-5) in channel 0.
  const y = await m.forward(x).data();
  expect(y[0]).toBeCloseTo(-0.2 / Math.sqrt(1 + 1e-5), 6);
});

test('options and shapes are checked', () => {
  expect(() => new nn.Upsample({ scaleFactor: 2, size: 3 })).toThrow(/exactly one/);
  expect(() => new nn.Upsample({ scale_factor: 2 } as never)).toThrow(/scaleFactor/);
  expect(() => new nn.Upsample({ size: 4, mode: 'bilinear' }).forward(ones([1, 2, 3]))).toThrow(ShapeError);
  expect(() => new nn.PixelShuffle(2).forward(ones([1, 3, 2, 2]))).toThrow(/divisible/);
  expect(() => new nn.InstanceNorm2d(3, { afine: true } as never)).toThrow(/affine/);
  expect(() => new nn.MaxPool1d(2, { strides: 2 } as never)).toThrow(ValueError);
  expect(() => new nn.Unflatten(1, [2, 0])).toThrow(ValueError);
});
