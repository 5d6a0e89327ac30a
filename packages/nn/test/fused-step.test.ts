import { Backend } from '@surf/core';
import { Tensor, crossEntropy, manualSeed, nn, optim, randn, tensor, tidy } from '@surf/nn';
import { backends, on, testGpu } from './helpers';

// The fused training path (nn.Linear's node with ReLU folded in by the fusion pass, softmax
// cross-entropy as one op with the seed-free backward) against the same model written with
// matmul on transposed weights and logSoftmax, on the CPU and on WebGPU; and what one step
// costs on WebGPU, counted by the backend. fusion.test.ts checks other model spellings.

const B = backends();
beforeAll(B.setup);
afterAll(B.teardown);

function near(got: ArrayLike<number>, want: ArrayLike<number>, tol = 1e-5): void {
  expect(got.length).toBe(want.length);
  for (let i = 0; i < want.length; i++) {
    if (!(Math.abs(got[i] - want[i]) <= tol * (1 + Math.abs(want[i]))))
      throw new Error(`at ${i}: got ${got[i]}, want ${want[i]}`);
  }
}

/** Loss and every parameter gradient of a 3-layer ReLU MLP on fixed data, fused or composed. */
async function lossAndGrads(fused: boolean, smoothing: number): Promise<number[][]> {
  manualSeed(7);
  const model = new nn.Sequential(
    new nn.Linear(5, 8),
    new nn.ReLU(),
    new nn.Linear(8, 6),
    new nn.ReLU(),
    new nn.Linear(6, 4),
  );
  const x = randn([7, 5]);
  const y = tensor([0, 3, 1, 1, 2, 0, 3], { dtype: 'int32' });
  const loss = tidy(() => {
    if (fused) return crossEntropy(model.forward(x), y, { labelSmoothing: smoothing });
    // The same function from unfused ops: matmul, add, relu, logSoftmax, a one-hot mask.
    let h: Tensor = x;
    model.layers.forEach((l, i) => {
      if (l instanceof nn.Linear) h = h.matmul(l.weight.T).add(l.bias!);
      else if (i < model.layers.length) h = h.relu();
    });
    const c = 4;
    const onehot = y
      .reshape([-1, 1])
      .eq(tensor([0, 1, 2, 3], { dtype: 'int32' }).reshape([1, -1]))
      .float();
    const w = onehot.mul(1 - smoothing).add(smoothing / c);
    return w.mul(h.logSoftmax(1)).sum(1).neg().mean();
  });
  loss.backward();
  const out = [Array.from(await loss.data())];
  for (const p of model.parameters()) out.push(Array.from(await p.grad!.data()));
  model.parameters().forEach((p) => p.dispose());
  [x, y, loss].forEach((t) => t.dispose());
  return out;
}

async function fusedMatchesComposed(backend: Backend): Promise<void> {
  await on(backend, async () => {
    for (const eps of [0, 0.1]) {
      const want = await lossAndGrads(false, eps);
      const got = await lossAndGrads(true, eps);
      got.forEach((g, i) => near(g, want[i], 2e-5));
    }
  });
}

test('fused MLP step = composed ops (loss and every gradient) on the CPU', () => fusedMatchesComposed(B.cpu));

testGpu('fused MLP step = composed ops (loss and every gradient) on WebGPU', async () => {
  await fusedMatchesComposed(B.gpu());
});

test('crossEntropy backward without a seed equals backward with an explicit 1', () =>
  on(B.cpu, async () => {
    const z = tensor(
      [
        [0.3, -1.2, 0.9],
        [2.1, 0.7, -0.4],
      ],
      { requiresGrad: true },
    );
    const y = tensor([2, 0], { dtype: 'int32' });
    crossEntropy(z, y, { labelSmoothing: 0.3, reduction: 'sum' }).backward();
    const seedless = Array.from(await z.grad!.data());
    z.grad = null;
    crossEntropy(z, y, { labelSmoothing: 0.3, reduction: 'sum' }).backward(tensor(1));
    near(seedless, Array.from(await z.grad!.data()), 0);
    // By hand: softmax − ((1 − ε)·onehot + ε/C).
    const sm = (r: number[]) => {
      const e = r.map(Math.exp);
      const s = e.reduce((a, b) => a + b);
      return e.map((v) => v / s);
    };
    const p0 = sm([0.3, -1.2, 0.9]),
      p1 = sm([2.1, 0.7, -0.4]);
    near(
      seedless,
      [...p0.map((p, j) => p - ((j === 2 ? 0.7 : 0) + 0.1)), ...p1.map((p, j) => p - ((j === 0 ? 0.7 : 0) + 0.1))],
      1e-6,
    );
  }));

testGpu(
  'one SGD step of Linear-ReLU-Linear with crossEntropy is at most 14 kernels on WebGPU, no readback',
  async () => {
    const gpu = B.gpu() as Backend & { stats(): { dispatches: number; readbacks: number } };
    await on(gpu, async () => {
      const model = new nn.Sequential(new nn.Linear(6, 5), new nn.ReLU(), new nn.Linear(5, 3));
      const opt = new optim.SGD(model.parameters(), { lr: 0.1 });
      const x = randn([4, 6]);
      const y = tensor([0, 2, 1, 2], { dtype: 'int32' });
      const step = () =>
        tidy(() => {
          opt.zeroGrad();
          const l = crossEntropy(model.forward(x), y);
          l.backward();
          opt.step();
          return l;
        });
      step().dispose();
      const s0 = gpu.stats();
      step().dispose();
      const s1 = gpu.stats();
      // forward 2 (bias and ReLU in the matmul epilogues), loss 2 (its rows, with the class
      // indices' device-side check inside, and their sum), its backward 1 (no seed kernel),
      // layer 2's backward 3 (dW, db, dx with layer 1's ReLU mask in the epilogue), layer 1's 2
      // (no dx: the input needs no grad), SGD 4. Was 33 before the fused ops, 18 before the rows.
      expect(s1.dispatches - s0.dispatches).toBeLessThanOrEqual(14);
      expect(s1.readbacks - s0.readbacks).toBe(0);
      model.parameters().forEach((p) => p.dispose());
      opt.dispose();
      [x, y].forEach((t) => t.dispose());
    });
  },
);
