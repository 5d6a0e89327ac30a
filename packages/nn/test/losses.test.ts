import {
  DTypeError,
  ShapeError,
  Tensor,
  ValueError,
  binaryCrossEntropy,
  binaryCrossEntropyWithLogits,
  crossEntropy,
  gradcheck,
  huberLoss,
  klDivLoss,
  l1Loss,
  mseLoss,
  nllLoss,
  smoothL1Loss,
  tensor,
} from '@surf/nn';
import { arr, backends, describeEach, on } from './helpers';

// Loss values against formulas evaluated here in float64; gradients by gradcheck on both
// backends.

const B = backends();
beforeAll(B.setup);
afterAll(B.teardown);

const near = (got: number[], want: number[], tol = 1e-6) => {
  expect(got.length).toBe(want.length);
  got.forEach((g, i) => expect(Math.abs(g - want[i])).toBeLessThanOrEqual(tol + tol * Math.abs(want[i])));
};
const lse = (r: number[]) => {
  const m = Math.max(...r);
  return m + Math.log(r.reduce((a, v) => a + Math.exp(v - m), 0));
};

describe('values (cpu)', () => {
  const x = [
    [1, 2],
    [3, 4],
  ];
  const y = [
    [1.5, 2],
    [2, 5],
  ];

  test('mseLoss and l1Loss with each reduction', () =>
    on(B.cpu, async () => {
      const a = tensor(x, { dtype: 'float32' }),
        b = tensor(y);
      near(await arr(mseLoss(a, b)), [(0.25 + 0 + 1 + 1) / 4]);
      near(await arr(mseLoss(a, b, { reduction: 'sum' })), [2.25]);
      near(await arr(mseLoss(a, b, { reduction: 'none' })), [0.25, 0, 1, 1]);
      expect(mseLoss(a, b, { reduction: 'none' }).shape).toEqual([2, 2]);
      expect(mseLoss(a, b).shape).toEqual([]);
      near(await arr(l1Loss(a, b)), [(0.5 + 0 + 1 + 1) / 4]);
      near(await arr(l1Loss(a, b, { reduction: 'sum' })), [2.5]);
      near(await arr(l1Loss(a, b, { reduction: 'none' })), [0.5, 0, 1, 1]);
    }));

  const logits = [
    [1, 2, 3],
    [1, 1, 1],
    [-2, 0.5, 4],
  ];
  const targets = [2, 0, 1];
  const ce = logits.map((r, i) => lse(r) - r[targets[i]]);

  test('crossEntropy = logsumexp - logit of the target', () =>
    on(B.cpu, async () => {
      const l = tensor(logits, { dtype: 'float32' }),
        t = tensor(targets, { dtype: 'int32' });
      near(await arr(crossEntropy(l, t)), [ce.reduce((a, v) => a + v, 0) / 3]);
      near(await arr(crossEntropy(l, t, { reduction: 'sum' })), [ce.reduce((a, v) => a + v, 0)]);
      near(await arr(crossEntropy(l, t, { reduction: 'none' })), ce);
    }));

  test('crossEntropy with label smoothing mixes in the uniform distribution', () =>
    on(B.cpu, async () => {
      const eps = 0.1;
      const want = logits.map(
        (r, i) => (1 - eps) * (lse(r) - r[targets[i]]) + eps * (lse(r) - r.reduce((a, v) => a + v, 0) / 3),
      );
      near(
        await arr(
          crossEntropy(tensor(logits, { dtype: 'float32' }), tensor(targets, { dtype: 'int32' }), {
            labelSmoothing: eps,
            reduction: 'none',
          }),
        ),
        want,
      );
    }));

  test('crossEntropy with class probabilities as targets', () =>
    on(B.cpu, async () => {
      const p = [
        [0.2, 0.3, 0.5],
        [1, 0, 0],
        [0, 0.5, 0.5],
      ];
      const want = logits.map((r, i) => r.reduce((a, v, c) => a - p[i][c] * (v - lse(r)), 0));
      near(await arr(crossEntropy(tensor(logits, { dtype: 'float32' }), tensor(p), { reduction: 'none' })), want);
    }));

  test('crossEntropy is stable for huge logits', () =>
    on(B.cpu, async () => {
      near(
        await arr(
          crossEntropy(
            tensor(
              [
                [1000, 0],
                [-1000, 1000],
              ],
              { dtype: 'float32' },
            ),
            tensor([1, 1], { dtype: 'int32' }),
            { reduction: 'none' },
          ),
        ),
        [1000, 0],
      );
    }));

  test('nllLoss picks -logp at the target', () =>
    on(B.cpu, async () => {
      const lp = [
        [-0.1, -2.5, -3],
        [-1.2, -0.4, -2],
      ];
      near(await arr(nllLoss(tensor(lp), tensor([1, 0], { dtype: 'int32' }))), [(2.5 + 1.2) / 2]);
      near(await arr(nllLoss(tensor(lp), tensor([2, 1], { dtype: 'int32' }), { reduction: 'none' })), [3, 0.4]);
    }));

  test('binaryCrossEntropyWithLogits = log(1 + e^x) - x·y, finite for large |x|', () =>
    on(B.cpu, async () => {
      const xs = [-2, 0.5, 30, -30, 100, -100];
      const ys = [0, 1, 1, 0, 0, 1];
      const softplus = (v: number) => Math.max(v, 0) + Math.log1p(Math.exp(-Math.abs(v)));
      const want = xs.map((v, i) => softplus(v) - v * ys[i]);
      near(
        await arr(
          binaryCrossEntropyWithLogits(tensor(xs, { dtype: 'float32' }), tensor(ys, { dtype: 'float32' }), {
            reduction: 'none',
          }),
        ),
        want,
        1e-6,
      );
      near(await arr(binaryCrossEntropyWithLogits(tensor([0.5, -1]), tensor([0.25, 1]))), [
        (softplus(0.5) - 0.125 + softplus(-1) + 1) / 2,
      ]);
    }));

  test('bad inputs name the loss, what was given and what was expected', () =>
    on(B.cpu, () => {
      const l = tensor([[1.5, 2]]);
      expect(() => mseLoss(l, tensor([1.5, 2]))).toThrow(ShapeError);
      expect(() => mseLoss(l, tensor([1.5, 2]))).toThrow(
        /mseLoss: input has shape \[1,2\] and target \[2\]; expected equal shapes/,
      );
      expect(() => crossEntropy(l, tensor([1, 0, 1]))).toThrow(
        /crossEntropy: input has shape \[1,2\] and target \[3\]; expected equal shapes/,
      );
      // Float labels, one per row (JS numbers are float32): the error says how to make int32 ones.
      expect(() => crossEntropy(l, tensor([1]))).toThrow(DTypeError);
      expect(() => crossEntropy(l, tensor([1]))).toThrow(
        /crossEntropy: target has dtype float32; expected int32 class indices \(pass \{ dtype: 'int32' \} to tensor\(\) or an Int32Array\)/,
      );
      expect(() => nllLoss(l, tensor([1]))).toThrow(
        /nllLoss: target has dtype float32; expected int32 class indices \(pass/,
      );
      expect(() => crossEntropy(l, tensor([1, 0], { dtype: 'int32' }))).toThrow(
        /crossEntropy: target has shape \[2\]; expected \[1\]/,
      );
      expect(() => nllLoss(l, tensor([true]))).toThrow(DTypeError);
      // An unbatched [C] input takes a 0-d target, as PyTorch.
      expect(() => crossEntropy(tensor([1.5, 2]), tensor([1], { dtype: 'int32' }))).toThrow(
        /crossEntropy: target has shape \[1\]; expected \[\] \(one class index per row of the input \[2\]\)/,
      );
      expect(() => mseLoss(l, l, { reduction: 'avg' as 'mean' })).toThrow(ValueError);
      expect(() => crossEntropy(l, tensor([0], { dtype: 'int32' }), { labelSmoothing: 2 })).toThrow(
        /crossEntropy: option 'labelSmoothing' must be a number in \[0, 1\]; got 2/,
      );
    }));
});

// Gradients with respect to the prediction, on each backend.
const gradCases: [string, () => Tensor[], (x: Tensor, ...rest: Tensor[]) => Tensor][] = [
  [
    'mseLoss',
    () => [
      tensor(
        [
          [0.3, -1.2],
          [2.1, 0.7],
        ],
        { requiresGrad: true },
      ),
      tensor([
        [0.5, -1],
        [1.6, 0.9],
      ]),
    ],
    (x, t) => mseLoss(x, t),
  ],
  [
    'l1Loss',
    () => [
      tensor(
        [
          [0.3, -1.2],
          [2.1, 0.7],
        ],
        { requiresGrad: true },
      ),
      tensor([
        [0.5, -1],
        [1.6, 0.9],
      ]),
    ],
    (x, t) => l1Loss(x, t, { reduction: 'sum' }),
  ],
  [
    'crossEntropy',
    () => [
      tensor(
        [
          [0.3, -1.2, 0.9],
          [2.1, 0.7, -0.4],
        ],
        { requiresGrad: true },
      ),
      tensor([2, 0], { dtype: 'int32' }),
    ],
    (x, t) => crossEntropy(x, t),
  ],
  [
    'crossEntropy smoothed',
    () => [
      tensor(
        [
          [0.3, -1.2, 0.9],
          [2.1, 0.7, -0.4],
        ],
        { requiresGrad: true },
      ),
      tensor([1, 0], { dtype: 'int32' }),
    ],
    (x, t) => crossEntropy(x, t, { labelSmoothing: 0.2, reduction: 'none' }),
  ],
  [
    'crossEntropy probabilities',
    () => [
      tensor(
        [
          [0.3, -1.2, 0.9],
          [2.1, 0.7, -0.4],
        ],
        { requiresGrad: true },
      ),
      tensor([
        [0.2, 0.3, 0.5],
        [0.6, 0.4, 0.0],
      ]),
    ],
    (x, t) => crossEntropy(x, t),
  ],
  [
    'nllLoss',
    () => [
      tensor(
        [
          [-0.3, -1.2, -0.9],
          [-2.1, -0.7, -0.4],
        ],
        { requiresGrad: true },
      ),
      tensor([2, 1], { dtype: 'int32' }),
    ],
    (x, t) => nllLoss(x, t, { reduction: 'sum' }),
  ],
  [
    'binaryCrossEntropyWithLogits',
    () => [
      tensor(
        [
          [0.3, -1.2],
          [2.1, -3.5],
        ],
        { requiresGrad: true },
      ),
      tensor([
        [0, 1],
        [1, 0.3],
      ]),
    ],
    (x, t) => binaryCrossEntropyWithLogits(x, t),
  ],
  [
    'binaryCrossEntropyWithLogits posWeight',
    () => [
      tensor(
        [
          [0.3, -1.2],
          [2.1, -3.5],
        ],
        { requiresGrad: true },
      ),
      tensor([
        [0, 1],
        [1, 0.3],
      ]),
    ],
    (x, t) => binaryCrossEntropyWithLogits(x, t, { posWeight: 2.5 }),
  ],
  [
    'binaryCrossEntropy',
    () => [
      tensor(
        [
          [0.3, 0.8],
          [0.55, 0.1],
        ],
        { requiresGrad: true },
      ),
      tensor([
        [0, 1],
        [1, 0.3],
      ]),
    ],
    (x, t) => binaryCrossEntropy(x, t),
  ],
  // Elements on both sides of delta/beta, none near the switch.
  [
    'huberLoss',
    () => [
      tensor(
        [
          [0.3, -1.2],
          [2.1, 0.7],
        ],
        { requiresGrad: true },
      ),
      tensor([
        [0.5, 1],
        [-1.6, 0.9],
      ]),
    ],
    (x, t) => huberLoss(x, t, { delta: 1.5, reduction: 'sum' }),
  ],
  [
    'smoothL1Loss',
    () => [
      tensor(
        [
          [0.3, -1.2],
          [2.1, 0.7],
        ],
        { requiresGrad: true },
      ),
      tensor([
        [0.5, 1],
        [-1.6, 0.9],
      ]),
    ],
    (x, t) => smoothL1Loss(x, t, { beta: 0.5 }),
  ],
  [
    'klDivLoss batchmean',
    () => [
      tensor(
        [
          [-0.3, -1.6, -2.1],
          [-0.9, -0.7, -2.4],
        ],
        { requiresGrad: true },
      ),
      tensor([
        [0.5, 0.5, 0],
        [0.2, 0.7, 0.1],
      ]),
    ],
    (x, t) => klDivLoss(x, t, { reduction: 'batchmean' }),
  ],
];

describeEach(['cpu', 'webgpu'] as const, 'loss gradients on %s', (kind) => {
  test.each(gradCases)('%s', async (_n, make, fn) => {
    const backend = kind === 'cpu' ? B.cpu : B.gpu();
    await on(backend, async () => {
      const r = await gradcheck(fn, make());
      expect(r.summary).toMatch(/^ok/);
      expect(r.checked).toBe(make()[0].numel);
    });
  });
});
