import { Backend, CpuBackend, NDArray } from '@surf/core';
import { Tensor, setBackend } from '@surf/autograd';
import { crossEntropy, nllLoss } from '@surf/nn';
import { describeEach, gpuBackend } from '../../../test-support/gpu';
import fixtures from './fixtures/losses-ce.json';

// crossEntropy / nllLoss against PyTorch's F.cross_entropy / F.nll_loss (ignore_index, class
// weights, [N, C, d...] inputs, label smoothing, every reduction): fixtures written by
// scripts/interop/make-ops-fixtures.py with PyTorch's values and gradients, on every backend.

type Enc = number | string;
interface Packed {
  shape: number[];
  dtype: 'float32' | 'int32' | 'bool';
  data: Enc[];
  requiresGrad?: boolean;
}
interface Case {
  name: string;
  inputs: Packed[];
  outputs: Packed[];
  cots?: Packed[];
  grads?: (Packed | null)[];
}
const dec = (v: Enc): number => (v === 'nan' ? NaN : v === 'inf' ? Infinity : v === '-inf' ? -Infinity : (v as number));

const CALLS: Record<string, (z: Tensor, y: Tensor, w: Tensor) => Tensor> = {
  'ce mean': (z, y) => crossEntropy(z, y),
  'ce ignore default mean': (z, y) => crossEntropy(z, y),
  'ce ignore default sum': (z, y) => crossEntropy(z, y, { reduction: 'sum' }),
  'ce ignore default none': (z, y) => crossEntropy(z, y, { reduction: 'none' }),
  'ce ignore in range smoothed': (z, y) => crossEntropy(z, y, { ignoreIndex: 1, labelSmoothing: 0.1 }),
  'ce ignore smoothed none': (z, y) => crossEntropy(z, y, { labelSmoothing: 0.2, reduction: 'none' }),
  'ce weight mean': (z, y, w) => crossEntropy(z, y, { weight: w }),
  'ce weight ignore mean': (z, y, w) => crossEntropy(z, y, { weight: w }),
  'ce weight smoothing mean': (z, y, w) => crossEntropy(z, y, { weight: w, labelSmoothing: 0.1 }),
  'ce weight smoothing none': (z, y, w) => crossEntropy(z, y, { weight: w, labelSmoothing: 0.3, reduction: 'none' }),
  'ce weight sum': (z, y, w) => crossEntropy(z, y, { weight: w, reduction: 'sum' }),
  'ce 4-d mean': (z, y) => crossEntropy(z, y),
  'ce 4-d none': (z, y) => crossEntropy(z, y, { reduction: 'none' }),
  'ce 4-d weight smoothing': (z, y, w) => crossEntropy(z, y, { weight: w, labelSmoothing: 0.1 }),
  'ce unbatched': (z, y) => crossEntropy(z, y),
  'ce 70 rows ignore mean': (z, y) => crossEntropy(z, y),
  'ce 70 rows ignore smoothed sum': (z, y) => crossEntropy(z, y, { labelSmoothing: 0.1, reduction: 'sum' }),
  'ce all ignored mean is nan': (z, y) => crossEntropy(z, y),
  'ce weight all ignored': (z, y, w) => crossEntropy(z, y, { weight: w }),
  'nll all ignored': (x, y) => nllLoss(x, y),
  'nll mean': (x, y) => nllLoss(x, y),
  'nll weight ignore': (x, y, w) => nllLoss(x, y, { weight: w }),
  'nll 3-d none': (x, y) => nllLoss(x, y, { reduction: 'none' }),
  'nll ignore sum': (x, y) => nllLoss(x, y, { ignoreIndex: 3, reduction: 'sum' }),
  'ce probabilities weight smoothing': (z, t, w) => crossEntropy(z, t, { weight: w, labelSmoothing: 0.1 }),
};

const cases = (fixtures as { cases: Case[] }).cases;

const upload = (p: Packed, backend: Backend): Tensor => {
  const data = p.data.map(dec);
  const arr =
    p.dtype === 'float32'
      ? Float32Array.from(data)
      : p.dtype === 'int32'
        ? Int32Array.from(data)
        : Uint8Array.from(data);
  return Tensor.fromNDArray(NDArray.fromData(backend, arr, p.shape, p.dtype), { requiresGrad: !!p.requiresGrad });
};

async function expectClose(got: Tensor | null, want: Packed, what: string): Promise<void> {
  expect([what, got?.shape]).toEqual([what, want.shape]);
  const g = Array.from(await got!.data());
  const bad = want.data
    .map(dec)
    .map((w, i) => {
      const ok = Number.isNaN(w) ? Number.isNaN(g[i]) : Math.abs(g[i] - w) <= 2e-5 + 2e-5 * Math.abs(w);
      return ok ? null : `${i}: got ${g[i]}, want ${w}`;
    })
    .filter((s) => s !== null);
  expect([what, bad]).toEqual([what, []]);
}

describeEach(['cpu', 'webgpu'] as const, 'crossEntropy and nllLoss against PyTorch on %s', (kind) => {
  let backend: Backend;
  let prev: Backend | null = null;
  beforeAll(async () => {
    backend = kind === 'cpu' ? new CpuBackend() : await gpuBackend();
    prev = setBackend(backend);
  });
  afterAll(() => {
    if (prev) setBackend(prev);
    if (kind === 'webgpu') backend?.destroy();
  });

  test('every fixture case has a Surf call', () => {
    expect(cases.map((c) => c.name).filter((n) => !CALLS[n])).toEqual([]);
  });

  test.each(cases.map((c) => [c.name, c] as const))('%s', async (name, c) => {
    const [z, y, w] = c.inputs.map((p) => upload(p, backend));
    const out = CALLS[name](z, y, w);
    await expectClose(out, c.outputs[0], `${name} loss`);
    if (c.cots && c.grads?.[0]) {
      out.mul(upload(c.cots[0], backend)).sum().backward();
      await expectClose(z.grad, c.grads[0], `${name} grad`);
    }
  });
});
