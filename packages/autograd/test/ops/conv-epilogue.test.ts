import { Backend, CpuBackend } from '@surf/core';
import { WebGPUBackend } from '@surf/webgpu';
import { Tensor, conv1d, conv2d, setBackend, tensor } from '@surf/autograd';
import { describeEach, gpuBackend, testGpu } from '../gpu';

// A conv's bias and the activation after it fold into the conv kernel's epilogue through the
// fusion pass, as a matmul's do: one kernel on WebGPU, and the same values and gradients as
// the loops below (float64 host references written here, independent of the kernels).

const X = [0.5, -1, 2, 0.25, -0.5, 1.5, -2, 1, 0.75, -0.25, 0.125, -1.5, 1.25, 0.5, -0.75, 2.5]; // [1, 1, 4, 4]
const W = [1, -0.5, 0.25, 0.5, 1, -1, -0.25, 0.75, 0.5, -1, 0.5, 0.25, 1, -0.75, 0.5, 0.125, 1, -0.5]; // [2, 1, 3, 3]
const BIAS = [0.25, -1.5];

/** conv2d of X [1,1,4,4] with W [2,1,3,3], stride 1, no padding, plus BIAS: [1, 2, 2, 2]. */
function refConvBias(): number[] {
  const out: number[] = [];
  for (let o = 0; o < 2; o++)
    for (let i = 0; i < 2; i++)
      for (let j = 0; j < 2; j++) {
        let s = BIAS[o];
        for (let u = 0; u < 3; u++) for (let v = 0; v < 3; v++) s += X[(i + u) * 4 + (j + v)] * W[o * 9 + u * 3 + v];
        out.push(s);
      }
  return out;
}

const close = (got: number[], want: number[]) => {
  expect(got.length).toBe(want.length);
  got.forEach((g, i) => expect([i, Math.abs(g - want[i]) <= 1e-5 + 1e-5 * Math.abs(want[i])]).toEqual([i, true]));
};

const reshape4 = (flat: number[], s: number[]): number[][][][] =>
  Array.from({ length: s[0] }, (_, a) =>
    Array.from({ length: s[1] }, (_, b) =>
      Array.from({ length: s[2] }, (_, c) =>
        Array.from({ length: s[3] }, (_, d) => flat[((a * s[1] + b) * s[2] + c) * s[3] + d]),
      ),
    ),
  );

describeEach(['cpu', 'webgpu'] as const, 'conv epilogue on %s', (kind) => {
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

  test('conv2d + bias + relu: values and the bias gradient', async () => {
    const x = tensor(reshape4(X, [1, 1, 4, 4]));
    const w = tensor(reshape4(W, [2, 1, 3, 3]), { requiresGrad: true });
    const b = tensor(BIAS, { requiresGrad: true });
    const y = conv2d(x, w, b).relu();
    const want = refConvBias();
    close(
      Array.from(await y.data()),
      want.map((v) => Math.max(v, 0)),
    );
    y.sum().backward();
    // d sum(relu(conv + b)) / d b[o] = the number of positive outputs of channel o.
    const gb = [0, 1].map((o) => want.slice(o * 4, o * 4 + 4).filter((v) => v > 0).length);
    close(Array.from(await b.grad!.data()), gb);
    for (const t of [x, w, b, y] as Tensor[]) t.dispose();
  });

  test('conv1d + bias without an activation equals the loop', async () => {
    // One row of X as [1, 1, 16] with the first kernel's middle row [1, 3].
    const x = tensor([[X]]);
    const k = [W[3], W[4], W[5]];
    const w = tensor([[k]]);
    const b = tensor([BIAS[1]]);
    const y = conv1d(x, w, b);
    const want = Array.from({ length: 14 }, (_, i) => BIAS[1] + X[i] * k[0] + X[i + 1] * k[1] + X[i + 2] * k[2]);
    close(Array.from(await y.data()), want);
    for (const t of [x, w, b, y]) t.dispose();
  });
});

testGpu('on WebGPU conv2d(x, w, b).relu() is one kernel, as matmul(...).add(b).relu() is', async () => {
  const gpu = (await gpuBackend()) as WebGPUBackend;
  const prev = setBackend(gpu);
  try {
    const x = tensor(reshape4(X, [1, 1, 4, 4]));
    const w = tensor(reshape4(W, [2, 1, 3, 3]));
    const b = tensor(BIAS);
    await conv2d(x, w, b).relu().data(); // compiles
    const s0 = gpu.stats().dispatches;
    const y = conv2d(x, w, b).relu();
    close(
      Array.from(await y.data()),
      refConvBias().map((v) => Math.max(v, 0)),
    );
    expect(gpu.stats().dispatches - s0).toBe(1);
    for (const t of [x, w, b, y]) t.dispose();
  } finally {
    setBackend(prev);
    gpu.destroy();
  }
});
