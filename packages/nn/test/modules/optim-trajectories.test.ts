import { readFileSync } from 'fs';
import { join } from 'path';
import type { Backend } from '@surf/core';
import { Tensor, ValueError, optim, tensor, zeros } from '@surf/nn';
import { backends, on, testEach } from '../helpers';

// NAdam, RAdam, Adamax, Adadelta: parameter trajectories over 8-10 steps of a non-quadratic
// loss against torch.optim (scripts/interop/make-modules-fixtures.py), defaults and options,
// on the CPU and WebGPU. Schedulers: lr sequences against torch.optim.lr_scheduler.
const b = backends();
beforeAll(b.setup);
afterAll(b.teardown);

interface Fixture {
  p0: number[];
  c: number[];
  trajectories: Record<string, number[][]>;
  lrs: Record<string, number[]>;
}
const fx = JSON.parse(readFileSync(join(__dirname, '../fixtures/modules/optim.json'), 'utf8')) as Fixture;

type Make = (ps: Tensor[]) => optim.Optimizer<{ lr: number }>;
const makers: Record<string, Make> = {
  adamax: (ps) => new optim.Adamax(ps),
  adamax_wd: (ps) => new optim.Adamax(ps, { lr: 0.05, betas: [0.8, 0.9], eps: 1e-3, weightDecay: 0.1 }),
  adadelta: (ps) => new optim.Adadelta(ps),
  adadelta_wd: (ps) => new optim.Adadelta(ps, { lr: 0.5, rho: 0.8, eps: 1e-4, weightDecay: 0.1 }),
  nadam: (ps) => new optim.NAdam(ps),
  nadam_opts: (ps) => new optim.NAdam(ps, { lr: 0.05, betas: [0.8, 0.9], weightDecay: 0.1, momentumDecay: 0.01 }),
  radam: (ps) => new optim.RAdam(ps),
  radam_opts: (ps) => new optim.RAdam(ps, { lr: 0.05, betas: [0.8, 0.9], weightDecay: 0.1 }),
};

async function trajectory(backend: Backend, make: Make, steps: number): Promise<number[][]> {
  return on(backend, async () => {
    const p = tensor(Float32Array.from(fx.p0)).requiresGrad_(true);
    const c = tensor(Float32Array.from(fx.c));
    const opt = make([p]);
    const out: number[][] = [];
    for (let s = 0; s < steps; s++) {
      opt.zeroGrad();
      p.mul(p).mul(c).mul(0.5).sum().add(p.mul(3).sin().sum()).backward();
      opt.step();
      out.push(Array.from((await p.data()) as Float32Array));
    }
    return out;
  });
}

const closureMakers: Record<string, (ps: Tensor[]) => optim.LBFGS> = {
  lbfgs: (ps) => new optim.LBFGS(ps),
  lbfgs_opts: (ps) => new optim.LBFGS(ps, { lr: 0.5, maxIter: 4, historySize: 2 }),
};

test('every optimizer fixture has a maker', () => {
  expect(Object.keys(fx.trajectories).sort()).toEqual([...Object.keys(makers), ...Object.keys(closureMakers)].sort());
});

describe.each(Object.keys(closureMakers))('%s follows torch.optim.LBFGS over three step(closure) calls', (name) => {
  testEach(['cpu', 'webgpu'], '%s', (kind) =>
    on(kind === 'cpu' ? b.cpu : b.gpu(), async () => {
      const p = tensor(Float32Array.from(fx.p0)).requiresGrad_(true);
      const c = tensor(Float32Array.from(fx.c));
      const opt = closureMakers[name]([p]);
      const closure = () => {
        opt.zeroGrad();
        const loss = p.mul(p).mul(c).mul(0.5).sum().add(p.mul(3).sin().sum());
        loss.backward();
        return loss;
      };
      for (const want of fx.trajectories[name]) {
        const first = await opt.step(closure);
        const got = [...Array.from((await p.data()) as Float32Array), first];
        got.forEach((v, i) => {
          if (!(Math.abs(v - want[i]) <= 5e-5 + 1e-5 * Math.abs(want[i])))
            throw new Error(`${name}: entry ${i} is ${v}, PyTorch ${want[i]}`);
        });
      }
    }),
  );
});

describe.each(Object.keys(makers))('%s follows torch.optim', (name) => {
  testEach(['cpu', 'webgpu'], '%s', async (kind) => {
    const want = fx.trajectories[name];
    const got = await trajectory(kind === 'cpu' ? b.cpu : b.gpu(), makers[name], want.length);
    got.forEach((row, s) =>
      row.forEach((v, i) => {
        if (!(Math.abs(v - want[s][i]) <= 2e-5 + 1e-5 * Math.abs(want[s][i])))
          throw new Error(`${name} step ${s + 1} param ${i}: ${v}, PyTorch ${want[s][i]}`);
      }),
    );
  });
});

const schedulers: Record<string, (o: optim.SGD) => optim.LRScheduler> = {
  exponential: (o) => new optim.ExponentialLR(o, { gamma: 0.9 }),
  warm_restarts: (o) => new optim.CosineAnnealingWarmRestarts(o, { t0: 4 }),
  warm_restarts_mult: (o) => new optim.CosineAnnealingWarmRestarts(o, { t0: 2, tMult: 2, etaMin: 0.01 }),
  linear_default: (o) => new optim.LinearLR(o),
  constant_default: (o) => new optim.ConstantLR(o),
  sequential: (o) =>
    new optim.SequentialLR(o, {
      schedulers: [
        new optim.LinearLR(o, { startFactor: 0.25, totalIters: 3 }),
        new optim.ExponentialLR(o, { gamma: 0.8 }),
      ],
      milestones: [3],
    }),
};

test.each(Object.keys(schedulers))('%s gives torch.optim.lr_scheduler lr sequence', (name) => {
  const want = fx.lrs[name];
  const opt = new optim.SGD([zeros([1]).requiresGrad_(true)], { lr: 0.5 });
  const s = schedulers[name](opt);
  const got = [opt.paramGroups[0].lr];
  for (let k = 1; k < want.length; k++) {
    s.step();
    got.push(opt.paramGroups[0].lr);
  }
  got.forEach((v, k) => expect(Math.abs(v - want[k])).toBeLessThan(1e-12));
});

test('options are checked', () => {
  const ps = [zeros([1]).requiresGrad_(true)];
  expect(() => new optim.NAdam(ps, { momentum_decay: 0.1 } as never)).toThrow(/momentumDecay/);
  expect(() => new optim.RAdam(ps, { betas: [0.9, 1] })).toThrow(ValueError);
  expect(() => new optim.Adadelta(ps, { rho: 1.5 })).toThrow(/rho/);
  expect(() => new optim.LBFGS(ps, { lineSearchFn: 'strong_wolfe' as never })).toThrow(/not offered/);
  expect(() => new optim.LBFGS(ps).step()).toThrow(/closure/);
  const sgd = new optim.SGD(ps, { lr: 0.1 });
  expect(() => new optim.ExponentialLR(sgd, {} as never)).toThrow(/gamma is required/);
  expect(() => new optim.SequentialLR(sgd, { schedulers: [new optim.ConstantLR(sgd)], milestones: [2] })).toThrow(
    /milestones/,
  );
});
