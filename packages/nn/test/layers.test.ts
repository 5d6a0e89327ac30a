import { Module, Tensor, gradcheck, manualSeed, nn, tensor } from '@surf/nn';
import { arr, backends, describeEach, functional, on } from './helpers';

// Each layer's gradients (input and parameters) by autograd's gradcheck (central finite
// differences) on the CPU and on WebGPU; forward values against hand-written references on
// the CPU, and WebGPU's forward against the CPU's for the same seed.

/** Deterministic inputs away from 0 (ReLU's kink): ((7i mod 11) - 5.5)/4. */
function input(shape: number[], requiresGrad = true): Tensor {
  const n = shape.reduce((a, b) => a * b, 1);
  const data = Float32Array.from({ length: n }, (_, i) => (((7 * i) % 11) - 5.5) / 4);
  return tensor(data, { requiresGrad }).reshape(shape).detach().requiresGrad_(requiresGrad);
}

interface Case {
  name: string;
  build: () => Module;
  x: () => Tensor;
  /** Re-seed before every forward (Dropout's mask must be the same in each evaluation). */
  seedEach?: number;
}

const cases: Case[] = [
  { name: 'Linear', build: () => new nn.Linear(3, 2), x: () => input([2, 3]) },
  {
    name: 'Linear without bias, 3-d input',
    build: () => new nn.Linear(3, 2, { bias: false }),
    x: () => input([2, 2, 3]),
  },
  {
    name: 'Sequential(Linear, Tanh, Linear)',
    build: () => new nn.Sequential(new nn.Linear(3, 4), new nn.Tanh(), new nn.Linear(4, 2)),
    x: () => input([2, 3]),
  },
  { name: 'ReLU', build: () => new nn.ReLU(), x: () => input([2, 3]) },
  { name: 'LeakyReLU', build: () => new nn.LeakyReLU(0.2), x: () => input([2, 3]) },
  { name: 'GELU', build: () => new nn.GELU(), x: () => input([2, 3]) },
  { name: 'GELU tanh', build: () => new nn.GELU({ approximate: 'tanh' }), x: () => input([2, 3]) },
  { name: 'Tanh', build: () => new nn.Tanh(), x: () => input([2, 3]) },
  { name: 'Sigmoid', build: () => new nn.Sigmoid(), x: () => input([2, 3]) },
  { name: 'Softmax', build: () => new nn.Softmax(1), x: () => input([2, 3]) },
  { name: 'Softmax dim 0', build: () => new nn.Softmax(0), x: () => input([2, 3]) },
  { name: 'Flatten', build: () => new nn.Flatten(), x: () => input([2, 2, 2]) },
  {
    name: 'LayerNorm',
    build: () => {
      const m = new nn.LayerNorm(3);
      nn.init.normal(m.weight!, 1, 0.5);
      nn.init.normal(m.bias!);
      return m;
    },
    x: () => input([2, 3]),
  },
  { name: 'LayerNorm over 2 dims', build: () => new nn.LayerNorm([2, 3]), x: () => input([2, 2, 3]) },
  {
    name: 'Embedding',
    build: () => new nn.Embedding(5, 3),
    x: () =>
      tensor(
        [
          [0, 4],
          [4, 2],
        ],
        { dtype: 'int32' },
      ),
  },
  { name: 'SiLU', build: () => new nn.SiLU(), x: () => input([2, 3]) },
  { name: 'LogSoftmax', build: () => new nn.LogSoftmax(1), x: () => input([2, 3]) },
  {
    name: 'RMSNorm',
    build: () => {
      const m = new nn.RMSNorm(3, { eps: 1e-5 });
      nn.init.normal(m.weight!, 1, 0.5);
      return m;
    },
    x: () => input([2, 3]),
  },
  {
    name: 'GroupNorm (2 groups of 2 channels, 3-d input)',
    build: () => {
      const m = new nn.GroupNorm(2, 4);
      nn.init.normal(m.weight!, 1, 0.5);
      nn.init.normal(m.bias!);
      return m;
    },
    x: () => input([2, 4, 3]),
  },
  { name: 'Dropout (training)', build: () => new nn.Dropout(0.4), x: () => input([3, 4]), seedEach: 11 },
];

const B = backends();
beforeAll(B.setup);
afterAll(B.teardown);

describeEach(['cpu', 'webgpu'] as const, 'layers on %s', (kind) => {
  test.each(cases.map((c) => [c.name, c] as const))('%s: gradcheck', async (_n, c) => {
    const backend = kind === 'cpu' ? B.cpu : B.gpu();
    await on(backend, async () => {
      manualSeed(3);
      const m = c.build();
      const x = c.x();
      const f = functional(m);
      const fn =
        c.seedEach === undefined
          ? f
          : (...a: Tensor[]) => {
              manualSeed(c.seedEach!);
              return f(a[0], ...a.slice(1));
            };
      const r = await gradcheck(fn, [x, ...m.parameters()]);
      expect(r.summary).toMatch(/^ok/);
      expect(r.checked).toBeGreaterThan(0);
    });
  });

  // Against the CPU: only the WebGPU block has this test.
  if (kind === 'webgpu')
    test.each(cases.map((c) => [c.name, c] as const))('%s: forward matches the CPU', async (_n, c) => {
      const backend = B.gpu();
      const run = async () => {
        manualSeed(3);
        const m = c.build();
        if (c.seedEach !== undefined) manualSeed(c.seedEach);
        return arr(m.forward(c.x()));
      };
      const want = await on(B.cpu, run);
      const got = await on(backend, run);
      expect(got.length).toBe(want.length);
      got.forEach((g, i) => expect(Math.abs(g - want[i])).toBeLessThanOrEqual(1e-5 + 1e-5 * Math.abs(want[i])));
    });
});

// ---- forward values against references computed here ----

describe('forward values (cpu)', () => {
  const near = (got: number[], want: number[], tol = 1e-6) => {
    expect(got.length).toBe(want.length);
    got.forEach((g, i) => expect(Math.abs(g - want[i])).toBeLessThanOrEqual(tol + tol * Math.abs(want[i])));
  };

  test('Linear is x·Wᵀ + b with W [out, in]', () =>
    on(B.cpu, async () => {
      const m = new nn.Linear(3, 2);
      const W = await arr(m.weight);
      const b = await arr(m.bias!);
      const x = [
        [1, 2, 3],
        [-1, 0.5, 2],
      ];
      const want = x.flatMap((r) => [0, 1].map((o) => r.reduce((s, v, i) => s + v * W[o * 3 + i], b[o])));
      near(await arr(m.forward(tensor(x))), want, 1e-6);
      expect(m.weight.shape).toEqual([2, 3]);
    }));

  test('Linear init is U(±1/√in) for weight and bias, seeded and the same for the same seed', () =>
    on(B.cpu, async () => {
      manualSeed(42);
      const m = new nn.Linear(100, 200);
      const w = await arr(m.weight);
      const b = await arr(m.bias!);
      const bound = 1 / Math.sqrt(100);
      expect(Math.max(...w.map(Math.abs), ...b.map(Math.abs))).toBeLessThanOrEqual(bound);
      // Uniform on [-0.1, 0.1]: min and max near the ends, variance bound²/3.
      expect(Math.min(...w)).toBeLessThan(-0.099);
      expect(Math.max(...w)).toBeGreaterThan(0.099);
      const mean = w.reduce((a, v) => a + v, 0) / w.length;
      const variance = w.reduce((a, v) => a + (v - mean) ** 2, 0) / w.length;
      expect(Math.abs(mean)).toBeLessThan(0.003);
      expect(Math.abs(variance - bound ** 2 / 3)).toBeLessThan((0.05 * bound ** 2) / 3);
      manualSeed(42);
      expect(await arr(new nn.Linear(100, 200).weight)).toEqual(w);
      manualSeed(43);
      expect(await arr(new nn.Linear(100, 200).weight)).not.toEqual(w);
    }));

  test('activations', () =>
    on(B.cpu, async () => {
      const xs = [-3, -0.5, 0.25, 2];
      const x = tensor(xs);
      const erf = (z: number) => {
        // Maclaurin series: ample precision for |z| <= 3 in float64.
        let s = 0,
          term = z;
        for (let n = 0; n < 80; n++) {
          s += term / (2 * n + 1);
          term *= (-z * z) / (n + 1);
        }
        return (2 / Math.sqrt(Math.PI)) * s;
      };
      near(
        await arr(new nn.ReLU().forward(x)),
        xs.map((v) => Math.max(v, 0)),
      );
      near(
        await arr(new nn.LeakyReLU().forward(x)),
        xs.map((v) => (v > 0 ? v : 0.01 * v)),
      );
      near(
        await arr(new nn.LeakyReLU(0.3).forward(x)),
        xs.map((v) => (v > 0 ? v : 0.3 * v)),
      );
      near(
        await arr(new nn.GELU().forward(x)),
        xs.map((v) => 0.5 * v * (1 + erf(v / Math.SQRT2))),
        1e-6,
      );
      near(
        await arr(new nn.GELU({ approximate: 'tanh' }).forward(x)),
        xs.map((v) => 0.5 * v * (1 + Math.tanh(Math.sqrt(2 / Math.PI) * (v + 0.044715 * v ** 3)))),
        1e-6,
      );
      near(await arr(new nn.Tanh().forward(x)), xs.map(Math.tanh));
      near(
        await arr(new nn.Sigmoid().forward(x)),
        xs.map((v) => 1 / (1 + Math.exp(-v))),
      );
      const z = xs.reduce((a, v) => a + Math.exp(v), 0);
      near(
        await arr(new nn.Softmax().forward(x)),
        xs.map((v) => Math.exp(v) / z),
      );
    }));

  test('Flatten keeps the batch dim by default', () =>
    on(B.cpu, async () => {
      const x = input([2, 3, 4], false);
      expect(new nn.Flatten().forward(x).shape).toEqual([2, 12]);
      expect(new nn.Flatten(0).forward(x).shape).toEqual([24]);
      expect(new nn.Flatten(1, 1).forward(x).shape).toEqual([2, 3, 4]);
      expect(await arr(new nn.Flatten().forward(x))).toEqual(await arr(x));
    }));

  test('LayerNorm normalises with the biased variance, then scales and shifts', () =>
    on(B.cpu, async () => {
      const m = new nn.LayerNorm(4, { eps: 1e-5 });
      expect(await arr(m.weight!)).toEqual([1, 1, 1, 1]);
      expect(await arr(m.bias!)).toEqual([0, 0, 0, 0]);
      m.weight!.assign(tensor([1, 2, 0.5, -1]));
      m.bias!.assign(tensor([0, 1, 0, 0.25]));
      const rows = [
        [1, 2, 3, 4],
        [10, -10, 0, 5],
      ];
      const want = rows.flatMap((r) => {
        const mu = r.reduce((a, v) => a + v, 0) / 4;
        const v = r.reduce((a, x) => a + (x - mu) ** 2, 0) / 4;
        return r.map((x, i) => ((x - mu) / Math.sqrt(v + 1e-5)) * [1, 2, 0.5, -1][i] + [0, 1, 0, 0.25][i]);
      });
      near(await arr(m.forward(tensor(rows))), want, 1e-5);
      const plain = new nn.LayerNorm(4, { elementwiseAffine: false });
      expect(plain.parameters()).toHaveLength(0);
    }));

  test('Embedding looks up rows for any index shape', () =>
    on(B.cpu, async () => {
      const m = new nn.Embedding(4, 2);
      const W = await arr(m.weight);
      const out = m.forward(tensor([[3, 0, 3]], { dtype: 'int32' }));
      expect(out.shape).toEqual([1, 3, 2]);
      expect(await arr(out)).toEqual([W[6], W[7], W[0], W[1], W[6], W[7]]);
      expect(() => m.forward(tensor([1.5]))).toThrow(
        /Embedding: index must be an int32 Tensor \(pass \{ dtype: 'int32' \} to tensor\(\) or an Int32Array\); got dtype float32/,
      );
    }));

  test('Dropout: zero or x/(1-p) in training, about p dropped, identity in eval, seeded', () =>
    on(B.cpu, async () => {
      const d = new nn.Dropout(0.25);
      const xs = Float32Array.from({ length: 4000 }, (_, i) => 1 + (i % 7));
      const x = tensor(xs);
      manualSeed(5);
      const y = await arr(d.forward(x));
      const dropped = y.filter((v) => v === 0).length;
      const wrong = y.filter((v, i) => v !== 0 && Math.abs(v - xs[i] / 0.75) > 1e-5 * v);
      expect(wrong).toEqual([]);
      expect(dropped / xs.length).toBeGreaterThan(0.22);
      expect(dropped / xs.length).toBeLessThan(0.28);
      manualSeed(5);
      expect(await arr(d.forward(x))).toEqual(y);
      d.eval();
      expect(d.forward(x)).toBe(x);
      expect(() => new nn.Dropout(1.5)).toThrow(/Dropout: p must be a probability in \[0, 1\]; got 1.5/);
    }));

  test('layers name bad inputs', () =>
    on(B.cpu, () => {
      expect(() => new nn.Linear(3, 2).forward(tensor([[1, 2]]))).toThrow(
        /Linear: input has shape \[1,2\]; expected the last dim to be inFeatures = 3/,
      );
      expect(() => new nn.LayerNorm(3).forward(tensor([[1, 2]]))).toThrow(
        /LayerNorm: input has shape \[1,2\]; expected it to end in normalizedShape \[3\]/,
      );
      expect(() => new nn.Linear(-1, 2)).toThrow(/Linear: inFeatures must be a non-negative integer; got -1/);
      expect(() => new nn.Linear(3, 2, false as never)).toThrow(
        /Linear: the options argument must be an object like \{ bias \}; got false/,
      );
      expect(() => new nn.Sequential(5 as unknown as Module)).toThrow(
        /Sequential: argument 0 is number; expected a Module/,
      );
    }));
});
