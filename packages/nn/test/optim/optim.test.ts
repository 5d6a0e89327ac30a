import { Backend } from '@surf/core';
import { Tensor, ValueError, manualSeed, nn, optim, randn, tensor, tidy } from '@surf/nn';
import { arr, backends, on, testEach, testGpu } from '../helpers';

/** A float32 tensor (integer literals would infer int32). */
const ft = (xs: number[], o: { requiresGrad?: boolean } = {}) => tensor(xs, { dtype: 'float32', ...o });

// Optimizers against PyTorch's documented update rules evaluated here in float64, several
// steps each; the fused WebGPU step against an unfused step-by-step tensor computation on
// the CPU; one kernel per parameter per step; schedulers; clipping; state dicts.

const B = backends();
beforeAll(B.setup);
afterAll(B.teardown);

const close = (got: number[], want: number[], rel = 1e-6) => {
  expect(got.length).toBe(want.length);
  got.forEach((g, i) => expect(Math.abs(g - want[i])).toBeLessThanOrEqual(rel * Math.max(Math.abs(want[i]), 1e-3)));
};

const GRADS = [
  [0.1, -0.2, 0.3],
  [0.05, 0.4, -0.1],
  [-0.3, 0.1, 0.02],
  [0.2, 0.2, -0.2],
];
const P0 = [0.5, -1.5, 2];

/** Runs `steps` optimizer steps with the gradients above set by hand; returns p after each. */
async function run(make: (p: Tensor) => optim.Optimizer<optim.BaseOptions>, steps = GRADS.length): Promise<number[][]> {
  const p = tensor(P0, { requiresGrad: true });
  const opt = make(p);
  const out: number[][] = [];
  for (let t = 0; t < steps; t++) {
    p.grad = tensor(GRADS[t]);
    opt.step();
    out.push(await arr(p));
  }
  return out;
}

describe('update rules against hand-computed values (cpu)', () => {
  test.each([
    ['plain', { lr: 0.1 }],
    ['weight decay', { lr: 0.1, weightDecay: 0.05 }],
    ['momentum', { lr: 0.1, momentum: 0.9 }],
    ['momentum + dampening + decay', { lr: 0.05, momentum: 0.8, dampening: 0.3, weightDecay: 0.01 }],
    ['nesterov', { lr: 0.1, momentum: 0.9, nesterov: true, weightDecay: 0.02 }],
  ] as const)('SGD %s', (_n, o) =>
    on(B.cpu, async () => {
      const got = await run((p) => new optim.SGD([p], o));
      const {
        lr,
        momentum = 0,
        dampening = 0,
        weightDecay = 0,
        nesterov = false,
      } = o as { lr: number; momentum?: number; dampening?: number; weightDecay?: number; nesterov?: boolean };
      let p = P0.slice();
      let buf: number[] | null = null;
      GRADS.forEach((g0, t) => {
        let g = g0.map((x, i) => x + weightDecay * p[i]);
        if (momentum) {
          buf = buf === null ? g.slice() : buf.map((b, i) => momentum * b + (1 - dampening) * g[i]);
          g = nesterov ? g.map((x, i) => x + momentum * buf![i]) : buf.slice();
        }
        p = p.map((x, i) => x - lr * g[i]);
        close(got[t], p);
      });
    }),
  );

  test.each([
    ['Adam', false, { lr: 0.01 }],
    [
      'Adam with L2 weight decay',
      false,
      { lr: 0.01, weightDecay: 0.1, betas: [0.8, 0.99] as [number, number], eps: 1e-6 },
    ],
    ['AdamW', true, { lr: 0.01, weightDecay: 0.1 }],
    ['AdamW default decay', true, { lr: 0.02 }],
  ] as const)('%s', (name, decoupled, o) =>
    on(B.cpu, async () => {
      const got = await run((p) => (decoupled ? new optim.AdamW([p], o) : new optim.Adam([p], o)));
      const opts = o as { lr: number; weightDecay?: number; betas?: [number, number]; eps?: number };
      const lr = opts.lr,
        wd = opts.weightDecay ?? (decoupled ? 0.01 : 0);
      const [b1, b2] = opts.betas ?? [0.9, 0.999];
      const eps = opts.eps ?? 1e-8;
      let p = P0.slice(),
        m = [0, 0, 0],
        v = [0, 0, 0];
      GRADS.forEach((g0, k) => {
        const t = k + 1;
        if (decoupled) p = p.map((x) => x * (1 - lr * wd));
        const g = decoupled ? g0 : g0.map((x, i) => x + wd * p[i]);
        m = m.map((x, i) => b1 * x + (1 - b1) * g[i]);
        v = v.map((x, i) => b2 * x + (1 - b2) * g[i] * g[i]);
        p = p.map((x, i) => x - (lr * (m[i] / (1 - b1 ** t))) / (Math.sqrt(v[i] / (1 - b2 ** t)) + eps));
        close(got[k], p);
      });
      expect(name).toMatch(/Adam/);
    }),
  );

  test('parameters without a gradient are left alone; zeroGrad drops gradients', () =>
    on(B.cpu, async () => {
      const a = ft([1, 2], { requiresGrad: true });
      const b = ft([3, 4], { requiresGrad: true });
      const opt = new optim.Adam([a, b], { lr: 0.1 });
      a.grad = ft([1, 1]);
      opt.step();
      expect(await arr(b)).toEqual([3, 4]);
      expect((await arr(a))[0]).toBeCloseTo(0.9, 6);
      opt.zeroGrad();
      expect(a.grad).toBeNull();
    }));

  test('parameter groups take their own options over the defaults', () =>
    on(B.cpu, async () => {
      const a = ft([1], { requiresGrad: true });
      const b = ft([1], { requiresGrad: true });
      const opt = new optim.SGD([{ params: [a] }, { params: [b], lr: 0.5 }], { lr: 0.1 });
      a.grad = ft([1]);
      b.grad = ft([1]);
      opt.step();
      expect(await arr(a)).toEqual([Math.fround(0.9)]);
      expect(await arr(b)).toEqual([0.5]);
      expect(opt.paramGroups.map((g) => g.lr)).toEqual([0.1, 0.5]);
    }));

  test('a learning rate changed between steps is used', () =>
    on(B.cpu, async () => {
      const p = ft([1], { requiresGrad: true });
      const opt = new optim.SGD([p], { lr: 0.1 });
      p.grad = ft([1]);
      opt.step();
      opt.paramGroups[0].lr = 0.01;
      opt.step();
      close(await arr(p), [1 - 0.1 - 0.01]);
    }));

  test('hyperparameters are validated', () =>
    on(B.cpu, () => {
      const p = ft([1], { requiresGrad: true });
      expect(() => new optim.SGD([p], { lr: -1 })).toThrow(/SGD: option 'lr' must be a number >= 0; got -1/);
      expect(() => new optim.SGD([p], { nesterov: true })).toThrow(/SGD: nesterov needs momentum > 0 and dampening 0/);
      expect(() => new optim.Adam([p], { betas: [0.9, 1] })).toThrow(
        /Adam: option 'betas' must be two numbers in \[0, 1\); got \[0.9,1\]/,
      );
      expect(() => new optim.AdamW([])).toThrow(/AdamW: got an empty parameter list/);
      expect(() => new optim.Adam([ft([1])])).toThrow(ValueError);
      expect(() => new optim.Adam([p, p])).toThrow(/appears in more than one place/);
    }));
});

// Parameters of mixed sizes (vec4 and scalar kernels on a GPU) in two groups with their own
// learning rates: each updated as float64 loops say, on both backends.
describe('updates match float64 loops, per parameter and per group', () => {
  const sizes = [1, 3, 4, 8, 13, 16];
  const grad = (i: number, s: number, step: number) =>
    Array.from({ length: sizes[i] }, (_, j) => Math.sin(1.3 * i + 0.7 * j + step));
  const init = (i: number) => Array.from({ length: sizes[i] }, (_, j) => Math.cos(0.5 * i + 0.3 * j));
  const lrOf = (i: number) => (i % 2 ? 0.02 : 0.1);
  testEach(['cpu', 'webgpu'] as const, 'SGD with momentum and Adam on %s', (kind) =>
    on(kind === 'cpu' ? B.cpu : B.gpu(), async () => {
      for (const name of ['sgd', 'adam'] as const) {
        const ps = sizes.map((_, i) => ft(init(i), { requiresGrad: true }));
        const groups = [
          { params: ps.filter((_, i) => i % 2 === 0) },
          { params: ps.filter((_, i) => i % 2 === 1), lr: 0.02 },
        ];
        const opt =
          name === 'sgd' ? new optim.SGD(groups, { lr: 0.1, momentum: 0.9 }) : new optim.Adam(groups, { lr: 0.1 });
        const want = sizes.map((_, i) => init(i));
        const m = sizes.map((n) => new Array<number>(n).fill(0));
        const v = sizes.map((n) => new Array<number>(n).fill(0));
        for (let step = 1; step <= 3; step++) {
          ps.forEach((p, i) => {
            p.grad = ft(grad(i, sizes[i], step));
          });
          opt.step();
          sizes.forEach((_, i) => {
            const g = grad(i, sizes[i], step);
            for (let j = 0; j < sizes[i]; j++) {
              if (name === 'sgd') {
                m[i][j] = step === 1 ? g[j] : 0.9 * m[i][j] + g[j];
                want[i][j] -= lrOf(i) * m[i][j];
              } else {
                m[i][j] = 0.9 * m[i][j] + 0.1 * g[j];
                v[i][j] = 0.999 * v[i][j] + 0.001 * g[j] * g[j];
                const mh = m[i][j] / (1 - 0.9 ** step),
                  vh = v[i][j] / (1 - 0.999 ** step);
                want[i][j] -= (lrOf(i) * mh) / (Math.sqrt(vh) + 1e-8);
              }
            }
          });
        }
        for (let i = 0; i < sizes.length; i++) close(await arr(ps[i]), want[i], 1e-5);
        opt.dispose();
      }
    }),
  );
});

describe('one fused kernel per parameter per step, no readback', () => {
  testEach(['cpu', 'webgpu'] as const, 'on %s', (kind) => {
    const backend: Backend = kind === 'cpu' ? B.cpu : B.gpu();
    return on(backend, async () => {
      manualSeed(0);
      const model = new nn.Sequential(new nn.Linear(3, 4), new nn.ReLU(), new nn.Linear(4, 2));
      for (const make of [
        () => new optim.Adam(model.parameters(), { lr: 1e-3 }),
        () => new optim.AdamW(model.parameters()),
        () => new optim.SGD(model.parameters(), { lr: 0.1, momentum: 0.9, nesterov: true, weightDecay: 1e-4 }),
      ]) {
        const opt = make();
        const nParams = model.parameters().length;
        for (let s = 0; s < 3; s++) {
          tidy(() =>
            model
              .forward(randn([5, 3]))
              .sum()
              .backward(),
          );
          const ew = jest.spyOn(backend, 'elementwise');
          const rd = jest.spyOn(backend, 'read');
          const other = ['reduce', 'matmul', 'gather', 'fromData'].map((k) => jest.spyOn(backend, k as 'reduce'));
          opt.step();
          expect(ew).toHaveBeenCalledTimes(nParams);
          expect(rd).not.toHaveBeenCalled();
          other.forEach((o) => expect(o).not.toHaveBeenCalled());
          jest.restoreAllMocks();
          opt.zeroGrad();
        }
        opt.dispose();
      }
    });
  });
});

describe('fused step on WebGPU equals an unfused tensor computation on the CPU', () => {
  // The reference is PyTorch's formula written step by step with Tensor ops on the CPU.
  type Ref = (p: Tensor, g: Tensor, s: { m?: Tensor; v?: Tensor; t: number }) => Tensor;
  const [lr, b1, b2, eps, wd] = [0.01, 0.9, 0.999, 1e-8, 0.05];
  const adamRef =
    (decoupled: boolean): Ref =>
    (p, g0, s) => {
      s.t++;
      const g = decoupled ? g0 : g0.add(p.mul(wd));
      const pd = decoupled ? p.mul(1 - lr * wd) : p;
      s.m = s.m ? s.m.mul(b1).add(g.mul(1 - b1)) : g.mul(1 - b1);
      s.v = s.v ? s.v.mul(b2).add(g.mul(g).mul(1 - b2)) : g.mul(g).mul(1 - b2);
      const mHat = s.m.div(1 - b1 ** s.t);
      const vHat = s.v.div(1 - b2 ** s.t);
      return pd.sub(mHat.mul(lr).div(vHat.sqrt().add(eps)));
    };
  const sgdRef: Ref = (p, g0, s) => {
    s.t++;
    const g = g0.add(p.mul(wd));
    s.m = s.m ? s.m.mul(0.9).add(g) : g;
    return p.sub(g.add(s.m.mul(0.9)).mul(lr));
  };
  testGpu.each([
    [
      'Adam',
      (ps: Tensor[]) => new optim.Adam(ps, { lr, betas: [b1, b2], eps, weightDecay: wd }),
      adamRef(false),
      'expAvg',
    ],
    [
      'AdamW',
      (ps: Tensor[]) => new optim.AdamW(ps, { lr, betas: [b1, b2], eps, weightDecay: wd }),
      adamRef(true),
      'expAvg',
    ],
    [
      'SGD nesterov',
      (ps: Tensor[]) => new optim.SGD(ps, { lr, momentum: 0.9, nesterov: true, weightDecay: wd }),
      sgdRef,
      'momentumBuffer',
    ],
  ] as const)('%s, 5 steps', async (_n, make, ref, stateKey) => {
    const gpu = B.gpu();
    const shape = [7, 5];
    const n = 35;
    const p0 = Float32Array.from({ length: n }, (_, i) => 1 + 0.5 * Math.sin(i));
    const grads = Array.from({ length: 5 }, (_, t) =>
      Float32Array.from({ length: n }, (_, i) => Math.cos(i * (t + 1)) * 0.3),
    );
    const fused = await on(gpu, async () => {
      const p = tensor(p0, { requiresGrad: true }).reshape(shape).detach().requiresGrad_();
      const opt = make([p]);
      for (const g of grads) {
        p.grad = tensor(g).reshape(shape);
        opt.step();
      }
      const st = opt.stateDict().state[0];
      return { p: await arr(p), s: await arr(st[stateKey] as Tensor) };
    });
    const want = await on(B.cpu, async () => {
      let p = tensor(p0).reshape(shape);
      const s: { m?: Tensor; v?: Tensor; t: number } = { t: 0 };
      for (const g of grads) p = ref(p, tensor(g).reshape(shape), s);
      return { p: await arr(p), s: await arr(s.m!) };
    });
    close(fused.p, want.p, 1e-6);
    close(fused.s, want.s, 1e-6);
  });
});

describe('schedulers', () => {
  const make = (lr = 1) => new optim.SGD([ft([0], { requiresGrad: true })], { lr });
  const lrs = (s: optim.LRScheduler, n: number) => {
    const out = [s.getLastLr()[0]];
    for (let i = 0; i < n; i++) {
      s.step();
      out.push(s.getLastLr()[0]);
    }
    return out;
  };

  test('StepLR multiplies by gamma every stepSize steps', () =>
    on(B.cpu, () => {
      close(lrs(new optim.StepLR(make(0.1), { stepSize: 2, gamma: 0.5 }), 5), [0.1, 0.1, 0.05, 0.05, 0.025, 0.025]);
    }));

  test('CosineAnnealingLR follows the half cosine from base to etaMin', () =>
    on(B.cpu, () => {
      const got = lrs(new optim.CosineAnnealingLR(make(1), { tMax: 4, etaMin: 0.1 }), 4);
      close(
        got,
        [0, 1, 2, 3, 4].map((t) => 0.1 + (0.9 * (1 + Math.cos((Math.PI * t) / 4))) / 2),
      );
      expect(got[4]).toBeCloseTo(0.1, 12);
    }));

  test('LinearWarmup ramps to base, then hands over to `after`', () =>
    on(B.cpu, () => {
      close(lrs(new optim.LinearWarmup(make(1), { warmupSteps: 4 }), 5), [0.25, 0.5, 0.75, 1, 1, 1]);
      const opt = make(1);
      const cosine = new optim.CosineAnnealingLR(opt, { tMax: 2 });
      close(lrs(new optim.LinearWarmup(opt, { warmupSteps: 2, after: cosine }), 4), [0.5, 1, 0.5, 0, 0.5]);
    }));

  test('the optimizer steps with the scheduled lr', () =>
    on(B.cpu, async () => {
      const p = ft([0], { requiresGrad: true });
      const opt = new optim.SGD([p], { lr: 1 });
      const sched = new optim.StepLR(opt, { stepSize: 1, gamma: 0.5 });
      for (let i = 0; i < 3; i++) {
        p.grad = ft([1]);
        opt.step();
        sched.step();
      }
      close(await arr(p), [-(1 + 0.5 + 0.25)]);
      expect(() => new optim.StepLR(opt, { stepSize: 0 })).toThrow(
        /StepLR: option 'stepSize' must be an integer >= 1; got 0/,
      );
    }));
});

describe('clipGradNorm', () => {
  testEach(['cpu', 'webgpu'] as const, 'scales all gradients by maxNorm/‖g‖ when above, on %s', (kind) => {
    const backend = kind === 'cpu' ? B.cpu : B.gpu();
    return on(backend, async () => {
      const a = ft([0, 0], { requiresGrad: true });
      const b = ft([0], { requiresGrad: true });
      const c = ft([0], { requiresGrad: true });
      a.grad = ft([3, 4]);
      b.grad = ft([12]);
      const norm = optim.clipGradNorm([a, b, c], 6.5);
      close(await arr(norm), [13]);
      const k = 6.5 / (13 + 1e-6);
      close(await arr(a.grad!), [3 * k, 4 * k]);
      close(await arr(b.grad!), [12 * k]);
      expect(c.grad).toBeNull();
      // Below the limit nothing changes.
      close(await arr(optim.clipGradNorm([a, b], 100)), [6.5], 1e-5);
      close(await arr(b.grad!), [12 * k]);
      // The infinity norm is the largest |g|.
      a.grad = ft([-7, 1]);
      close(await arr(optim.clipGradNorm([a, b], 1, { normType: Infinity })), [7]);
      close(await arr(a.grad!), [-1 / (1 + 1e-6 / 7), 1 / (7 + 1e-6)]);
    });
  });

  // 20 gradients: the per-gradient norms are folded 7 at a time, in two levels (20 -> 3 -> 1).
  testEach(
    ['cpu', 'webgpu'] as const,
    'many gradients: the joint 2-norm and inf-norm match a float64 loop, on %s',
    (kind) => {
      const backend = kind === 'cpu' ? B.cpu : B.gpu();
      return on(backend, async () => {
        const gs = Array.from({ length: 20 }, (_, i) =>
          Array.from({ length: 1 + (i % 3) }, (_x, j) => ((i * 7 + j * 3) % 11) - 5 + 0.25 * i),
        );
        const ps = gs.map((g) => {
          const t = ft(
            g.map(() => 0),
            { requiresGrad: true },
          );
          t.grad = ft(g);
          return t;
        });
        const flat = gs.flat();
        const l2 = Math.sqrt(flat.reduce((acc, x) => acc + x * x, 0));
        close(await arr(optim.clipGradNorm(ps, 1e9)), [l2], 1e-5);
        const linf = Math.max(...flat.map(Math.abs));
        close(await arr(optim.clipGradNorm(ps, 1e9, { normType: Infinity })), [linf]);
        const k = 2 / (l2 + 1e-6);
        close(await arr(optim.clipGradNorm(ps, 2)), [l2], 1e-5);
        for (let i = 0; i < gs.length; i += 7)
          close(
            await arr(ps[i].grad!),
            gs[i].map((x) => x * k),
            1e-5,
          );
      });
    },
  );
});

test('optimizer stateDict round-trips: a restored optimizer continues identically', () =>
  on(B.cpu, async () => {
    const go = async (restore: boolean) => {
      const p = tensor(P0, { requiresGrad: true });
      let opt = new optim.Adam([p], { lr: 0.05 });
      for (const g of GRADS.slice(0, 2)) {
        p.grad = tensor(g);
        opt.step();
      }
      if (restore) {
        const sd = opt.stateDict();
        expect(Object.keys(sd.state[0]).sort()).toEqual(['expAvg', 'expAvgSq', 'step']);
        expect(sd.state[0].step).toBe(2);
        expect(sd.paramGroups[0]).toMatchObject({ lr: 0.05, params: [0] });
        opt.dispose();
        opt = new optim.Adam([p], { lr: 1 });
        opt.loadStateDict(sd);
        expect(opt.paramGroups[0].lr).toBe(0.05);
      }
      for (const g of GRADS.slice(2)) {
        p.grad = tensor(g);
        opt.step();
      }
      return arr(p);
    };
    expect(await go(true)).toEqual(await go(false));
  }));

testGpu('a scheduled learning rate never compiles a new kernel (webgpu)', async () => {
  const gpu = B.gpu() as Backend & { pipelineCount?: number };
  await on(gpu, () => {
    expect(typeof gpu.pipelineCount).toBe('number');
    const p = ft([1, 2, 3], { requiresGrad: true });
    const opt = new optim.Adam([p], { lr: 0.1 });
    const sched = new optim.CosineAnnealingLR(opt, { tMax: 10 });
    const step = () => {
      p.grad = ft([0.5, -0.5, 1]);
      opt.step();
      sched.step();
    };
    step();
    step();
    const compiled = gpu.pipelineCount;
    for (let i = 0; i < 5; i++) step();
    expect(opt.paramGroups[0].lr).not.toBe(0.1);
    expect(gpu.pipelineCount).toBe(compiled);
  });
});
