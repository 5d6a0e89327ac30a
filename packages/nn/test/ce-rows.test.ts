import { Backend } from '@surf/core';
import { crossEntropy, tensor } from '@surf/nn';
import { backends, on, testGpu } from './helpers';

// WebGPU runs crossEntropy's forward as one rows kernel (Backend.crossEntropyRows, the index
// check inside) and a sum; the CPU backend the composite. Both must give the same loss and
// gradient (to f32 rounding: the row sums run in another order), for every reduction, with
// smoothing, rows wider than the kernel's 64 threads, huge and infinite logits, strided input.

const B = backends();
beforeAll(B.setup);
afterAll(B.teardown);

function data(n: number, c: number, seed: number): { z: number[][]; y: number[] } {
  let s = seed;
  const r = () => { s = (s * 1103515245 + 12345) % 2147483648; return s / 2147483648; };
  return { z: Array.from({ length: n }, () => Array.from({ length: c }, () => (r() - 0.5) * 6)), y: Array.from({ length: n }, () => Math.floor(r() * c)) };
}

async function run(z: number[][], y: number[], opts: { labelSmoothing?: number; reduction?: 'mean' | 'sum' | 'none' }, transposed: boolean) {
  const zt = transposed ? tensor(z[0].map((_, j) => z.map((row) => row[j])), { requiresGrad: true }) : tensor(z, { requiresGrad: true });
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
    else if (Math.abs(v - want[i]) > 2e-5 * Math.max(1, Math.abs(want[i]))) throw new Error(`${what}[${i}]: ${v} vs ${want[i]}`);
  });
};

const cases: [string, () => { z: number[][]; y: number[] }, { labelSmoothing?: number; reduction?: 'mean' | 'sum' | 'none' }, boolean][] = [
  ['mean, 5 x 3', () => data(5, 3, 1), {}, false],
  ['sum, smoothed, 4 x 150 (rows wider than the kernel)', () => data(4, 150, 2), { labelSmoothing: 0.2, reduction: 'sum' }, false],
  ['none, 6 x 10, transposed input', () => data(6, 10, 3), { reduction: 'none' }, true],
  ['none, smoothed, huge and infinite logits', () => ({ z: [[1000, 0, -3], [-1000, 1000, 2], [Infinity, 1, 2], [-Infinity, -Infinity, -Infinity]], y: [1, 1, 2, 0] }), { reduction: 'none', labelSmoothing: 0.1 }, false],
  ['mean, infinite logit off the target', () => ({ z: [[0.5, Infinity, -1], [2, 1, 0]], y: [0, 2] }), {}, false],
];

testGpu.each(cases)('%s: WebGPU rows kernel equals the CPU composite (loss and gradient)', async (what, make, opts, transposed) => {
  const { z, y } = make();
  const want = await on(B.cpu, () => run(z, y, opts, transposed));
  const gpu = B.gpu() as Backend & { stats(): { dispatches: number } };
  const got = await on(gpu, () => run(z, y, opts, transposed));
  close(got.loss, want.loss, `${what} loss`);
  close(got.grad, want.grad, `${what} grad`);
});

testGpu('the forward is two kernels on WebGPU: the rows (with the index check) and their sum', async () => {
  const gpu = B.gpu() as Backend & { stats(): { dispatches: number } };
  await on(gpu, async () => {
    const z = tensor(data(8, 10, 4).z);
    const y = tensor(data(8, 10, 4).y, { dtype: 'int32' });
    await crossEntropy(z, y).data(); // warm: the class column table and pipelines
    const d0 = gpu.stats().dispatches;
    const loss = crossEntropy(z, y);
    expect(gpu.stats().dispatches - d0).toBe(2);
    await loss.data();
  });
});
