import { Tensor, ValueError, optim, tensor } from '@surf/nn';
import { arr, backends, describeEach, on } from '../helpers';

// RMSprop, Adagrad and AMSGrad against PyTorch's documented rules evaluated here in float64
// (several steps, gradients set by hand) on both backends; the newer schedulers against
// values worked out by hand; clipGradValue; options arguments checked.

const B = backends();
beforeAll(B.setup);
afterAll(B.teardown);

const GRADS = [
  [0.1, -0.2, 0.3],
  [0.05, 0.4, -0.1],
  [-0.3, 0.1, 0.02],
  [0.2, 0.2, -0.2],
];
const P0 = [0.5, -1.5, 2];

const close = (got: number[], want: number[], rel = 2e-6) => {
  expect(got.length).toBe(want.length);
  got.forEach((g, i) => expect(Math.abs(g - want[i])).toBeLessThanOrEqual(rel * Math.max(Math.abs(want[i]), 1e-2)));
};

async function run(make: (p: Tensor) => optim.Optimizer<optim.BaseOptions>): Promise<number[][]> {
  const p = tensor(P0, { dtype: 'float32', requiresGrad: true });
  const opt = make(p);
  const out: number[][] = [];
  for (const g of GRADS) {
    p.grad = tensor(g);
    opt.step();
    out.push(await arr(p));
  }
  return out;
}

/** Reference loops: one float64 state per element. */
function rmspropRef(o: {
  lr: number;
  alpha: number;
  eps: number;
  wd: number;
  momentum: number;
  centered: boolean;
}): number[][] {
  const p = P0.slice();
  const v = [0, 0, 0],
    ga = [0, 0, 0],
    buf = [0, 0, 0];
  return GRADS.map((G) => {
    for (let i = 0; i < 3; i++) {
      const g = G[i] + o.wd * p[i];
      v[i] = o.alpha * v[i] + (1 - o.alpha) * g * g;
      let avg = v[i];
      if (o.centered) {
        ga[i] = o.alpha * ga[i] + (1 - o.alpha) * g;
        avg = v[i] - ga[i] * ga[i];
      }
      const d = g / (Math.sqrt(avg) + o.eps);
      if (o.momentum > 0) {
        buf[i] = o.momentum * buf[i] + d;
        p[i] -= o.lr * buf[i];
      } else p[i] -= o.lr * d;
    }
    return p.slice();
  });
}

function adagradRef(o: { lr: number; lrDecay: number; wd: number; init: number; eps: number }): number[][] {
  const p = P0.slice();
  const s = [o.init, o.init, o.init];
  return GRADS.map((G, t) => {
    const clr = o.lr / (1 + t * o.lrDecay);
    for (let i = 0; i < 3; i++) {
      const g = G[i] + o.wd * p[i];
      s[i] += g * g;
      p[i] -= (clr * g) / (Math.sqrt(s[i]) + o.eps);
    }
    return p.slice();
  });
}

function amsgradRef(o: {
  lr: number;
  b1: number;
  b2: number;
  eps: number;
  wd: number;
  decoupled: boolean;
}): number[][] {
  const p = P0.slice();
  const m = [0, 0, 0],
    v = [0, 0, 0],
    vmax = [0, 0, 0];
  return GRADS.map((G, t) => {
    const step = t + 1;
    for (let i = 0; i < 3; i++) {
      let g = G[i];
      if (o.decoupled) p[i] *= 1 - o.lr * o.wd;
      else g += o.wd * p[i];
      m[i] = o.b1 * m[i] + (1 - o.b1) * g;
      v[i] = o.b2 * v[i] + (1 - o.b2) * g * g;
      vmax[i] = Math.max(vmax[i], v[i]);
      const denom = Math.sqrt(vmax[i]) / Math.sqrt(1 - o.b2 ** step) + o.eps;
      p[i] -= (o.lr / (1 - o.b1 ** step)) * (m[i] / denom);
    }
    return p.slice();
  });
}

describeEach(['cpu', 'webgpu'] as const, 'update rules on %s', (kind) => {
  const each = async (f: () => Promise<void>) => {
    await on(kind === 'cpu' ? B.cpu : B.gpu(), f);
  };

  test('RMSprop (plain; centered with momentum and weight decay)', () =>
    each(async () => {
      const plain = await run((p) => new optim.RMSprop([p], { lr: 0.01 }));
      plain.forEach((r, t) =>
        close(r, rmspropRef({ lr: 0.01, alpha: 0.99, eps: 1e-8, wd: 0, momentum: 0, centered: false })[t]),
      );
      const full = await run(
        (p) => new optim.RMSprop([p], { lr: 0.05, alpha: 0.9, momentum: 0.8, centered: true, weightDecay: 0.1 }),
      );
      full.forEach((r, t) =>
        close(r, rmspropRef({ lr: 0.05, alpha: 0.9, eps: 1e-8, wd: 0.1, momentum: 0.8, centered: true })[t], 1e-5),
      );
    }));

  test('Adagrad (lrDecay, weight decay, initial accumulator)', () =>
    each(async () => {
      const got = await run(
        (p) => new optim.Adagrad([p], { lr: 0.1, lrDecay: 0.5, weightDecay: 0.2, initialAccumulatorValue: 0.1 }),
      );
      got.forEach((r, t) => close(r, adagradRef({ lr: 0.1, lrDecay: 0.5, wd: 0.2, init: 0.1, eps: 1e-10 })[t]));
    }));

  test('Adam and AdamW with amsgrad', () =>
    each(async () => {
      // β2 = 0.5 lets v fall when the gradient shrinks, so the running max matters.
      const a = await run((p) => new optim.Adam([p], { lr: 0.1, amsgrad: true, weightDecay: 0.1, betas: [0.9, 0.5] }));
      a.forEach((r, t) =>
        close(r, amsgradRef({ lr: 0.1, b1: 0.9, b2: 0.5, eps: 1e-8, wd: 0.1, decoupled: false })[t], 1e-5),
      );
      const w = await run((p) => new optim.AdamW([p], { lr: 0.1, amsgrad: true }));
      w.forEach((r, t) =>
        close(r, amsgradRef({ lr: 0.1, b1: 0.9, b2: 0.999, eps: 1e-8, wd: 0.01, decoupled: true })[t], 1e-5),
      );
      // Without amsgrad the max is not kept (a gradient that shrinks lowers v, and the step grows).
      const plain = await run((p) => new optim.Adam([p], { lr: 0.1, weightDecay: 0.1, betas: [0.9, 0.5] }));
      expect(plain[3]).not.toEqual(a[3]);
    }));

  test('clipGradValue clamps every gradient element', () =>
    each(async () => {
      const a = tensor([1, 2, 3], { dtype: 'float32', requiresGrad: true });
      const b = tensor([1], { dtype: 'float32', requiresGrad: true });
      a.grad = tensor([-0.7, 0.2, 5]);
      optim.clipGradValue([a, b], 0.5);
      expect(await arr(a.grad!)).toEqual([-0.5, 0.2, 0.5].map(Math.fround));
      expect(b.grad).toBeNull();
      expect(() => optim.clipGradValue([a], -1)).toThrow(/clipValue must be a number >= 0/);
    }));
});

const sgd = (lr = 1, groups = 1) =>
  new optim.SGD(
    Array.from({ length: groups }, () => ({ params: [tensor([0], { dtype: 'float32', requiresGrad: true })] })),
    { lr },
  );

test('MultiStepLR and LambdaLR', () =>
  on(B.cpu, () => {
    const o = sgd(1);
    const s = new optim.MultiStepLR(o, { milestones: [3, 1], gamma: 0.5 });
    const lrs = [o.paramGroups[0].lr];
    for (let i = 0; i < 4; i++) {
      s.step();
      lrs.push(o.paramGroups[0].lr);
    }
    expect(lrs).toEqual([1, 0.5, 0.5, 0.25, 0.25]);
    const o2 = sgd(2, 2);
    const l = new optim.LambdaLR(o2, { lrLambda: [(t) => 1 / (t + 1), (t) => t] });
    l.step();
    expect(l.getLastLr()).toEqual([1, 2]);
    expect(() => new optim.LambdaLR(sgd(), { lrLambda: 3 as never })).toThrow(/lrLambda must be a function/);
  }));

test('OneCycleLR: warmup to maxLr, cosine down to maxLr/div/finalDiv', () =>
  on(B.cpu, () => {
    const o = sgd(123);
    const s = new optim.OneCycleLR(o, { maxLr: 1, totalSteps: 10 });
    const lrs = [o.paramGroups[0].lr];
    for (let i = 1; i < 10; i++) {
      s.step();
      lrs.push(o.paramGroups[0].lr);
    }
    // Start maxLr/25; the rise ends at step 0.3·10 − 1 = 2; step 1 is halfway on the cosine.
    expect(lrs[0]).toBeCloseTo(0.04, 12);
    expect(lrs[1]).toBeCloseTo(0.52, 12);
    expect(lrs[2]).toBeCloseTo(1, 12);
    expect(lrs[9]).toBeCloseTo(0.04 / 1e4, 12);
    expect(lrs.slice(3).every((v, i, a) => i === 0 || v < a[i - 1])).toBe(true);
    expect(() => s.step()).toThrow(/step 10 is past totalSteps 10/);
  }));

test('ReduceLROnPlateau lowers the lr after patience bad epochs, and round-trips its state', () =>
  on(B.cpu, () => {
    const o = sgd(1);
    const s = new optim.ReduceLROnPlateau(o, { patience: 1, factor: 0.5 });
    const lrs: number[] = [];
    for (const m of [1, 1, 1, 0.5, 0.6, 0.7]) {
      s.step(m);
      lrs.push(o.paramGroups[0].lr);
    }
    expect(lrs).toEqual([1, 1, 0.5, 0.5, 0.5, 0.25]);
    const o2 = sgd(0.25);
    const s2 = new optim.ReduceLROnPlateau(o2, { patience: 1, factor: 0.5 });
    s2.loadStateDict(s.stateDict());
    s2.step(0.9);
    s.step(0.9);
    expect(s2.stateDict()).toEqual(s.stateDict());
    expect(() => s.step(undefined as never)).toThrow(/metric must be a number/);
  }));

test('scheduler state dicts resume the schedule', () =>
  on(B.cpu, () => {
    const o = sgd(1);
    const s = new optim.StepLR(o, { stepSize: 2, gamma: 0.1 });
    for (let i = 0; i < 3; i++) s.step();
    const o2 = sgd(1);
    const s2 = new optim.StepLR(o2, { stepSize: 2, gamma: 0.1 });
    s2.loadStateDict(s.stateDict());
    expect(o2.paramGroups[0].lr).toBeCloseTo(0.1, 12);
    s.step();
    s2.step();
    expect(o2.paramGroups[0].lr).toBe(o.paramGroups[0].lr);
  }));

test('a number, array or null where an options object goes is a ValueError naming the function', () =>
  on(B.cpu, () => {
    const p = [tensor([0], { dtype: 'float32', requiresGrad: true })];
    expect(() => new optim.SGD(p, 0.1 as never)).toThrow(ValueError);
    expect(() => new optim.SGD(p, 0.1 as never)).toThrow(
      /SGD: the options argument must be an object like \{ lr, momentum, .*\}; got 0.1/,
    );
    expect(() => new optim.Adam(p, [0.1] as never)).toThrow(
      /Adam: the options argument must be an object .*; got \[0.1\]/,
    );
    expect(() => new optim.RMSprop(p, null as never)).toThrow(/RMSprop: .*got null/);
    expect(() => new optim.Adagrad(p, 'fast' as never)).toThrow(/Adagrad: .*got "fast"/);
    expect(() => new optim.StepLR(sgd(), 3 as never)).toThrow(
      /StepLR: the options argument must be an object like \{ stepSize, gamma \}/,
    );
    expect(() => new optim.ReduceLROnPlateau(sgd(), 'min' as never)).toThrow(/ReduceLROnPlateau/);
    expect(() => optim.clipGradNorm(p, 1, 2 as never)).toThrow(/clipGradNorm: .*\{ normType \}/);
  }));
