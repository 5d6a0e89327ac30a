import {
  ValueError,
  binaryCrossEntropy,
  binaryCrossEntropyWithLogits,
  huberLoss,
  klDivLoss,
  nn,
  smoothL1Loss,
  tensor,
} from '@surf/nn';
import { arr, backends, on } from './helpers';

// The newer losses and their modules against formulas evaluated here in float64, and the
// newer normalisation layers against loops (gradients: layers.test.ts / losses.test.ts).

const B = backends();
beforeAll(B.setup);
afterAll(B.teardown);

const near = (got: number[], want: number[], tol = 1e-6) => {
  expect(got.length).toBe(want.length);
  got.forEach((g, i) => expect(Math.abs(g - want[i])).toBeLessThanOrEqual(tol + tol * Math.abs(want[i])));
};

const X = [0.3, -1.2, 2.1, 0.7];
const Y = [0.5, 1, -1.6, 0.9];
const f = (xs: number[]) => tensor(xs, { dtype: 'float32' });

test('huber, smoothL1, BCE, BCE with posWeight and KL divergence values', () =>
  on(B.cpu, async () => {
    const huber = (d: number, k: number) => (Math.abs(d) < k ? 0.5 * d * d : k * (Math.abs(d) - 0.5 * k));
    const d = X.map((x, i) => x - Y[i]);
    near(
      await arr(huberLoss(f(X), f(Y), { reduction: 'none', delta: 1.5 })),
      d.map((v) => huber(v, 1.5)),
    );
    const sl1 = (v: number, b: number) => (Math.abs(v) < b ? (0.5 * v * v) / b : Math.abs(v) - 0.5 * b);
    near(await arr(smoothL1Loss(f(X), f(Y), { beta: 0.5 })), [d.reduce((a, v) => a + sl1(v, 0.5), 0) / 4]);
    near(await arr(smoothL1Loss(f(X), f(Y), { beta: 0, reduction: 'sum' })), [d.reduce((a, v) => a + Math.abs(v), 0)]);
    const p = [0.3, 0.8, 0, 1],
      t = [0, 1, 1, 0.5];
    const bce = p.map((x, i) => -(t[i] * Math.max(Math.log(x), -100) + (1 - t[i]) * Math.max(Math.log(1 - x), -100)));
    near(await arr(binaryCrossEntropy(f(p), f(t), { reduction: 'none' })), bce, 1e-5);
    const sp = (v: number) => Math.log1p(Math.exp(v));
    near(
      await arr(binaryCrossEntropyWithLogits(f(X), f([0, 1, 1, 0.3]), { posWeight: 3, reduction: 'none' })),
      X.map((x, i) => {
        const y = [0, 1, 1, 0.3][i];
        return -(3 * y * Math.log(1 / (1 + Math.exp(-x))) + (1 - y) * Math.log(1 - 1 / (1 + Math.exp(-x))));
      }),
      1e-5,
    );
    expect(sp(0)).toBeCloseTo(Math.LN2, 12);
    const logq = [
        [-0.3, -1.6, -2.1],
        [-0.9, -0.7, -2.4],
      ],
      pt = [
        [0.5, 0.5, 0],
        [0.2, 0.7, 0.1],
      ];
    const kl = pt.flatMap((r, i) => r.map((v, j) => (v > 0 ? v * (Math.log(v) - logq[i][j]) : 0)));
    const lq = tensor(logq, { dtype: 'float32' }),
      tp = tensor(pt, { dtype: 'float32' });
    near(await arr(klDivLoss(lq, tp, { reduction: 'none' })), kl);
    near(await arr(klDivLoss(lq, tp, { reduction: 'batchmean' })), [kl.reduce((a, b) => a + b) / 2]);
    near(await arr(klDivLoss(lq, tp)), [kl.reduce((a, b) => a + b) / 6]);
    near(
      await arr(klDivLoss(lq, tp.add(1e-9).log(), { logTarget: true, reduction: 'sum' })),
      [kl.reduce((a, b) => a + b)],
      1e-5,
    );
    expect(() => huberLoss(f(X), f(Y), 1 as never)).toThrow(/huberLoss: the options argument must be an object/);
    expect(() => huberLoss(f(X), f(Y), { delta: 0 })).toThrow(ValueError);
  }));

test('loss modules forward to the functions with their options', () =>
  on(B.cpu, async () => {
    const x = f(X),
      y = f(Y);
    near(await arr(new nn.HuberLoss({ delta: 1.5 }).forward(x, y)), await arr(huberLoss(x, y, { delta: 1.5 })));
    near(await arr(new nn.MSELoss({ reduction: 'sum' }).forward(x, y)), [
      X.reduce((a, v, i) => a + (v - Y[i]) ** 2, 0),
    ]);
    near(await arr(new nn.L1Loss().forward(x, y)), [X.reduce((a, v, i) => a + Math.abs(v - Y[i]), 0) / 4]);
    const z = tensor([
      [0.3, -1.2, 0.9],
      [2.1, 0.7, -0.4],
    ]);
    const t = tensor([2, 0], { dtype: 'int32' });
    near(
      await arr(new nn.CrossEntropyLoss({ labelSmoothing: 0.1 }).forward(z, t)),
      await arr(nn.functional.crossEntropy(z, t, { labelSmoothing: 0.1 })),
    );
    near(await arr(new nn.NLLLoss().forward(z.logSoftmax(1), t)), await arr(nn.functional.crossEntropy(z, t)));
    expect(new nn.HuberLoss({ delta: 2 }).toString()).toContain('HuberLoss(delta=2)');
    expect(new nn.BCELoss().forward(f([0.5]), f([1])).shape).toEqual([]);
    expect(new nn.BCEWithLogitsLoss().forward(f([0]), f([1])).shape).toEqual([]);
    expect(new nn.SmoothL1Loss().forward(x, y).shape).toEqual([]);
    expect(
      new nn.KLDivLoss({ reduction: 'batchmean' }).forward(x.reshape([2, 2]), y.abs().reshape([2, 2])).shape,
    ).toEqual([]);
    expect(() => new nn.CrossEntropyLoss('mean' as never)).toThrow(
      /CrossEntropyLoss: the options argument must be an object/,
    );
  }));

test('RMSNorm and GroupNorm against loops', () =>
  on(B.cpu, async () => {
    const xs = [0.5, -1, 2, 0.25, 3, -0.5, 1.5, -2, 0.75, 1, -1.25, 0.1];
    // RMSNorm over the last dim of [4, 3].
    const rms = new nn.RMSNorm(3, { eps: 1e-6 });
    rms.weight!.assign(f([1, 2, 0.5]));
    const want: number[] = [];
    for (let r = 0; r < 4; r++) {
      const row = xs.slice(r * 3, r * 3 + 3);
      const s = Math.sqrt(row.reduce((a, v) => a + v * v, 0) / 3 + 1e-6);
      row.forEach((v, j) => want.push((v / s) * [1, 2, 0.5][j]));
    }
    near(await arr(rms.forward(f(xs).reshape([4, 3]))), want, 1e-5);
    // GroupNorm: [1, 4, 3] in 2 groups of 2 channels × 3 positions.
    const gn = new nn.GroupNorm(2, 4);
    gn.weight!.assign(f([1, 2, 3, 4]));
    gn.bias!.assign(f([0, 0.5, 0, -0.5]));
    const out: number[] = [];
    for (let g = 0; g < 2; g++) {
      const grp = xs.slice(g * 6, g * 6 + 6);
      const m = grp.reduce((a, b) => a + b) / 6;
      const v = grp.reduce((a, b) => a + (b - m) ** 2, 0) / 6;
      grp.forEach((x, i) => {
        const c = g * 2 + Math.floor(i / 3);
        out.push(((x - m) / Math.sqrt(v + 1e-5)) * (c + 1) + [0, 0.5, 0, -0.5][c]);
      });
    }
    near(await arr(gn.forward(f(xs).reshape([1, 4, 3]))), out, 1e-5);
    expect(() => new nn.GroupNorm(3, 4)).toThrow(/numChannels 4 is not divisible by numGroups 3/);
    expect(() => gn.forward(f(xs).reshape([4, 3]))).toThrow(
      /GroupNorm: input has shape \[4,3\]; expected \[N, 4, \.\.\.\]/,
    );
    expect(() => rms.forward(f(xs).reshape([3, 4]))).toThrow(/RMSNorm: input has shape \[3,4\]/);
    expect(Object.keys(gn.stateDict())).toEqual(['weight', 'bias']);
  }));
