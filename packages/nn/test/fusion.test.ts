import { Backend } from '@surf/core';
import { Tensor, crossEntropy, manualSeed, nn, optim, randn, tensor, tidy } from '@surf/nn';
import { backends, on, testGpu } from './helpers';

// The fusion pass (autograd/src/fusion): any model written with public ops gets the fused
// kernels Sequential gets. Kernel counts per training step on WebGPU, the values of a
// hand-written step against a loop reference, and the pass's promises (an input replaced
// after a fold does not change a pending value; an unread product still runs).

const B = backends();
beforeAll(B.setup);
afterAll(B.teardown);

type Stats = { stats(): { dispatches: number; readbacks: number } };
const IN = 6,
  HID = 5,
  OUT = 3;

/** A model's forward and parameters, built from the same seeded numbers. */
interface Model {
  forward(x: Tensor): Tensor;
  params: Tensor[];
}

class PlainMLP extends nn.Module {
  readonly l1 = new nn.Linear(IN, HID);
  readonly act = new nn.ReLU();
  readonly l2 = new nn.Linear(HID, OUT);
  forward(x: Tensor): Tensor {
    return this.l2.forward(this.act.forward(this.l1.forward(x)));
  }
}

const models: Record<string, () => Model> = {
  'nn.Sequential': () => {
    const m = new nn.Sequential(new nn.Linear(IN, HID), new nn.ReLU(), new nn.Linear(HID, OUT));
    return { forward: (x) => m.forward(x), params: m.parameters() };
  },
  'a plain Module with Linear and ReLU fields': () => {
    const m = new PlainMLP();
    return { forward: (x) => m.forward(x), params: m.parameters() };
  },
  'raw ops x.matmul(W).add(b).relu()': () => {
    const p = (s: number[]) => randn(s, { requiresGrad: true });
    const [w1, b1, w2, b2] = [p([IN, HID]), p([HID]), p([HID, OUT]), p([OUT])];
    return { forward: (x) => x.matmul(w1).add(b1).relu().matmul(w2).add(b2), params: [w1, b1, w2, b2] };
  },
  'raw ops with [out, in] weights x.matmul(W.T)': () => {
    const p = (s: number[]) => randn(s, { requiresGrad: true });
    const [w1, b1, w2, b2] = [p([HID, IN]), p([HID]), p([OUT, HID]), p([OUT])];
    return { forward: (x) => x.matmul(w1.T).add(b1).relu().matmul(w2.T).add(b2), params: [w1, b1, w2, b2] };
  },
};

/** Dispatches of the second SGD step (the first compiles) of `make`'s model. */
async function kernelsPerStep(
  gpu: Backend & Stats,
  make: () => Model,
): Promise<{ dispatches: number; readbacks: number }> {
  return on(gpu, async () => {
    manualSeed(3);
    const model = make();
    const opt = new optim.SGD(model.params, { lr: 0.1 });
    const x = randn([4, IN]);
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
    model.params.forEach((p) => p.dispose());
    opt.dispose();
    [x, y].forEach((t) => t.dispose());
    return { dispatches: s1.dispatches - s0.dispatches, readbacks: s1.readbacks - s0.readbacks };
  });
}

testGpu('an MLP training step costs the same kernels in Sequential, a plain Module and raw ops on WebGPU', async () => {
  const gpu = B.gpu() as Backend & Stats;
  const counts: Record<string, number> = {};
  for (const [name, make] of Object.entries(models)) {
    const s = await kernelsPerStep(gpu, make);
    expect(s.readbacks).toBe(0);
    counts[name] = s.dispatches;
  }
  // forward 2 (bias and ReLU in the matmul epilogues), loss 1 (its rows, with the class
  // indices' device-side check and their sum inside) + 1, backward 5 (the hidden ReLU mask in
  // layer 2's input-gradient epilogue), SGD 4: see docs/kernels.md.
  expect(counts).toEqual(Object.fromEntries(Object.keys(models).map((k) => [k, 13])));
});

/** Loss and gradients of the raw-op MLP, and the same computed with loops in float64. */
async function rawStepAgainstLoops(backend: Backend): Promise<void> {
  await on(backend, async () => {
    // The count test's shapes (kernels already compiled); values from a fixed formula.
    const N = 4,
      K = IN,
      H = HID,
      C = OUT;
    const fill = (r: number, c: number, k: number) =>
      Array.from({ length: r }, (_, i) => Array.from({ length: c }, (_, j) => Math.sin(k + 1.7 * i + 0.9 * j)));
    const xs = fill(N, K, 0),
      w1s = fill(K, H, 1),
      w2s = fill(H, C, 2);
    const b1s = fill(1, H, 3)[0].map((v) => 0.3 * v),
      b2s = fill(1, C, 4)[0].map((v) => 0.3 * v);
    const labels = [1, 0, 2, 1];
    const leaf = (v: number[][] | number[]) => tensor(v, { requiresGrad: true });
    const [x, w1, b1, w2, b2] = [tensor(xs), leaf(w1s), leaf(b1s), leaf(w2s), leaf(b2s)];
    const loss = crossEntropy(x.matmul(w1).add(b1).relu().matmul(w2).add(b2), tensor(labels, { dtype: 'int32' }));
    loss.backward();

    // The reference: forward, softmax cross-entropy (mean) and backward by hand.
    const pre = xs.map((r) => b1s.map((b, j) => b + r.reduce((s, v, k) => s + v * w1s[k][j], 0)));
    const h = pre.map((r) => r.map((v) => Math.max(v, 0)));
    const z = h.map((r) => b2s.map((b, c) => b + r.reduce((s, v, j) => s + v * w2s[j][c], 0)));
    let lossRef = 0;
    const dz = z.map((r, i) => {
      const m = Math.max(...r);
      const e = r.map((v) => Math.exp(v - m));
      const s = e.reduce((a, b) => a + b);
      lossRef += (Math.log(s) + m - r[labels[i]]) / N;
      return e.map((v, c) => (v / s - (c === labels[i] ? 1 : 0)) / N);
    });
    const gw2 = Array.from({ length: H }, (_, j) =>
      Array.from({ length: C }, (_, c) => h.reduce((s, r, i) => s + r[j] * dz[i][c], 0)),
    );
    const gb2 = Array.from({ length: C }, (_, c) => dz.reduce((s, r) => s + r[c], 0));
    const dpre = h.map((r, i) =>
      r.map((v, j) => (pre[i][j] > 0 ? dz[i].reduce((s, d, c) => s + d * w2s[j][c], 0) : 0)),
    );
    const gw1 = Array.from({ length: K }, (_, k) =>
      Array.from({ length: H }, (_, j) => xs.reduce((s, r, i) => s + r[k] * dpre[i][j], 0)),
    );
    const gb1 = Array.from({ length: H }, (_, j) => dpre.reduce((s, r) => s + r[j], 0));
    expect(pre.flat().every((v) => Math.abs(v) > 1e-3)).toBe(true); // no ReLU kink in the data

    const near = (got: ArrayLike<number>, want: number[]) => {
      expect(got.length).toBe(want.length);
      want.forEach((w, i) => expect(Math.abs(got[i] - w)).toBeLessThan(1e-5 * (1 + Math.abs(w))));
    };
    near(await loss.data(), [lossRef]);
    near(await w1.grad!.data(), gw1.flat());
    near(await b1.grad!.data(), gb1);
    near(await w2.grad!.data(), gw2.flat());
    near(await b2.grad!.data(), gb2);
    [x, w1, b1, w2, b2, loss].forEach((t) => t.dispose());
  });
}

test('a hand-written MLP step (fused) matches loops on the CPU', () => rawStepAgainstLoops(B.cpu));

testGpu('a hand-written MLP step (fused) matches loops on WebGPU', async () => {
  const gpu = B.gpu();
  await rawStepAgainstLoops(gpu);
});

test('a product folded into its consumer, read after its weight was replaced, has the old value', () =>
  on(B.cpu, async () => {
    const f32 = { dtype: 'float32' } as const;
    const x = tensor(
      [
        [1, 2],
        [3, 4],
      ],
      f32,
    );
    const w = tensor(
      [
        [1, 0],
        [0, 1],
      ],
      f32,
    );
    const z = x.matmul(w); // pending
    const y = z.add(1).relu(); // folds z: z itself is never computed unless read
    w.assign(
      tensor(
        [
          [5, 5],
          [5, 5],
        ],
        f32,
      ),
    ); // as an optimizer step does
    expect(await y.toArray()).toEqual([
      [2, 3],
      [4, 5],
    ]);
    expect(await z.toArray()).toEqual([
      [1, 2],
      [3, 4],
    ]);
    [x, w, z, y].forEach((t) => t.dispose());
  }));

testGpu('on WebGPU a folded chain is one kernel; an unread product still runs by the next await', async () => {
  const gpu = B.gpu() as Backend & Stats;
  await on(gpu, async () => {
    // The count test's shapes and epilogue: the kernels are compiled already.
    const a = randn([4, IN]),
      b = randn([IN, HID]),
      bias = randn([HID]);
    await a.data();
    await b.data();
    await bias.data();
    let s0 = gpu.stats().dispatches;
    const y = a.matmul(b).add(bias).relu();
    await y.data();
    expect(gpu.stats().dispatches - s0).toBe(1);
    s0 = gpu.stats().dispatches;
    const z = a.matmul(b); // never read
    expect(gpu.stats().dispatches - s0).toBe(0);
    await Promise.resolve();
    expect(gpu.stats().dispatches - s0).toBe(1);
    [a, b, bias, y, z].forEach((t) => t.dispose());
  });
});

testGpu('on WebGPU a 3-d input costs the same backward kernels as a 2-d one (ReLU mask in the dgrad)', async () => {
  const gpu = B.gpu() as Backend & Stats;
  await on(gpu, async () => {
    const l1 = new nn.Linear(IN, HID),
      l2 = new nn.Linear(HID, OUT);
    const backwardKernels = async (x: Tensor) => {
      const y = tidy(() => l2.forward(l1.forward(x).relu()).sum());
      await y.data();
      const s0 = gpu.stats().dispatches;
      y.backward();
      const n = gpu.stats().dispatches - s0;
      y.dispose();
      [...l1.parameters(), ...l2.parameters()].forEach((p) => {
        p.grad = null;
      });
      return n;
    };
    const x2 = randn([4, IN], { requiresGrad: true }),
      x3 = randn([2, 2, IN], { requiresGrad: true });
    expect(await backwardKernels(x3)).toBe(await backwardKernels(x2));
    [x2, x3, ...l1.parameters(), ...l2.parameters()].forEach((t) => t.dispose());
  });
});
