import { Backend, CpuBackend } from '@surf/core';
import { gradcheckSuite, runGradcheckSuite } from '@surf/autograd';
import { gpuOrSkip } from './gpu';

// The exported suite, one jest test per case: on the CPU backend against finite differences
// (and host references / hand-worked numbers), on WebGPU against the CPU backend's results.
const cases = gradcheckSuite();
const names = cases.map((c) => [c.name] as const);

describe.each(['cpu', 'webgpu'] as const)('gradcheck suite on %s', (kind) => {
  let backend: Backend | null = null;
  const reference = new CpuBackend();
  beforeAll(async () => {
    backend = kind === 'cpu' ? new CpuBackend() : await gpuOrSkip();
  });
  afterAll(() => {
    if (kind === 'webgpu') backend?.destroy();
  });

  test('has a case for every differentiable op', () => {
    const ops = new Set(cases.map((c) => c.op));
    for (const op of ['add', 'sub', 'mul', 'div', 'pow', 'neg', 'exp', 'log', 'sqrt', 'rsqrt', 'abs', 'sin', 'cos', 'tanh', 'sigmoid', 'relu', 'leakyRelu', 'gelu', 'softplus', 'maximum', 'minimum', 'clamp', 'where',
      'sum', 'mean', 'max', 'min', 'var', 'std', 'logsumexp', 'softmax', 'logSoftmax',
      'reshape', 'view', 'permute', 'transpose', 'T', 'expand', 'broadcastTo', 'pad', 'narrow', 'flip', 'squeeze', 'cat', 'stack', 'indexSelect', 'matmul', 'dot', 'linear', 'softmaxCrossEntropy', 'composite',
      'scaledDotProductAttention']) {
      expect([op, ops.has(op)]).toEqual([op, true]);
    }
  });

  test.each(names)('%s', async (name) => {
    if (!backend) return;
    const [r] = await runGradcheckSuite({ backend, reference: kind === 'cpu' ? undefined : reference, cases: cases.filter((c) => c.name === name) });
    expect(r.detail).toMatch(/^ok/);
    expect(r.ok).toBe(true);
    expect(r.checked).toBeGreaterThan(0);
  });
});
