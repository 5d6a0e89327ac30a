import { CpuBackend } from '@surf/core';
import { Tensor, getBackend, keep, memory, noGrad, randn, setBackend, tensor, tidy, zeros } from '@surf/autograd';
import { describeEach, gpuBackend } from './gpu';

describe('tidy', () => {
  test('disposes what fn created and did not return, keeps what it returned (nested structures too)', () => {
    const outer = zeros([2]);
    let inner: Tensor | null = null;
    const r = tidy(() => {
      inner = outer.add(1);
      const a = outer.mul(2);
      const b = outer.mul(3);
      return { pair: [a, 1] as const, m: new Map([['b', b]]) };
    });
    expect(inner!.isDisposed).toBe(true);
    expect(outer.isDisposed).toBe(false);
    expect(r.pair[0].isDisposed).toBe(false);
    expect(r.m.get('b')!.isDisposed).toBe(false);
  });

  test('returned tensors move to the enclosing scope; keep() exempts', () => {
    let kept: Tensor | null = null;
    let mid: Tensor | null = null;
    tidy(() => {
      mid = tidy(() => zeros([1]).add(1));
      kept = keep(zeros([1]));
      return undefined;
    });
    expect(mid!.isDisposed).toBe(true);
    expect(kept!.isDisposed).toBe(false);
  });

  test('disposes on throw and rejects async fns', () => {
    let t: Tensor | null = null;
    expect(() =>
      tidy(() => {
        t = zeros([1]);
        throw new Error('boom');
      }),
    ).toThrow('boom');
    expect(t!.isDisposed).toBe(true);
    expect(() => tidy(() => Promise.resolve(zeros([1])))).toThrow(/tidy is synchronous/);
  });
});

async function trainingLoopIsFlat(): Promise<void> {
  const w = randn([4, 3], { requiresGrad: true });
  const b = zeros([3], { requiresGrad: true });
  const x = randn([5, 4]);
  const target = randn([5, 3]);
  const step = () =>
    tidy(() => {
      const loss = x.matmul(w).add(b).tanh().sub(target).pow(2).mean();
      loss.backward();
      noGrad(() => {
        w.assign(w.sub(w.grad!.mul(0.1)));
        b.assign(b.sub(b.grad!.mul(0.1)));
      });
      w.grad = null;
      b.grad = null;
    });
  step();
  const before = memory();
  for (let i = 0; i < 5; i++) step();
  const after = memory();
  expect(after.tensors).toBe(before.tensors);
  expect(after.buffers).toBe(before.buffers);
  expect(after.bytes).toBe(before.bytes);
  [w, b, x, target].forEach((t) => t.dispose());
}

describeEach(['cpu', 'webgpu'] as const, 'memory on %s', (kind) => {
  test('a training step in tidy leaves tensors, buffers and bytes flat', async () => {
    const backend = kind === 'cpu' ? new CpuBackend() : await gpuBackend();
    const prev = setBackend(backend);
    try {
      await trainingLoopIsFlat();
      expect(memory().backend).toBe(kind);
    } finally {
      setBackend(prev);
      if (kind === 'webgpu') backend.destroy();
    }
  });
});

describe('dispose and the graph', () => {
  test('disposing intermediates and the output frees the saved arrays', () => {
    const x = tensor([1, 2, 3], { requiresGrad: true });
    const before = memory();
    const y = x.exp();
    const z = tidy(() => y.mul(y).sum()); // the product is disposed but its node lives on in z's graph
    y.dispose();
    expect(memory().buffers).toBeGreaterThan(before.buffers);
    z.dispose();
    expect(memory().buffers).toBe(before.buffers);
    expect(memory().tensors).toBe(before.tensors);
  });

  test('backward frees each node as it goes: only the leaf gradient remains', () => {
    const x = tensor([1, 2, 3], { requiresGrad: true });
    const before = memory().buffers;
    const loss = tidy(() => x.sigmoid().mul(x).softmax(0).log().sum());
    loss.backward();
    loss.dispose();
    expect(memory().buffers).toBe(before + 1); // x.grad
  });

  test('ops save only what their backward reads', () => {
    const a = tensor([1, 2], { requiresGrad: true });
    const b = tensor([3, 4], { requiresGrad: true });
    const before = memory().buffers;
    // add and multiplication by a constant need no saved arrays: the disposed products free at once.
    const y = tidy(() => a.mul(2).add(b.mul(3)));
    expect(memory().buffers).toBe(before + 1);
    // exp saves its output (shared with the result: no extra buffer); mul saves both operands.
    const z = tidy(() => a.exp().mul(b));
    expect(memory().buffers).toBe(before + 3); // y, z, exp's output
    y.dispose();
    z.dispose();
    expect(memory().buffers).toBe(before);
  });

  test('memory() reports the current backend', () => {
    expect(memory().backend).toBe(getBackend().name);
  });
});
