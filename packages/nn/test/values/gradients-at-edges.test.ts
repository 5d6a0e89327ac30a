import { binaryCrossEntropy, tensor } from '@surf/nn';
import { backends, on, testEach } from '../helpers';
import { edge, expectClose } from './fixtures';

// Gradients at the ends of a range match PyTorch's (fixtures from
// scripts/values/make-fixtures.py): std of a constant has gradient 0, not NaN; binary
// cross-entropy at p = 0 or 1 has PyTorch's finite gradient in the input.

const B = backends();
beforeAll(B.setup);
afterAll(B.teardown);
const pick = (k: 'cpu' | 'webgpu') => (k === 'cpu' ? B.cpu : B.gpu());

interface StdCase {
  input: number[][];
  dim: number | null;
  unbiased: boolean;
  std: number[];
  stdGrad: number[][];
  var: number[];
  varGrad: number[][];
}
interface BceCase {
  input: number[];
  target: number[];
  reduction: 'mean' | 'sum' | 'none';
  loss: number[];
  gradInput: number[];
  gradTarget: number[];
}

testEach(['cpu', 'webgpu'], 'std and var of constant rows: value 0, gradient 0 (PyTorch) on %s', (k) =>
  on(pick(k), async () => {
    for (const c of edge.stdVar as StdCase[]) {
      for (const name of ['std', 'var'] as const) {
        const x = tensor(c.input, { requiresGrad: true });
        const dim = c.dim === null ? undefined : c.dim;
        const r = x[name](dim, false, c.unbiased ? 1 : 0);
        r.sum().backward();
        expectClose(await r.data(), c[name], 1e-5);
        expectClose(await x.grad!.data(), c[`${name}Grad`].flat(), 1e-5);
      }
    }
  }),
);

testEach(['cpu', 'webgpu'], 'binaryCrossEntropy at p = 0 and 1: loss and gradients as PyTorch on %s', (k) =>
  on(pick(k), async () => {
    for (const c of edge.bce as BceCase[]) {
      const x = tensor(c.input, { requiresGrad: true });
      const y = tensor(c.target, { requiresGrad: true });
      const loss = binaryCrossEntropy(x, y, { reduction: c.reduction });
      loss.backward(c.reduction === 'none' ? tensor(c.input.map(() => 1)) : undefined);
      expectClose(await loss.data(), c.loss, 1e-5);
      // The input's gradient is finite where the chain rule through the clamp gave NaN.
      expectClose(await x.grad!.data(), c.gradInput, 1e-4);
      expectClose(await y.grad!.data(), c.gradTarget, 1e-4);
    }
  }),
);
