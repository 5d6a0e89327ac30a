import { Backend, CpuBackend, ValueError } from '@surf/core';
import { crossEntropy, tensor } from '@surf/nn';
import { backends, on, testGpu } from './helpers';

// Both backends run crossEntropy's forward as one rows op (Backend.crossEntropyRows: a
// workgroup per row with the index check inside on WebGPU, a loop per row on the CPU) and a
// sum. Each must give the loss and gradient of the composite (max, exp, sum, terms: what a
// backend without the op runs; here a CPU backend with the op removed) to f32 rounding (the
// row sums run in another order), for every reduction, with smoothing, rows wider than the
// kernel's 64 threads, huge and infinite logits, strided input.

const B = backends();
// The reference: the CPU backend without the optional op, so autograd takes the composite.
const composite = Object.assign(new CpuBackend(), { crossEntropyRows: undefined }) as Backend;
beforeAll(B.setup);
afterAll(B.teardown);

function data(n: number, c: number, seed: number): { z: number[][]; y: number[] } {
  let s = seed;
  const r = () => {
    s = (s * 1103515245 + 12345) % 2147483648;
    return s / 2147483648;
  };
  return {
    z: Array.from({ length: n }, () => Array.from({ length: c }, () => (r() - 0.5) * 6)),
    y: Array.from({ length: n }, () => Math.floor(r() * c)),
  };
}

async function run(
  z: number[][],
  y: number[],
  opts: { labelSmoothing?: number; reduction?: 'mean' | 'sum' | 'none' },
  transposed: boolean,
) {
  const zt = transposed
    ? tensor(
        z[0].map((_, j) => z.map((row) => row[j])),
        { requiresGrad: true },
      )
    : tensor(z, { requiresGrad: true });
  const zin = transposed ? zt.T : zt;
  const loss = crossEntropy(zin, tensor(y, { dtype: 'int32' }), opts);
  const g = opts.reduction === 'none' ? tensor(y.map((_, i) => 0.5 + i)) : tensor(1.5);
  loss.backward(g);
  const grad = Array.from((await zt.grad!.data()) as Float32Array);
  return { loss: Array.from((await loss.data()) as Float32Array), grad };
}

const close = (got: number[], want: number[], what: string) => {
  expect(got.length).toBe(want.length);
  got.forEach((v, i) => {
    if (!Number.isFinite(want[i])) expect(v).toBe(want[i]);
    else if (Math.abs(v - want[i]) > 2e-5 * Math.max(1, Math.abs(want[i])))
      throw new Error(`${what}[${i}]: ${v} vs ${want[i]}`);
  });
};

const cases: [
  string,
  () => { z: number[][]; y: number[] },
  { labelSmoothing?: number; reduction?: 'mean' | 'sum' | 'none' },
  boolean,
][] = [
  ['mean, 5 x 3', () => data(5, 3, 1), {}, false],
  [
    'sum, smoothed, 4 x 150 (rows wider than the kernel)',
    () => data(4, 150, 2),
    { labelSmoothing: 0.2, reduction: 'sum' },
    false,
  ],
  ['none, 6 x 10, transposed input', () => data(6, 10, 3), { reduction: 'none' }, true],
  [
    'none, smoothed, huge and infinite logits',
    () => ({
      z: [
        [1000, 0, -3],
        [-1000, 1000, 2],
        [Infinity, 1, 2],
        [-Infinity, -Infinity, -Infinity],
      ],
      y: [1, 1, 2, 0],
    }),
    { reduction: 'none', labelSmoothing: 0.1 },
    false,
  ],
  [
    'mean, infinite logit off the target',
    () => ({
      z: [
        [0.5, Infinity, -1],
        [2, 1, 0],
      ],
      y: [0, 2],
    }),
    {},
    false,
  ],
];

test.each(cases)(
  '%s: the CPU rows op equals the composite (loss and gradient)',
  async (what, make, opts, transposed) => {
    const { z, y } = make();
    const want = await on(composite, () => run(z, y, opts, transposed));
    const got = await on(B.cpu, () => run(z, y, opts, transposed));
    close(got.loss, want.loss, `${what} loss`);
    close(got.grad, want.grad, `${what} grad`);
  },
);

testGpu.each(cases)(
  '%s: WebGPU rows kernel equals the composite (loss and gradient)',
  async (what, make, opts, transposed) => {
    const { z, y } = make();
    const want = await on(composite, () => run(z, y, opts, transposed));
    const gpu = B.gpu() as Backend & { stats(): { dispatches: number } };
    const got = await on(gpu, () => run(z, y, opts, transposed));
    close(got.loss, want.loss, `${what} loss`);
    close(got.grad, want.grad, `${what} grad`);
  },
);

test('the CPU rows op checks its class indices itself (direct backend callers)', () => {
  const be = new CpuBackend();
  const z = be.fromData(new Float32Array(6), 'float32');
  const y = be.fromData(Int32Array.from([0, 3]), 'int32');
  const zs = { storage: z, view: { shape: [2, 3], strides: [3, 1], offset: 0, ndim: 2 } } as never;
  const ys = { storage: y, view: { shape: [2], strides: [1], offset: 0, ndim: 1 } } as never;
  const site = { op: 'crossEntropy', name: 'target', range: 'the class range [0, 3)' };
  expect(() => be.crossEntropyRows(zs, ys, { smoothing: 0, scale: 1, site })).toThrow(ValueError);
  expect(() => be.crossEntropyRows(zs, ys, { smoothing: 0, scale: 1, site })).toThrow(
    'crossEntropy: target[1] = 3 is outside the class range [0, 3)',
  );
});

testGpu(
  'the forward is one kernel on WebGPU: the rows (with the index check) and their sum in one dispatch',
  async () => {
    const gpu = B.gpu() as Backend & { stats(): { dispatches: number } };
    await on(gpu, async () => {
      const z = tensor(data(8, 10, 4).z);
      const y = tensor(data(8, 10, 4).y, { dtype: 'int32' });
      await crossEntropy(z, y).data(); // warm: the class column table and pipelines
      const d0 = gpu.stats().dispatches;
      const loss = crossEntropy(z, y);
      expect(gpu.stats().dispatches - d0).toBe(1);
      await loss.data();
      // Per-row losses are not summed: the rows alone.
      const d1 = gpu.stats().dispatches;
      const rows = crossEntropy(z, y, { reduction: 'none' });
      expect(gpu.stats().dispatches - d1).toBe(1);
      await rows.data();
    });
  },
);

// The sum rides in the rows kernel: every workgroup publishes its row in a scratch slot and
// the last to arrive folds them in row order. Checked against the composite on row counts
// around the fold's 64 threads, one row, and more rows than the scratch has slots (the
// separate sum then), with a one-dispatch reduction (which shares the scratch) between two
// losses: each must leave the scratch as it found it.
testGpu.each([
  [1, 'mean'],
  [63, 'sum'],
  [300, 'mean'],
  [16400, 'mean'],
] as const)('the fused sum over %i rows (%s) equals the composite, twice in a row', async (n, reduction) => {
  const { z, y } = data(n, 5, 7 + n);
  const want = await on(composite, () => run(z, y, { reduction, labelSmoothing: 0.1 }, false));
  const gpu = B.gpu() as Backend & { stats(): { dispatches: number } };
  await on(gpu, async () => {
    const first = await run(z, y, { reduction, labelSmoothing: 0.1 }, false);
    const big = tensor(Array.from({ length: 5000 }, (_, i) => (i % 7) - 3));
    expect(await big.sum().item()).toBe(Array.from({ length: 5000 }, (_, i) => (i % 7) - 3).reduce((a, b) => a + b, 0));
    const second = await run(z, y, { reduction, labelSmoothing: 0.1 }, false);
    for (const got of [first, second]) {
      close(got.loss, want.loss, `${n} rows loss`);
      close(got.grad, want.grad, `${n} rows grad`);
    }
    const zt = tensor(z);
    const yt = tensor(y, { dtype: 'int32' });
    await crossEntropy(zt, yt, { reduction }).data();
    const d0 = gpu.stats().dispatches;
    const l = crossEntropy(zt, yt, { reduction });
    // Past the scratch's slots a sum adds one dispatch; a mean then also counts the rows not
    // ignored (a mask and its sum) and divides: PyTorch's mean is over the kept targets.
    expect(gpu.stats().dispatches - d0).toBe(n <= 16384 ? 1 : reduction === 'mean' ? 5 : 2);
    await l.data();
  });
});
