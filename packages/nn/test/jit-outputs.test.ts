import { Backend } from '@surf/core';
import { Tensor, crossEntropy, jit, manualSeed, memory, nn, optim, randn, randint } from '@surf/nn';
import { backends, on, testEach, testGpu } from './helpers';

// Outputs of a jitted function are reused per call, as a CUDA graph's static outputs: the next
// call frees the previous call's outputs, so a loop that never disposes its losses stays flat.
// A freed output used later raises a DisposedError that says why; keepOutputs opts out.

const B = backends();
beforeAll(B.setup);
afterAll(B.teardown);

const backendOf = (kind: 'cpu' | 'webgpu'): Backend => (kind === 'cpu' ? B.cpu : B.gpu());

function mlp() {
  manualSeed(21);
  const model = new nn.Sequential(new nn.Linear(4, 5), new nn.ReLU(), new nn.Linear(5, 3));
  const opt = new optim.SGD(model.parameters(), { lr: 0.05, momentum: 0.9 });
  const step = (x: Tensor, y: Tensor) => {
    opt.zeroGrad();
    const loss = crossEntropy(model.forward(x), y);
    loss.backward();
    opt.step();
    return { loss, out: loss.mul(2) };
  };
  manualSeed(22);
  return { step, x: randn([6, 4]), y: randint(0, 3, [6]) };
}

test('jit outputs: a few thousand steps that never dispose their outputs keep live tensors and bytes flat (CPU)', async () => {
  await on(B.cpu, async () => {
    const { step, x, y } = mlp();
    const f = jit(step);
    for (let i = 0; i < 20; i++) f(x, y);
    const before = memory();
    for (let i = 0; i < 3000; i++) f(x, y);
    const after = memory();
    expect(f.stats.replayed).toBeGreaterThan(3000);
    // Exactly flat: each call frees the two tensors the previous one returned.
    expect(after.tensors - before.tensors).toBe(0);
    expect(after.bytes - before.bytes).toBe(0);
  });
});

testEach(
  ['cpu', 'webgpu'],
  'jit outputs on %s: values read before the next call are right; a reused output says why',
  (kind) =>
    on(backendOf(kind), async () => {
      const eager = mlp();
      const want: number[] = [];
      for (let i = 0; i < 8; i++) {
        const { loss, out } = eager.step(eager.x, eager.y);
        want.push(await loss.item(), await out.item());
      }
      const { step, x, y } = mlp();
      const f = jit(step);
      const got: number[] = [];
      // Each read is issued before the next call and awaited after it: the read must not see the next step.
      let pending: Promise<number>[] = [];
      let prev: { loss: Tensor; out: Tensor } | null = null;
      for (let i = 0; i < 8; i++) {
        const r = f(x, y);
        got.push(...(await Promise.all(pending)));
        pending = [r.loss.item(), r.out.item()];
        if (prev) expect(prev.loss.isDisposed).toBe(true);
        prev = r;
      }
      got.push(...(await Promise.all(pending)));
      const tol = kind === 'cpu' ? 0 : 1e-5;
      got.forEach((g, i) => expect(Math.abs(g - want[i])).toBeLessThanOrEqual(tol * (1 + Math.abs(want[i]))));
      f(x, y);
      expect(() => prev!.loss.add(1)).toThrow(/next call of the jitted function that returned it.*clone\(\)/);
    }),
);

test('jit outputs: keepOutputs keeps every output; an output passed back in as an argument is freed after the call', async () => {
  await on(B.cpu, async () => {
    const { step, x, y } = mlp();
    const f = jit(step, { keepOutputs: true });
    const kept = Array.from({ length: 6 }, () => f(x, y));
    expect(kept.every((r) => !r.loss.isDisposed)).toBe(true);
    expect(() => jit(step, { keepOutput: true } as never)).toThrow(/keepOutputs/);
    expect(() => jit(step, { keepOutputs: 1 } as never)).toThrow(/keepOutputs/);

    // A recurrent state: h = g(h) replays with the previous output as its argument.
    const w = randn([3, 3]);
    const g = jit((h: Tensor) => h.matmul(w).tanh());
    let h = randn([2, 3]);
    let hEager = h.clone();
    for (let i = 0; i < 6; i++) {
      const prev = h;
      h = g(h);
      hEager = hEager.matmul(w).tanh();
      if (i > 0) expect(prev.isDisposed).toBe(true);
    }
    expect(Array.from((await h.data()) as Float32Array)).toEqual(Array.from((await hEager.data()) as Float32Array));
    expect(g.stats.replayed).toBeGreaterThan(0);
  });
});

testGpu(
  'jit outputs on webgpu: a replay called while a read waits is submitted at once (it runs during the read)',
  async () => {
    await on(B.gpu(), async () => {
      const { step, x, y } = mlp();
      const f = jit(step);
      const backend = x.ndarray.backend as unknown as { stats(): { submits: number; replays: number } };
      let r = f(x, y);
      for (let i = 0; i < 6; i++) {
        await r.loss.item();
        r = f(x, y);
      }
      const submitsOf = (fn: () => void): number => {
        const s0 = backend.stats().submits;
        fn();
        return backend.stats().submits - s0;
      };
      // No read waiting: the replay joins the open batch.
      await r.loss.item();
      const idle = submitsOf(() => (r = f(x, y)));
      // The previous loss's read waits: the replay is submitted with it pending. (Both reads are
      // awaited before any expectation, so none is left pending when the backend is destroyed.)
      const v = r.loss.item();
      const waiting = submitsOf(() => (r = f(x, y)));
      const [a, b] = [await v, await r.loss.item()];
      expect([idle, waiting]).toEqual([0, 1]);
      expect(Number.isFinite(a) && Number.isFinite(b) && b !== a).toBe(true);
    });
  },
);
